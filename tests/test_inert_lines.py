"""Foreign text cannot forge a report line: a line break inside a title, a file name or a server's message that
a renderer puts into a multi-line report is shown as ``\\x0a`` on the line it belongs to, so no title starts a
line of its own, a CI workflow command (``::error::``) in particular; a markdown report's title opens no list
item, heading or fence. Each report is rendered with a plain title and with a hostile one: the two have the same
lines (each line's first character alike) and no line of the hostile one starts with ``::``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from diff_documents import generated, panel

from dashgen.cli import main
from dashgen.cli.doctor import render_text as doctor_text
from dashgen.cli.drift import Drift
from dashgen.cli.drift import _text as drift_text
from dashgen.diff import diff_dashboards
from dashgen.diff.values import COLOURS
from dashgen.escape import terminal_lines
from dashgen.live.cost import render_text as cost_text
from dashgen.live.report import render_text as validate_text
from dashgen.live.results import PanelCheck, Reason, TargetCheck
from dashgen.publish.ledger import LedgerRecord
from dashgen.publish.plan import LiveState, PublishTarget, plan_release
from dashgen.publish.report import render_outcomes, render_plan
from dashgen.publish.stages import ContextRun, ReleaseState, Stage, render_report
from dashgen.render.canonical import content_sha

PLAIN = "x plain"
HOSTILE = "x\n::error::forged\r::warning title=t::forged\n  ::notice::forged\n# heading\n- item\n```\n"
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


def assert_same_lines(hostile: str, plain: str) -> None:
    """``hostile`` has the lines ``plain`` has (their count and each line's first character) and none of its
    lines starts, after blanks and colours, with ``::``; the hostile text is there, as text."""
    shown, expected = ANSI_RE.sub("", hostile).split("\n"), ANSI_RE.sub("", plain).split("\n")
    assert [line[:1] for line in shown] == [line[:1] for line in expected], hostile
    assert [line for line in shown if line.lstrip().startswith("::")] == [], hostile
    assert "\r" not in hostile and "forged" in hostile


# ---- the renderers of the commands that talk to a data source or a Grafana, as the commands print them


def validate_queries(title: str) -> str:
    error = TargetCheck("A", "range", "up", title, status="error", error_status=500, error_message=title)
    unanswered = TargetCheck("B", "range", "up", "up", status="error", error_message=title)
    empty = TargetCheck("C", "range", "up", "up", status="empty", reasons=[Reason(1, title, node=title)])
    checks = [PanelCheck(title, 1, title, "", [error, unanswered, empty])]
    return terminal_lines(validate_text(checks, {"datasource": title, "window": "1h", "at_text": title}))


def cost(title: str) -> str:
    total = {
        "dashboard": title,
        "panels_on_open": 1,
        "panels": 1,
        "queries_on_open": 1,
        "series_fetched": 1,
        "samples_scanned": 1,
        "seconds": 0.1,
        "wall_seconds": 0.1,
    }
    row = {"dashboard": title, "samples_scanned": 1, "series_fetched": 1, "seconds": 0.1, "on_open": True}
    data = {
        "datasource": title,
        "window": "1h",
        "at_text": title,
        "dashboards": [total],
        "panels": [{**row, "row": title, "title": title}],
        "errors": [title],
        "over_budget": [title],
        "unmeasured": [],
        "budget": {},
    }
    return terminal_lines(cost_text(data))


def doctor(title: str) -> str:
    report = {
        "source": "sglang",
        "present": True,
        "metric_prefix": title,
        "version_range": "",
        "features_on": [],
        "features_off": [],
        "evidence": [title],
        "differences": [title],
    }
    family = {"title": title, "state": "partly present", "version": title, "needs": title, "absent": [title]}
    return terminal_lines(doctor_text([report], None, [], [family], [title]))


UID = "cache-evidence"


def publish_plan(title: str) -> str:
    """A live dashboard a person gave a panel (and its title) that the build does not have."""
    live = {**generated(), "uid": UID}
    live["panels"] = [*live["panels"], panel(99, title, "up", y=40)]
    state = LiveState(UID, 3, None, live)
    line = {"uid": UID, "outcome": "published", "stored_sha": state.sha, "grafana_version": 3, "time": "2026-12-06"}
    ledger = [record for record in [LedgerRecord.from_json(line)] if record is not None]
    build = {**generated(), "uid": UID}
    target = PublishTarget("h20-16", UID, build, content_sha(build), {})
    plan = render_plan(plan_release([target], {UID: state}, ledger, None))
    outcomes = render_outcomes([SimpleNamespace(outcome="failed", uid=UID, detail=title)])
    return terminal_lines(plan + "\n" + outcomes)


def drift(title: str) -> str:
    live = {**generated(), "uid": UID}
    live["panels"] = [*live["panels"], panel(99, title, "up", y=40)]
    edit = diff_dashboards({**generated(), "uid": UID}, live)
    return terminal_lines(drift_text([Drift(UID, "h20-16", "edited", title, edit)]))


def staged_release(title: str) -> str:
    """A release held at its canary: a Grafana's problem and the rollback lines name the foreign text."""
    run = ContextRun("canary", "canary", "failed", title, problems=[title], checks=[title])
    stage = Stage("canary", ("canary",))
    state = ReleaseState("r-1", "t", "abc", [], {}, [stage], {"canary": run}, "held", title)
    return terminal_lines(render_report(state, [title]))


RENDERERS = {
    "validate-queries": validate_queries,
    "cost": cost,
    "doctor": doctor,
    "publish-plan": publish_plan,
    "drift": drift,
    "publish --stages": staged_release,
}


@pytest.mark.parametrize("command", sorted(RENDERERS))
def test_a_line_break_in_foreign_text_starts_no_line_of_a_report(command: str) -> None:
    render = RENDERERS[command]
    assert_same_lines(render(HOSTILE), render(PLAIN))


# ---- dashgen diff, text (coloured or not) and markdown


def _write_pair(folder: Path, title: str) -> list[str]:
    old = {**generated(), "uid": UID}
    new = json.loads(json.dumps(old))
    new["panels"].append({**panel(99, title, "up", y=40), "type": title})
    new["templating"]["list"].append({"name": title, "type": "custom", "query": "a,b"})
    folder.mkdir()
    paths = [folder / "old.json", folder / "new.json"]
    for path, doc in zip(paths, (old, new), strict=True):
        path.write_text(json.dumps(doc), encoding="utf-8")
    return [str(path) for path in paths]


@pytest.mark.parametrize("options", [["--color", "never"], ["--color", "always"], ["--format", "markdown"]])
def test_a_title_s_line_break_starts_no_line_of_the_diff(tmp_path: Path, options: list[str]) -> None:
    outputs = []
    for title in (PLAIN, HOSTILE):
        result = CliRunner().invoke(main, ["diff", *options, *_write_pair(tmp_path / str(len(outputs)), title)])
        assert result.exit_code == 1, result.output
        outputs.append(result.output)
    assert_same_lines(outputs[1], outputs[0])


ROOT = Path(__file__).resolve().parent.parent


def _check(folder: Path, title: str, options: list[str]) -> str:
    """``dashgen check`` of a fresh build whose committed dashboard holds a panel (titled ``title``) the build has
    not: a stale dashboard, its diff in the report."""
    profiles = ["--profiles-dir", str(ROOT / "profiles")]
    for command in ("build", "rules"):
        made = CliRunner().invoke(main, [*profiles, command, "--out", str(folder / command)])
        assert made.exit_code == 0, made.output
    committed = folder / "build" / "h20-16" / "dg-h20-16-cluster.json"
    document = json.loads(committed.read_text(encoding="utf-8"))
    document["panels"].append(panel(9999, title, "up", y=900))
    committed.write_text(json.dumps(document), encoding="utf-8")
    where = ["--dashboards", str(folder / "build"), "--rules-dir", str(folder / "rules")]
    result = CliRunner().invoke(main, [*profiles, "check", *where, *options])
    assert result.exit_code == 1, result.output
    return result.output.replace(str(folder), "FOLDER")


@pytest.mark.parametrize("options", [[], ["--format", "markdown"]], ids=["text", "markdown"])
def test_a_title_s_line_break_starts_no_line_of_check_s_report(tmp_path: Path, options: list[str]) -> None:
    plain, hostile = (_check(tmp_path / name, title, options) for name, title in (("a", PLAIN), ("b", HOSTILE)))
    assert_same_lines(hostile, plain)


def _import_report(folder: Path, key: str) -> str:
    """``dashgen import``'s report of a dashboard whose panel holds a field ``key`` (an escape hatch)."""
    folder.mkdir()
    board = {**generated(), "uid": UID}
    board["panels"][0][key] = {"a": 1}
    board["panels"][0]["type"] = f"plugin {key}"
    (folder / "board.json").write_text(json.dumps(board), encoding="utf-8")
    result = CliRunner().invoke(main, ["import", str(folder / "board.json"), "-o", str(folder / "board.py")])
    assert result.exit_code == 0, result.output
    return result.output.replace(str(folder), "FOLDER")


def test_a_dashboard_s_key_starts_no_line_of_the_import_report(tmp_path: Path) -> None:
    """The escape hatches name the panel's field and plugin as written: a line break in them stays on the line,
    a control sequence in them is shown as text."""
    hostile = _import_report(tmp_path / "b", HOSTILE + "\x1b[2J")
    assert_same_lines(hostile, _import_report(tmp_path / "a", PLAIN))
    assert "\x1b" not in hostile and "\\x1b[2J" in hostile


# ---- the generic line of defence: a line that would read as a workflow command


@pytest.mark.parametrize(
    ("report", "shown"),
    [
        ("::error::x\n", "\\x3a:error::x\n"),
        ("ok\n   ::warning file=a::x\nok", "ok\n   \\x3a:warning file=a::x\nok"),
        ("\x1b[31m::error::x\x1b[0m\n", "\x1b[31m\\x3a:error::x\x1b[0m\n"),
        ("a::b\n- ::c\n", "a::b\n- ::c\n"),  # not at the start of a line: no command, left as written
    ],
)
def test_terminal_lines_escapes_a_leading_workflow_command(report: str, shown: str) -> None:
    assert terminal_lines(report, keep=COLOURS) == shown


@pytest.mark.parametrize("options", [["--color", "always"], ["--format", "markdown"]], ids=["text", "markdown"])
def test_an_unchanged_line_of_a_changed_description_reads_as_no_workflow_command(
    tmp_path: Path, options: list[str]
) -> None:
    """A multi-line value's diff shows its unchanged lines whole, on lines of their own: one that begins with
    ``::`` keeps its text with the first colon escaped (the markdown diff block too: it may go to a CI log)."""
    old = {**generated(), "uid": UID}
    new = json.loads(json.dumps(old))
    old["panels"][0]["description"] = "line one\n::error::forged\nline three"
    new["panels"][0]["description"] = "line ONE\n::error::forged\nline three"
    paths = [tmp_path / "old.json", tmp_path / "new.json"]
    for path, doc in zip(paths, (old, new), strict=True):
        path.write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", *options, *map(str, paths)])
    assert result.exit_code == 1, result.output
    lines = ANSI_RE.sub("", result.output).split("\n")
    assert [line for line in lines if line.lstrip().startswith("::")] == [], result.output
    assert [line.strip() for line in lines if "error::forged" in line] == ["\\x3a:error::forged"], result.output


def test_dashgen_itself_writes_no_workflow_command() -> None:
    """The defence above never bends a line of dashgen's own: no string of its source starts a line with ``::``."""
    root = Path(__file__).resolve().parent.parent / "dashgen"
    starts = re.compile(r"""(?:["']|\\n)[ \t]*::[a-z]""")
    found = [str(p) for p in root.rglob("*.py") if starts.search(p.read_text(encoding="utf-8"))]
    assert found == []


# ---- dashgen init's hint: the directory pasted as one word


def test_init_s_next_step_quotes_the_directory(tmp_path: Path) -> None:
    directory = tmp_path / "team repo; rm -rf ~"
    result = CliRunner().invoke(main, ["init", str(directory)])
    assert result.exit_code == 0, result.output
    assert f"Next: cd '{directory}' && git init" in result.output


def test_each_line_of_check_s_text_report_reads_as_no_workflow_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``check``'s lines go through ``_say`` (and its findings through lint's ``text_line``): a line that would
    begin with ``::`` (a file name, a problem's text) has its first colon escaped, its line breaks shown."""
    from dashgen.cli.check import _say
    from dashgen.lint.findings import Finding, Severity
    from dashgen.lint.report import text_line

    _say("::error::forged\n::warning::forged")
    finding = Finding("::error::x.json", HOSTILE, HOSTILE, 1, "S5", Severity.ERROR, HOSTILE)
    shown = capsys.readouterr().out + text_line(finding) + "\n"
    assert shown == "\\x3a:error::forged\\x0a::warning::forged\n" + text_line(finding) + "\n"
    assert [line for line in shown.splitlines() if line.lstrip().startswith("::")] == [] and shown.count("\n") == 2


def test_one_limit_of_a_report_line_is_read_by_lint_check_and_publish_notes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Lint's finding lines, check's lines and publish's notes had a limit each (all 2000): one, ``LINE_LIMIT``."""
    from dashgen import escape
    from dashgen.cli.check import _say
    from dashgen.lint.findings import Finding, Severity
    from dashgen.lint.report import text_line

    monkeypatch.setattr(escape, "LINE_LIMIT", 20)
    _say("x" * 100)
    finding = Finding("board.json", "t" * 100, None, None, "S5", Severity.ERROR, "m" * 100)
    assert capsys.readouterr().out == "x" * 20 + "…\n"
    assert len(text_line(finding)) == 21 and text_line(finding).endswith("…")
