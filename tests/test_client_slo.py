"""S33, the client-side SLI counted at the gateway (``queries.client_slo``), against a real VictoriaMetrics holding
the demo data: on healthy data (every gateway response a 200) the good share reads 1 and the error ratio 0, the
per-instance class shares read 0 for every gateway instance and class, the real vmalert replaying the rule file's
client-slo group records 0 and fires nothing, and a profile without a gateway gets no client panel or rule.
"""

from __future__ import annotations

import pytest
from dashgen_panels import client_health, first_screen, slo_health
from dashgen_queries import client_slo as cs
from vmalert_replay import firing, replay_group

from dashgen.deployment.profile import load_profiles
from dashgen.deployment.topology import Topology
from dashgen.live.datasource import Datasource
from dashgen.rules import rule_groups

PROFILE = "long-context-64"


def _values(ds: Datasource, expr: str, at: float) -> list[tuple[dict[str, str], float]]:
    return [(item["metric"], float(item["value"][1])) for item in ds.query(expr, at).result]


def test_s33_client_sli_reads_about_one_on_healthy_demo_data(victoriametrics, demo_windows) -> None:
    window = demo_windows[(PROFILE, "healthy")]
    profile = window.profile
    ds = Datasource(victoriametrics.url)
    good = _values(ds, cs.client_good_share(profile, "1h"), window.end)
    assert len(good) == 1 and good[0][1] == pytest.approx(1.0, abs=1e-3), good
    ratio = _values(ds, cs.client_error_ratio(profile, "1h"), window.end)
    assert len(ratio) == 1 and ratio[0][1] == pytest.approx(0.0, abs=1e-3), ratio
    instances = {
        metric[profile.label("instance")]
        for metric, _ in _values(ds, f"max by (instance) ({cs.responses(profile)})", window.end)
    }
    assert instances, "the demo data has no gateway response series"
    shares = _values(ds, cs.non_2xx_share_by_class(profile, "1h"), window.end)
    assert {(m[profile.label("instance")], m[cs.CLASS_LABEL]) for m, _ in shares} == {
        (instance, bad.key) for instance in instances for bad in cs.BAD_CLASSES
    }
    assert all(value == pytest.approx(0.0, abs=1e-3) for _, value in shares)
    healthy = _values(ds, cs.healthy_backends(profile), window.end)
    assert {m[profile.label("instance")] for m, _ in healthy} == instances
    assert all(value >= 1 for _, value in healthy)


def test_s33_vmalert_records_the_client_error_ratio_and_stays_quiet_on_healthy_data(
    victoriametrics, demo_windows, tmp_path
) -> None:
    """The rule file's client-slo group, replayed by the real vmalert over the healthy window's last minutes: the
    recorded error ratio is 0 and no burn alert fires (vmalert writes ALERTS for firing alerts)."""
    window = demo_windows[(PROFILE, "healthy")]
    end = window.end
    replay_group(victoriametrics.url, window.profile, "client-slo", end - 180, end, tmp_path)
    ds = Datasource(victoriametrics.url)
    for window_name in ("5m", "1h"):
        recorded = _values(
            ds, f'{cs.client_error_ratio_name(window_name)}{{slo="{cs.SLO_KEY}", cluster="{PROFILE}"}}', end
        )
        assert len(recorded) == 1 and recorded[0][1] == pytest.approx(0.0, abs=1e-3), (window_name, recorded)
    assert not firing(
        victoriametrics.url, window.profile, ("ClientSloErrorBudgetFastBurn", "ClientSloErrorBudgetSlowBurn"), end - 60
    )


@pytest.mark.parametrize("profile", load_profiles(), ids=lambda p: p.name)
def test_s33_client_panels_and_rules_only_where_the_gateway_is_exported(profile) -> None:
    has = profile.exported("gateway")
    assert (client_health.client_now_panel(profile, first_screen.KEY, first_screen.TOP) is not None) == has
    keys = [p.key for p in slo_health.build(profile, Topology(profile)).panels]
    if profile.exported("sglang") and profile.has_kind("text-generation"):
        assert ("slo_health.client_health" in keys) == has
    records = {rule.record for group in rule_groups(profile) for rule in group.rules if hasattr(rule, "record")}
    assert (cs.client_error_ratio_name("1h") in records) == has
    if has:
        panels = {p.key: p for p in slo_health.build(profile, Topology(profile)).panels}
        assert slo_health.AS_CLIENT in panels["slo_health.client_health"].title
        assert panels["slo_health.health"].title.endswith(slo_health.AT_ENGINE)


def test_s33_first_screen_client_panel_reads_every_class_at_the_worst_instance_on_demo_data(
    victoriametrics, demo_windows
) -> None:
    """The first-screen panel, one query: a line per class (the three classes and the backends down), each the worst
    gateway instance's share, on healthy data 0 (no red); red starts at ``SHED_RED_SHARE``. The first screen's SLO
    stat reads the client's share and the engine's, the lower first, both present on healthy data."""
    window = demo_windows[(PROFILE, "healthy")]
    profile = window.profile
    panel = client_health.client_now_panel(profile, first_screen.KEY, first_screen.TOP)
    assert panel is not None and panel.height == first_screen.TOP and panel.width == 4
    assert panel.evidence is not None and all((panel.evidence.source, panel.evidence.quantity, panel.evidence.limit))
    assert ("red", cs.SHED_RED_SHARE) in panel.thresholds
    ds = Datasource(victoriametrics.url)
    (target,) = panel.targets
    lines = {metric[cs.CLASS_LABEL]: value for metric, value in _values(ds, target.expr, window.end)}
    down = f"Backends down (of {cs.expected_backends(Topology(profile))})"
    assert set(lines) == {*(bad.text for bad in cs.BAD_CLASSES), down}, lines
    assert all(v == pytest.approx(0.0, abs=1e-3) for v in lines.values()), lines
    slo = first_screen.slo_panel(profile)
    assert slo is not None
    (both,) = slo.targets
    from dashgen.build import build_profile
    from dashgen.live.expand import Window, expand_text, globals_for, variable_values

    (built,) = build_profile(profile)
    values = {**variable_values(built.document["templating"]["list"]), **globals_for(Window(window.end, 3600), 15, 60)}
    expr = expand_text(expand_text(both.expr, values), values)
    views = [(metric[first_screen.VIEW], value) for metric, value in _values(ds, expr, window.end)]
    assert [view for view, _ in views] in (["client (gateway)", "engine"], ["engine", "client (gateway)"]), views
    assert views[0][1] <= views[1][1]  # the worse leads
    assert all(0.9 < value <= 1 for _, value in views), views


@pytest.mark.parametrize("bucket_at_bound", [True, False], ids=["bucket-at-the-bound", "other-buckets"])
def test_the_client_share_counts_a_slow_request_as_bad(victoriametrics, bucket_at_bound: bool) -> None:
    """Every response 200, but a third of the routed requests took longer than the E2E bound: the client's share is
    two thirds, not 100 %. With no bucket at the bound (the gateway configured other buckets) only failures count."""
    import time
    from dataclasses import replace

    profile = replace(load_profiles([PROFILE])[0], deployment=f"client-slow-{bucket_at_bound}")
    end = int(time.time()) // 60 * 60 - 600
    stamps = list(range(end - 1800, end + 1, 15))
    labels = {"cluster": profile.deployment, "job": "gateway", "node": "lc-node-00", "instance": "gw-0"}
    le = f"{profile.slo.e2e_seconds:g}" if bucket_at_bound else "7"

    def counter(name: str, extra: dict[str, str], per_step: float) -> dict:
        return {
            "metric": {"__name__": name, **labels, **extra},
            "values": [per_step * i for i in range(len(stamps))],
            "timestamps": [t * 1000 for t in stamps],
        }

    ds = Datasource(victoriametrics.url)
    ds.import_series(
        [
            counter("smg_http_responses_total", {"path": "/generate", "status_code": "200"}, 15),
            counter("smg_router_request_duration_seconds_count", {}, 15),
            counter("smg_router_request_duration_seconds_bucket", {"le": le}, 10),
        ]
    )
    ds.flush()
    ((_, share),) = _values(ds, cs.client_good_share_with_latency(profile, "10m"), end)
    assert share == pytest.approx(2 / 3 if bucket_at_bound else 1.0, abs=1e-3)


def test_s33_class_shares_name_the_shedding_gateway_instance(promtool, tmp_path) -> None:
    """gateway-shedding under promtool: gw-0 answers 40 % 429, 10 % 504 and 5 % 500; gw-1 only 200s and 404s (a
    client's own mistake, in neither share). Each class reads its share per instance; the deployment's error ratio
    is the bad share of both together; an idle gateway (flat counters) has no sample at all."""
    from promtool_rules import PROFILES, run_tests, series

    from dashgen.rules import render_rule_files

    profile = PROFILES[PROFILE]
    for path, data in render_rule_files([profile], tmp_path).items():
        path.write_bytes(data)

    def responses(instance: str, status: str, per_minute: int) -> dict[str, str]:
        return series(
            "smg_http_responses_total",
            {"job": "gateway", "node": "lc-node-00", "instance": instance, "path": "/generate", "status_code": status},
            f"0+{per_minute}x30",
        )

    inputs = [
        responses("gw-0", "200", 45),
        responses("gw-0", "429", 40),
        responses("gw-0", "504", 10),
        responses("gw-0", "500", 5),
        responses("gw-1", "200", 100),
        responses("gw-1", "404", 30),
        series(
            "smg_http_responses_total",
            {"job": "gateway", "node": "lc-node-01", "instance": "gw-idle", "path": "/generate", "status_code": "200"},
            "500x30",
        ),
    ]
    base = {"node": "lc-node-00"}

    def share(instance: str, key: str, value: float) -> dict:
        return {
            "labels": "{"
            + ", ".join(f'{k}="{v}"' for k, v in {**base, "instance": instance, cs.CLASS_LABEL: key}.items())
            + "}",
            "value": value,
        }

    case = {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [
            # per mille, rounded: the rates' float sums differ in the last bit with the order promtool adds them in
            {
                "expr": f"round(1000 * ({cs.non_2xx_share_by_class(profile, '10m')}))",
                "eval_time": "20m",
                "exp_samples": [
                    share("gw-0", "429", 400),
                    share("gw-0", "timeout", 100),
                    share("gw-0", "5xx", 50),
                    share("gw-1", "429", 0),
                    share("gw-1", "timeout", 0),
                    share("gw-1", "5xx", 0),
                ],
            },
            {
                "expr": f"round(1000 * {cs.client_error_ratio(profile, '10m')})",
                "eval_time": "20m",  # 55 of 200
                "exp_samples": [{"labels": "{}", "value": 275}],
            },
        ],
    }
    run_tests(promtool, tmp_path, tmp_path / f"{PROFILE}.yml", [case])
