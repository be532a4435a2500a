"""``dashgen doctor`` reports each panel family (energy, speculative decoding, SLO attainment, gateway runtime,
PD failures) from the store's names: present, partly present or absent, with the version behind it and the flag
or setting it needs. In process on name sets, then the command on a real VictoriaMetrics holding the demo."""

from __future__ import annotations

import json
import time

import requests
from click.testing import CliRunner
from victoriametrics import start_or_skip

from dashgen.cli.app import main
from dashgen.cli.doctor import render_families
from dashgen.exporters.families import FAMILIES, family_reports
from dashgen.exporters.ports import ScrapeTarget, port_clashes
from dashgen.live.datasource import Datasource


def _states(names: set[str]) -> dict[str, str]:
    return {report["family"]: str(report["state"]) for report in family_reports(names)}


def test_every_family_is_absent_without_its_series() -> None:
    assert set(_states(set()).values()) == {"absent"}
    assert [f.key for f in FAMILIES] == [
        "energy",
        "speculative",
        "slo_attainment",
        "gateway_runtime",
        "pd_failures",
        "store_tenants",
        "store_promotion",
        "tent",
    ]


def test_families_read_prefixes_suffixes_and_partial_presence() -> None:
    names = {
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "sglang_spec_accept_length",  # through the router's combined endpoint
        "sglang_spec_accept_rate",
        "sglang_spec_verify_calls_total",
        "smg_tokio_event_loop_delay_seconds_bucket",
        "smg_tokio_event_loop_stalls_total",
        "smg_tokio_global_queue_depth",  # in the exporter table, read by no panel: not part of a family
    }
    states = _states(names)
    assert states["energy"] == "present" and states["speculative"] == "present"
    assert states["gateway_runtime"] == "partly present" and states["pd_failures"] == "absent"
    lines = render_families(family_reports(names))
    assert any("--speculative-algorithm" in line for line in lines)
    assert any(line.startswith("family Gateway runtime health: partly present (smg 1.6.0") for line in lines)
    assert any("absent: smg_tokio_worker_busy_ratio" in line for line in lines)


def _doctor(url: str, profile: str) -> dict[str, dict]:
    args = ["doctor", "--datasource-url", url, "--profile", profile, "--window", "48h", "--format", "json"]
    result = CliRunner().invoke(main, args)
    return {f["family"]: f for f in json.loads(result.output)["results"]["families"]}


def test_doctor_reports_families_on_the_demo_store(victoriametrics, demo_windows) -> None:
    """long-context-64 runs EAGLE3 and no PD; pd-128 runs PD behind smg and no draft: each deployment's own
    names (its cluster label) say so."""
    assert demo_windows
    lc, pd = _doctor(victoriametrics.url, "long-context-64"), _doctor(victoriametrics.url, "pd-128")
    assert lc["energy"]["state"] == pd["energy"]["state"] == "present"
    assert lc["speculative"]["state"] == "present" and pd["speculative"]["state"] == "absent"
    assert lc["pd_failures"]["state"] == "absent" and pd["pd_failures"]["state"] == "present"
    assert pd["gateway_runtime"]["state"] == "present", pd["gateway_runtime"]["absent"]
    assert "--speculative-algorithm" in pd["speculative"]["needs"]


def test_every_new_family_names_its_version_and_switch() -> None:
    families = {f.key: f for f in FAMILIES}
    assert "0.3.12" in families["store_tenants"].version and "--enable_multi_tenants" in families["store_tenants"].needs
    assert "--promotion_on_hit" in families["store_promotion"].needs
    assert "-DTENT_METRICS_ENABLED=ON" in families["tent"].needs and "9100" in families["tent"].needs
    states = _states({"tent_read_requests_total", "tent_write_requests_total", "master_promotion_in_flight"})
    assert states["tent"] == "partly present" and states["store_promotion"] == "partly present"
    assert states["store_tenants"] == "absent"


def test_port_clashes_name_the_instance_and_the_fix() -> None:
    clean = [
        ScrapeTarget("node", "10.0.0.1:9100", node=True),
        ScrapeTarget("node", "10.0.0.2:9100", node=True),
        ScrapeTarget("tent", "10.0.0.1:9101", tent=True),  # TENT moved off 9100: no clash
    ]
    assert port_clashes(clean) == []
    two_jobs = [*clean[:2], ScrapeTarget("tent", "10.0.0.2:9100", tent=True)]
    (found,) = port_clashes(two_jobs)
    assert found.startswith("10.0.0.2:9100 is scraped by jobs node, tent") and "TENT_METRICS_HTTP_PORT" in found
    # TENT won the port on one host: the node job reads TENT's series there.
    (won,) = port_clashes([clean[0], ScrapeTarget("node", "10.0.0.2:9100", tent=True)])
    assert "10.0.0.2:9100 answers job node with TENT's series" in won
    (both,) = port_clashes([ScrapeTarget("node", "10.0.0.3:9100", tent=True, node=True)])
    assert "both tent_* and node_*" in both


def test_doctor_names_a_port_clash_in_the_store(tmp_path) -> None:
    """A store where one host's :9100 is scraped by the node job and by a TENT job: doctor exits 1 naming it."""
    server = start_or_skip()
    try:
        now = int(time.time())
        lines = [
            f'node_uname_info{{job="node",instance="10.0.0.1:9100"}} 1 {now * 1000}',
            f'up{{job="node",instance="10.0.0.1:9100"}} 1 {now * 1000}',
            f'tent_read_requests_total{{job="tent",instance="10.0.0.1:9100"}} 5 {now * 1000}',
            f'up{{job="tent",instance="10.0.0.1:9100"}} 1 {now * 1000}',
        ]
        requests.post(f"{server.url}/api/v1/import/prometheus", data="\n".join(lines) + "\n", timeout=10)
        requests.get(f"{server.url}/internal/force_flush", timeout=10)
        ds = Datasource(server.url)
        deadline = time.monotonic() + 30
        while len(ds.query("up", now).result) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # the imported rows become searchable shortly after the flush
        args = ["doctor", "--datasource-url", server.url, "--window", "1h", "--format", "json"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        clashes = json.loads(result.output)["results"]["port_clashes"]
        assert len(clashes) == 1 and clashes[0].startswith("10.0.0.1:9100 is scraped by jobs node, tent"), clashes
        text = CliRunner().invoke(main, args[:-2])
        assert "PORT CLASH 10.0.0.1:9100" in text.output
    finally:
        server.stop()
