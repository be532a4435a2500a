"""The render core: determinism, stable identity, validation on every build, and the build command."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from memo_state import emptied_memos

from dashgen.build import build_all, build_profile, write_dashboards
from dashgen.cli.app import main
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profile, load_profiles
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels
from dashgen.document.copying import tree_copy
from dashgen.errors import BuildValidationError
from dashgen.render.document import render_dashboard
from dashgen.render.ids import dashboard_uid
from dashgen.render.memo import JsonCopies
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target
from dashgen.render.validate import validate_dashboard

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"


@pytest.fixture(scope="module")
def built():
    return build_all(load_profiles(directory=PROFILES))


def test_four_profiles_render(built):
    assert {b.profile for b in built} == {"long-context-64", "pd-128", "h20-16", "video-200"}


def test_two_consecutive_builds_are_byte_identical(built):
    with emptied_memos():  # two builds, not one build and its memo
        again = build_all(load_profiles(directory=PROFILES))
    assert [(b.relative_path(), b.data) for b in built] == [(b.relative_path(), b.data) for b in again]


def test_committed_dashboards_equal_a_fresh_build(built):
    for dashboard in built:
        committed = ROOT / "dashboards" / dashboard.relative_path()
        assert committed.exists(), f"{committed} missing: run make dashboards and commit"
        assert committed.read_bytes() == dashboard.data, f"{committed} is stale: run make dashboards and commit"
    on_disk = {p.relative_to(ROOT / "dashboards") for p in (ROOT / "dashboards").glob("*/*.json")}
    assert on_disk == {b.relative_path() for b in built}


def test_encoding_is_canonical(built):
    assert len(built) == len(list(PROFILES.glob("*.toml")))
    for dashboard in built:
        text = dashboard.data.decode("utf-8")
        assert text.endswith("}\n")
        assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# What Grafana accepts as a dashboard uid.
GRAFANA_UID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def is_valid_uid(uid: str) -> bool:
    return bool(GRAFANA_UID.match(uid))


def test_uids_are_stable_short_and_safe(built):
    for dashboard in built:
        assert dashboard.uid == dashboard_uid(dashboard.profile, dashboard.spec.name)
        assert is_valid_uid(dashboard.uid) and len(dashboard.uid) <= 40
    long_uid = dashboard_uid("a-very-long-profile-name-for-testing", "a-long-dashboard-name")
    assert len(long_uid) <= 40 and is_valid_uid(long_uid)
    assert long_uid == dashboard_uid("a-very-long-profile-name-for-testing", "a-long-dashboard-name")


def _ids_by_key(spec) -> dict[str, int]:
    document = render_dashboard(spec)
    by_title = {panel["title"]: panel["id"] for panel in (s.raw for s in iter_panels(document))}
    return {panel.key: by_title[panel.title] for panel in spec.panels()}


def test_adding_a_panel_changes_no_other_panel_id():
    from dashgen_panels import GROUPS

    profile = load_profile(PROFILES / "long-context-64.toml")
    first = GROUPS[0]

    class WithExtraPanel:
        TITLE = first.TITLE
        WORKLOADS = first.WORKLOADS

        @staticmethod
        def build(profile, topology):
            group = first.build(profile, topology)
            extra = PanelSpec(
                key=f"{group.key}.an_added_panel",
                title="An added panel",
                kind="timeseries",
                evidence=Evidence("test", "test", "test"),
                targets=(Target("up"),),
                width=6,
            )
            return GroupSpec(group.key, group.title, (extra, *group.panels), group.collapsed)

    before = _ids_by_key(dashboard_specs(profile)[0])
    after = _ids_by_key(dashboard_specs(profile, (WithExtraPanel, *GROUPS[1:]))[0])
    (added,) = set(after) - set(before)
    assert added.endswith(".an_added_panel")
    assert {key: after[key] for key in before} == before


def test_rows_follow_the_reading_order(built):
    from dashgen_panels import GROUPS, cache_evidence, gpu_timelines, jobs, kv_cache_nvme, video_slo

    assert len(built) == len(list(PROFILES.glob("*.toml")))
    for dashboard in built:
        rows = [p["title"] for p in dashboard.document["panels"] if p["type"] == "row"]
        (loaded,) = load_profiles([dashboard.spec.profile], directory=PROFILES)
        # S25: only the groups of the profile's workload kinds, each module's rows in the modules' reading order
        expected = [
            row.title
            for module in GROUPS
            if any(loaded.has_kind(kind) for kind in module.WORKLOADS)
            for group in (module.build(loaded, Topology(loaded)),)
            if group is not None
            for row in group.shown_rows()
        ]
        assert rows == expected, dashboard.profile
        assert len(rows) == len(set(rows)), "row titles are unique"
        video = {video_slo.TITLE, jobs.TITLE, cache_evidence.NO_CACHE_TITLE, kv_cache_nvme.VIDEO_TITLE}
        if dashboard.profile == "video-200":  # the video pool: Jobs and Job SLO plus the shared GPU / node groups
            assert video <= set(rows) and gpu_timelines.TITLE in rows and cache_evidence.TITLE not in rows
        else:
            assert not video & set(rows) and cache_evidence.TITLE in rows


def test_grafanalib_legacy_defaults_are_normalised_away(built):
    assert len(built) == len(list(PROFILES.glob("*.toml")))
    targets = 0
    for dashboard in built:
        document = dashboard.document
        assert document["schemaVersion"] in (41, 42)
        for legacy in ("rows", "sharedCrosshair", "hideControls", "style", "__inputs", "gnetId"):
            assert legacy not in document
        text = dashboard.data.decode()
        for harmful in (
            '"maxDataPoints": 100',
            '"intervalFactor"',
            '"refId": ""',
            '"span"',
            '"minSpan"',
            '"noValue": "none"',
            '"steps": ""',
            '"time_options"',
            '"useTags"',
        ):
            assert harmful not in text, f"{dashboard.uid}: {harmful}"
        for path, panel in ((s.path, s.raw) for s in iter_panels(document)):
            for target in panel.get("targets", []):
                assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, path
                targets += 1
    assert targets >= 100 * len(built), "every dashboard has its targets checked"


def test_no_nulls_except_threshold_base_steps(built):
    def nulls(value, path="$"):
        if value is None:
            yield path
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from nulls(item, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from nulls(item, f"{path}[{index}]")

    assert len(built) == len(list(PROFILES.glob("*.toml")))
    for dashboard in built:
        bad = [p for p in nulls(dashboard.document) if not p.endswith(".thresholds.steps[0].value")]
        assert bad == [], dashboard.uid


def test_schema_version_follows_the_target_grafana(built):
    versions = {b.profile: b.document["schemaVersion"] for b in built}
    assert versions["h20-16"] == 41  # Grafana 11.6
    assert versions["long-context-64"] == 42  # Grafana 12.3


def _broken(document: dict, mutate) -> list[str]:
    doc = tree_copy(document)
    mutate(doc)
    return validate_dashboard(doc, "long-context-64/dg-long-context-64-cluster")


def _first_data_panel(doc: dict) -> dict:
    return next(p for p in (s.raw for s in iter_panels(doc)) if p["type"] not in ("row", "text"))


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: _first_data_panel(d)["targets"].append(dict(_first_data_panel(d)["targets"][0])), "duplicate refId"),
        (
            lambda d: _first_data_panel(d).update(datasource={"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}),
            "hard-coded datasource uid",
        ),
        (lambda d: _first_data_panel(d)["gridPos"].update(x=20, w=12), "exceeds the 24-column grid"),
        (
            lambda d: (
                _first_data_panel(d)["fieldConfig"]["defaults"].update(unit="percent", min=0, max=None)
                or _first_data_panel(d)["fieldConfig"]["defaults"].pop("max")
            ),
            "max 100 (has min=0, max=None) (S5)",
        ),
        (lambda d: _first_data_panel(d)["targets"][0].update(expr='up{node=~"$nodes"}'), "unknown variable $nodes"),
        (lambda d: _first_data_panel(d)["targets"][0].update(refId=""), "$.panels"),
        (lambda d: _first_data_panel(d)["targets"][0].update(intervalFactor=2), "intervalFactor"),
        (lambda d: d.update(schemaVersion=12), "$.schemaVersion"),
        (lambda d: _first_data_panel(d).update(id=d["panels"][0]["id"]), "also used by panel"),
    ],
)
def test_validation_names_dashboard_panel_and_path(built, mutate, expected):
    document = next(b.document for b in built if b.profile == "long-context-64")
    problems = _broken(document, mutate)
    assert problems, "the broken document passed validation"
    assert any(expected in problem for problem in problems), problems
    assert all(problem.startswith("long-context-64/dg-long-context-64-cluster: ") for problem in problems)


def test_overlapping_panels_are_refused(built):
    document = tree_copy(next(b.document for b in built if b.profile == "long-context-64"))
    data_panels = [p for p in (s.raw for s in iter_panels(document)) if p["type"] != "row"]
    data_panels[1]["gridPos"] = dict(data_panels[0]["gridPos"])
    problems = validate_dashboard(document, "x/y")
    assert any("overlaps panel" in p and data_panels[1]["title"] in p for p in problems)


def _one_panel_group(panel: PanelSpec):
    """A panel-group module holding just ``panel``, to build a profile with."""

    class OnePanel:
        TITLE = "One panel"
        WORKLOADS = ("text-generation", "video-generation")

        @staticmethod
        def build(profile, topology):
            return GroupSpec(key=panel.key.split(".")[0], title="One panel", panels=(panel,))

    return OnePanel


def test_s5_a_percent_panel_without_a_fixed_axis_stops_the_build_naming_it():
    loose = PanelSpec(
        key="loose.share", title="Loose share", kind="timeseries", evidence=Evidence("s", "q", "l"), unit="percent"
    )
    with pytest.raises(BuildValidationError, match=r"Loose share.*percent needs min 0 and max 100.*\(S5\)"):
        build_profile(load_profile(PROFILES / "h20-16.toml"), groups=(_one_panel_group(loose),))


def test_build_profile_rejects_an_invalid_panel_and_names_it():
    broken = PanelSpec(
        key="broken.p",
        title="Broken panel",
        kind="timeseries",
        evidence=Evidence("s", "q", "l"),
        targets=(Target('up{node=~"$nodez"}'),),
    )
    with pytest.raises(BuildValidationError) as caught:
        build_profile(load_profile(PROFILES / "h20-16.toml"), (_one_panel_group(broken),))
    assert 'h20-16/dg-h20-16-cluster: panel "Broken panel": $.panels[1].targets[0].expr: unknown variable $nodez' in (
        str(caught.value)
    )


def test_build_command_writes_and_is_idempotent(tmp_path):
    runner = CliRunner()
    out = tmp_path / "out"
    first = runner.invoke(main, ["--profiles-dir", str(PROFILES), "build", "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert first.output.count("written") == 4
    second = runner.invoke(main, ["--profiles-dir", str(PROFILES), "build", "--out", str(out)])
    assert second.exit_code == 0 and second.output.count("unchanged") == 4
    listing = runner.invoke(
        main, ["--profiles-dir", str(PROFILES), "build", "--out", str(out), "--profile", "h20-16", "--format", "json"]
    )
    assert json.loads(listing.output)["results"][0]["uid"] == "dg-h20-16-cluster"


def test_a_bad_profile_writes_nothing_and_exits_2(tmp_path):
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    bad = profiles / "pd-128.toml"
    bad.write_text(bad.read_text().replace("replicas = 12", "replicas = 13"))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["--profiles-dir", str(profiles), "build", "--out", str(out)])
    assert result.exit_code == 2
    assert "pd-128.toml: pools:" in result.output and "the cluster has 16 nodes" in result.output
    assert not out.exists()


def test_unknown_profile_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(
        main, ["--profiles-dir", str(PROFILES), "build", "--profile", "nope", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2 and "no such profile" in result.output


def test_every_command_has_help_and_there_is_a_version():
    runner = CliRunner()
    assert runner.invoke(main, ["--version"]).exit_code == 0
    names = main.list_commands(None)
    assert {"build", "profiles", "rules", "lint", "diff", "check", "publish"} <= set(names)
    listing = runner.invoke(main, ["--help"]).output
    for name in names:
        assert name in listing
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, name


def test_profiles_command_lists_sizes_and_sources():
    result = CliRunner().invoke(main, ["--profiles-dir", str(PROFILES), "profiles", "--format", "json"])
    rows = {row["name"]: row for row in json.loads(result.output)["results"]}
    assert rows["long-context-64"]["gpus"] == 64 and "mooncake_client" in rows["long-context-64"]["not_exported"]
    assert rows["long-context-64"]["store_per_node"] == 64 * 2**30


def test_write_prunes_stale_dashboards_of_built_profiles(tmp_path, built):
    stale = tmp_path / "h20-16" / "dg-h20-16-old.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}\n")
    write_dashboards(built, tmp_path)
    assert not stale.exists()


def test_build_and_rules_remove_the_files_of_a_deleted_profile_and_say_so(tmp_path):
    """``make dashboards`` after a profile is deleted leaves nothing behind for ``check`` to call extra; a file
    dashgen did not write (another name, or a rule file without dashgen's header) is kept."""
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    out, rules = tmp_path / "dashboards", tmp_path / "rules"
    runner = CliRunner()
    for command in (["build", "--out", str(out)], ["rules", "--out", str(rules)]):
        assert runner.invoke(main, ["--profiles-dir", str(profiles), *command]).exit_code == 0
    (out / "pd-128" / "notes.json").write_text("{}")
    (out / "hand-made").mkdir()
    (out / "hand-made" / "dg-hand-made-x.json").write_text("{}")
    (rules / "ours.yml").write_text("groups: []\n")
    (profiles / "pd-128.toml").unlink()
    built = runner.invoke(main, ["--profiles-dir", str(profiles), "build", "--out", str(out)])
    assert built.exit_code == 0, built.output
    assert f"{out / 'pd-128' / 'dg-pd-128-cluster.json'}  removed (profile pd-128 no longer exists)" in built.output
    assert sorted(p.name for p in (out / "pd-128").iterdir()) == ["notes.json"]
    assert (out / "hand-made" / "dg-hand-made-x.json").exists()  # not a dashboard dashgen built
    assert built.output.count("removed") == 1
    written = runner.invoke(main, ["--profiles-dir", str(profiles), "rules", "--out", str(rules), "--format", "json"])
    assert written.exit_code == 0, written.output
    removed = [r["path"] for r in json.loads(written.output)["results"] if r.get("removed")]
    assert removed == [str(rules / "pd-128.yml")] and (rules / "ours.yml").exists()
    one = runner.invoke(main, ["--profiles-dir", str(PROFILES), "build", "--out", str(out), "--profile", "h20-16"])
    assert "removed" not in one.output  # building one profile prunes no other


# --- one build per profile content in a process (render.memo): what keeps make test-fast's CPU down -----------------


def test_a_profile_is_composed_built_and_rendered_once_per_content_and_each_caller_gets_its_own_documents(tmp_path):
    """The same profile read twice (another object, another path, the same content) is not composed, built or
    rendered again; each call gets its own documents, so a test that changes one cannot change another's; a
    changed profile is built anew. Were the memo lost, every build of a test session would be computed again
    (issue 42: about 30 s of make test-fast's CPU)."""
    from dashgen import build, dashboard
    from dashgen.render import document as v1_render

    first_profile = load_profile(PROFILES / "h20-16.toml")
    (tmp_path / "h20-16.toml").write_bytes((PROFILES / "h20-16.toml").read_bytes())
    same_content = load_profile(tmp_path / "h20-16.toml")
    # from emptied memos: what earlier tests of the worker left (a build kept, its render pushed out of the bounded
    # render memo) would otherwise decide which of the calls below compute
    with emptied_memos():
        (first,) = build_profile(first_profile)
        counts = (build._BUILDS.misses, dashboard._COMPOSED.misses, v1_render._RENDERED.misses)
        (second,) = build_profile(same_content)
        (spec,) = dashboard_specs(same_content)
        assert render_dashboard(spec) == first.document
        assert (build._BUILDS.misses, dashboard._COMPOSED.misses, v1_render._RENDERED.misses) == counts
        assert second.data == first.data and second.document == first.document
        assert second.document is not first.document and second.spec is first.spec
        second.document["title"] = "changed by a test"
        second.document["panels"][0]["title"] = "changed by a test"
        (third,) = build_profile(first_profile)
        assert third.document == first.document and third.document["title"] != "changed by a test"
        assert render_dashboard(spec) is not render_dashboard(spec)

        (retitled,) = build_profile(replace(first_profile, title="Another title"))
        assert build._BUILDS.misses == counts[0] + 1 and dashboard._COMPOSED.misses == counts[1] + 1
        assert retitled.document["title"] == "Another title"


LOADED_ON_USE = ("jsonschema", "hypothesis", "deepdiff", "rich")  # a rejected document, tests only, drawing


def test_no_command_loads_jsonschema_hypothesis_deepdiff_or_rich_before_it_needs_them():
    """In a fresh interpreter, loading every command of the table (what ``dashgen <command>`` imports before it
    runs) leaves jsonschema (only a rejected document's error list needs it; ~0.1 s of CPU per start), the test
    libraries and rich (the commands that draw import it) unloaded. A test session collects most of dashgen too,
    so a module-level import of one of them costs every command start and every test run."""
    import subprocess
    import sys

    from dashgen.cli.app import COMMANDS

    script = (
        "import json, sys\n"
        "from dashgen.cli import app\n"
        "loaded = [app.load_command(name) for name in app.COMMANDS]\n"
        f"print(json.dumps([len(loaded), sorted(m for m in {LOADED_ON_USE!r} if m in sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    count, heavy = json.loads(done.stdout)
    assert count == len(COMMANDS) >= 20
    assert heavy == [], f"imported when a command loads: {heavy}"


def test_a_profiles_rule_groups_are_computed_once_per_content_and_shared_because_they_are_immutable(monkeypatch):
    """The rule files, their docs, the alert links and the tests ask for the same profile's rule groups again and
    again (about 190 times in make test-fast): an equal profile read from another path gets the same answer without
    computing it again, a changed one its own; the answer is hashable (frozen records and tuples only), so sharing
    it cannot let one caller change another's."""
    from dashgen.rules import render as rules_render

    calls: list[str] = []
    real = rules_render.inventory_records
    monkeypatch.setattr(rules_render, "inventory_records", lambda p: calls.append(p.name) or real(p))
    profile = replace(load_profile(PROFILES / "pd-128.toml"), title="rule groups once per content")
    first = rules_render.rule_groups(profile)
    again = rules_render.rule_groups(replace(profile, path=Path("elsewhere/pd-128.toml")))
    assert calls == ["pd-128"] and again is first and hash(first) == hash(again)
    moved = rules_render.rule_groups(replace(profile, deployment="another-deployment"))
    assert calls == ["pd-128", "pd-128"] and moved != first and len(moved) == len(first)
    label = profile.label("deployment")
    assert all(dict(rule.labels).get(label) == "another-deployment" for group in moved for rule in group.rules)


def test_a_query_is_parsed_once_per_process_whoever_reads_it():
    """The build's syntax check, the linter, the scope rewrites, validate-queries' selectors and the demo share one
    parse tree per expression text, and a profile that differs in its title parses none of its queries again:
    were the sharing lost, make test-fast would parse ~37,000 expressions instead of a few thousand (issue 42)."""
    from dashgen import build
    from dashgen.lint.promql import parse as lint_parse
    from dashgen.live import selectors
    from dashgen.render import promql_trees

    expr = 'sum by (node) (rate(vllm:request_success_total{deployment="a"}[5m])) / on (node) group_left up'
    assert lint_parse(expr) is promql_trees.parse(expr) is promql_trees.parse(expr)
    names = selectors.metric_names(expr)
    assert names == ["up", "vllm:request_success_total"] or names == ["vllm:request_success_total", "up"]
    names.append("changed by a caller")
    assert "changed by a caller" not in selectors.metric_names(expr) and selectors.metric_names(expr) is not names
    with pytest.raises(ValueError):
        promql_trees.parse("sum(")

    profile = load_profile(PROFILES / "h20-16.toml")
    build_profile(profile)
    parsed, checked = promql_trees.TREES.misses, build.syntax_problem.cache_info().misses
    (retitled,) = build_profile(replace(profile, title="Parsed once"))
    assert retitled.document["title"] == "Parsed once"
    assert (promql_trees.TREES.misses, build.syntax_problem.cache_info().misses) == (parsed, checked)
    assert build.syntax_problem.cache_info().hits > 50


def test_only_a_tree_that_copies_faithfully_is_kept():
    assert JsonCopies.of({"a": [1, 2.5, None, True, "x"], "b": {"c": {}}}) is not None
    for unfaithful in ({"a": (1, 2)}, {"a": float("nan")}, {1: "a"}, {"a": 2**70}, {"a": object()}):
        assert JsonCopies.of(unfaithful) is None, unfaithful
    kept = JsonCopies.of({"a": [{"b": 1}]})
    assert kept is not None and kept.copy() == kept.copy() and kept.copy() is not kept.copy()
