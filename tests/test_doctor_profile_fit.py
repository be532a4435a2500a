"""``doctor`` and ``validate-queries`` fail on a profile that does not describe the store, on a real VictoriaMetrics
holding h20-16's and pd-128's healthy demo data: a wrong deployment value, a wrong deployment label, a wrong node
label name, a source stated as exported that the store lacks — each a named difference with its likely fix, exit 1;
``--write`` sets the label names found; the shipped profiles fit their own data (exit 0, nothing named). A third
deployment, h20-16 as ``h20-hostname`` with its node label named ``hostname``, holds dcgm-exporter's own
``Hostname`` beside it on the DCGM series only."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from victoriametrics import start_or_skip

from dashgen.cli.app import main
from dashgen.demo.run import import_demo
from dashgen.deployment.edit import set_label_names, set_source_fields
from dashgen.deployment.profile import load_profile
from dashgen.live.datasource import Datasource
from dashgen.live.profile_fit import StoreView, gpu_differences

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("h20-16", "pd-128")


HOSTNAME_DEPLOYMENT = "h20-hostname"


def hostname_labelled(text: str, path: str) -> str:
    text = text.replace('name = "h20-16"', f'name = "h20-16"\ndeployment = "{HOSTNAME_DEPLOYMENT}"', 1)
    return set_label_names(text, path, {"node": "hostname"})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    server = start_or_skip()
    try:
        end = (time.time() // 60) * 60 - 60
        datasource = Datasource(server.url, timeout=120)
        profiles = [load_profile(ROOT / "profiles" / f"{name}.toml") for name in PROFILES]
        profiles.append(load_profile(profile_copy(tmp_path_factory.mktemp("hostname"), edit=hostname_labelled)))
        for profile in profiles:
            import_demo(datasource, profile, "healthy", end, 0.5, 60.0)
        datasource.flush()
        yield server.url, end
    finally:
        server.stop()


def profile_copy(folder: Path, name: str = "h20-16", edit=lambda text, path: text) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    shutil.copy2(ROOT / "profiles" / f"{name}.toml", path)
    path.write_text(edit(path.read_text(encoding="utf-8"), str(path)), encoding="utf-8")
    return path


def doctor(folder: Path, url: str, *args: str, name: str = "h20-16"):
    result = CliRunner().invoke(
        main,
        ["--profiles-dir", str(folder), "doctor", "--datasource-url", url, "--profile", name, "--window", "2h"]
        + [*args, "--format", "json"],
    )
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("name", PROFILES)
def test_a_shipped_profile_fits_its_own_demo_data(store, tmp_path, name):
    url, _ = store
    code, answer = doctor(profile_copy(tmp_path, name).parent, url, name=name)
    assert answer["results"]["profile_fit"] == []
    assert code == 0, answer["errors"]


def test_a_wrong_node_label_is_named_and_write_sets_the_label_found(store, tmp_path):
    url, _ = store
    path = profile_copy(tmp_path, edit=lambda text, p: set_label_names(text, p, {"node": "hostname"}))
    code, answer = doctor(tmp_path, url)
    assert code == 1
    (difference,) = answer["results"]["profile_fit"]
    assert difference["field"] == "labels.node" and "'hostname'" in difference["message"]
    assert difference["proposed"] == {"node": "node"} and 'node = "node"' in difference["fix"]
    assert [e["message"] for e in answer["errors"]][0].startswith("labels.node: node = 'hostname'")
    code, answer = doctor(tmp_path, url, "--write")
    assert code == 0, answer
    assert load_profile(path).label("node") == "node"
    assert doctor(tmp_path, url)[0] == 0


def test_the_node_label_proposed_is_the_one_every_source_carries(store, tmp_path):
    """The store's node label is ``hostname``; dcgm-exporter's own ``Hostname`` is on the DCGM series only, and
    comes first among the usual names: proposing it would leave every SGLang and node_exporter panel empty."""
    url, _ = store
    path = profile_copy(tmp_path, edit=lambda text, p: set_label_names(hostname_labelled(text, p), p, {"node": "host"}))
    code, answer = doctor(tmp_path, url)
    assert code == 1
    (difference,) = answer["results"]["profile_fit"]
    assert difference["field"] == "labels.node" and difference["proposed"] == {"node": "hostname"}, difference
    assert doctor(tmp_path, url, "--write")[0] == 0
    assert load_profile(path).label("node") == "hostname"


def test_a_node_count_that_does_not_match_the_store_is_named_both_ways(store, tmp_path):
    """h20-16's store holds two nodes, h20-node-0 and h20-node-1 (one replica of TP8 x PP2). A profile of three
    nodes (TP8 x PP3) names the node the store has no series of; one of a single node (TP8 x PP1) names the node
    the store has that the profile does not; a typo'd node_name_format names every node, each way. --write
    cannot fix either: still exit 1."""
    url, _ = store

    def sized(nodes: int, pp: int):
        return lambda text, p: text.replace("nodes = 2\n", f"nodes = {nodes}\n", 1).replace("pp = 2\n", f"pp = {pp}\n")

    profile_copy(tmp_path / "three", edit=sized(3, 3))
    profile_copy(tmp_path / "one", edit=sized(1, 1))
    profile_copy(tmp_path / "typo", edit=lambda text, p: text.replace('"h20-node-{index}"', '"h20node-{index}"'))
    assert load_profile(tmp_path / "three" / "h20-16.toml").node_names == ("h20-node-0", "h20-node-1", "h20-node-2")
    for folder, expected in (
        ("three", ["no series of deployment 'h20-16' from 1 of them over the window: h20-node-2"]),
        ("one", ["from 1 node(s) the profile does not name: h20-node-1"]),
        (
            "typo",
            ["the profile does not name: h20-node-0, h20-node-1", "2 of them over the window: h20node-0, h20node-1"],
        ),
    ):
        code, answer = doctor(tmp_path / folder, url)
        fit = answer["results"]["profile_fit"]
        assert code == 1 and [d["field"] for d in fit] == ["cluster.nodes"] * len(expected), fit
        assert all(part in d["message"] for d, part in zip(fit, expected, strict=True)), fit
        assert doctor(tmp_path / folder, url, "--write")[0] == 1


def test_a_gpu_count_per_node_that_does_not_match_dcgm_is_named(store, tmp_path):
    """h20-16's nodes each report 8 GPUs to DCGM: a profile of 4 per node (TP4 x PP2) is named, with the counts."""
    url, _ = store

    def resized(text: str, p: str) -> str:
        return text.replace("gpus_per_node = 8", "gpus_per_node = 4", 1).replace("tp = 8", "tp = 4", 1)

    profile_copy(tmp_path, edit=resized)
    code, answer = doctor(tmp_path, url)
    (difference,) = answer["results"]["profile_fit"]
    assert code == 1 and difference["field"] == "cluster.gpus_per_node", difference
    assert "gpus_per_node = 4" in difference["message"] and "h20-node-0: 8, h20-node-1: 8" in difference["message"]


@pytest.mark.parametrize(
    ("counts", "named"),
    [
        ({"h20-node-0": 8, "h20-node-1": 7}, None),  # one GPU gone from one node: a fault, not the profile
        ({"h20-node-0": 8, "h20-node-1": 9}, "h20-node-1: 9"),  # more than the profile says: the profile
        ({"h20-node-0": 6, "h20-node-1": 6}, "h20-node-0: 6, h20-node-1: 6"),  # every node the same other count
        ({}, None),  # no DCGM series
    ],
)
def test_which_gpu_counts_are_the_profile_s_fault(counts, named):
    profile = load_profile(ROOT / "profiles" / "h20-16.toml")
    store = StoreView(True, frozenset({"node", "gpu"}), frozenset({"dcgm"}), gpus_by_node=counts)
    found = gpu_differences(profile, store)
    assert [named in d.message for d in found] == ([True] if named else [])


def test_a_wrong_deployment_label_is_found_by_its_value(store, tmp_path):
    url, _ = store
    path = profile_copy(tmp_path, edit=lambda text, p: set_label_names(text, p, {"deployment": "k8s_cluster"}))
    code, answer = doctor(tmp_path, url)
    assert code == 1
    (difference,) = answer["results"]["profile_fit"]
    assert difference["field"] == "labels.deployment"
    assert 'no series carries k8s_cluster="h20-16"' in difference["message"] and "'cluster'" in difference["message"]
    assert doctor(tmp_path, url, "--write")[0] == 0
    assert load_profile(path).label("deployment") == "cluster"


def test_a_wrong_deployment_value_lists_the_store_s_values(store, tmp_path):
    url, _ = store
    profile_copy(tmp_path, edit=lambda text, p: text.replace('name = "h20-16"', 'name = "h20-16"\ndeployment = "h20"'))
    code, answer = doctor(tmp_path, url)
    assert code == 1
    (difference,) = answer["results"]["profile_fit"]
    assert difference["field"] == "deployment"
    assert "h20-16" in difference["message"] and "pd-128" in difference["message"]
    code, answer = doctor(tmp_path, url, "--write")
    assert code == 1  # no label name to write fixes a wrong value: still named


def test_a_source_stated_as_exported_without_series_is_named(store, tmp_path):
    url, _ = store
    profile_copy(tmp_path, edit=lambda text, p: set_source_fields(text, p, "gateway", {"status": "exported"}))
    code, answer = doctor(tmp_path, url)
    assert code == 1
    fields = [d["field"] for d in answer["results"]["profile_fit"]]
    assert fields == ["sources.gateway"], answer["results"]["profile_fit"]
    assert "not-exported" in answer["results"]["profile_fit"][0]["fix"]


def test_validate_queries_fails_when_most_panels_are_empty(store, tmp_path):
    url, end = store
    profile_copy(tmp_path, edit=lambda text, p: set_label_names(text, p, {"node": "hostname", "gpu": "gpu_index"}))
    result = CliRunner().invoke(
        main,
        ["--profiles-dir", str(tmp_path), "validate-queries", "--datasource-url", url, "--profile", "h20-16"]
        + ["--at", str(int(end)), "--format", "json"],
    )
    answer = json.loads(result.output)
    assert result.exit_code == 1, answer["errors"]
    assert any("panels return no data" in e["message"] for e in answer["errors"])
    fitting = CliRunner().invoke(
        main,
        ["--profiles-dir", str(profile_copy(tmp_path / "ok").parent), "validate-queries", "--datasource-url", url]
        + ["--profile", "h20-16", "--at", str(int(end)), "--format", "json"],
    )
    assert fitting.exit_code == 0, fitting.output[-2000:]


def test_an_imported_query_that_reads_every_deployment_is_named(store, tmp_path):
    """A profile that fits its store but lists an imported module with a query no matcher can scope (its metric
    name is a Grafana variable): doctor exits 1 naming the module, the panel and why, and nothing else; the same
    module without that query fits (exit 0)."""
    url, _ = store
    folder = profile_copy(tmp_path / "profiles").parent
    path = folder / "h20-16.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[dashboard]\n", '[dashboard]\nextra_modules = ["gpus"]\n', 1), encoding="utf-8")
    (tmp_path / "panels").mkdir()

    def imported(*exprs: str) -> None:
        panels = [
            {"id": i + 1, "type": "timeseries", "title": f"P{i}", "gridPos": {"x": 0, "y": 8 * i, "w": 12, "h": 8}}
            | {"targets": [{"refId": "A", "expr": expr}]}
            for i, expr in enumerate(exprs)
        ]
        variable = {"name": "metric", "type": "custom", "query": "DCGM_FI_DEV_GPU_TEMP"}
        source = tmp_path / "gpus.json"
        source.write_text(json.dumps({"title": "G", "panels": panels, "templating": {"list": [variable]}}))
        out = tmp_path / "panels" / "gpus.py"
        assert CliRunner().invoke(main, ["import", str(source), "-o", str(out), "--force"]).exit_code == 0

    imported('avg by (Hostname) (DCGM_FI_DEV_GPU_TEMP{gpu="0"})')
    code, answer = doctor(folder, url)
    assert (code, answer["results"]["imported_unscoped"]) == (0, []), answer["errors"]
    imported('avg by (Hostname) (DCGM_FI_DEV_GPU_TEMP{gpu="0"})', 'max($metric{gpu="0"})')
    code, answer = doctor(folder, url)
    (note,) = answer["results"]["imported_unscoped"]
    assert code == 1 and [error["message"] for error in answer["errors"]] == [note]
    assert "extra_modules: gpus" in note and "Grafana variable $metric" in note and "reads every deployment" in note


@pytest.mark.parametrize("found", ["cluster\x7f", 'cluster"]\nnodes = 1\n["x', "clu ster"])
def test_write_leaves_the_profile_untouched_when_the_store_names_a_label_no_profile_can_hold(
    tmp_path, monkeypatch, found
):
    """A label name read from the store is foreign text: the edited profile is checked before the file is written,
    so a name that would corrupt it or that the profile refuses is an input error and the file stays as it was."""
    from dashgen.cli import doctor as doctor_module
    from dashgen.live.profile_fit import StoreView

    path = profile_copy(tmp_path, edit=lambda text, _: text.replace('deployment = "h20-16"', 'deployment = "gone"'))
    before = path.read_bytes()
    view = StoreView(False, frozenset({found, "__name__"}), frozenset(), (), (found,))
    monkeypatch.setattr(doctor_module, "store_view", lambda *_: view)
    monkeypatch.setattr(doctor_module, "store_names", lambda *_: [])
    monkeypatch.setattr(doctor_module, "scrape_targets", lambda *_: [])
    result = CliRunner().invoke(
        main,
        [
            "--profiles-dir",
            str(tmp_path),
            "doctor",
            "--datasource-url",
            "http://127.0.0.1:9",
            "--profile",
            "h20-16",
            "--write",
        ],
    )
    assert result.exit_code == 2, result.output
    assert path.read_bytes() == before and "h20-16.toml" in result.output and "Traceback" not in result.output


def test_a_write_that_would_not_read_back_leaves_the_profile_untouched(store, tmp_path, monkeypatch):
    """``doctor --write`` wrote the edited text, then loaded it to check it: a proposal that made the profile
    invalid (here a DEL character, which TOML forbids in a string) left it broken on disk. The text is now checked
    before the write; the command fails naming the profile and writes nothing."""
    import dashgen.cli.doctor as doctor_cmd

    url, _ = store
    path = profile_copy(tmp_path, edit=lambda text, p: set_label_names(text, p, {"node": "hostname"}))
    before = path.read_bytes()
    monkeypatch.setattr(doctor_cmd, "set_label_names", lambda text, p, names: text + 'broken = "\x7f"\n')
    argv = ["--profiles-dir", str(tmp_path), "doctor", "--datasource-url", url, "--profile", "h20-16", "--write"]
    result = CliRunner().invoke(main, [*argv, "--window", "2h"])
    assert result.exit_code == 2 and f"{path}: not valid TOML" in result.output, result.output
    assert path.read_bytes() == before
