"""A staged release across Grafanas (``publish --stages canary,fleet``) on three stand-ins: one canary, two fleet.
The canary's failure holds the fleet with nothing written there, and a resume finishes the release; a clean run
publishes all three with one report; ``history --release`` shows the release across them; a canary that no longer
holds what was verified holds the fleet; a resume with another build is refused."""

from __future__ import annotations

import json
import tomllib

import pytest
from click.testing import CliRunner
from publishing import UID, ledger, saves, work_folder
from staged_contexts import CONTEXTS, TOKENS, configure, publish, report
from staged_contexts import grafanas as grafanas  # the three stand-ins, a fixture

from dashgen.cli.app import main
from dashgen.errors import InputError
from dashgen.publish.contexts import parse_config
from dashgen.publish.stages import build_changes, stages_of

work = pytest.fixture(work_folder)


def test_the_canarys_failure_holds_the_fleet_with_nothing_written_there_and_a_resume_finishes(work, grafanas):
    configure(work, grafanas)
    canary = grafanas["canary"]
    canary.inject("POST", "/api/dashboards/db", 400, {"message": "bad request: canary says no"}, times=None)
    held = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--go", "--format", "json")
    assert held.exit_code == 1, held.output
    data = report(held)
    release = data["results"]
    assert release["status"] == "held" and "held at stage canary" in data["errors"][0]["message"]
    assert release["contexts"]["canary"]["status"] == "failed"
    assert "canary says no" in " ".join(release["contexts"]["canary"]["problems"])
    assert {release["contexts"][n]["status"] for n in ("prod-eu", "prod-us")} == {"pending"}
    assert release["resume"] == f"dashgen publish --resume {release['release_id']}"
    for name in ("prod-eu", "prod-us"):  # nothing written to the fleet: no save, no ledger line
        assert saves(grafanas[name]) == [] and grafanas[name].stored(UID) is None
    lines = ledger(work)
    assert lines and {line["grafana_url"] for line in lines} == {canary.url}
    assert {line["release_id"] for line in lines} == {release["release_id"]}

    canary.clear_faults()
    resumed = publish(work, "--resume", release["release_id"], "--go", "--format", "json")
    assert resumed.exit_code == 0, resumed.output
    finished = report(resumed)["results"]
    assert finished["status"] == "done" and finished["release_id"] == release["release_id"]
    assert {run["status"] for run in finished["contexts"].values()} == {"verified"}
    for grafana in grafanas.values():
        assert grafana.stored(UID) is not None
    published = [line for line in ledger(work) if line["outcome"] == "published"]
    assert {line["grafana_url"] for line in published} == {g.url for g in grafanas.values()}
    assert {line["release_id"] for line in ledger(work)} == {release["release_id"]}
    again = publish(work, "--resume", release["release_id"], "--go")
    assert again.exit_code == 2 and "is done" in again.output


def test_a_clean_run_publishes_all_three_with_one_report_and_history_shows_the_release(work, grafanas):
    configure(work, grafanas)
    result = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--go")
    assert result.exit_code == 0, result.output
    assert result.output.count("release r-") == 1 and "stage canary: passed" in result.output
    assert "stage fleet: passed" in result.output and ": done" in result.output.splitlines()[0]
    rid = result.output.split()[1]
    for grafana in grafanas.values():
        assert grafana.stored(UID) is not None
    history = CliRunner().invoke(
        main, ["history", "--release", rid, "--ledger", str(work / "ledger.jsonl"), "--format", "json"]
    )
    assert history.exit_code == 0, history.output
    shown = json.loads(history.stdout)["results"]
    assert shown["status"] == "done" and [s["name"] for s in shown["stages"]] == ["canary", "fleet"]
    assert sorted((line["context"], line["outcome"]) for line in shown["lines"]) == [
        ("canary", "published"),
        ("prod-eu", "published"),
        ("prod-us", "published"),
    ]
    text = CliRunner().invoke(main, ["history", "--release", rid, "--ledger", str(work / "ledger.jsonl")])
    assert text.exit_code == 0 and all(name in text.output for name in CONTEXTS), text.output


def test_without_a_go_the_fleet_waits_and_a_canary_that_no_longer_holds_its_build_holds_the_fleet(work, grafanas):
    configure(work, grafanas)
    first = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--format", "json")
    assert first.exit_code == 0, first.output
    release = report(first)["results"]
    assert release["status"] == "awaiting-go" and release["resume"].endswith("--go")
    assert grafanas["prod-eu"].stored(UID) is None
    no_go = publish(work, "--resume", release["release_id"])
    assert no_go.exit_code == 2 and "waits for a go" in no_go.output
    # a person edits the canary while it soaks: its check no longer holds, the fleet stays untouched
    grafanas["canary"].simulate_ui_save(UID, lambda d: d.update(title="edited on the canary"))
    resumed = publish(work, "--resume", release["release_id"], "--go")
    assert resumed.exit_code == 1, resumed.output
    assert "not the" in resumed.output and "held at stage canary" in resumed.output
    assert f"dashgen rollback {UID} --context canary" not in resumed.output  # new there: nothing to go back to
    assert f"{UID} is new on canary" in resumed.output
    assert saves(grafanas["prod-eu"]) == [] and saves(grafanas["prod-us"]) == []


def test_a_resume_with_another_build_is_refused(work, grafanas):
    configure(work, grafanas)
    first = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--format", "json")
    rid = report(first)["results"]["release_id"]
    profile = work / "profiles" / "h20-16.toml"
    profile.write_text(
        "\n".join(
            'title = "another build"' if line.startswith("title = ") else line
            for line in profile.read_text().splitlines()
        )
        + "\n"
    )
    refused = publish(work, "--resume", rid, "--go")
    assert refused.exit_code == 1 and "another build" in refused.output and UID in refused.output
    assert grafanas["prod-eu"].stored(UID) is None


def test_stages_are_read_from_dashgen_toml_and_named_in_order(tmp_path):
    contexts = {name: {"url": f"http://127.0.0.1:1/{name}"} for name in ("a", "b", "c")}
    config = parse_config(
        tmp_path / "dashgen.toml", {"contexts": contexts, "stages": {"one": ["a"], "two": ["b", "c"]}}
    )
    assert [(s.name, s.contexts) for s in stages_of("two,one", config.stages, "x")] == [
        ("two", ("b", "c")),
        ("one", ("a",)),
    ]
    for bad, message in [
        ({"one": ["a"], "two": ["a"]}, "already in stage"),
        ({"one": ["z"]}, "not one of the contexts"),
        ({"one": []}, "non-empty list"),
    ]:
        with pytest.raises(InputError, match=message):
            parse_config(tmp_path / "dashgen.toml", {"contexts": contexts, "stages": bad})
    for names, message in [("one,one", "named twice"), ("three", "no stage"), (",", "give the stage names")]:
        with pytest.raises(InputError, match=message):
            stages_of(names, config.stages, "x")
    assert tomllib.loads('[stages]\ncanary = ["a"]\n')["stages"] == {"canary": ["a"]}


def test_build_changes_name_each_dashboard_that_differs():
    assert build_changes({"a": "1" * 64}, {"a": "1" * 64}) == []
    assert build_changes({"a": "1" * 64, "b": "2" * 64}, {"a": "3" * 64, "c": "4" * 64}) == [
        "a: build 111111111111 -> 333333333333",
        "b: no longer built",
        "c: new in the build",
    ]


def test_the_canarys_published_queries_run_on_its_data_source_and_one_it_rejects_holds_the_fleet(
    work, grafanas, victoriametrics
):
    """A context's ``datasource_url``: every query of what was published runs there. VictoriaMetrics answers them
    (empty results are not failures); an address that is no Prometheus API rejects them and holds the fleet."""
    configure(work, grafanas, {"canary": victoriametrics.url})
    passed = publish(work, "--stages", "canary", "--profile", "h20-16", "--format", "json")
    assert passed.exit_code == 0, passed.output
    (check_line,) = [c for c in report(passed)["results"]["contexts"]["canary"]["checks"] if "queries" in c]
    assert int(check_line.split()[0]) > 20 and victoriametrics.url in check_line
    configure(work, grafanas, {"canary": grafanas["prod-us"].url})  # answers /api/v1/query with 404
    held = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--go", "--format", "json")
    assert held.exit_code == 1, held.output
    canary = report(held)["results"]["contexts"]["canary"]
    assert canary["status"] == "failed" and "the data source answered" in canary["problems"][0]
    assert saves(grafanas["prod-eu"]) == [] and saves(grafanas["prod-us"]) == []


def test_a_held_release_names_a_rollback_per_dashboard_it_published_and_that_rollback_works(work, grafanas):
    configure(work, grafanas)
    before = publish(work, "--context", "canary", "--profile", "h20-16", "--format", "json")
    assert before.exit_code == 0, before.output
    (old,) = [line["build_sha"] for line in ledger(work)]
    original = grafanas["canary"].stored(UID)["title"]
    retitle = work / "profiles" / "h20-16.toml"
    lines = retitle.read_text().splitlines()
    retitle.write_text("\n".join('title = "next"' if x.startswith("title = ") else x for x in lines) + "\n")
    first = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--format", "json")
    rid = report(first)["results"]["release_id"]
    grafanas["canary"].simulate_ui_save(UID, lambda d: d.update(title="edited on the canary"))
    held = publish(work, "--resume", rid, "--go")
    assert held.exit_code == 1
    command = f"dashgen rollback {UID} --context canary --to {old[:12]}"
    assert command in held.output, held.output
    argv = command.split()[1:] + ["--config", str(work / "dashgen.toml"), "--overwrite-live", UID]
    argv += ["--ledger", str(work / "ledger.jsonl"), "--backup-dir", str(work / "backups")]
    rolled = CliRunner().invoke(main, ["--profiles-dir", str(work / "profiles"), *argv], env=TOKENS)
    assert rolled.exit_code == 0, rolled.output
    assert grafanas["canary"].stored(UID)["title"] == original != "next"


def test_sigterm_during_a_stage_lets_its_contexts_finish_saves_the_state_and_a_resume_goes_on(work, grafanas):
    import os
    import signal
    import threading

    configure(work, grafanas)
    for name in ("prod-eu", "prod-us"):
        grafanas[name].inject_delay(1.5, "GET", "/api/health", times=1)  # the fleet is slow to answer at first
    first = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--format", "json")
    rid = report(first)["results"]["release_id"]
    done = threading.Event()

    def terminate_once_the_fleet_is_asked() -> None:  # SIGTERM while the fleet's releases are in flight
        while not done.wait(0.02):
            if grafanas["prod-eu"].count("GET", "/api/health"):
                os.kill(os.getpid(), signal.SIGTERM)
                return

    watcher = threading.Thread(target=terminate_once_the_fleet_is_asked, daemon=True)
    watcher.start()
    try:
        stopped = publish(work, "--resume", rid, "--go")
    finally:
        done.set()
        watcher.join(5)
    assert stopped.exit_code == 143, stopped.output
    state = json.loads((work / "stages" / f"{rid}.json").read_text())
    assert state["status"] == "held" and "interrupted" in state["note"]
    assert {state["contexts"][n]["status"] for n in ("prod-eu", "prod-us")} == {"published"}  # they finished
    resumed = publish(work, "--resume", rid, "--go")
    assert resumed.exit_code == 0, resumed.output
    assert "stage fleet: passed" in resumed.output


def test_two_contexts_on_one_grafana_or_other_target_flags_are_refused_before_any_write(work, grafanas):
    configure(work, {**grafanas, "prod-us": grafanas["prod-eu"]})
    refused = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--go")
    assert refused.exit_code == 2 and "are the same Grafana" in refused.output, refused.output
    configure(work, grafanas)
    flagged = publish(work, "--stages", "canary,fleet", "--context", "canary", "--go")
    assert flagged.exit_code == 2 and "--context" in flagged.output
    assert all(saves(g) == [] for g in grafanas.values()) and not (work / "ledger.jsonl").exists()


def test_a_fleet_context_that_fails_leaves_the_others_published_and_a_resume_retries_only_it(work, grafanas):
    """The go given to a stage holds for its resume: a resume without --go retries the failed fleet context."""
    configure(work, grafanas)
    us = grafanas["prod-us"]
    us.inject("POST", "/api/dashboards/db", 400, {"message": "prod-us says no"}, times=None)
    held = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--go", "--format", "json")
    assert held.exit_code == 1, held.output
    release = report(held)["results"]
    statuses = {name: run["status"] for name, run in release["contexts"].items()}
    assert statuses == {"canary": "verified", "prod-eu": "verified", "prod-us": "failed"}
    us.clear_faults()
    eu_saves = len(saves(grafanas["prod-eu"]))
    resumed = publish(work, "--resume", release["release_id"], "--format", "json")
    assert resumed.exit_code == 0, resumed.output
    assert report(resumed)["results"]["status"] == "done" and us.stored(UID) is not None
    assert len(saves(grafanas["prod-eu"])) == eu_saves  # a context that passed is checked again, not republished


def test_stage_wait_checks_the_canary_after_the_wait_so_an_edit_made_during_it_holds_the_fleet(
    work, grafanas, monkeypatch
):
    import types

    import dashgen.cli.staged as staged

    configure(work, grafanas)
    canary = grafanas["canary"]
    soaked: list[tuple[float, bool]] = []

    def canary_published() -> bool:  # its release is over: the state file says so
        for path in (work / "stages").glob("r-*.json"):
            try:
                return json.loads(path.read_text())["contexts"]["canary"]["status"] == "published"
            except (OSError, ValueError):
                return False
        return False

    def soak(seconds: float) -> None:
        # a person edits the canary while the release soaks it: during the wait itself, not in a race with it
        soaked.append((seconds, canary_published()))
        canary.simulate_ui_save(UID, lambda d: d.update(title="edited during the soak"))

    monkeypatch.setattr(staged, "time", types.SimpleNamespace(sleep=soak))
    held = publish(work, "--stages", "canary,fleet", "--profile", "h20-16", "--stage-wait", "1.5")
    assert soaked == [(1.5, True)]  # one wait of the seconds given, after the canary's release
    assert held.exit_code == 1, held.output
    assert "held at stage canary" in held.output and "not the" in held.output
    assert saves(grafanas["prod-eu"]) == [] and saves(grafanas["prod-us"]) == []


def test_the_stage_report_shows_a_problem_s_control_sequences_as_text(tmp_path, capsys):
    """A problem names a panel of the read-back dashboard and carries a data source's answer: shown as text."""
    import click

    from dashgen.cli.staged import _report
    from dashgen.publish import stages as model

    hostile = 'panel "T \x1b]8;;https://evil.example\x07x\x1b]8;;\x07\u202e" query A: the data source answered 400'
    run_ = model.ContextRun("canary", "canary", status=model.FAILED, instance="https://g.example", problems=[hostile])
    state = model.ReleaseState(
        "r-1",
        "2026-01-01T00:00:00Z",
        "0" * 40,
        ["h20-16"],
        {},
        [model.Stage("canary", ("canary",))],
        {"canary": run_},
        status=model.DONE,
    )
    with click.Context(click.Command("publish"), obj={}):
        _report(click.get_current_context(), state, {"output_format": "text", "ledger": tmp_path / "ledger.jsonl"})
    shown = capsys.readouterr().out
    assert 'PROBLEM: panel "T \\x1b]8;;https://evil.example\\x07x' in shown, shown
    assert not any(ch in shown for ch in "\x1b\x07\u202e"), shown
