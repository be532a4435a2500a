"""``dashgen doctor`` reports each panel family (energy, speculative decoding, SLO attainment, gateway runtime,
PD failures) from the store's names: present, partly present or absent, with the version behind it and the flag
or setting it needs. In process on name sets, then the command on a real VictoriaMetrics holding the demo."""

from __future__ import annotations

import json

from click.testing import CliRunner

from dashgen.cli.app import main
from dashgen.cli.doctor import render_families
from dashgen.exporters.families import FAMILIES, family_reports


def _states(names: set[str]) -> dict[str, str]:
    return {report["family"]: str(report["state"]) for report in family_reports(names)}


def test_every_family_is_absent_without_its_series() -> None:
    assert set(_states(set()).values()) == {"absent"}
    assert [f.key for f in FAMILIES] == ["energy", "speculative", "slo_attainment", "gateway_runtime", "pd_failures"]


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
