"""The failure-mode catalogue is complete and everything derives from it (S36).

- every exporter-table series that can signal a failure is read by a row, or listed with a reason as not one;
- every row is well formed (unique id and alert, texts, a parsable hold, entity roles, series of the table);
- every alert of every profile's rule file is a row's, and carries the catalogue's labels and runbook text;
- every alert's texts name its entity by the profile's label names, also where a profile renames them;
- the health layers recorded are exactly the layers the Now row's matrix asks for, on every profile;
- docs/alerts.md is the catalogue's, freshly generated, and says per row what each profile it is not written for
  lacks, naming the source or DCGM field.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from dashgen_queries import health
from dashgen_queries.now import not_ok_cells

from dashgen.catalogue import COMPONENTS, ENTITIES, LAYERS, NO_LAYER, ROWS, by_alert, rows_for
from dashgen.catalogue.signals import NOT_SIGNALS
from dashgen.deployment.model import DEFAULT_LABELS
from dashgen.deployment.profile import Profile, load_profiles, profile_from_dict
from dashgen.exporters.table import TABLES
from dashgen.rules.docs import ALERT_DOCS, render_alert_docs
from dashgen.rules.failures import stamp
from dashgen.rules.model import AlertRule
from dashgen.rules.recording import health_conditions, matrix_layers
from dashgen.rules.render import rule_groups

ROOT = Path(__file__).resolve().parent.parent
PROFILES = load_profiles()


def test_the_catalogue_has_a_row_per_failure_mode_of_every_component() -> None:
    assert len(ROWS) >= 40
    assert {row.component for row in ROWS} == set(COMPONENTS)  # every component fails in at least one way
    assert len({row.id for row in ROWS}) == len(ROWS)
    assert len({row.alert for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_every_row_is_well_formed(row: object) -> None:
    from dashgen.catalogue import FailureMode

    assert isinstance(row, FailureMode)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", row.id), row.id
    assert re.fullmatch(r"[A-Z][A-Za-z0-9]+", row.alert), row.alert
    assert row.layer in LAYERS and row.severity in ("critical", "warning")
    assert all(role in ENTITIES for role in row.entity)
    assert re.fullmatch(r"[0-9]+[smh]", row.hold), row.id
    for text in (row.test, row.test_reason, row.hold_reason, row.cause, row.look, row.runbook, row.demo.shows):
        assert text.strip(), row.id
    assert len(row.cause) <= 90 and len(row.look) <= 60, row.id  # label values the first screen shows whole
    assert row.demo.scenario, row.id
    assert row.reads, row.id
    for read in row.reads:
        assert any(series.name == read.name for series in TABLES[read.source].series), (row.id, read)
    assert bool(row.paints) == (row.layer != ""), row.id  # a row paints its layer, and only a painting row has one
    if row.expr is not None:
        assert row.summary and "{{ $labels." in row.summary or row.scope == "cluster", row.id
    for other in row.also:
        assert any(r.id == other for r in ROWS), (row.id, other)


def test_every_series_that_can_signal_a_failure_is_read_by_a_row_or_marked_with_a_reason() -> None:
    read = {(r.source, r.name) for row in ROWS for r in row.reads}
    marked = {(s.source, s.name) for s in NOT_SIGNALS}
    table = {(source, series.name) for source, t in TABLES.items() for series in t.series}
    assert not read & marked, sorted(read & marked)  # never both
    assert not marked - table, sorted(marked - table)  # no reason for a series the table does not have
    assert not table - read - marked, f"series neither read by a row nor marked: {sorted(table - read - marked)}"
    assert all(len(s.reason) > 20 for s in NOT_SIGNALS)
    assert len(marked) == len(NOT_SIGNALS)  # each listed once


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_every_alert_is_a_catalogue_row_with_its_labels_and_runbook(profile: object) -> None:
    alerts = [rule for group in rule_groups(profile) for rule in group.alerts()]  # type: ignore[arg-type]
    assert alerts
    for rule in alerts:
        row = by_alert(rule.alert)
        labels = dict(rule.labels)
        assert labels["failure"] == row.id and labels["component"] == row.component
        assert labels["layer"] == (row.layer or NO_LAYER) and labels["cause"] == row.cause
        assert labels["look"] == row.look
        assert rule.severity in (row.severity, "warning") and rule.for_ == row.hold
        assert rule.first_steps.startswith(row.runbook) and rule.runbook.endswith(f"#{row.anchor}")
    written = {rule.alert for rule in alerts}
    assert written == {row.alert for row in rows_for(profile)} - _not_written(profile)  # type: ignore[arg-type]


def _not_written(profile: object) -> set[str]:
    """Rows that apply but whose series the profile's stated versions never write (S35: dropped by as_deployed), or
    whose rule the rules leave out (a video-only deployment keeps only the engine's scrape alert)."""
    from dashgen.rules.render import as_deployed

    dropped = set()
    for row in rows_for(profile):  # type: ignore[arg-type]
        if row.expr is not None and not as_deployed(
            profile, (AlertRule(row.alert, row.expr(profile), "", "", "", ""),)
        ):  # type: ignore[arg-type]
            dropped.add(row.alert)
    return dropped


RELABELLED = {"node": "host", "gpu": "gpu_index", "pp_rank": "stage", "instance": "target", "model_name": "model"}


def _relabelled() -> Profile:
    """long-context-64 on a store whose series name their node, GPU, stage, target and model otherwise."""
    path = ROOT / "profiles" / "long-context-64.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["labels"] = RELABELLED
    return profile_from_dict(data, str(path))


def test_every_alert_names_its_entity_by_the_profiles_label_names() -> None:
    # a deployment whose nodes are labelled host: "{{ $labels.node }}" would render empty, the alert naming nothing
    profile = _relabelled()
    renamed = {DEFAULT_LABELS[role] for role in RELABELLED}
    unnamed = {
        (rule.alert, label)
        for group in rule_groups(profile)
        for rule in group.alerts()
        for text in (rule.summary, rule.description, rule.first_steps)
        for label in re.findall(r"\$labels\.(\w+)", text)
        if label in renamed
    }
    assert not unnamed, sorted(unnamed)
    kv = next(rule for group in rule_groups(profile) for rule in group.alerts() if rule.alert == "KvPoolExhausted")
    assert "{{ $labels.host }}" in kv.summary and "{{ $labels.stage }}" in kv.summary


def test_every_rule_keeps_and_matches_the_profiles_label_names() -> None:
    # "sum by (model_name)" on a store whose model label is "model" sums every model into one unnamed series: the SLO
    # burn alerts would name no model
    rules = [rule for group in rule_groups(_relabelled()) for rule in group.rules]
    renamed = {DEFAULT_LABELS[role] for role in RELABELLED}
    clauses = [
        (getattr(rule, "record", "") or getattr(rule, "alert", ""), label.strip())
        for rule in rules
        for names in re.findall(r"\b(?:by|on|without|ignoring|group_left|group_right)\s*\(([^)]*)\)", rule.expr)
        for label in names.split(",")
    ]
    assert len(clauses) > len(rules)
    assert [(name, label) for name, label in clauses if label in renamed] == []


def test_an_alert_without_a_row_or_disagreeing_with_its_row_is_refused() -> None:
    with pytest.raises(KeyError, match="no failure mode"):
        stamp(AlertRule("HandWrittenAlert", "up == 0", "5m", "warning", "s", "d"))
    with pytest.raises(ValueError, match="in its catalogue row"):
        stamp(AlertRule("GatewayShedding", "up == 0", "1m", "warning", "s", "d"))


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_the_layers_recorded_are_the_layers_the_matrix_asks_for(profile: object) -> None:
    # the matrix's verdicts (recorded: group now) read every layer with one selector and title each key they show:
    # those keys are what it asks for
    expr = not_ok_cells(profile)  # type: ignore[arg-type]
    asked = set(re.findall(r'"layer", "[^"]+", "layer", "([^"]+)"', expr))
    assert asked and health.LAYER_HEALTH in expr
    assert set(health_conditions(profile)) <= asked  # type: ignore[arg-type]
    assert set(matrix_layers(profile)) <= asked  # type: ignore[arg-type]


def test_docs_alerts_md_is_generated_from_the_catalogue() -> None:
    assert (ROOT / ALERT_DOCS).read_bytes() == render_alert_docs(PROFILES), "run dashgen rules"
    text = (ROOT / ALERT_DOCS).read_text(encoding="utf-8")
    for row in ROWS:
        assert f'<a id="{row.anchor}"></a>' in text and row.runbook in text


def _runbook_section(text: str, row_id: str) -> str:
    return text.split(f'<a id="{row_id}"></a>', 1)[1].split("<a id=", 1)[0]


def test_every_runbook_names_what_a_profile_without_its_alert_lacks() -> None:
    text = render_alert_docs(PROFILES).decode("utf-8")
    listed = [  # every shipped profile is listed as written for, or not with a reason, in every row's section
        (row.id, profile.name)
        for row in ROWS
        for profile in PROFILES
        if re.search(rf"\*\*(Not written|Written) for:\*\*[^\n]*\b{profile.name}\b", _runbook_section(text, row.anchor))
    ]
    assert len(listed) == len(ROWS) * len(PROFILES), sorted(
        {(r.id, p.name) for r in ROWS for p in PROFILES} - set(listed)
    )
    expected = {
        "transfer-engine-fallback": "long-context-64 (mooncake_tent not-exported)",
        "mooncake-client-target-missing": "long-context-64 (mooncake_client not-exported)",
        "gateway-shedding": "h20-16, video-200 (gateway not-deployed)",
        "gpm-scrape-failing": "h20-16 (gpm not-deployed)",
        "gpu-nvlink-errors": "_NVLINK_RECOVERY_ERROR_COUNT_TOTAL not in dcgm-exporter's default-counters.csv",
    }
    assert [row_id for row_id, reason in expected.items() if reason not in _runbook_section(text, row_id)] == []
