"""The panel index names, for each panel, only the tests that select it: by its full key, its full title, or a
prefix of either (``startswith``, an f-string's leading text), where the test writes the string, a module constant
it reads holds it, or a helper of its module it calls writes it. A key's short suffix ("queue") selects nothing."""

from __future__ import annotations

import ast
import gc
from pathlib import Path
from textwrap import dedent

from source_trees import nodes, tree

from dashgen import panel_index as index
from dashgen.panel_index import panel_tests, selectors_of

ROOT = Path(__file__).resolve().parent.parent

SAMPLE = """
LADDER = ("Ladder 1", "Ladder 2")
QUEUE = "slo_health.queue"


def _queue_panel(panels):
    return next(p for p in panels if p.key == QUEUE)


def test_says_the_word_queue():
    assert "queue" in "the queue grows"


def test_by_full_key():
    assert "slo_health.running"


def test_by_title():
    assert "Batch size: running requests"


def test_through_a_helper():
    _queue_panel([])


def test_by_a_title_prefix(titles):
    assert any(t.startswith("Queue pressure") for t in titles)


def test_by_a_constant_prefix(titles):
    for step in LADDER:
        assert any(t.startswith(step) for t in titles)


def test_by_an_fstring_prefix(window):
    assert f"slo_health.burn_{window}"


def test_by_an_expanded_fstring():
    assert [f"gpu_health.{key}" for key in ("faults", "nvlink_errors")]


def test_by_a_bare_group_fstring(key):
    assert f"gpu_health.{key}"
"""


def _selected(tmp_path: Path, key: str, *titles: str) -> set[str]:
    tests = tmp_path / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "test_sample.py").write_text(dedent(SAMPLE), encoding="utf-8")
    return {name.split("::")[1] for name in panel_tests(key, titles, selectors_of(tests))}


def test_a_short_key_suffix_selects_nothing_and_the_full_key_or_title_does(tmp_path):
    assert _selected(tmp_path, "collector.queue", "Collector queue") == set()
    assert _selected(tmp_path, "slo_health.queue", "Queue length") == {"test_through_a_helper"}
    assert _selected(tmp_path, "slo_health.running", "Batch size: running requests") == {
        "test_by_full_key",
        "test_by_title",
    }


def test_title_prefixes_select_where_written_or_held_by_a_constant(tmp_path):
    assert _selected(tmp_path, "slo_health.load_state", "Queue pressure per stage") == {"test_by_a_title_prefix"}
    assert _selected(tmp_path, "cache_ladder.occupancy", "Ladder 2: occupancy") == {"test_by_a_constant_prefix"}
    assert _selected(tmp_path, "cache_ladder.disk", "Ladder 5: disk") == set()


def test_fstrings_select_by_their_expansion_or_a_specific_leading_text(tmp_path):
    assert _selected(tmp_path, "slo_health.burn_6h", "Burn rate over 6h") == {"test_by_an_fstring_prefix"}
    assert _selected(tmp_path, "gpu_health.nvlink_errors", "NVLink") == {"test_by_an_expanded_fstring"}
    assert _selected(tmp_path, "gpu_health.pcie_replays", "PCIe replays") == set()  # a bare group names no panel


def test_the_real_index_names_no_test_that_only_shares_a_word_with_a_key():
    """``jobs.stages`` was credited to the staged-publish tests and ``collector.queue`` to the SLO tests because
    they say "stages" and "queue"; the selectors of the repository's own tests no longer do that."""
    selectors = selectors_of(ROOT / "tests")
    stages = panel_tests("jobs.stages", ("Stage time per job",), selectors)
    assert not [t for t in stages if t.startswith("test_publish_stages.py")], stages
    queue = panel_tests("collector.queue", ("Collector queue",), selectors)
    assert not [t for t in queue if t.startswith("test_slo_health.py")], queue
    slo_queue = panel_tests("slo_health.queue", ("Queue length",), selectors)
    assert "test_slo_health.py::test_stage_panels_never_sum_across_pp_rank" in slo_queue


def _named_by_ast_walk(function: ast.AST, constants: dict[str, tuple[str, ...]]) -> index._Named:
    """What ``_named`` finds, written plainly over ``ast.walk``'s nodes (its definition before the walk was made one
    pass; ``source_trees.nodes``: the same nodes in the same order): the reference the faster walk is held to."""
    walk = nodes(function)
    names = {**constants, **index._loop_strings(walk, constants)}
    literals: set[str] = set()
    prefixes: set[str] = set()
    calls: set[str] = set()
    for node in walk:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            literals.add(node.value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            literals.update(constants.get(node.id, ()))
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                calls.add(node.func.id)
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
                prefixes.update(index._strings(node.args[0] if node.args else None, names))
        elif isinstance(node, ast.JoinedStr):
            if (whole := index._expanded(node, names)) is not None:
                literals.update(whole)
            elif index._names_some_panels(lead := index._lead(node)):
                prefixes.add(lead)
    return index._Named(frozenset(literals), frozenset(prefixes), frozenset(calls))


# loops that bind the same name twice (the later wins in ast.walk's order), nested and in comprehensions, f-strings
# inside f-strings and calls, startswith over a loop variable, a constant and a tuple
ORDERED = """
GROUPS = ("slo_health", "kv_cache")
TITLES = ("Ladder 1", "Ladder 2")


def test_loops(panels):
    for key in ("a.first", "a.second"):
        assert f"{key}" in panels
    for key in GROUPS:
        for title in TITLES:
            assert any(p.title.startswith(title) for p in panels if p.key.startswith(key))
    assert [f"{g}.burn_{w}" for g in GROUPS for w in ("1h", "6h")]
    assert [t for t in TITLES if helper(f"x {t}", f"{missing}.tail", f"slo_health.queue_{t}")]
    if panels:
        key = "late.binding"
        assert f"{key}" and str(key).startswith(("Queue", "Batch"))


def helper(*texts):
    return texts
"""


def test_the_one_pass_walk_finds_what_ast_walk_finds_in_every_test_module():
    """Every function of every test module (and a sample of loops rebinding one name): the same literals, prefixes
    and calls as the plain ``ast.walk`` definition (the test modules' trees: the session's shared parse, read only)."""
    modules = [ast.parse(ORDERED), *(tree(path) for path in sorted((ROOT / "tests").glob("test_*.py")))]
    compared = 0
    for module in modules:
        constants = index._module_constants(module)
        for node in module.body:
            if isinstance(node, ast.FunctionDef):
                assert index._named(node, constants) == _named_by_ast_walk(node, constants), node.name
                compared += 1
    assert compared > 1000


def test_selectors_are_read_with_the_collector_as_it_was(tmp_path, monkeypatch):
    """The collector is paused while a module is read, and runs again after it (and stays off if it was off)."""
    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    seen: list[bool] = []
    real = index.file_selectors
    monkeypatch.setattr(index, "file_selectors", lambda source: seen.append(gc.isenabled()) or real(source))
    was = gc.isenabled()
    try:
        gc.enable()
        selectors_of(tmp_path)
        assert seen == [False] and gc.isenabled()
        gc.disable()
        selectors_of(tmp_path / "cache")  # no module there: nothing read, the collector left off
        (tmp_path / "test_sample.py").write_text(SAMPLE + "\n", encoding="utf-8")
        selectors_of(tmp_path)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


CACHED = """
def test_one():
    assert "cache_group.first_panel"
"""


def test_selectors_are_read_from_the_cache_until_a_test_module_changes(tmp_path, monkeypatch):
    """``check`` builds the index on every run: each test module's selectors are kept by the hash of its bytes, so
    an unchanged module is not parsed again, and an edited one is (its new strings select, its old ones do not)."""
    import dashgen.panel_index as index

    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path / "cache"))
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_sample.py").write_text(dedent(SAMPLE), encoding="utf-8")
    (tests / "test_cached.py").write_text(CACHED, encoding="utf-8")
    first = selectors_of(tests)
    assert first.literals["cache_group.first_panel"] == ["test_cached.py::test_one"]
    parsed: list[int] = []
    real = index.file_selectors
    monkeypatch.setattr(index, "file_selectors", lambda source: parsed.append(len(source)) or real(source))
    assert selectors_of(tests) == first
    assert parsed == []  # every module came from the cache
    (tests / "test_cached.py").write_text(CACHED.replace("first_panel", "second_panel"), encoding="utf-8")
    edited = selectors_of(tests)
    assert parsed == [len(CACHED) + 1]  # the edited module only
    assert "cache_group.first_panel" not in edited.literals
    assert edited.literals["cache_group.second_panel"] == ["test_cached.py::test_one"]


def test_an_unreadable_selector_cache_is_read_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path / "cache"))
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_sample.py").write_text(dedent(SAMPLE), encoding="utf-8")
    fresh = selectors_of(tests)
    (cached,) = (tmp_path / "cache").glob("panel-index-selectors-*.json")
    for broken in ("{not json", "[1, 2]", '{"abc": {"test_x": ["not", "lists"]}}'):
        cached.write_text(broken, encoding="utf-8")
        assert selectors_of(tests) == fresh, broken


def test_a_text_panel_lists_no_query_though_its_function_builds_charts_too():
    """A source's "not available" text is defined in the group's ``build``, which also builds the charts; the index
    lists no query for it (it reads none), and still lists the charts' queries for the charts."""
    from dashgen.deployment.profile import load_profiles
    from dashgen.panel_index import collect

    entries = {e.key: e for e in collect(load_profiles(["long-context-64"]), ROOT)}
    texts = [e for e in entries.values() if e.kind == "text"]
    assert len(texts) >= 3 and [e.key for e in texts if e.queries] == []
    assert entries["store_tent.unavailable"].definitions[0][0] == "panels.store_tent.unavailable_text"
    assert entries["store_tenants.tenant_bytes"].queries


PANEL_MODULE = """
from dashgen_queries.promql import selector


def first_panel(profile):
    return selector("up")
"""


def test_query_calls_are_read_from_the_cache_until_a_panel_module_changes(tmp_path, monkeypatch):
    """The queries each panel function calls are kept by the hash of its module's bytes (``check`` builds the index
    on every run): an unchanged module is not parsed again, an edited one is, and a broken cache file is read
    afresh."""
    import dashgen.panel_index as index

    monkeypatch.setenv("DASHGEN_CACHE_DIR", str(tmp_path / "cache"))
    module = tmp_path / "sample_panels.py"
    module.write_text(PANEL_MODULE, encoding="utf-8")
    calls = index._QueryCalls()
    assert calls(module, "first_panel") == ("queries.promql.selector",)
    calls.save()
    parsed: list[str] = []
    real = index._parse
    monkeypatch.setattr(index, "_parse", lambda path, *key: parsed.append(path.name) or real(path, *key))
    assert index._QueryCalls()(module, "first_panel") == ("queries.promql.selector",)
    assert parsed == []  # from the cache
    module.write_text(PANEL_MODULE.replace('selector("up")', "rate_of('up')").replace("selector", "rate_of"))
    assert index._QueryCalls()(module, "first_panel") == ("queries.promql.rate_of",)
    assert set(parsed) == {"sample_panels.py"}  # parsed again, the edited module only
    (cached,) = (tmp_path / "cache").glob("panel-index-queries-*.json")
    cached.write_text('{"x": [1]}', encoding="utf-8")
    assert index._QueryCalls()(module, "first_panel") == ("queries.promql.rate_of",)


def test_a_team_module_s_titles_and_descriptions_are_inert_markdown_and_dashgen_s_own_unchanged():
    from dataclasses import replace

    from markdown_it import MarkdownIt

    from dashgen.deployment.profile import load_profiles

    (profile,) = load_profiles(["h20-16"], ROOT / "profiles")
    team = replace(profile, dashboard=replace(profile.dashboard, extra_modules=("imported",)))
    payload = (
        "<img src=http://beacon.example/x.png> [open](javascript:alert(1)) ![i](http://beacon.example/i.png) @team"
    )

    def entry(key: str, title: str, description: str) -> index.PanelEntry:
        return index.PanelEntry(
            key, ("h20-16",), (title,), "timeseries", 1, (), (), (), (), ((("h20-16",), description),)
        )

    own = entry("first_screen.x", "Own", "Uses `--flag` as written")
    foreign = entry("imported.top.x", f"T {payload}", f"first\n\n<script>alert(1)</script>\n# {payload}")
    text = index.render_index([own, foreign], [team]).decode("utf-8")
    assert "  - Uses `--flag` as written" in text  # dashgen's own description: its code span kept
    html = MarkdownIt("commonmark").render(text)
    assert html.count("<code>") >= 3  # the two keys and the own description's code span
    for tag in ("<img", "<script", "<a "):
        assert tag not in html, (tag, html)
    assert html.count("<h1>") == 1 and "@team" not in html  # the index's own heading; no mention
