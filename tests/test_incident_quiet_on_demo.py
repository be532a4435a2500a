"""S32 on realistic data: over the demo cluster's healthy window, and over the five-reasons window (missing data is
not ill health), no incident alert's condition holds and vmalert -replay records no health state
(``node:dashgen_layer_health:code``) for any node. Uses the session's VictoriaMetrics with the demo windows
imported and their layer-health groups replayed (``tests/victoriametrics.py``)."""

from __future__ import annotations

import pytest
from dashgen_queries.health import LAYER_HEALTH
from dashgen_queries.nodata import LAYER_REASON
from dashgen_queries.promql import in_deployment

from dashgen.live.datasource import Datasource
from dashgen.rules.incident import incident_alerts
from dashgen.rules.recording import health_conditions


@pytest.mark.parametrize("scenario", ["healthy", "five-reasons"])
def test_s32_no_incident_alert_and_no_health_state_on_the_demo_cluster(
    victoriametrics, demo_windows, scenario: str
) -> None:
    window = demo_windows[("long-context-64", scenario)]
    profile = window.profile
    assert len(health_conditions(profile)) >= 7  # engine, host tier, Store, two GPU layers, disk, collector, clock
    datasource = Datasource(victoriametrics.url)
    at = window.end

    def recorded(series: str) -> list:
        return datasource.query(f"last_over_time({in_deployment(profile, series)}[300s])", at).result

    assert recorded(LAYER_REASON), "the layer-health group was not replayed"  # so its silence below means something
    assert recorded(LAYER_HEALTH) == []
    for alert in incident_alerts(profile):
        assert datasource.query(alert.expr, at).result == [], alert.alert
