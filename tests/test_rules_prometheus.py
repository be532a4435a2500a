"""Every rule of every profile evaluates on a real Prometheus 2.x holding the demo data.

VictoriaMetrics is lax where Prometheus is strict: a function that drops the metric name of several series of one
label set (``rate({__name__=~"a|b"}[5m])``) is refused by Prometheus ("vector cannot contain metrics with the same
labelset") and silently accepted by VictoriaMetrics, so the VictoriaMetrics tests alone let an alert and the node x
layer health rule that never evaluate on a Prometheus-based stack through. Each rule's expression is evaluated as an
instant query at the end of its profile's demo window (healthy data with every series the rules read), as the rule
manager evaluates it; any error fails, naming the profile, group and rule.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus import BACKFILLS, DemoPrometheus, start_demo

from dashgen.deployment.profile import load_profiles
from dashgen.live.datasource import Datasource, DatasourceError
from dashgen.rules.model import AlertRule
from dashgen.rules.render import rule_groups

# The query tests' windows and blocks (``tests/prometheus.py``: 10 min of each profile's healthy data, built once per
# run for both files). What this test exists for needs each series a rule reads to hold samples in the rule's range
# at the window's end: every range of the rules up to [10m] holds the whole window, the [15m]+ ranges read what is
# there (as a Prometheus started 10 minutes ago does), so a rule that Prometheus refuses is refused here too.


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoPrometheus]:
    started = start_demo()
    try:
        yield started
    finally:
        started.stop()


@pytest.mark.parametrize("name", sorted(BACKFILLS))
def test_every_rule_evaluates_on_prometheus(demo: DemoPrometheus, name: str) -> None:
    (profile,) = load_profiles([name])
    datasource = Datasource(demo.url, timeout=60)
    end = demo.windows[name].end
    failed = []
    evaluated = 0
    for group in rule_groups(profile):
        for rule in group.rules:
            label = rule.alert if isinstance(rule, AlertRule) else rule.record
            try:
                datasource.query(rule.expr, end)
            except DatasourceError as exc:
                failed.append(f"{group.name} / {label}: {exc}")
            evaluated += 1
    assert evaluated > 40
    assert not failed, "\n".join(failed)
