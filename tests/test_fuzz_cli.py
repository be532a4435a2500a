"""The one CLI exception boundary (issue 18): no traceback reaches a user, exit 2 for input errors and 1 for
a failed check, ``--debug`` adds the traceback; and a fuzz of command arguments (random values for the
options of build, lint, validate-queries and demo-data) always ends in exit 0, 1 or 2 with no traceback.

Network only to 127.0.0.1 port 9 (refused at once). Seeded and bounded: ``DASHGEN_FUZZ_EXAMPLES``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashgen.cli import app
from dashgen.cli.app import main
from dashgen.errors import redact

EXAMPLES = int(os.environ.get("DASHGEN_FUZZ_EXAMPLES", "150"))
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def exploding_command(monkeypatch):
    """A ``lint`` that raises an unexpected exception carrying a credential."""
    import dashgen.cli.lint_cmd as lint_cmd  # imported first: it binds lint_paths at import

    def explode(*args, **kwargs):
        raise ZeroDivisionError("boom at http://admin:hunter2@grafana:3000/api")

    monkeypatch.setattr(lint_cmd, "lint_paths", explode)


def test_an_unexpected_exception_is_one_redacted_line_exit_2_without_a_traceback(exploding_command, tmp_path):
    (tmp_path / "d.json").write_text('{"panels": []}')
    result = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output and "hunter2" not in result.output
    assert result.output.startswith("error: internal error: ZeroDivisionError") and "--debug" in result.output


def test_debug_prints_the_traceback_redacted(exploding_command, tmp_path):
    (tmp_path / "d.json").write_text('{"panels": []}')
    result = CliRunner().invoke(main, ["--debug", "lint", str(tmp_path)])
    assert result.exit_code == 2
    assert "Traceback" in result.output and "ZeroDivisionError" in result.output and "hunter2" not in result.output


def test_an_os_error_is_an_input_error_naming_the_file(monkeypatch, tmp_path):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "out"))

    monkeypatch.setattr("dashgen.cli.build_cmd.write_dashboards", refuse)
    result = CliRunner().invoke(main, ["build", "--profile", "h20-16", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {tmp_path / 'out'}: Permission denied"


def test_redact_removes_userinfo_and_secret_parameters():
    text = "GET https://u:p%40ss@host:3000/x?token=abc&a=1 and http://tok@h/ and ?password=x"
    assert redact(text) == "GET https://***@host:3000/x?token=***&a=1 and http://***@h/ and ?password=***"


def test_the_command_table_is_untouched_by_the_boundary():
    assert list(app.COMMANDS)[:4] == ["init", "build", "profiles", "rules"]


ODD = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "0",
            "-1",
            "nan",
            "inf",
            "1e400",
            "",
            " ",
            "1",
            "now",
            "now-2h",
            "1h",
            "0s",
            "http://u:p@127.0.0.1:9",
            "h20-16",
        ]
    ),
)


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(["validate-queries", "demo-data", "build", "lint", "profiles", "rules"]))
    if command == "validate-queries":
        return [
            command,
            "--datasource-url",
            draw(st.sampled_from(["http://127.0.0.1:9", "ftp://x", "", "http://"])),
            "--dashboards",
            "/nonexistent-dashgen-folder",
            "--timeout",
            draw(ODD),
            "--deadline",
            draw(ODD),
            "--window",
            draw(ODD),
            "--at",
            draw(ODD),
        ]
    if command == "demo-data":
        return [
            command,
            "--profile",
            draw(ODD),
            "--url",
            draw(ODD),
            "--hours",
            draw(ODD),
            "--timeout",
            draw(ODD),
            "--step",
            draw(ODD),
            "--end",
            draw(ODD),
        ]
    if command in ("build", "rules"):
        return [command, "--profile", draw(ODD), "--out", "{out}"]
    if command == "lint":
        return [command, draw(ODD) or "-", "--rule", draw(ODD)]
    return [command, "--format", draw(ODD)]


@settings(
    max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(argvs())
def test_fuzzed_arguments_exit_0_1_or_2_never_a_traceback(tmp_path_factory, argv):
    out = tmp_path_factory.mktemp("out") / "x"
    argv = [str(out) if arg == "{out}" else arg for arg in argv]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code in (0, 1, 2), (argv, result.output[-300:])
    assert result.exception is None or isinstance(result.exception, SystemExit), (argv, repr(result.exception))
    assert "Traceback" not in result.output
    if result.exit_code != 0:
        assert not out.exists(), argv


@pytest.mark.parametrize("command", ["publish", "drift", "history", "rollback"])
@pytest.mark.parametrize("value", ["0", "nan", "inf", "-1", "1e9"])
def test_a_grafana_timeout_must_be_positive_and_finite(command, value):
    """Issue 32: ``--timeout 0 / nan / inf`` ended in internal errors; every Grafana command refuses them (exit 2)."""
    args = {"history": ["x"], "rollback": ["x", "--to", "1"]}.get(command, [])
    result = CliRunner().invoke(
        main, [command, *args, "--grafana-url", "http://127.0.0.1:9", "--timeout", value], env={"GRAFANA_TOKEN": "x"}
    )
    assert result.exit_code == 2 and "--timeout" in result.output and "internal error" not in result.output


@pytest.mark.parametrize(
    "option, value",
    [("--org-id", str(2**63)), ("--org-id", "99999999999999999999999"), ("--stage-wait", "nan")],
)
def test_an_org_id_past_64_bits_or_a_nan_stage_wait_is_refused_before_any_request(option, value):
    """Both were taken: the org id was sent as X-Grafana-Org-Id (Grafana's ids are 64-bit), the NaN went past
    click's FloatRange (every comparison with NaN is false)."""
    result = CliRunner().invoke(
        main,
        ["publish", "--grafana-url", "http://127.0.0.1:9", "--retries", "0", "--dry-run", option, value],
        env={"GRAFANA_TOKEN": "x"},
    )
    assert result.exit_code == 2 and option in result.output and "did not answer" not in result.output, result.output


def test_a_context_org_id_past_64_bits_is_refused_naming_the_field(tmp_path):
    (tmp_path / "dashgen.toml").write_text(
        f'[contexts.prod]\nurl = "http://127.0.0.1:9"\norg_id = {2**63}\n', encoding="utf-8"
    )
    result = CliRunner().invoke(
        main,
        ["drift", "--config", str(tmp_path / "dashgen.toml"), "--context", "prod", "--retries", "0"],
        env={"GRAFANA_TOKEN": "x"},
    )
    assert result.exit_code == 2 and "contexts.prod.org_id" in result.output and "64 bits" in result.output, (
        result.output
    )


DEAD = "http://127.0.0.1:9"
TIMES = ["nan", "inf", "1e400", "-1", "0", "99999999999999999999999", "now-99999999d", "0001-01-01T00:00:00Z"]
SPANS = ["0s", "0ms", "9999999999999d"]
TIME_ARGS = {
    "preview": ["preview", "--datasource-url", DEAD, "--profile", "h20-16", "--no-png", "--out", "{out}", "--at"],
    "cost": ["cost", "--datasource-url", DEAD, "--profile", "h20-16", "--at"],
    "validate-queries": ["validate-queries", "--datasource-url", DEAD, "--profile", "h20-16", "--at"],
    "demo-data": ["demo-data", "--url", DEAD, "--profile", "h20-16", "--end"],
}
SPAN_ARGS = {
    "preview": ["preview", "--datasource-url", DEAD, "--profile", "h20-16", "--no-png", "--out", "{out}", "--window"],
    "cost": ["cost", "--datasource-url", DEAD, "--profile", "h20-16", "--window"],
    "doctor": ["doctor", "--datasource-url", DEAD, "--profile", "h20-16", "--window"],
    "validate-queries": ["validate-queries", "--datasource-url", DEAD, "--profile", "h20-16", "--window"],
    "scrape-interval": ["validate-queries", "--datasource-url", DEAD, "--profile", "h20-16", "--scrape-interval"],
}


@pytest.mark.parametrize("value", TIMES)
@pytest.mark.parametrize("command", sorted(TIME_ARGS))
def test_an_impossible_window_end_is_refused_before_any_query(command, value, tmp_path):
    """``preview --at nan`` drew a page at NaN, and every command took a window ending in 1969, at the epoch
    or in the year 3e15; a time must lie after 1970 and before the year 10000."""
    argv = [str(tmp_path / "out") if w == "{out}" else w for w in TIME_ARGS[command]] + [value]
    result = CliRunner().invoke(main, ["--profiles-dir", str(ROOT / "profiles"), *argv])
    assert result.exit_code == 2 and "after 1970 and before the year 10000" in result.output, result.output[-500:]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", SPANS)
@pytest.mark.parametrize("command", sorted(SPAN_ARGS))
def test_a_window_or_scrape_interval_of_zero_or_past_100_years_is_refused(command, value, tmp_path):
    argv = [str(tmp_path / "out") if w == "{out}" else w for w in SPAN_ARGS[command]] + [value]
    result = CliRunner().invoke(main, ["--profiles-dir", str(ROOT / "profiles"), *argv])
    assert result.exit_code == 2 and "longer than 0 and at most 100y" in result.output, result.output[-500:]


@pytest.mark.parametrize("command", [["export", "--format", "grafana-operator"], ["rules", "--format", "vmrule"]])
@pytest.mark.parametrize(
    "option, value",
    [
        ("--namespace", "a\nb: c"),
        ("--namespace", "Kube-System"),
        ("--namespace", "n" * 64),
        ("--label", "a=b\nc: d"),
        ("--label", "a b=c"),
        ("--label", "example.com/=x"),
        ("--label", "k=" + "v" * 64),
    ],
)
def test_a_namespace_or_label_kubernetes_refuses_is_refused_before_anything_is_written(
    command, option, value, tmp_path
):
    """These were written into the resources as given (kubectl refused them later, or a newline became part
    of a namespace); now each is a usage error naming the option, and nothing is written."""
    argv = ["--profiles-dir", str(ROOT / "profiles"), *command, "--out", str(tmp_path / "out"), option, value]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.output, result.output[-500:]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["export", "--format", "grafana-operator"], ["rules", "--format", "vmrule"]])
def test_an_empty_namespace_means_no_namespace_as_without_the_option(command, tmp_path):
    """``--namespace ""`` (a script's unset variable) writes the resources exactly as no --namespace does: no
    ``metadata.namespace`` at all (an empty one is no namespace Kubernetes knows)."""
    outputs = {}
    for name, extra in (("empty", ["--namespace", ""]), ("absent", [])):
        out = tmp_path / name
        argv = ["--profiles-dir", str(ROOT / "profiles"), *command, "--out", str(out), *extra]
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0, result.output[-500:]
        outputs[name] = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert outputs["empty"] and outputs["empty"] == outputs["absent"]
    assert not any(b"namespace:" in data or b'"namespace"' in data for data in outputs["empty"].values())


def test_kubernetes_names_and_labels_that_kubernetes_takes_are_taken():
    from dashgen.cli.paramtypes import KUBERNETES_LABEL, KUBERNETES_NAMESPACE

    assert KUBERNETES_NAMESPACE.convert("monitoring", None, None) == "monitoring"
    for label in ("release=kube-prometheus-stack", "app.kubernetes.io/part-of=dashgen", "empty=", "a.b_c-d=X.y_z-9"):
        assert KUBERNETES_LABEL.convert(label, None, None) == label
