"""Build: profiles -> rendered, validated dashboards in memory -> files under ``dashboards/``.

Everything is rendered and validated before anything is written, so a bad profile or a broken
panel writes nothing. Files are ``<out>/<profile>/<uid>.json`` in canonical encoding.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dashgen_queries.promql import budget_pieces

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.dashboard_section import SCHEMAS, v2_refusal
from dashgen.deployment.model import Schema
from dashgen.deployment.profile import Profile
from dashgen.document import NotADashboard, Reference, is_v2, iter_panels, substitute, unwrap
from dashgen.errors import BuildValidationError, ProfileError
from dashgen.files import read_regular_bytes, write_files_if_changed
from dashgen.render import promql_trees
from dashgen.render.canonical import content_sha, encode
from dashgen.render.document import render_dashboard
from dashgen.render.ids import panel_id
from dashgen.render.library import LibraryElement, merge_elements, share_v1, share_v2
from dashgen.render.memo import JsonCopies, Memo, profile_key
from dashgen.render.spec import DashboardSpec
from dashgen.render.v2 import render_v2, validate_v2
from dashgen.render.v2.variables import UnsupportedVariable
from dashgen.render.validate import validate_dashboard

LIBRARY_DIR = "library-panels"


@dataclass(frozen=True)
class BuiltDashboard:
    """One rendered dashboard: where it goes, its document, its bytes and its content SHA."""

    profile: str
    spec: DashboardSpec
    document: dict[str, Any]
    data: bytes
    sha256: str
    library: tuple[LibraryElement, ...] = ()  # the library panels it references (``dashgen.render.library``)

    @property
    def uid(self) -> str:
        return self.spec.uid

    def relative_path(self) -> Path:
        return Path(self.profile) / f"{self.uid}.json"

    @property
    def schema(self) -> Schema:
        """``v1`` (classic JSON) or ``v2`` (the ``dashboard.grafana.app`` v2 / v2beta1 resource)."""
        return "v2" if is_v2(self.document) else "v1"


def schema_of(profile: Profile, override: str | None = None) -> str:
    """The schema a build writes: ``override`` (``dashgen build --schema``) or the profile's ``[dashboard] schema``.
    Raises ProfileError naming the field when the profile's Grafana cannot take v2 (before 12.2)."""
    schema = override or profile.dashboard.schema
    if schema not in SCHEMAS:
        raise ProfileError(profile.path, "dashboard.schema", f'expected "v1" or "v2", got {schema!r}')
    if schema == "v2" and (problem := v2_refusal(profile.dashboard)) is not None:
        raise ProfileError(profile.path, "dashboard.grafana_version", problem)
    return schema


def _v2(profile: Profile, spec: DashboardSpec, problems: list[str]) -> dict[str, Any]:
    """The v2 resource of a dashboard, its problems (schema, structure) added to ``problems``."""
    where = f"{profile.name}/{spec.uid}"
    try:
        resource = render_v2(spec, profile.dashboard.v2_api_version)
    except UnsupportedVariable as exc:
        problems.append(f"{profile.path}: {where}: {exc}")
        return {}
    problems += validate_v2(resource, where)
    return resource


# (a profile's content, the schema) -> its build: each dashboard (its documents as bytes) and its library models.
_BUILDS: Memo[tuple[str, str], list[tuple[BuiltDashboard, JsonCopies, tuple[JsonCopies, ...]]]] = Memo("builds", 16)


def build_profile(profile: Profile, groups: tuple | None = None, schema: str | None = None) -> list[BuiltDashboard]:
    """Render and validate every dashboard of one profile, in ``schema`` (default: the profile's); raises
    BuildValidationError, or ProfileError when v2 is asked of a Grafana before 12.2. A profile without a team's
    modules is built once per content and schema in the process (``render.memo``); each call gets its own
    documents and library models to change."""
    if groups is not None or profile.dashboard.extra_modules:
        return _build_profile(profile, groups, schema)
    key = (profile_key(profile), schema_of(profile, schema))
    kept = _BUILDS.get(key)
    if kept is None:
        built = _build_profile(profile, None, schema)
        if (copies := _kept(built)) is not None:
            _BUILDS.put(key, copies)
        return built
    return [
        replace(
            dashboard,
            document=document.copy(),
            library=tuple(replace(e, model=m.copy()) for e, m in zip(dashboard.library, models, strict=True)),
        )
        for dashboard, document, models in kept
    ]


def _kept(built: list[BuiltDashboard]) -> list[tuple[BuiltDashboard, JsonCopies, tuple[JsonCopies, ...]]] | None:
    """What the memo keeps of a build, or None when a document or a library model would not copy faithfully."""
    kept = []
    for dashboard in built:
        document = JsonCopies.of(dashboard.document)
        models = [JsonCopies.of(e.model) for e in dashboard.library]
        if document is None:
            return None
        emptied = replace(dashboard, document={}, library=tuple(replace(e, model={}) for e in dashboard.library))
        kept.append((emptied, document, tuple(m for m in models if m is not None)))  # the caller's trees not held
        if len(kept[-1][2]) != len(models):
            return None
    return kept


def _build_profile(profile: Profile, groups: tuple | None, schema: str | None) -> list[BuiltDashboard]:
    v2 = schema_of(profile, schema) == "v2"
    built = []
    problems: list[str] = []
    specs = dashboard_specs(profile, groups)
    _check_library_keys(profile, specs)
    for spec in specs:
        document = render_dashboard(spec)
        problems += validate_dashboard(document, f"{profile.name}/{spec.uid}")
        problems += check_queries(document, profile, f"{profile.name}/{spec.uid}")
        shared = {
            panel_id(p.key): p.key for p in spec.panels() if p.shared or p.key in profile.dashboard.library_panels
        }
        referencing, elements = share_v1(document, shared, profile.name)
        library = tuple(elements.values())
        if v2:
            resource = _v2(profile, spec, problems)
            if resource:
                resource = share_v2(resource, {e.key: (pid, e) for pid, e in elements.items()})
            built.append(BuiltDashboard(profile.name, spec, resource, encode(resource), content_sha(resource), library))
            continue
        built.append(
            BuiltDashboard(profile.name, spec, referencing, encode(referencing), content_sha(referencing), library)
        )
    problems += merge_elements(e for b in built for e in b.library)[1]
    if problems:
        raise BuildValidationError(problems)
    return built


def _check_library_keys(profile: Profile, specs: list[DashboardSpec]) -> None:
    """ProfileError naming the field for a ``[dashboard] library_panels`` key no dashboard of the profile has (an
    input error: the profile is wrong, not the build)."""
    keys = {p.key for spec in specs for p in spec.panels()}
    unknown = [key for key in profile.dashboard.library_panels if key not in keys]
    if unknown:
        raise ProfileError(
            profile.path, "dashboard.library_panels", f"no panel {', '.join(map(repr, unknown))} in this profile"
        )


def library_elements(built: list[BuiltDashboard]) -> list[LibraryElement]:
    """Every library panel of a build, once, with the dashboards using it (a conflict was refused by the build)."""
    return merge_elements(e for b in built for e in b.library)[0]


def library_path(element: LibraryElement) -> Path:
    """Where ``dashgen build`` writes an element: ``<profile>/library-panels/<uid>.json`` under the output."""
    return Path(element.profile) / LIBRARY_DIR / f"{element.uid}.json"


def build_all(profiles: list[Profile], schema: str | None = None) -> list[BuiltDashboard]:
    """Render every profile (in ``schema``, default each profile's); all problems of all profiles are reported
    together."""
    built: list[BuiltDashboard] = []
    problems: list[str] = []
    uids: dict[str, str] = {}
    for profile in profiles:
        try:
            dashboards = build_profile(profile, schema=schema)
        except BuildValidationError as exc:
            problems += exc.problems
            continue
        if not dashboards:  # never a green build of nothing
            problems.append(f"{profile.name}: produced no dashboard")
        for dashboard in dashboards:
            if dashboard.uid in uids:
                problems.append(f"{profile.name}/{dashboard.uid}: uid also produced by profile {uids[dashboard.uid]}")
            uids[dashboard.uid] = profile.name
        built += dashboards
    if problems:
        raise BuildValidationError(problems)
    return built


def output_files(built: list[BuiltDashboard]) -> list[tuple[Path, bytes, dict[str, Any]]]:
    """``(relative path, bytes, document)`` of every file a build writes: each dashboard, then each library
    panel they reference (what ``dashgen check`` compares with the committed folder)."""
    files = [(dashboard.relative_path(), dashboard.data, dashboard.document) for dashboard in built]
    for element in library_elements(built):
        document = element.document()
        files.append((library_path(element), encode(document), document))
    return files


def committed_files(out_dir: Path) -> list[Path]:
    """Every file of the output folder a build may have written (dashboards and library panels)."""
    return sorted([*out_dir.glob("*/*.json"), *out_dir.glob(f"*/{LIBRARY_DIR}/*.json")])


def write_dashboards(built: list[BuiltDashboard], out_dir: Path, prune: bool = True) -> list[Path]:
    """Write files whose bytes changed (dashboards, and the library panels they reference); with ``prune``,
    remove stale ``*.json`` of the built profiles."""
    files = [(out_dir / path, data) for path, data, _ in output_files(built)]
    wanted = {path for path, _ in files}
    written = write_files_if_changed(files)
    if prune:
        for profile in {dashboard.profile for dashboard in built}:
            for stale in sorted(
                [*(out_dir / profile).glob("*.json"), *(out_dir / profile / LIBRARY_DIR).glob("*.json")]
            ):
                if stale not in wanted:
                    stale.unlink()
                    written.append(stale)
    return written


def _written_by_dashgen(path: Path, profile: str) -> bool:
    """The file is a dashboard dashgen built for ``profile``: its uid is its name, its tags name dashgen and it."""
    try:
        document = unwrap(json.loads(read_regular_bytes(path)))
    except (OSError, ValueError, NotADashboard):
        return False
    tags = document.get("tags")
    return (
        document.get("uid") == path.stem
        and isinstance(tags, list)
        and {"dashgen", f"profile:{profile}"} <= {t for t in tags if isinstance(t, str)}
    )


def removed_profile_files(out_dir: Path, profile_names: set[str]) -> list[Path]:
    """Dashboards under ``out_dir`` that dashgen built for a profile that no longer exists
    (``<name>/dg-<name>-*.json`` written by dashgen, ``<name>`` not a profile). Anything else is someone else's."""
    if not out_dir.is_dir():
        return []
    return sorted(
        path
        for folder in out_dir.iterdir()
        if folder.is_dir() and folder.name not in profile_names
        for path in folder.glob(f"dg-{folder.name}-*.json")
        if _written_by_dashgen(path, folder.name)
    )


def prune_removed_profiles(out_dir: Path, profile_names: set[str]) -> list[Path]:
    """Remove :func:`removed_profile_files` (and their folder once empty); returns the removed files."""
    removed = removed_profile_files(out_dir, profile_names)
    for path in removed:
        path.unlink()
    for folder in {path.parent for path in removed}:
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed


# -- every generated query parses -------------------------------------------------------------------

_PLACEHOLDERS = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h", "__auto": "1m"}


def _placeholder(ref: Reference) -> str:
    """What a Grafana variable outside a PromQL string stands for when only the syntax is checked."""
    name = ref.name
    if name.endswith(("_ms", "_s")):
        return "300"
    return _PLACEHOLDERS.get(name, name if name.isidentifier() else "x")


@functools.lru_cache(maxsize=16_384)
def syntax_problem(expr: str) -> str | None:
    """Why ``expr`` (Grafana variables expanded) is not PromQL, or None. An expression over the parse
    budget is checked operand by operand of its outermost ``or`` / ``and`` / ``unless`` chain, so the
    parser (quadratic in terms, and able to crash the process) never sees more than the budget. Once per
    text per process: the builds of profiles that differ in a field or two share most of their queries."""
    expanded = substitute(expr, _placeholder, skip_double_quoted=True)
    operands, over = budget_pieces(expanded)
    if over is not None:
        return f"over the parse budget and not a chain of smaller parts: {over}"
    for operand in operands:
        try:
            promql_trees.parse(operand)
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # promql-parser raises ValueError; a pyo3 panic is a BaseException
            return (str(exc).splitlines() or [type(exc).__name__])[0][:300]
    return None


def _profile_fields(profile: Profile, expr: str) -> list[str]:
    """The profile fields whose values a broken query contains: where to look first."""
    fields = [f"sources.{s.name}.job" for s in profile.sources.values() if s.deployed and f'"{s.job}"' in expr]
    if profile.disks.cache_device_regex in expr:
        fields.append("disks.cache_device_regex")
    fields += [f"labels.{role}" for role, name in profile.labels.items() if name in expr and len(name) > 2][:3]
    if any(name in expr for name in profile.node_names[:1000]):
        fields.append("cluster.node_names / node_name_format")
    return fields


def check_queries(document: dict[str, Any], profile: Profile, where: str) -> list[str]:
    """One problem per target whose expression is not valid PromQL, naming panel, refId and profile fields."""
    problems = []
    for site in iter_panels(document):
        for index, target in enumerate(site.raw.get("targets") or []):
            expr = target.get("expr") if isinstance(target, dict) else None
            if not isinstance(expr, str) or not expr:
                continue
            problem = syntax_problem(expr)
            if problem is not None:
                fields = _profile_fields(profile, expr)
                cause = f"; check profile field {', '.join(fields)}" if fields else ""
                problems.append(
                    f"{profile.path}: {where}: panel {site.raw.get('title')!r} "
                    f"target {target.get('refId') or index}: generated query is not valid PromQL: "
                    f"{problem}{cause}"
                )
    return problems
