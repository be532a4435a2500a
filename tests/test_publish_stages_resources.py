"""A staged release (``publish --stages canary,fleet``) carries what a release keeps in Grafana besides dashboards:
the library panels, the Grafana-managed rule groups of a profile whose ruler is Grafana, and the folder
permissions of each context. Each context publishes and records all three, each stage's check reads them back by
SHA, and a person's change to one on the canary holds the fleet with nothing written there."""

from __future__ import annotations

from pathlib import Path

import pytest
from publishing import ledger, saves, work_folder
from staged_contexts import CONTEXTS, publish, report
from staged_contexts import grafanas as grafanas  # the three stand-ins, a fixture
from standin import GrafanaStandin

from dashgen.render.library import element_uid

work = pytest.fixture(work_folder)
PROFILE = "h20-16"
KEY = "gpu_health.pcie_replays"
LIB = element_uid(PROFILE, KEY)
ALERTS, DASHBOARDS = "llm-alerts", "llm-clusters"
SLO_GROUP = f"dashgen-{PROFILE}-slo"
KINDS = {"library-panel", "alert-rule-group", "folder-permissions"}


@pytest.fixture
def resourced(grafanas: dict[str, GrafanaStandin]) -> dict[str, GrafanaStandin]:
    """The three stand-ins of ``test_publish_stages``, each with the two folders and the team dashgen.toml names."""
    for grafana in grafanas.values():
        grafana.add_folder(ALERTS, "LLM alerts")
        grafana.add_folder(DASHBOARDS, "LLM clusters")
        grafana.directory().add_team("sre")
    return grafanas


def configure(work: Path, grafanas: dict[str, GrafanaStandin]) -> None:
    path = work / "profiles" / f"{PROFILE}.toml"
    extra = f'ruler = "grafana"\nlibrary_panels = ["{KEY}"]\n'
    path.write_text(path.read_text().replace("[dashboard]\n", "[dashboard]\n" + extra, 1))
    text = "".join(
        f'[contexts.{name}]\nurl = "{grafanas[name].url}"\ntoken_env = "{token}"\nfolder_uid = "{DASHBOARDS}"\n'
        f'datasource_uid = "prom-{name}"\nalert_folder_uid = "{ALERTS}"\n'
        f'[contexts.{name}.permissions.{DASHBOARDS}]\nedit = ["team:sre"]\n'
        for name, token in CONTEXTS.items()
    )
    text += '[stages]\ncanary = ["canary"]\nfleet = ["prod-eu", "prod-us"]\n'
    (work / "dashgen.toml").write_text(text)


def sre_level(grafana: GrafanaStandin) -> str | None:
    rows = grafana.folder_permissions(DASHBOARDS)
    return next((r["permission"] for r in rows if r.get("team") == "sre" and not r["isInherited"]), None)


def test_each_stage_publishes_checks_and_records_library_panels_rule_groups_and_permissions(work, resourced):
    grafanas = resourced
    configure(work, grafanas)
    result = publish(work, "--stages", "canary,fleet", "--profile", PROFILE, "--go", "--format", "json")
    assert result.exit_code == 0, result.output
    release = report(result)["results"]
    assert release["status"] == "done"
    for name, grafana in grafanas.items():
        assert grafana.library_element(LIB) is not None
        group = grafana.rule_group(ALERTS, SLO_GROUP)
        assert group is not None and {d["datasourceUid"] for r in group["rules"] for d in r["data"]} == {
            f"prom-{name}",
            "__expr__",
        }
        assert sre_level(grafana) == "Edit"
        run = release["contexts"][name]
        assert run["status"] == "verified"
        assert any(all(kind in check for kind in KINDS) for check in run["checks"]), run["checks"]
        lines = [line for line in ledger(work) if line["grafana_url"] == grafana.url]
        assert {line.get("kind") for line in lines if line.get("kind")} == KINDS
        assert {line["release_id"] for line in lines} == {release["release_id"]}


def test_a_persons_rule_change_on_the_canary_holds_the_fleet_with_nothing_written_there(work, resourced):
    grafanas = resourced
    configure(work, grafanas)
    first = publish(work, "--stages", "canary", "--profile", PROFILE, "--go")
    assert first.exit_code == 0, first.output
    canary = grafanas["canary"]
    rule = canary.rule_group(ALERTS, SLO_GROUP)["rules"][0]
    canary.simulate_rule_edit(rule["uid"], lambda r: r.update({"for": "10m"}))
    held = publish(work, "--stages", "canary,fleet", "--profile", PROFILE, "--go", "--format", "json")
    assert held.exit_code == 1, held.output
    release = report(held)["results"]
    assert release["contexts"]["canary"]["status"] == "failed"
    assert "REFUSED: a rule of the group was changed in Grafana" in " ".join(release["contexts"]["canary"]["problems"])
    assert "-> --overwrite-live dgr-" in " ".join(release["contexts"]["canary"]["problems"])
    for name in ("prod-eu", "prod-us"):  # nothing of any kind written to the fleet
        fleet = grafanas[name]
        assert saves(fleet) == [] and fleet.library_element(LIB) is None
        assert fleet.rule_group(ALERTS, SLO_GROUP) is None and sre_level(fleet) is None


def test_a_library_panel_edited_on_the_canary_during_the_soak_holds_the_fleet(work, resourced):
    grafanas = resourced
    configure(work, grafanas)
    first = publish(work, "--stages", "canary,fleet", "--profile", PROFILE, "--format", "json")
    assert first.exit_code == 0, first.output
    release = report(first)["results"]
    assert release["status"] == "awaiting-go"
    grafanas["canary"].simulate_library_edit(LIB, lambda model: model.update(title="edited on the canary"))
    resumed = publish(work, "--resume", release["release_id"], "--go")
    assert resumed.exit_code == 1, resumed.output
    assert f"{LIB}: Grafana holds" in resumed.output and "held at stage canary" in resumed.output
    assert grafanas["prod-eu"].library_element(LIB) is None
