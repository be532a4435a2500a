"""How a change is shown (issue 17): a changed query formatted as PromQL with the changed part marked, long
strings by their changed region, terminal colours only on a tty, the first difference of two documents, and the
release plan's approval hint on every change class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from diff_documents import generated, panel, write

from dashgen.cli.diff_cmd import diff_command
from dashgen.diff import diff_dashboards
from dashgen.diff.compare import ABSENT


def _long_query(last_range: str = "$__rate_interval") -> str:
    """A 1,000-character-plus query; the last term's range is ``last_range``."""
    terms = [
        f'sum by (node) (rate(sglang:metric_{i}_total{{cluster="c", node=~"$node"}}[$__rate_interval]))'
        for i in range(11)
    ]
    terms.append(f'sum by (node) (rate(sglang:metric_last_total{{cluster="c", node=~"$node"}}[{last_range}]))')
    query = " + ".join(terms)
    assert len(query) >= 1000
    return query


def _query_change_docs() -> tuple[dict[str, Any], dict[str, Any]]:
    old, new = generated(), generated()
    old["panels"][0]["targets"][0]["expr"] = _long_query()
    new["panels"][0]["targets"][0]["expr"] = _long_query("5m")
    return old, new


def _shows_the_end_change(lines: list[str]) -> None:
    removed = [line for line in lines if "[-$__rate_interval-]" in line]
    added = [line for line in lines if "{+5m+}" in line]
    assert removed and added, "\n".join(lines)
    assert all(len(line) < 200 for line in removed + added)  # the changed region, not a 1,000-character line
    assert all("metric_last_total" in line for line in removed + added)  # with its context


def test_a_change_at_the_end_of_a_1000_character_query_is_visible_in_text_markdown_and_plan(tmp_path: Path) -> None:
    from dashgen.diff import first_difference, plan_lines

    old, new = _query_change_docs()
    paths = [write(tmp_path / "old.json", old), write(tmp_path / "new.json", new)]
    text = CliRunner().invoke(diff_command, paths)
    assert text.exit_code == 1
    _shows_the_end_change(text.output.splitlines())
    markdown = CliRunner().invoke(diff_command, ["--format", "markdown", *paths]).output
    block = markdown[markdown.index("```diff") :]
    _shows_the_end_change(block[: block.index("```\n", 7)].splitlines())
    plan = plan_lines(diff_dashboards(old, new), uid="cache-evidence", panel_keys={1: "slo.running"})
    assert plan[0].endswith("[needs --approve slo.running]")
    _shows_the_end_change(plan)
    first = first_difference(old, new, old_label="sent", new_label="stored")
    assert first.startswith("$.panels[0].targets[0].expr: sent ")
    assert "[-$__rate_interval-]" in first and "{+5m+}" in first and len(first) < 400


def test_a_query_is_formatted_one_clause_per_line_with_grafana_variables_kept() -> None:
    from dashgen.diff.promql_format import format_promql

    query = (
        'sum by (node) (rate(sglang:num_requests_total{cluster="c", node=~"$node"}[$__rate_interval])) '
        "/ $__range_s + max_over_time(up[$__range:30s] offset $shift) * on (${label}) group_left x"
    )
    lines = format_promql(query)
    assert lines is not None and len(lines) == 3 and lines[1] == "+"  # Prometheus style: each operand ≤ 100 columns
    text = "\n".join(lines)
    for reference in (
        'node=~"$node"',
        "[$__rate_interval]",
        "$__range_s",
        "[$__range:30s]",
        "offset $shift",
        "${label}",
    ):
        assert reference in text, text
    assert "__dgv" not in text and "9001y" not in text
    assert format_promql('label_values(up{cluster="c"}, node)') is None  # not PromQL: the caller diffs the text


def test_a_reformatted_but_equal_query_shows_the_text_difference() -> None:
    from dashgen.diff import describe_change

    old = _long_query()
    lines = describe_change("targets[0].expr", old, old.replace(" + ", "  +  ", 1))
    assert len(lines) == 3 and "{+" in lines[2]  # formatted alike, so the raw text is diffed


def test_a_long_description_change_shows_the_changed_region_not_a_common_prefix() -> None:
    from dashgen.diff import describe_change

    words = [f"word{i}" for i in range(120)]
    old = " ".join(words)
    new = " ".join(w if w != "word60" else "changed" for w in words)
    header, minus, plus = describe_change("description", old, new)
    assert header == "description:"
    assert "[-word60-]" in minus and "{+changed+}" in plus
    assert "word59" in minus and "word61" in plus and "…" in minus  # context, the rest folded
    assert len(minus) < 150 and len(plus) < 150
    md = describe_change("description", old, new, markdown=True)
    assert md[1] == "```diff" and md[-1] == "```" and md[2].startswith("- ") and md[3].startswith("+ ")


def test_a_markdown_diff_block_shows_control_and_bidi_characters_as_escapes() -> None:
    """The block goes into the pull-request comment and, with --format markdown, to a terminal: a title's ESC,
    C1 CSI and bidi override are shown as text, a fence in it cannot close the block."""
    from dashgen.diff import describe_change

    hostile = "T \x1b]8;;https://evil.example\x07x\x9b2J\u202egnp.exe ```"
    block = describe_change("title", "word " * 40 + "plain", "word " * 40 + hostile, markdown=True)
    assert block[1] == "```diff" and block[-1] == "```" and len(block) == 5
    inner = "".join(block[2:-1])
    assert "\\x1b]8;;https://evil.example\\x07x\\x9b2J\\u202egnp.exe" in inner and "```" not in inner
    assert not any(ch in inner for ch in "\x1b\x07\x9b\u202e"), inner


def test_short_values_stay_on_one_line() -> None:
    from dashgen.diff import describe_change

    assert describe_change("fieldConfig.defaults.unit", "short", "reqps", label="[unit]") == [
        '[unit] fieldConfig.defaults.unit: "short" -> "reqps"'
    ]
    assert describe_change("x", 1, ABSENT, markdown=True) == ["`x`: `1` → `(absent)`"]


def test_terminal_colours_only_on_a_tty_or_when_asked(tmp_path: Path) -> None:
    old, new = _query_change_docs()
    paths = [write(tmp_path / "old.json", old), write(tmp_path / "new.json", new)]
    assert "\x1b[" not in CliRunner().invoke(diff_command, paths).output  # CliRunner is not a terminal
    coloured = CliRunner().invoke(diff_command, ["--color", "always", *paths]).output
    assert "\x1b[31m" in coloured and "\x1b[32m" in coloured and "\x1b[7m5m\x1b[27m" in coloured
    assert "{+" not in coloured
    markdown = CliRunner().invoke(diff_command, ["--color", "always", "--format", "markdown", *paths]).output
    assert "\x1b[" not in markdown


def test_first_difference_names_the_path_and_both_values() -> None:
    from dashgen.diff import first_difference

    assert (
        first_difference(
            {"refresh": "1m", "id": 1, "version": 3}, {"refresh": "5m", "id": 9}, old_label="sent", new_label="stored"
        )
        == '$.refresh: sent "1m" stored "5m"'
    )
    assert first_difference({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2.0]}}) == "$.a.b[1]: old 2 new 2.0"
    assert first_difference({"a": [1]}, {"a": [1, True]}) == "$.a[1]: old (absent) new true"
    assert first_difference({"id": 1, "a": 1}, {"id": 2, "a": 1}) == ""


# --- plan rendering: approval hints on every change class ------------------------------------------------------


def test_every_change_class_in_the_plan_names_its_approval() -> None:
    from dashgen.diff import plan_lines

    live, build = generated(), generated()
    build["panels"][0]["targets"][0]["expr"] = "sum(sglang:num_running_reqs)"
    build["panels"][1]["fieldConfig"]["defaults"]["unit"] = "reqps"
    build["panels"][2]["gridPos"]["y"] = 40
    live["panels"].append(panel(7, "Old panel", "up", y=50))
    build["panels"].append(panel(8, "New panel", "up", y=60))
    build["templating"]["list"][1]["query"] = "label_values(sglang:num_running_reqs, node)"
    live["templating"]["list"].append({"name": "gone", "type": "custom", "query": "a,b"})
    build["templating"]["list"].append({"name": "fresh", "type": "custom", "query": "a,b"})
    build["refresh"] = "5m"
    lines = plan_lines(
        diff_dashboards(live, build),
        uid="cache-evidence",
        panel_keys={1: "slo.running"},
        approvals={"cache-evidence/var:node"},
    )
    headings = [line for line in lines if not line.startswith(" ")]
    assert len(headings) == 9, lines
    assert all(
        h.endswith("]") and (" [needs --approve " in h or " [approved: " in h or "[no approval needed]" in h)
        for h in headings
    ), headings
    joined = "\n".join(headings)
    for expected in (
        '"Running requests" (id 1): query [needs --approve slo.running]',
        '"Queued requests" (id 2): unit [no approval needed]',
        '"Old panel" (id 7) is live but not in the build [needs --approve remove:panel:7]',
        '"New panel" (id 8) added (timeseries) [no approval needed]',
        "variable $node: definition [approved: --approve var:node]",
        "variable $gone is live but not in the build [needs --approve remove:var:gone]",
        "variable $fresh added [no approval needed]",
        "moved: ",
        "~ dashboard refresh",
    ):
        assert expected in joined, expected
    assert '"5m"' in "\n".join(lines)  # old -> new values under each heading


def test_approval_keys_are_the_keys_the_publish_plan_refuses_with() -> None:
    from dashgen.publish.guard import content_keys as approval_keys
    from dashgen.publish.ledger import LedgerRecord
    from dashgen.publish.plan import LiveState, PublishTarget, plan_release
    from dashgen.render.canonical import content_sha

    live, build = generated(), generated()
    build["panels"][0]["targets"][0]["expr"] = "sum(sglang:num_running_reqs)"
    build["templating"]["list"][1]["query"] = "label_values(sglang:num_running_reqs, node)"
    live["panels"].append(panel(7, "Old panel", "up", y=50))
    live["templating"]["list"].append({"name": "gone", "type": "custom", "query": "a,b"})
    state = LiveState("cache-evidence", 3, None, live, None)
    record = LedgerRecord.from_json(
        {"uid": "cache-evidence", "outcome": "published", "stored_sha": state.sha, "grafana_version": 3}
    )
    assert record is not None
    target = PublishTarget("p", "cache-evidence", build, content_sha(build), {1: "slo.running"})
    (planned,) = plan_release([target], {"cache-evidence": state}, [record]).dashboards
    keys = approval_keys(diff_dashboards(live, build), {1: "slo.running"})
    assert [r.key for r in planned.refusals] == [k for k, _ in keys]
    assert [r.reason for r in planned.refusals] == [reason for _, reason in keys]


def test_a_legend_rename_in_the_plan_needs_no_approval_and_globs_approve_as_the_release_does() -> None:
    """One definition (issue 16 item 8): the plan view refuses exactly what ``publish`` refuses — a legend rename is
    not a query change — and shows as approved what ``--approve`` globs and ``uid/`` prefixes grant."""
    from dashgen.diff import plan_lines
    from dashgen.publish.approvals import Approvals
    from dashgen.publish.guard import content_keys as approval_keys

    live, build = generated(), generated()
    build["panels"][0]["targets"][0]["legendFormat"] = "{{node}} renamed"
    renamed = diff_dashboards(live, build)
    assert approval_keys(renamed, {1: "slo.running"}) == []
    heading = next(line for line in plan_lines(renamed, uid="u", panel_keys={1: "slo.running"}) if "(id 1)" in line)
    assert heading.endswith("[no approval needed]"), heading

    build["panels"][0]["targets"][0]["expr"] = "sum(sglang:num_running_reqs)"
    changed = diff_dashboards(live, build)
    grants = Approvals(patterns=("dg-*/slo.*",)).grants
    heading = next(
        line
        for line in plan_lines(changed, uid="dg-x-cluster", panel_keys={1: "slo.running"}, approvals=grants)
        if "(id 1)" in line
    )
    assert heading.endswith("[approved: --approve slo.running]"), heading
    heading = next(
        line
        for line in plan_lines(changed, uid="other", panel_keys={1: "slo.running"}, approvals=grants)
        if "(id 1)" in line
    )
    assert heading.endswith("[needs --approve slo.running]"), heading
