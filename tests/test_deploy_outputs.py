"""``dashgen export`` and ``dashgen rules --format``: the files grafana-operator, the kube-prometheus-stack
sidecar, Grafana file provisioning, the prometheus-operator and vmalert load. Each parses as YAML (PyYAML,
a test dependency), carries the right apiVersion / kind, embeds the built dashboard byte for byte, and the
rules pass ``promtool check rules`` (extracted from the PrometheusRule) and ``vmalert -dryRun``."""

from __future__ import annotations

import base64
import gzip
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from crds import crd_problems
from hypothesis import given, settings
from hypothesis import strategies as st
from victoriametrics import program_or_skip

from dashgen.build import build_all
from dashgen.cli import main
from dashgen.demo import recorder
from dashgen.deployment.profile import load_profiles
from dashgen.render import yamlcheck, yamlread
from dashgen.render.yamlemit import dump

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"


@pytest.fixture(scope="module")
def built():
    return {b.uid: b for b in build_all(load_profiles([], PROFILES))}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deploy")
    result = export_to(out)
    assert result.exit_code == 0, result.output
    return out


def export_to(out: Path):
    """``dashgen export`` of every shipped profile with the options these tests read back."""
    options = ["--folder", "LLM clusters", "--folder-uid", "llm", "--namespace", "monitoring"]
    options += ["--datasource", "VictoriaMetrics", "--label", "team=sre"]
    return CliRunner().invoke(main, ["--profiles-dir", str(PROFILES), "export", "--out", str(out), *options])


def _documents(path: Path) -> list[dict]:
    return [doc for doc in yamlread.load_all(path.read_text(encoding="utf-8")) if doc is not None]


def test_grafana_operator_resource_is_a_v1beta1_grafanadashboard_embedding_the_build_byte_for_byte(exported, built):
    seen = set()
    (folder,) = _documents(exported / "grafana-operator" / "folder.yaml")
    assert (folder["kind"], folder["spec"]["title"], folder["spec"]["uid"]) == ("GrafanaFolder", "LLM clusters", "llm")
    assert crd_problems(folder) == []
    for path in sorted((exported / "grafana-operator").glob("*.yaml")):
        if path.name == "folder.yaml":
            continue
        for doc in _documents(path):
            assert (doc["apiVersion"], doc["kind"]) == ("grafana.integreatly.org/v1beta1", "GrafanaDashboard")
            assert crd_problems(doc) == []
            spec = doc["spec"]
            assert spec["instanceSelector"] == {"matchLabels": {"dashboards": "grafana"}}
            assert spec["folderRef"] == folder["metadata"]["name"] and "folderUID" not in spec  # one of the two (CEL)
            assert doc["metadata"]["namespace"] == folder["metadata"]["namespace"]
            assert spec["datasources"] == [{"inputName": "datasource", "datasourceName": "VictoriaMetrics"}]
            assert doc["metadata"]["namespace"] == "monitoring" and doc["metadata"]["labels"]["team"] == "sre"
            uid = doc["metadata"]["name"]
            assert spec["json"].encode("utf-8") == built[uid].data
            seen.add(uid)
    assert seen == set(built)


def test_grafana_operator_gzip_json_is_the_build_gzipped_and_valid_against_the_crd(built, tmp_path):
    """``--gzip``: spec.gzipJson (base64 of gzip) instead of spec.json, the same bytes every run; a folder uid
    alone is spec.folderUID (a folder managed elsewhere), no GrafanaFolder."""
    argv = ["--profiles-dir", str(PROFILES), "export", "--format", "grafana-operator", "--gzip", "--folder-uid", "llm"]
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert CliRunner().invoke(main, [*argv, "--out", str(out)]).exit_code == 0
    assert not (outs[0] / "grafana-operator" / "folder.yaml").exists()
    for path in sorted((outs[0] / "grafana-operator").glob("*.yaml")):
        assert path.read_bytes() == (outs[1] / "grafana-operator" / path.name).read_bytes()
        for doc in _documents(path):
            assert crd_problems(doc) == [] and "json" not in doc["spec"] and doc["spec"]["folderUID"] == "llm"
            data = gzip.decompress(base64.b64decode(doc["spec"]["gzipJson"]))
            assert data == built[doc["metadata"]["name"]].data
            assert len(doc["spec"]["gzipJson"]) < len(data) / 4


def test_the_crd_check_refuses_what_the_api_server_would_not_keep():
    """The validator is real: an unknown field, a wrong type and a bad name are each refused."""
    base = {
        "apiVersion": "grafana.integreatly.org/v1beta1",
        "kind": "GrafanaFolder",
        "metadata": {"name": "f"},
        "spec": {"instanceSelector": {"matchLabels": {"a": "b"}}, "title": "T"},
    }
    assert crd_problems(base) == []
    assert crd_problems({**base, "spec": {**base["spec"], "folder": "x"}})
    assert crd_problems({**base, "spec": {**base["spec"], "title": 3}})
    assert crd_problems({**base, "metadata": {"name": "Not_DNS"}})
    assert crd_problems({**base, "kind": "GrafanaNothing"})


def test_sidecar_configmap_has_the_grafana_dashboard_label_folder_annotation_and_the_exact_json(exported, built):
    seen = set()
    for path in sorted((exported / "configmap").glob("*.yaml")):
        for doc in _documents(path):
            assert (doc["apiVersion"], doc["kind"]) == ("v1", "ConfigMap")
            assert doc["metadata"]["labels"]["grafana_dashboard"] == "1"
            assert doc["metadata"]["annotations"] == {"grafana_folder": "LLM clusters"}
            ((key, text),) = doc["data"].items()
            uid = key.removesuffix(".json")
            assert text.encode("utf-8") == built[uid].data
            seen.add(uid)
    assert seen == set(built)


def test_provisioning_provider_points_at_the_profile_folder_and_the_json_is_the_build(exported, built):
    assert len(built) == len(list(PROFILES.glob("*.toml")))
    assert len(list((exported / "provisioning").glob("dashgen-*.yaml"))) == len(built)
    for b in built.values():
        provider = yamlcheck.load((exported / "provisioning" / f"dashgen-{b.profile}.yaml").read_text())
        assert provider["apiVersion"] == 1
        (entry,) = provider["providers"]
        assert entry["type"] == "file" and entry["folder"] == "LLM clusters" and entry["folderUid"] == "llm"
        assert entry["options"]["path"].endswith(f"/{b.profile}")
        assert (exported / "provisioning" / b.profile / f"{b.uid}.json").read_bytes() == b.data


def test_export_twice_writes_nothing_the_second_time(exported):
    result = export_to(exported)
    assert result.exit_code == 0 and "written" not in result.output.replace("unchanged", "")


@pytest.mark.parametrize(
    "text",
    [
        "line one\nline two\n",
        "no final newline\nsecond",
        "two newlines\n\n\n",
        "  leading space\nx\n",
        "trailing space \nx\n",
        "tab\there\nx\n",
        "line\u2028separator\nx\n",
        'quote " and \\ back\nx\n',
        "single",
        "",
        "\n",
        "é ü 中文\nx\n",
        "#not a comment\n- not a list\nkey: value\n",
    ],
)
def test_yaml_emitter_round_trips_strings_exactly(text):
    """A string the literal block cannot hold as written (edge spaces, tabs, line separators) is quoted instead."""
    assert yaml.safe_load(dump({"data": {"k": text}, "list": [text, {"a": text}]})) == {
        "data": {"k": text},
        "list": [text, {"a": text}],
    }


def test_yaml_emitter_round_trips_odd_keys_and_scalars():
    value = {"yes": True, "on": None, "1": 1, "a b": 2.5, "k:v": [], "empty": {}, "n": [[1, 2], []]}
    assert yaml.safe_load(dump(value)) == value


@pytest.fixture(scope="module")
def rule_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rules")
    result = CliRunner().invoke(
        main,
        [
            "--profiles-dir",
            str(PROFILES),
            "rules",
            "--out",
            str(out),
            "--format",
            "prometheus-operator",
            "--format",
            "vmalert",
            "--format",
            "prometheus",
            "--format",
            "vmrule",
            "--label",
            "release=kube-prometheus-stack",
            "--namespace",
            "monitoring",
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def test_prometheusrule_is_monitoring_coreos_v1_and_its_groups_pass_promtool(rule_outputs, promtool, tmp_path):
    files = sorted(rule_outputs.glob("*.prometheusrule.yaml"))
    assert len(files) == len(list(PROFILES.glob("*.toml")))
    for path in files:
        (doc,) = _documents(path)
        assert (doc["apiVersion"], doc["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
        assert doc["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        assert crd_problems(doc) == []
        plain = yamlcheck.load((rule_outputs / path.name.replace(".prometheusrule.yaml", ".yml")).read_text())
        assert doc["spec"] == plain, "the PrometheusRule carries exactly the groups of the Prometheus rule file"
        extracted = tmp_path / f"{path.stem}.yml"
        extracted.write_text(yaml.safe_dump(doc["spec"]), encoding="utf-8")
        check = subprocess.run(
            [promtool, "check", "rules", str(extracted)], capture_output=True, text=True, timeout=120
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_vmrule_is_vm_operator_v1beta1_with_the_rule_file_groups_and_valid_against_its_crd(rule_outputs):
    files = sorted(rule_outputs.glob("*.vmrule.yaml"))
    assert len(files) == len(list(PROFILES.glob("*.toml")))
    for path in files:
        (doc,) = _documents(path)
        assert (doc["apiVersion"], doc["kind"]) == ("operator.victoriametrics.com/v1beta1", "VMRule")
        assert doc["metadata"]["namespace"] == "monitoring" and doc["metadata"]["labels"]["release"]
        plain = yamlcheck.load((rule_outputs / path.name.replace(".vmrule.yaml", ".yml")).read_text())
        assert doc["spec"] == plain
        assert crd_problems(doc) == []


@pytest.fixture(scope="module")
def vmalert() -> str:
    return program_or_skip(recorder.find_vmalert(), "vmalert not installed (Debian package victoria-metrics)")


def test_vmalert_file_passes_vmalert_dry_run(rule_outputs, vmalert):
    files = sorted(rule_outputs.glob("*.vmalert.yml"))
    assert files
    for path in files:
        for group in yamlcheck.load(path.read_text())["groups"]:
            assert group["type"] == "prometheus"
        check = subprocess.run([vmalert, "-dryRun", f"-rule={path}"], capture_output=True, text=True, timeout=120)
        assert check.returncode == 0, check.stdout + check.stderr


def test_vmalert_dry_run_refuses_a_broken_rule(vmalert, tmp_path):
    """The dry run is a real check: a rule with a broken expression fails it."""
    broken = tmp_path / "broken.yml"
    broken.write_text('groups:\n  - name: "x"\n    rules:\n      - alert: "A"\n        expr: "sum(("\n')
    assert subprocess.run([vmalert, "-dryRun", f"-rule={broken}"], capture_output=True, timeout=120).returncode != 0


def test_bad_label_argument_is_a_usage_error_naming_the_option():
    result = CliRunner().invoke(main, ["--profiles-dir", str(PROFILES), "rules", "--label", "novalue"])
    assert result.exit_code == 2 and "--label" in result.output


_KEYS = st.text(min_size=1, max_size=12)
_SCALARS = st.one_of(st.text(max_size=40), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4), st.text(max_size=30))
def test_yaml_writer_reads_back_equal_for_any_keys_values_and_comments(value, comment):
    """Issue 32: C0 / C1 / DEL / U+2028 / U+2029 / BOM in keys, values or a comment, floats without a dot: what the
    one YAML writer emits is read back by PyYAML as exactly the data, and a comment never injects a key; the
    read-back's own reader reads it alike."""
    text = dump(value, [comment])
    assert yaml.safe_load(text) == value
    assert repr(yamlread.load(text)) == repr(yaml.safe_load(text))


def test_a_node_name_with_a_trailing_newline_is_refused():
    import tomllib

    from dashgen.deployment.profile import profile_from_dict
    from dashgen.errors import ProfileError

    data = tomllib.loads((PROFILES / "h20-16.toml").read_text(encoding="utf-8"))
    data["cluster"]["node_names"] = [f"{name}\n" for name in data["cluster"].get("node_names", ["a", "b"])]
    data["cluster"]["nodes"] = len(data["cluster"]["node_names"])
    with pytest.raises(ProfileError, match="node_names"):
        profile_from_dict(data, "h20-16.toml")


def test_issue32_yaml_that_does_not_read_back_is_refused_before_it_is_written(tmp_path, monkeypatch):
    """Issue 32, item 7: every YAML document is re-read by a parser before it is written. An emitter that forgot to
    escape C1 controls (the issue's `\\u0080` in a label: a ConfigMap no parser loads) makes `dashgen export` refuse
    with exit 1, saying why, and write no file. (A label is now checked against Kubernetes' syntax before export
    runs, so the C1 control comes in the folder title, which the sidecar's folder annotation carries.)"""
    from dashgen.render import yamlemit

    monkeypatch.setattr(yamlemit, "_NOT_RAW", re.compile("[\x00-\x08\x0b-\x1f\x7f]"))  # the old, incomplete set
    monkeypatch.setattr(yamlemit, "_UNSAFE_IN_BLOCK", re.compile("[\x00-\x08\x0b-\x1f\x7f]"))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["export", "--format", "configmap", "--out", str(out), "--folder", "a\u0080b", "--profile", "h20-16"]
    )
    assert result.exit_code == 1, result.output
    assert "generated YAML does not parse" in result.output and "nothing was written" in result.output
    assert not out.exists() or not any(out.rglob("*.yaml"))


def test_issue32_the_read_back_check_compares_types_not_only_text():
    from dashgen.errors import BuildValidationError
    from dashgen.render.yamlcheck import check_reads_back, first_difference

    assert first_difference({"a": [1, "x", None, 1.5]}, {"a": [1, "x", None, 1.5]}) is None
    assert first_difference({"a": "1"}, {"a": 1}) == "a: '1' written, 1 read"
    assert first_difference({"a": True}, {"a": 1}) == "a: True written, 1 read"
    assert first_difference({"a": [1, 2]}, {"a": [1]}) == "a: a list of 2 written, a list of 1 read"
    with pytest.raises(BuildValidationError, match=r"k\[0\]"):
        check_reads_back('k:\n  - "x"\n  - "y"\n', {"k": ("z", "y")})
    with pytest.raises(BuildValidationError, match="does not parse"):
        check_reads_back('k: "unterminated\n', {"k": "unterminated"})


def test_a_text_that_read_back_is_not_parsed_again_for_the_same_value_only(monkeypatch):
    """The read-back is remembered per (text, value): the same rule file written again is not parsed again (a test
    session writes each dozens of times), while the same text written from a value of another type is checked."""
    from dashgen.errors import BuildValidationError
    from dashgen.render import yamlcheck

    text = "k: 1\nv: [2.5, x]\n"
    yamlcheck.check_reads_back(text, {"k": 1, "v": [2.5, "x"]})
    monkeypatch.setattr(yamlcheck, "load", lambda text: pytest.fail("parsed again"))
    yamlcheck.check_reads_back(text, {"k": 1, "v": [2.5, "x"]})
    monkeypatch.undo()
    for other in ({"k": "1", "v": [2.5, "x"]}, {"k": True, "v": [2.5, "x"]}, {"k": 1.0, "v": [2.5, "x"]}):
        with pytest.raises(BuildValidationError, match="k: .* written, 1 read"):
            yamlcheck.check_reads_back(text, other)


def test_every_rule_group_states_the_interval_its_windows_are_built_for() -> None:
    """An evaluator left to its own default (vmalert's -evaluationInterval, Prometheus' global one) could run the
    groups every 2 minutes and the per-interval statistics would skip samples: every file says 60 s, as written."""
    from dashgen_queries.nodata import RULE_INTERVAL_SECONDS

    from dashgen.rules.grafana import grafana_groups
    from dashgen.rules.render import rule_groups_data

    written, converted = {}, {}
    for profile in load_profiles(directory=PROFILES):
        groups = rule_groups_data(profile)
        written[profile.name] = {g["interval"] for g in groups}
        grafana = grafana_groups(groups, "grafana", profile=profile.name, folder_uid="f", datasource_uid="d")
        converted[profile.name] = {g["interval"] for g in grafana}
    assert len(written) >= 4
    assert written == dict.fromkeys(written, {f"{RULE_INTERVAL_SECONDS:g}s"})
    assert converted == dict.fromkeys(written, {RULE_INTERVAL_SECONDS})
