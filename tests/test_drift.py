"""``dashgen drift`` and ``dashgen diff --live`` against the Grafana stand-in: an edit made in Grafana after
a release is found, shown panel by panel, and exits 1; right after a release there is nothing to report."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from publishing import MODES, TOKEN, UID, standin_in_mode
from standin import GrafanaStandin, free_port

from dashgen.cli.app import load_command, main

ROOT = Path(__file__).resolve().parent.parent
grafana = pytest.fixture(params=MODES)(standin_in_mode)


@pytest.fixture
def released(tmp_path, grafana):
    """The h20-16 dashboard published into the stand-in by ``dashgen publish``; returns the work folder."""
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    result = invoke(tmp_path, grafana, "publish", "--profile", "h20-16", "--backup-dir", str(tmp_path / "backups"))
    assert result.exit_code == 0, result.output
    return tmp_path


def invoke(work: Path, grafana: GrafanaStandin, command: str, *args: str, url: str | None = None, ledger: bool = True):
    argv = ["--profiles-dir", str(work / "profiles"), command, "--grafana-url", url or grafana.url, "--timeout", "2"]
    if ledger:
        argv += ["--ledger", str(work / "ledger.jsonl")]
    return CliRunner().invoke(main, [*argv, *args], env={"GRAFANA_TOKEN": TOKEN})


def edit_a_query(dashboard: dict) -> None:
    # a long query, which the diff shows as formatted PromQL (a short one is shown on one line)
    panel = next(p for p in dashboard["panels"] if p.get("targets") and len(p["targets"][0].get("expr") or "") > 200)
    panel["targets"][0]["expr"] += " * 2"
    dashboard["_edited_title"] = panel["title"]


def test_right_after_a_release_there_is_no_drift(released, grafana):
    result = invoke(released, grafana, "drift")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"clean         {UID} (h20-16): live v1 is the release")
    assert "drift: 0 of 1 dashboard(s)" in result.output


def test_a_ui_edit_after_a_release_is_drift_shown_panel_by_panel(released, grafana):
    edited: dict = {}

    def edit(dashboard: dict) -> None:
        edit_a_query(dashboard)
        edited["title"] = dashboard.pop("_edited_title")

    grafana.simulate_ui_save(UID, edit)
    result = invoke(released, grafana, "drift")
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"edited        {UID} (h20-16): live v2 SHA ")
    assert "released v1" in result.output and "1 semantic change(s)" in result.output
    assert f'~ panel "{edited["title"]}"' in result.output
    # the query's changed part, formatted as PromQL: the new operator and operand on lines of their own
    assert re.search(r"^ +\+ +\*$", result.output, re.M) and re.search(r"^ +\+ +2$", result.output, re.M)
    assert "drift: 1 of 1 dashboard(s)" in result.output
    as_json = json.loads(invoke(released, grafana, "drift", "--format", "json").output)["results"]
    assert as_json["drift"] is True and as_json["dashboards"][0]["status"] == "edited"
    assert as_json["dashboards"][0]["diff"]["panels"]["changed"][0]["title"] == edited["title"]
    markdown = invoke(released, grafana, "drift", "--format", "markdown").output
    assert "```diff" in markdown and len(markdown) <= 60_000


def test_a_ui_save_without_an_edit_is_not_drift(released, grafana):
    grafana.simulate_ui_save(UID)
    result = invoke(released, grafana, "drift", UID)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"ui-save-only  {UID}")


def test_a_dashboard_deleted_in_grafana_is_drift(released, grafana):
    from dashgen.grafana.client import GrafanaClient

    with GrafanaClient(grafana.url, token=TOKEN) as client:
        client.delete_dashboard(UID)
    result = invoke(released, grafana, "drift")
    assert result.exit_code == 1 and f"deleted       {UID}" in result.output


@pytest.mark.parametrize("grafana", ["grafana12"], indirect=True)  # no Grafana answers: no version to vary
def test_unreachable_grafana_is_exit_2_not_drift(released, grafana):
    # every read is still retried three times; the waits between (tests/test_retry_options.py holds the default's)
    # change nothing of the verdict
    result = invoke(released, grafana, "drift", "--retry-backoff", "0.01", url=f"http://127.0.0.1:{free_port()}")
    assert result.exit_code == 2 and "drift unknown" in result.output and "Traceback" not in result.output


def test_a_uid_the_ledger_never_released_is_an_input_error(released, grafana):
    result = invoke(released, grafana, "drift", "dg-no-such-dashboard")
    assert result.exit_code == 2 and "no verified release of dg-no-such-dashboard" in result.output


def test_a_release_to_another_grafana_is_not_compared(released, grafana):
    ledger = released / "ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    ledger.write_text("".join(json.dumps({**r, "grafana_url": "https://elsewhere.example"}) + "\n" for r in records))
    result = invoke(released, grafana, "drift")
    assert result.exit_code == 2 and "no verified release" in result.output


def test_diff_live_shows_the_ui_edit_against_the_current_build(released, grafana):
    same = invoke(released, grafana, "diff", "--live", UID, ledger=False)
    assert same.exit_code == 0, same.output
    assert same.output.startswith("no semantic changes")
    grafana.simulate_ui_save(UID, lambda d: (edit_a_query(d), d.pop("_edited_title")))
    changed = invoke(released, grafana, "diff", "--live", UID, ledger=False)
    assert changed.exit_code == 1, changed.output
    assert f"h20-16/{UID}.json: dashboard" in changed.output
    assert "- " in changed.output and "[query] targets[0].expr:" in changed.output  # build side drops the edit
    unknown = invoke(released, grafana, "diff", "--live", "dg-no-such-dashboard", ledger=False)
    assert unknown.exit_code == 2 and "no profile builds" in unknown.output


@pytest.mark.parametrize("grafana", ["grafana13"], indirect=True)  # no Grafana answers: no version to vary
def test_diff_live_is_exit_2_when_grafana_cannot_be_read(released, grafana):
    dead = f"http://127.0.0.1:{free_port()}"  # retried as by default, with short waits (as in the test above)
    result = invoke(released, grafana, "diff", "--live", UID, "--retry-backoff", "0.01", url=dead, ledger=False)
    assert result.exit_code == 2 and "cannot read it from Grafana" in result.output


def test_diff_live_takes_the_same_grafana_options_as_publish():
    def options(command: click.Command) -> dict[str, tuple]:
        return {
            name: (o.envvar, o.type.name, o.default, o.is_flag)
            for o in command.params
            if isinstance(o, click.Option)
            for name in o.opts
        }

    from dashgen.cli.connection import GRAFANA_OPTION_NAMES

    publish, diff, drift = (options(load_command(n)) for n in ("publish", "diff", "drift"))
    assert set(GRAFANA_OPTION_NAMES) <= set(publish)
    for name in GRAFANA_OPTION_NAMES:
        assert diff[name] == publish[name] == drift[name], name


def test_drift_reads_the_grafana_of_a_named_context(released, grafana):
    """``--context NAME`` of dashgen.toml names the Grafana (url, org, token variable): the same release is
    found in the ledger under that instance, and a context that does not exist is an input error."""
    config = released / "dashgen.toml"
    config.write_text(f'[contexts.standin]\nurl = "{grafana.url}"\ntoken_env = "STANDIN_TOKEN"\n', encoding="utf-8")
    argv = [
        "--profiles-dir",
        str(released / "profiles"),
        "drift",
        "--config",
        str(config),
        "--ledger",
        str(released / "ledger.jsonl"),
        "--timeout",
        "2",
    ]
    result = CliRunner().invoke(main, [*argv, "--context", "standin"], env={"STANDIN_TOKEN": TOKEN})
    assert result.exit_code == 0, result.output
    assert "drift: 0 of 1 dashboard(s)" in result.output
    missing = CliRunner().invoke(main, [*argv, "--context", "prod"], env={"STANDIN_TOKEN": TOKEN})
    assert missing.exit_code == 2 and "prod" in missing.output


def test_drift_after_a_no_op_republish_still_shows_the_edit(released, grafana):
    """The newest ledger record of an unchanged release keeps no read-back copy; drift diffs against the copy
    of the release that stored the same SHA, so publish -> no-op republish -> UI edit shows the edit's diff."""
    again = invoke(released, grafana, "publish", "--profile", "h20-16", "--backup-dir", str(released / "backups"))
    assert again.exit_code == 0, again.output
    records = [json.loads(line) for line in (released / "ledger.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["published", "unchanged"] and not records[-1]["published_file"]
    grafana.simulate_ui_save(UID, lambda dashboard: (edit_a_query(dashboard), dashboard.pop("_edited_title")))
    result = invoke(released, grafana, "drift")
    assert result.exit_code == 1, result.output
    assert "read-back copy is gone" not in result.output and "1 semantic change(s)" in result.output, result.output
