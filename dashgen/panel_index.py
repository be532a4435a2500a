"""The generated panel index ``docs/panels.md``: for every panel of every profile, its key, title,
the group module and function that define it, the ``queries`` functions that function calls, the
rules (S-ids of domain.md) it proves, the tests that check it by name, and its description's
source / quantity / limit. It doubles as the reading guide: what each panel proves and what not.

Pure apart from reading source files: profiles -> specs (while the kit notes which function made
each panel) -> the Python source of ``panels/`` and ``tests/`` (``ast``) -> markdown bytes.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import dashgen_panels as panels

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import Profile
from dashgen.project import import_name, shown_name
from dashgen.render import kit
from dashgen.render.ids import panel_id
from dashgen.render.spec import PanelSpec

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
    kind: str
    panel_id: int
    definitions: tuple[tuple[str, tuple[str, ...]], ...]  # ("module.function", profiles) per defining function
    queries: tuple[str, ...]
    rules: tuple[str, ...]
    tests: tuple[str, ...]
    evidence: tuple[tuple[tuple[str, ...], str], ...]  # (profiles, description) per distinct description


def _parsed(path: Path) -> ast.Module:
    """The module at ``path``, parsed once per version of the file (``check --index`` asked for each module once per
    panel it defines: 675 parses, a third of a ``check``)."""
    stat = path.stat()
    return _parse(path, stat.st_mtime_ns, stat.st_size)


@cache
def _parse(path: Path, mtime_ns: int, size: int) -> ast.Module:
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
        for node in ast.walk(functions[name]):
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


def _tests_by_panel(tests_dir: Path) -> dict[str, list[str]]:
    """String literal -> the test functions (``file::name``) that contain it."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(tests_dir.glob("test_*.py")):
        for node in _parsed(path).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                for const in ast.walk(node):
                    if isinstance(const, ast.Constant) and isinstance(const.value, str):
                        found[const.value].append(f"{path.name}::{node.name}")
    return found


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
    by_literal = _tests_by_panel(root / "tests") if (root / "tests").is_dir() else {}
    entries = []
    for key, seen in specs.items():
        definitions = origins[key]
        first = seen[0][1]
        short = key.split(".", 1)[-1]
        literals = (key, short, *{p.title for _, p in seen})
        tests = sorted({t for literal in literals for t in by_literal.get(literal, ())})
        descriptions: dict[str, list[str]] = defaultdict(list)
        for profile_name, panel in seen:
            descriptions[panel.description].append(profile_name)
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
                queries=tuple(sorted({q for m, f in definitions for q in query_calls(module_path(m), f)})),
                rules=tuple(sorted(cited, key=lambda s: int(s[1:]))),
                tests=tuple(tests),
                evidence=tuple((tuple(names), text) for text, names in descriptions.items()),
            )
        )
    return entries


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _evidence_lines(description: str) -> list[str]:
    match = _EVIDENCE.match(description)
    if not match:
        return [f"  - {description}"] if description else ["  - (text panel: no data, no evidence)"]
    lines = [f"  - **Layer:** {match['layer']}"] if match["layer"] else []
    return lines + [
        f"  - **Source:** {match['source']}",
        f"  - **Quantity:** {match['quantity']}",
        f"  - **Limit:** {match['limit']}",
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
        "domain.md it proves (S-ids cited in its description or in the names of its tests), the tests that name it, "
        "and what it can and cannot prove. Every panel is also checked by `tests/test_every_panel.py` (parsing, "
        "catalogue, S5, S7, units, evidence, keys).",
        "",
        f"Profiles: {', '.join(names)}. {len(entries)} panel keys.",
        "",
    ]
    by_module: dict[str, list[PanelEntry]] = defaultdict(list)
    for entry in entries:
        by_module[entry.key.split(".")[0]].append(entry)
    for group, group_entries in by_module.items():
        lines += [
            f"## {group}",
            "",
            "| key | id | title | defined in | queries | rules | profiles |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in group_entries:
            profiles_text = "all" if list(e.profiles) == names else ", ".join(e.profiles)
            lines.append(
                f"| `{e.key}` | {e.panel_id} | {_cell(' / '.join(e.titles))} | {_definitions(e)} | "
                f"{_cell(', '.join(f'`{q}`' for q in e.queries) or '-')} | {', '.join(e.rules) or '-'} | "
                f"{profiles_text} |"
            )
        lines.append("")
        for e in group_entries:
            lines += [f"### `{e.key}` — {_cell(e.titles[0])}", ""]
            lines.append(f"- Kind: {e.kind}; panel id {e.panel_id}; defined in {_definitions(e)}")
            lines.append("- Tests: " + (", ".join(f"`{t}`" for t in e.tests) or "the every-panel checks only"))
            for profiles_of, description in e.evidence:
                scope = "all profiles" if list(profiles_of) == list(e.profiles) else ", ".join(profiles_of)
                lines.append(f"- As built for {scope}:")
                lines += _evidence_lines(description)
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
    if path.read_bytes() != build_index(profiles):
        return f"{path}: stale; run dashgen index and commit it"
    return None
