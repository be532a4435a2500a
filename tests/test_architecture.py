"""The layout holds: imports point down only and form no cycle, modules stay small, the engine's top
level stays short, every panel title is written literally in its defining module, and the panel
index docs/panels.md is what a fresh build writes."""

from __future__ import annotations

import ast
import json
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest
from source_trees import source, tree, walked

from dashgen.deployment.profile import load_profiles
from dashgen.panel_index import INDEX_PATH, build_index, collect
from dashgen.project import CONTENT_PACKAGES as IMPORT_NAMES  # folder -> installed import name

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dashgen", "panels", "queries")
MAX_LINES = 600  # "no module over ~400 lines", set before ruff format; formatted code puts one argument per line
MAX_TOP_LEVEL_MODULES = 8  # dashgen/*.py besides __init__ and __main__

# Lower layers never import higher ones; two packages of one layer never import each other.
LAYERS: dict[str, float] = {
    "dashgen": 0,
    "dashgen.escape": 0,
    "dashgen.errors": 0,
    "dashgen.files": 0,
    "dashgen.project": 0.5,
    "dashgen.exporters": 0.75,
    "dashgen.deployment": 1,
    "dashgen.document": 1,
    "dashgen.net": 2,
    "dashgen.render": 2,
    "dashgen_queries": 3,
    "dashgen.catalogue": 3.5,
    "dashgen_panels": 4,
    "dashgen.variables": 4.5,
    "dashgen.team_panels": 4.5,
    "dashgen.dashboard": 5,
    "dashgen.build": 6,
    "dashgen.rules": 6,
    "dashgen.panel_index": 6,
    "dashgen.lint": 7,
    "dashgen.diff": 7,
    "dashgen.grafana": 7,
    "dashgen.live": 7,
    "dashgen.manifests": 7,
    "dashgen.demo": 8,
    "dashgen.preview": 8,
    "dashgen.importer": 8,
    "dashgen.publish": 9,
    "dashgen.cli": 10,
    "dashgen.__main__": 11,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts[0] = IMPORT_NAMES.get(parts[0], parts[0])
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(p): p
    for package in PACKAGES
    for p in sorted((ROOT / package).rglob("*.py"))
    if "data" not in p.relative_to(ROOT).parts[1:-1]
}  # dashgen/data: templates, not the engine's code


def layer_of(module: str) -> str:
    """The layer key of a module: its dashgen subpackage or top-level module, or panels / queries."""
    parts = module.split(".")
    if parts[0] != "dashgen":
        return parts[0]
    return "dashgen" if len(parts) == 1 else f"dashgen.{parts[1]}"


def imports_of(path: Path) -> set[str]:
    """Every module of the project that ``path`` imports, at any depth of the file (function-level too)."""
    found = set()
    for node in walked(tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from package import submodule`` imports the submodule; anything else comes from node.module
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            candidates = [name for name in submodules if name in MODULES]
            if len(candidates) < len(submodules):
                candidates.append(node.module)
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in candidates if name in MODULES}
    return found


@cache
def graph() -> dict[str, set[str]]:
    """Each module's imports of the project's modules: read when a test asks (not while the module is collected, so a
    run that selects none of these tests never parses the project)."""
    return {module: imports_of(path) - {module} for module, path in MODULES.items()}


def test_every_module_has_a_layer():
    missing = sorted({layer_of(m) for m in MODULES} - set(LAYERS))
    assert not missing, f"give these packages a layer in LAYERS: {missing}"


def test_no_upward_or_sideways_import():
    wrong = []
    for module, targets in graph().items():
        here = layer_of(module)
        for target in targets:
            there = layer_of(target)
            if there != here and LAYERS[there] >= LAYERS[here]:
                wrong.append(f"{module} (layer {LAYERS[here]}) imports {target} (layer {LAYERS[there]})")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle():
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the stack, 2 done
    cycles = []

    imports = graph()

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(imports[module]):
            if state[target] == 1:
                cycles.append(" -> ".join(stack[stack.index(target) :] + [target]))
            elif state[target] == 0:
                visit(target, stack)
        stack.pop()
        state[module] = 2

    for module in sorted(imports):
        if state[module] == 0:
            visit(module, [])
    assert not cycles, "\n".join(cycles)


def test_no_module_over_the_size_limit():
    big = {m: n for m, p in MODULES.items() if (n := len(source(p).splitlines())) > MAX_LINES}
    assert not big, big


def test_the_engine_top_level_is_short_and_every_module_says_what_it_owns():
    top = [p.name for p in (ROOT / "dashgen").glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    undocumented = [m for m, p in MODULES.items() if ast.get_docstring(tree(p)) is None]
    assert not undocumented, undocumented


def _literals(path: Path) -> set[str]:
    """String constants of a module, and the literal text before the first placeholder of each f-string."""
    found = set()
    for node in walked(tree(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            found.add(node.values[0].value)
    return found


@pytest.fixture(scope="module")
def entries():
    return collect(load_profiles([], ROOT / "profiles"), ROOT)


def test_every_panel_title_is_written_literally_in_its_defining_module(entries):
    """A grep for a title shown in Grafana finds its definition: the whole title, or the part before a
    profile-dependent '(...)' suffix (source caption, SLO window, mount point)."""
    missing = []
    for entry in entries:
        modules = {where.rsplit(".", 1)[0] for where, _ in entry.definitions}
        literals = set().union(*(_literals(ROOT / (module.replace(".", "/") + ".py")) for module in modules))
        for title in entry.titles:
            stem = title.rsplit(" (", 1)[0]
            if not ({title, stem} & literals or any(literal.startswith(f"{stem} (") for literal in literals)):
                missing.append(f"{entry.key}: {title!r} not literal in {sorted(modules)}")
    assert not missing, "\n".join(missing)
    assert len(entries) > 200


def test_every_panel_has_a_defining_function_and_a_description(entries):
    functions = [where.rsplit(".", 1)[1] for e in entries for where, _ in e.definitions]
    assert len(functions) >= len(entries) > 200
    assert not {"?", "build"} & set(functions), [e.key for e in entries if "?" in str(e.definitions)]
    assert all(text for e in entries for _, text in e.evidence if e.kind != "text")


def test_the_index_names_each_profiles_own_defining_function(entries):
    """A key defined by different functions per profile (the video profile's first screen) lists each,
    with its profiles, instead of the last profile's only."""
    by_key = {e.key: dict(e.definitions) for e in entries}
    assert by_key["first_screen.serving"] == {
        "panels.first_screen.serving_panel": ("h20-16", "long-context-64", "pd-128"),
        "panels.first_screen.instance_state_panel": ("video-200",),
    }
    assert by_key["first_screen.slo"] == {
        "panels.first_screen.slo_panel": ("h20-16",),
        "panels.first_screen.client_and_engine_slo_panel": ("long-context-64", "pd-128"),
        "panels.first_screen.job_slo_panel": ("video-200",),
    }
    ids = [e.panel_id for e in entries]
    assert len(set(ids)) == len(ids) > 200


def test_panel_index_is_fresh():
    committed = ROOT / INDEX_PATH
    assert committed.read_bytes() == build_index(load_profiles([], ROOT / "profiles"), ROOT), (
        "docs/panels.md is stale: run make dashboards"
    )


def test_panel_index_lists_every_panel_of_the_committed_dashboards(entries):
    shown = set()
    for path in (ROOT / "dashboards").glob("*/*.json"):
        top = json.loads(path.read_text(encoding="utf-8"))["panels"]
        for panel in [*top, *(nested for row in top for nested in row.get("panels", []))]:
            if panel["type"] != "row":
                shown.add(panel["title"])
    assert shown == {title for e in entries for title in e.titles}


def test_s25_every_group_module_declares_the_workload_kinds_it_serves():
    """The composition keeps a group only for the workload kinds in its ``WORKLOADS`` (dashgen.dashboard):
    a group module without it, or naming an unknown kind, would be shown or hidden by accident."""
    from dashgen_panels import GROUPS

    from dashgen.deployment.profile import WORKLOAD_KINDS

    wrong = [
        module.__name__
        for module in GROUPS
        if not isinstance(getattr(module, "WORKLOADS", None), tuple)
        or not module.WORKLOADS
        or set(module.WORKLOADS) - set(WORKLOAD_KINDS)
    ]
    assert not wrong, f"declare WORKLOADS = (kinds...) from {WORKLOAD_KINDS} in: {wrong}"


def test_one_place_names_the_content_packages():
    """setup.py installs panels/, queries/, profiles/ under the names dashgen.project translates; the two agree."""
    setup = tree(ROOT / "setup.py")
    (folders,) = [
        ast.literal_eval(node.value)
        for node in setup.body
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["FOLDERS"]
    ]
    assert {folder: name for name, folder in folders.items()} == IMPORT_NAMES
    assert len(IMPORT_NAMES) == 3


# Functions product code does not call, kept on purpose: what each is for.
CALLED_BY_TESTS_ONLY = {
    "conditions_markdown": "writes the conditions table docs/profiles.md holds; its test keeps the copy equal",
    "per_replica_bytes": "the Store's per-replica capacity query the per-replica panels' numbers are checked against",
    "recorded_reason": "reads one layer's recorded reason code back, for the tests of the recording rule",
}


def test_no_dead_function_and_none_that_only_tests_call():
    """Every top-level function and class of dashgen/, panels/ and queries/ is named somewhere else in the product
    (code, pyproject.toml entry points): one that nothing calls is dead, one only tests call belongs in tests/."""
    sources = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    words: dict[str, int] = defaultdict(int)
    for path in [*sources, ROOT / "pyproject.toml", *(ROOT / "bench").rglob("*.py")]:
        for word in re.findall(r"\b[A-Za-z_]\w*\b", source(path)):
            words[word] += 1
    defined: dict[str, list[str]] = defaultdict(list)
    for path in sources:
        for node in tree(path).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("__"):
                defined[node.name].append(path.relative_to(ROOT).as_posix())
    unused = sorted(
        f"{name} ({', '.join(where)})"
        for name, where in defined.items()
        if words[name] <= len(where) and name not in CALLED_BY_TESTS_ONLY
    )
    assert len(defined) > 500
    assert not unused, "defined but not used by the product: " + "; ".join(unused)
    assert all(words[name] <= len(defined[name]) for name in CALLED_BY_TESTS_ONLY), "used now: drop it from the list"
