"""The generated panel index ``docs/panels.md``: for every panel of every profile, its key, title,
the group module and function that define it, the ``queries`` functions that function calls, the
rules (S-ids of domain.md) it proves, the tests that check it by name, and its description's
source / quantity / limit. It doubles as the reading guide: what each panel proves and what not.

Pure apart from reading source files: profiles -> specs (while the kit notes which function made
each panel) -> the Python source of ``panels/`` and ``tests/`` (``ast``) -> markdown bytes. What each test module
selects is kept in dashgen's cache folder by the hash of the module's bytes (``check`` builds the index every run).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import dashgen_panels as panels

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import Profile
from dashgen.escape import markdown_code, markdown_text
from dashgen.files import CACHE_READ_ERRORS, atomic_write, cache_dir, read_cache_json, read_regular_bytes
from dashgen.project import import_name, shown_name
from dashgen.render import kit, source_strings
from dashgen.render.collector import collector_paused
from dashgen.render.ids import panel_id
from dashgen.render.source_strings import SHORTEST_FSTRING_PREFIX, heads_of, may_select
from dashgen.render.spec import NOTES_POINTER, PanelKind, PanelSpec
from dashgen.render.syntax_nodes import CHILD_FIELDS, child_fields, nodes_under

INDEX_PATH = Path("docs") / "panels.md"
RULE_ID = re.compile(r"\bS([1-9]|[12][0-9]|30)\b")
TEST_RULE = re.compile(r"^test_s(\d+)_")
_EVIDENCE = re.compile(
    r"(?:Evidence layer: (?P<layer>.*?)\. )?Source: (?P<source>.*?)\. Quantity: (?P<quantity>.*?)\. "
    r"Limit: (?P<limit>.*)\.$",
    re.S,
)


@dataclass(frozen=True)
class PanelEntry:
    key: str
    profiles: tuple[str, ...]
    titles: tuple[str, ...]
    kind: PanelKind
    panel_id: int
    definitions: tuple[tuple[str, tuple[str, ...]], ...]  # ("module.function", profiles) per defining function
    queries: tuple[str, ...]
    rules: tuple[str, ...]
    tests: tuple[str, ...]
    evidence: tuple[tuple[tuple[str, ...], str], ...]  # (profiles, description) per distinct description
    notes: tuple[tuple[tuple[str, ...], str], ...] = ()  # (profiles, notes) per distinct notes text


def _parsed(path: Path) -> ast.Module:
    """The module at ``path``, parsed once per version of the file (``check --index`` asked for each module once per
    panel it defines: 675 parses, a third of a ``check``)."""
    stat = path.stat()
    return _parse(path, stat.st_mtime_ns, stat.st_size)


@cache
def _parse(path: Path, mtime_ns: int, size: int) -> ast.Module:
    with collector_paused():  # see _selectors_paused
        return ast.parse(path.read_text(encoding="utf-8"))


def _module_functions(path: Path) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in _parsed(path).body if isinstance(node, ast.FunctionDef)}


def _queries_aliases(path: Path) -> dict[str, str]:
    """Names the module binds to ``queries`` modules or functions: local name -> dotted name."""
    aliases: dict[str, str] = {}
    for node in _parsed(path).body:
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        package = node.module.partition(".")[0]
        if package != import_name("queries"):
            continue
        shown = shown_name(node.module)  # named by the repository folder a reader opens
        for name in node.names:
            aliases[name.asname or name.name] = f"{shown}.{name.name}"
    return aliases


def query_calls(path: Path, function: str) -> tuple[str, ...]:
    """The ``queries`` functions called by ``function`` of the module at ``path`` and by the private
    helpers of the same module it calls (transitively)."""
    stat = path.stat()
    return _query_calls(path, stat.st_mtime_ns, stat.st_size, function)


@cache
def _query_calls(path: Path, mtime_ns: int, size: int, function: str) -> tuple[str, ...]:
    functions = _module_functions(path)
    aliases = _queries_aliases(path)
    found: set[str] = set()
    seen: set[str] = set()
    todo = [function]
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        for node in nodes_under(functions[name]):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name):
                if func.id in aliases:
                    found.add(aliases[func.id])
                elif func.id in functions and func.id != "build":
                    todo.append(func.id)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in aliases:
                found.add(f"{aliases[func.value.id]}.{func.attr}")
    return tuple(sorted(name for name in found if name[:1].islower() or "." in name))


@dataclass(frozen=True)
class Selectors:
    """What each test function names: whole strings (a panel's full key or full title selects it) and prefixes
    (a ``startswith`` argument, or an f-string's text before a placeholder it cannot expand, selects every panel
    whose key or title starts with it). Strings count where the test writes them, where a module-level constant it
    reads holds them, and inside the module's own helpers it calls."""

    literals: dict[str, list[str]]  # string -> the tests (``file::name``) that name it
    prefixes: dict[str, list[str]]  # key or title prefix -> the tests that select by it


def _strings(node: ast.AST | None, constants: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The strings an expression stands for: a literal, a tuple of literals, or a module constant holding them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return tuple(s for element in node.elts for s in _strings(element, constants))
    if isinstance(node, ast.Name):
        return constants.get(node.id, ())
    return ()


def _module_constants(module: ast.Module) -> dict[str, tuple[str, ...]]:
    """Module-level names bound once to a string or a collection of strings (``LADDER = ("Ladder 1", ...)``)."""
    found: dict[str, tuple[str, ...]] = {}
    for node in module.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        if isinstance(target, ast.Name) and (values := _strings(getattr(node, "value", None), found)):
            found[target.id] = values
    return found


def _loop_strings(nodes: Sequence[ast.AST], constants: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Loop variables that run over strings (``for step in LADDER``), for ``title.startswith(step)``."""
    found: dict[str, tuple[str, ...]] = {}
    for node in nodes:
        loop = node if isinstance(node, ast.For | ast.comprehension) else None
        if loop and isinstance(loop.target, ast.Name) and (values := _strings(loop.iter, constants)):
            found[loop.target.id] = values
    return found


def _expanded(node: ast.JoinedStr, names: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """Every string an f-string stands for when each placeholder is a name over known strings
    (``f"kv_cache_nvme.{key}"`` with ``for key in MASTER_PANELS``), else None."""
    found = [""]
    for part in node.values:
        if isinstance(part, ast.Constant):
            found = [text + str(part.value) for text in found]
        elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.format_spec is None:
            values = names.get(part.value.id)
            if values is None:
                return None
            found = [text + value for text in found for value in values]
        else:
            return None
    return tuple(found)


def _lead(node: ast.JoinedStr) -> str:
    """An f-string's text before its first placeholder."""
    first = node.values[0] if node.values else None
    return str(first.value) if isinstance(first, ast.Constant) else ""


def _names_some_panels(prefix: str) -> bool:
    """Whether an f-string's leading text is specific enough to select panels by: ``f"slo_health.burn_{window}"``
    is; ``f"S{n}"`` or a bare group ``f"kv_cache_nvme.{key}"`` (with ``key`` unknown) would match by accident."""
    return len(prefix) >= SHORTEST_FSTRING_PREFIX and not prefix.endswith(".")


@dataclass(frozen=True)
class _Named:
    """What one function's own body names (not the functions it calls), and the module-level names it calls."""

    literals: frozenset[str]
    prefixes: frozenset[str]
    calls: frozenset[str]


def _named(function: ast.AST, constants: dict[str, tuple[str, ...]]) -> _Named:
    """One walk of ``function``: the whole strings and prefixes it names, and the plain names it calls.

    Breadth first in ``ast.walk``'s order (what the loop strings depend on: a later loop over the same name wins),
    but without its generators: the loops, ``startswith`` calls and f-strings are set aside during the walk and read
    after it, once every loop variable is known (an uncached index walks ~230,000 nodes of the test modules)."""
    literals: set[str] = set()
    calls: set[str] = set()
    loops: list[ast.For | ast.comprehension] = []
    starts: list[ast.Call] = []
    fstrings: list[ast.JoinedStr] = []
    todo: list[ast.AST] = [function]
    for node in todo:  # the list grows as it is read: breadth first
        kind = type(node)
        if kind is ast.Constant:  # no child node
            if isinstance(node.value, str):  # type: ignore[attr-defined]
                literals.add(node.value)  # type: ignore[attr-defined]
            continue
        if kind is ast.Name:  # its only child is its context
            if isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
                literals.update(constants.get(node.id, ()))  # type: ignore[attr-defined]
            continue
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if isinstance(func, ast.Name):
                calls.add(func.id)
            elif isinstance(func, ast.Attribute) and func.attr == "startswith":
                starts.append(node)  # type: ignore[arg-type]
        elif kind is ast.JoinedStr:
            fstrings.append(node)  # type: ignore[arg-type]
        elif kind is ast.For or kind is ast.comprehension:
            loops.append(node)  # type: ignore[arg-type]
        # syntax_nodes.nodes_under's step, inline: its list read again here made this walk 13 % slower
        for field in CHILD_FIELDS.get(kind) or child_fields(kind):
            value = getattr(node, field, None)
            if isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                todo.append(value)
    names = {**constants, **_loop_strings(loops, constants)}
    prefixes: set[str] = set()
    for call in starts:
        prefixes.update(_strings(call.args[0] if call.args else None, names))
    for fstring in fstrings:
        if (whole := _expanded(fstring, names)) is not None:
            literals.update(whole)
        elif _names_some_panels(lead := _lead(fstring)):
            prefixes.add(lead)
    return _Named(frozenset(literals), frozenset(prefixes), frozenset(calls))


def _called_helpers(test: str, named: dict[str, _Named], helpers: set[str]) -> set[str]:
    """The module's own helper functions the function ``test`` calls, transitively."""
    seen: set[str] = set()
    todo = [test]
    while todo:
        for name in named[todo.pop()].calls & helpers:
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


FileSelectors = dict[str, tuple[list[str], list[str]]]  # test function -> (sorted literals, sorted prefixes)
_CACHED_MODULES = 1000  # test module versions the selector cache keeps (about 3 KB each)


def file_selectors(source: bytes | ast.Module) -> FileSelectors:
    """What every test function of one test module (its bytes, or its tree: read only) names, with what the module's
    helpers it calls name."""
    module = source if isinstance(source, ast.Module) else ast.parse(source)
    constants = _module_constants(module)
    functions = {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}
    helpers = {name for name in functions if not name.startswith("test_")}
    named = {name: _named(node, constants) for name, node in functions.items()}
    found: FileSelectors = {}
    for name in functions:
        if name.startswith("test_"):
            own = [named[name], *(named[helper] for helper in _called_helpers(name, named, helpers))]
            found[name] = (
                sorted(set().union(*(n.literals for n in own))),
                sorted(set().union(*(n.prefixes for n in own))),
            )
    return found


def _cache_file(kind: str = "selectors") -> Path | None:
    """The cache of :func:`file_selectors` results (or, ``kind`` "queries", of :func:`query_calls`), keyed by the
    source of this module and of ``source_strings`` (a change to how they are read starts a new cache) and the
    Python version (``ast`` differs between versions)."""
    folder = cache_dir()
    if folder is None:
        return None
    readers = Path(__file__).read_bytes() + Path(source_strings.__file__ or "").read_bytes()
    me = hashlib.sha256(readers + sys.version.encode()).hexdigest()[:16]
    return folder / f"panel-index-{kind}-{me}.json"


class _QueryCalls:
    """:func:`query_calls` remembered across runs in the cache folder by the sha256 of the module's bytes and the
    function's name: ``check`` builds the index on every run, and parsing the panel modules again was half of it."""

    def __init__(self) -> None:
        self.path = _cache_file("queries")
        data: Any = {}
        if self.path is not None:
            with contextlib.suppress(*CACHE_READ_ERRORS):
                data = read_cache_json(self.path)
        valid = isinstance(data, dict) and all(
            isinstance(calls, dict) and all(isinstance(c, list) for c in calls.values()) for calls in data.values()
        )
        self.cached: dict[str, dict[str, list[str]]] = data if valid else {}
        self.digests: dict[Path, str] = {}
        self.added = False

    def __call__(self, path: Path, function: str) -> tuple[str, ...]:
        if path not in self.digests:
            self.digests[path] = hashlib.sha256(path.read_bytes()).hexdigest()
        known = self.cached.setdefault(self.digests[path], {})
        if function not in known:
            known[function] = list(query_calls(path, function))
            self.added = True
        return tuple(known[function])

    def save(self) -> None:
        if self.path is not None and self.added:
            with contextlib.suppress(OSError):  # no cache is only slower
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                used = {digest: self.cached[digest] for digest in self.digests.values()}  # this tree's modules first
                kept = dict(list({**used, **self.cached}.items())[:_CACHED_MODULES])
                atomic_write(self.path, json.dumps(kept, separators=(",", ":")).encode())


def _read_cache(path: Path | None) -> dict[str, FileSelectors]:
    """Cached results by the sha256 of a test module's bytes; {} when missing or unreadable (then read afresh)."""
    if path is None:
        return {}
    try:
        data = read_cache_json(path)
    except CACHE_READ_ERRORS:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: {name: (list(pair[0]), list(pair[1])) for name, pair in value.items()}
        for key, value in data.items()
        if isinstance(value, dict)
        and all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, list) for p in pair)
            for pair in value.values()
        )
    }


def _may_select_paused(source: bytes, names: frozenset[str], heads: frozenset[str]) -> bool:
    with collector_paused():  # see _selectors_paused: the lexer's tokens and runs hold no cycle either
        return may_select(source, names, heads)


def _selectors_paused(source: bytes) -> FileSelectors:
    """:func:`file_selectors` without cyclic garbage collection: a syntax tree holds no cycle, and ``check`` holds
    both profiles' builds by the time it builds the index, so each collection that the ~230,000 nodes of the test
    modules trigger walked all of that again (about half of an uncached index's CPU)."""
    with collector_paused():
        return file_selectors(source)


def selectors_of(tests_dir: Path, names: Collection[str] | None = None) -> Selectors:
    """What every test function of ``tests_dir/test_*.py`` names, with what the helpers it calls name; given the
    panels' keys and titles ``names``, only of the modules whose string literals can select one of them.

    ``check`` builds the index on every run, and reading ~140 test modules' syntax trees was half of a ``check``
    at 10,000 GPUs; each module's result is kept in the cache folder by the hash of its bytes, so only the test
    modules edited since the last run are parsed again, and of those only the ones that can select a panel
    (``source_strings``: most name none; that verdict is kept too, for the same names)."""
    literals: dict[str, list[str]] = defaultdict(list)
    prefixes: dict[str, list[str]] = defaultdict(list)
    path_of_cache, path_of_skips = _cache_file(), _cache_file("skips")
    cached, skips = _read_cache(path_of_cache), _read_skips(path_of_skips)
    used: dict[str, FileSelectors] = {}
    chosen = frozenset(names or ())
    heads = heads_of(chosen) if names is not None else frozenset()
    names_key = hashlib.sha256("\n".join(sorted(chosen)).encode()).hexdigest()[:16]
    skipped: dict[str, str] = {}
    for path in sorted(tests_dir.glob("test_*.py")):
        source = path.read_bytes()
        digest = hashlib.sha256(source).hexdigest()
        fresh = digest not in cached and names is not None
        if fresh and (skips.get(digest) == names_key or not _may_select_paused(source, chosen, heads)):
            skipped[digest] = names_key  # it selects none of these panels: its selectors are not needed
            continue
        per_test = used[digest] = cached[digest] if digest in cached else _selectors_paused(source)
        for name, (own_literals, own_prefixes) in per_test.items():
            test = f"{path.name}::{name}"
            for text in own_literals:
                literals[text].append(test)
            for text in own_prefixes:
                prefixes[text].append(test)
    _keep(path_of_cache, used, cached)
    _keep(path_of_skips, skipped, skips)
    return Selectors(literals, prefixes)


def _read_skips(path: Path | None) -> dict[str, str]:
    with contextlib.suppress(*CACHE_READ_ERRORS):
        data = read_cache_json(path) if path is not None else {}
        if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
            return data
    return {}


def _keep(path: Path | None, used: dict[str, Any], cached: dict[str, Any]) -> None:
    """Write the cache file ``path`` when this run added to it: other trees' modules stay (a worktree, a test's
    sample module), the newest first, up to a bound."""
    if path is not None and any(cached.get(key) != value for key, value in used.items()):
        with contextlib.suppress(OSError):  # no cache is only slower
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            kept = {**used, **{key: value for key, value in cached.items() if key not in used}}
            atomic_write(path, json.dumps(dict(list(kept.items())[:_CACHED_MODULES]), separators=(",", ":")).encode())


def panel_tests(key: str, titles: tuple[str, ...], selectors: Selectors) -> tuple[str, ...]:
    """The tests that select a panel: by its full key, its full title, or a prefix of either. A key's short
    suffix ("queue") is not a selector: it names unrelated tests that say the word."""
    names = (key, *titles)
    found = {t for literal in names for t in selectors.literals.get(literal, ())}
    # every non-empty prefix of each name looked up, not every prefix the tests hold tried on each name
    for prefix in heads_of(names) & selectors.prefixes.keys():
        found.update(selectors.prefixes[prefix])
    return tuple(sorted(found))


def module_path(module: str) -> Path:
    """The source file of a group module named as the index shows it (``panels.first_screen``): the
    installed ``dashgen_panels`` module's own file, wherever it is installed (a clone, site-packages)."""
    installed = importlib.import_module(import_name(module))
    return Path(installed.__file__ or "")


def collect(profiles: list[Profile], root: Path) -> list[PanelEntry]:
    """One entry per panel key, over every profile; the tests named are those under ``root/tests``."""
    specs: dict[str, list[tuple[str, PanelSpec]]] = defaultdict(list)
    origins: dict[str, dict[tuple[str, str], list[str]]] = defaultdict(dict)  # key -> (module, function) -> profiles
    for profile in profiles:
        with kit.recording_origins() as profile_origins:  # one profile at a time: the same key may differ per profile
            for dashboard in dashboard_specs(profile):
                for panel in dashboard.panels():
                    specs[panel.key].append((profile.name, panel))
        for key, origin in profile_origins.items():
            origins[key].setdefault(origin, []).append(profile.name)
    names = {text for key, seen in specs.items() for text in (key, *(panel.title for _, panel in seen))}
    selectors = selectors_of(root / "tests", names) if (root / "tests").is_dir() else Selectors({}, {})
    calls = _QueryCalls()
    entries = []
    for key, seen in specs.items():
        definitions = origins[key]
        first = seen[0][1]
        tests = panel_tests(key, tuple(dict.fromkeys(p.title for _, p in seen)), selectors)
        descriptions: dict[str, list[str]] = defaultdict(list)
        notes: dict[str, list[str]] = defaultdict(list)
        for profile_name, panel in seen:
            descriptions[panel.description].append(profile_name)
            if panel.evidence is not None and panel.evidence.notes:
                notes[panel.evidence.notes].append(profile_name)
        cited = {f"S{m}" for text in descriptions for m in RULE_ID.findall(text)}
        cited |= {f"S{m.group(1)}" for t in tests if (m := TEST_RULE.match(t.split("::")[1]))}
        entries.append(
            PanelEntry(
                key=key,
                profiles=tuple(name for name, _ in seen),
                titles=tuple(dict.fromkeys(p.title for _, p in seen)),
                kind=first.kind,
                panel_id=panel_id(key),
                definitions=tuple((f"{m}.{f}", tuple(names)) for (m, f), names in definitions.items()),
                # a panel with no query in any profile (a source's "not available" text) reads none, whatever else
                # the function that defines it builds
                queries=tuple(sorted({q for m, f in definitions for q in calls(module_path(m), f)}))
                if any(panel.targets for _, panel in seen)
                else (),
                rules=tuple(sorted(cited, key=lambda s: int(s[1:]))),
                tests=tests,
                evidence=tuple((tuple(names), text) for text, names in descriptions.items()),
                notes=tuple((tuple(names), text) for text, names in notes.items()),
            )
        )
    calls.save()
    return entries


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _evidence_lines(description: str, shown: Callable[[str], str] = str) -> list[str]:
    match = _EVIDENCE.match(description.removesuffix(f" {NOTES_POINTER}."))
    if not match:
        return [f"  - {shown(description)}"] if description else ["  - (text panel: no data, no evidence)"]
    lines = [f"  - **Layer:** {shown(match['layer'])}"] if match["layer"] else []
    return lines + [
        f"  - **Source:** {shown(match['source'])}",
        f"  - **Quantity:** {shown(match['quantity'])}",
        f"  - **Limit:** {shown(match['limit'])}",
    ]


def _definitions(entry: PanelEntry) -> str:
    """The defining function, or one per group of profiles where profiles define the key differently."""
    if len(entry.definitions) == 1:
        return f"`{entry.definitions[0][0]}`"
    return ", ".join(f"`{where}` ({', '.join(names)})" for where, names in entry.definitions)


def render_index(entries: list[PanelEntry], profiles: list[Profile]) -> bytes:
    names = [profile.name for profile in profiles]
    lines = [
        "# Panel index",
        "",
        "Generated by `make dashboards` (`dashgen build`); `dashgen check` fails when it is stale. For every panel of "
        "every profile: its stable key, its panel id, its title as Grafana shows it (a grep for the title finds its "
        "definition), the group module and function that define it (per profile where they differ), "
        "the `queries/` functions that function calls, the rules of "
        "domain.md it proves (S-ids cited in its description or in the names of its tests), the tests that select it "
        "(by its full key or title, or a prefix of either; a word shared with a key selects nothing), "
        "and what it can and cannot prove. Every panel is also checked by `tests/test_every_panel.py` (parsing, "
        "catalogue, S5, S7, units, evidence, keys).",
        "",
        f"Profiles: {', '.join(names)}. {len(entries)} panel keys.",
        "",
    ]
    by_module: dict[str, list[PanelEntry]] = defaultdict(list)
    for entry in entries:
        by_module[entry.key.split(".")[0]].append(entry)
    # a team module's titles and descriptions may be an imported dashboard's: inert markdown (dashgen's own are
    # written here as their modules write them, code spans and all)
    team = {name for profile in profiles for name in profile.dashboard.extra_modules}
    for group, group_entries in by_module.items():
        foreign = group in team
        cell = markdown_text if foreign else _cell
        prose: Callable[[str], str] = markdown_text if foreign else str
        key: Callable[[str], str] = markdown_code if foreign else (lambda k: f"`{k}`")
        lines += [
            f"## {group}",
            "",
            "| key | id | title | defined in | queries | rules | profiles |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in group_entries:
            profiles_text = "all" if list(e.profiles) == names else ", ".join(e.profiles)
            lines.append(
                f"| {key(e.key)} | {e.panel_id} | {cell(' / '.join(e.titles))} | {_definitions(e)} | "
                f"{_cell(', '.join(f'`{q}`' for q in e.queries) or '-')} | {', '.join(e.rules) or '-'} | "
                f"{profiles_text} |"
            )
        lines.append("")
        for e in group_entries:
            lines += [f"### {key(e.key)} — {cell(e.titles[0])}", ""]
            lines.append(f"- Kind: {e.kind}; panel id {e.panel_id}; defined in {_definitions(e)}")
            lines.append("- Tests: " + (", ".join(f"`{t}`" for t in e.tests) or "the every-panel checks only"))
            for profiles_of, description in e.evidence:
                scope = "all profiles" if list(profiles_of) == list(e.profiles) else ", ".join(profiles_of)
                lines.append(f"- As built for {scope}:")
                lines += _evidence_lines(description, prose)
            for profiles_of, text in e.notes:
                scope = "all profiles" if list(profiles_of) == list(e.profiles) else ", ".join(profiles_of)
                lines.append(f"- Notes ({scope}): {prose(text)}.".replace("..", "."))
            lines.append("")
    return ("\n".join(lines).rstrip() + "\n").encode("utf-8")


def source_root() -> Path:
    """The source tree whose ``tests/`` name the panels: the repository in a development install; from an
    installed wheel (no ``tests/`` beside site-packages), the current folder when it is a clone of dashgen."""
    installed = Path(panels.__file__).resolve().parents[1]
    return installed if (installed / "tests").is_dir() else Path.cwd()


def build_index(profiles: list[Profile], root: Path | None = None) -> bytes:
    """The bytes of docs/panels.md for these profiles, reading source under ``root``."""
    return render_index(collect(profiles, root or source_root()), profiles)


def index_problem(profiles: list[Profile], path: Path) -> str | None:
    """Why the committed index at ``path`` is not what a fresh build writes, or None."""
    if not path.exists():
        return f"{path}: missing; run dashgen index and commit it"
    if read_regular_bytes(path) != build_index(profiles):
        return f"{path}: stale; run dashgen index and commit it"
    return None
