"""Deployment profiles: read ``profiles/<name>.toml`` into a validated, immutable ``Profile``.

A profile is the only place a size, a label name, a job name or a threshold lives (S1).
Every error names the file and the dotted field, and loading writes nothing. The value types
live in ``dashgen.deployment.model`` and the checks of each section in
``dashgen.deployment.sections``; this module reads the files, assembles the sections, and
re-exports the value types so ``from dashgen.deployment.profile import Profile`` keeps working.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dashgen.deployment.alerts import parse_alerts
from dashgen.deployment.checks import MAX_GPUS_PER_NODE, MAX_NODES
from dashgen.deployment.collector import parse_collector
from dashgen.deployment.dashboard_section import parse_dashboard
from dashgen.deployment.model import (
    DEFAULT_LABELS,
    FEATURE_SOURCES,
    KNOWN_SOURCES,
    POOL_ROLES,
    SOURCE_STATUSES,
    TEXT,
    VIDEO,
    WORKLOAD_KINDS,
    Capacity,
    Cost,
    DashboardSettings,
    Disks,
    MooncakeMaster,
    Pool,
    Profile,
    Slo,
    Source,
    Speculative,
    Store,
)
from dashgen.deployment.mooncake import parse_mooncake
from dashgen.deployment.reader import TableReader
from dashgen.deployment.sections import (
    NAME_RE,
    check_pools,
    parse_capacity,
    parse_cost,
    parse_disks,
    parse_labels,
    parse_node_addresses,
    parse_node_names,
    parse_pool,
    parse_slo,
    parse_sources,
    parse_speculative,
    parse_store,
)
from dashgen.errors import ProfileError
from dashgen.files import read_regular_text
from dashgen.files.parsers import parse_toml

MAX_DESCRIPTION = 2000  # characters of a profile's description (the dashboard's, with the store scope appended)
_LINE_BREAKS_AND_TABS = str.maketrans({"\n": None, "\t": None})  # what a description may hold besides printable text

__all__ = [
    "DEFAULT_LABELS",
    "FEATURE_SOURCES",
    "KNOWN_SOURCES",
    "POOL_ROLES",
    "SOURCE_STATUSES",
    "TEXT",
    "VIDEO",
    "WORKLOAD_KINDS",
    "Capacity",
    "Cost",
    "Speculative",
    "DashboardSettings",
    "Disks",
    "MooncakeMaster",
    "Pool",
    "Profile",
    "Slo",
    "Source",
    "Store",
    "load_profile",
    "load_profiles",
    "profile_from_dict",
    "profile_from_text",
    "profiles_dir",
]


def load_profile(path: str | Path) -> Profile:
    """Read and validate one profile file. Raises ProfileError naming the file and field."""
    path = Path(path)
    shown = str(path)
    try:
        text = read_regular_text(path)
    except FileNotFoundError:
        raise ProfileError(shown, "", "no such profile file") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(shown, "", f"not UTF-8 text (byte {exc.start}): save the profile as UTF-8") from None
    except OSError as exc:
        raise ProfileError(shown, "", f"cannot read: {exc.strerror or exc}") from None
    return profile_from_text(text, shown, expected_name=path.stem)


def profile_from_text(text: str, path: str, expected_name: str | None = None) -> Profile:
    """Validate a profile's TOML text (what ``path`` holds, or is about to hold) and build the Profile."""
    try:
        raw = parse_toml(text)
    except ValueError as exc:
        raise ProfileError(path, "", f"not valid TOML: {exc}") from None
    return profile_from_dict(raw, path, expected_name=expected_name)


def profile_from_dict(raw: dict[str, Any], path: str, expected_name: str | None = None) -> Profile:
    """Validate a parsed profile mapping (the TOML document) and build the Profile."""
    if not isinstance(raw, dict):
        raise ProfileError(path, "", "expected a TOML document (a table of fields)")
    top = TableReader(path, raw)
    name = top.string("name", required=True)
    if not NAME_RE.match(name):
        raise top.fail("name", f"{name!r} must be lower-case letters, digits and '-', at most 31 characters")
    if expected_name is not None and name != expected_name:
        raise top.fail("name", f"{name!r} differs from the file name {expected_name!r}")
    title = top.string("title", required=True)
    if not title.strip() or len(title) > 200 or not title.isprintable():
        raise top.fail("title", "expected a non-empty, printable title of at most 200 characters")
    description = top.string("description", "")
    # the dashboard's description: printable text (no control sequence, no bidi override) as the title is, but
    # of many lines (a TOML """...""" string): line breaks and tabs are text in a dashboard's description
    if len(description) > MAX_DESCRIPTION or not description.translate(_LINE_BREAKS_AND_TABS).isprintable():
        raise top.fail(
            "description",
            f"expected printable text (line breaks and tabs allowed) of at most {MAX_DESCRIPTION} characters",
        )
    share = top.number("insufficient_samples_share", 0.5)
    assert share is not None
    if share >= 1:
        raise top.fail("insufficient_samples_share", f"must be below 1, got {share}")

    cluster = top.table_at("cluster", required=True)
    nodes = cluster.integer("nodes", required=True, maximum=MAX_NODES)
    gpus_per_node = cluster.integer("gpus_per_node", required=True, maximum=MAX_GPUS_PER_NODE)
    node_names = parse_node_names(cluster, nodes)
    node_addresses = parse_node_addresses(cluster, node_names)
    cluster.reject_unknown()

    pools = tuple(parse_pool(reader) for reader in top.tables("pools", required=True))
    check_pools(top, pools, nodes, gpus_per_node)

    deployment = top.string("deployment", name)
    if deployment and not re.match(r"^[A-Za-z0-9_.:-]{1,63}\Z", deployment):
        raise top.fail(
            "deployment",
            f"{deployment!r}: letters, digits and . _ : - only, at most 63 characters "
            '(or "" for a store that holds this deployment alone)',
        )
    retired = top.boolean("retired", False)
    store = parse_store(top.table_at("store"))
    sources = parse_sources(top.table_at("sources", required=True), store)
    labels = parse_labels(top.table_at("labels"))
    kinds = tuple(kind for kind in WORKLOAD_KINDS if any(pool.kind == kind for pool in pools))
    slo = parse_slo(top.table_at("slo", required=True), kinds)
    capacity = parse_capacity(top.table_at("capacity"), pools, gpus_per_node, sources)
    disks = parse_disks(top.table_at("disks"))
    dashboard = parse_dashboard(top.table_at("dashboard"))
    collector = parse_collector(top.table_at("collector"), {n for n, s in sources.items() if s.exported})
    masters = parse_mooncake(top.table_at("mooncake"), pools, sources)
    alerts = parse_alerts(top.table_at("alerts"))
    cost = parse_cost(top.table_at("cost"))
    speculative = parse_speculative(top.table_at("speculative"), sources)
    top.reject_unknown()
    return Profile(
        name=name,
        title=title,
        description=description,
        path=path,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        node_names=node_names,
        pools=pools,
        sources=sources,
        labels=labels,
        slo=slo,
        capacity=capacity,
        disks=disks,
        dashboard=dashboard,
        insufficient_samples_share=share,
        node_addresses=node_addresses,
        deployment=deployment,
        store=store,
        retired=retired,
        collector=collector,
        mooncake_masters=masters,
        alerts=alerts,
        cost=cost,
        speculative=speculative,
    )


def profiles_dir() -> Path:
    """``profiles/`` in the working directory when present, else the one next to the package."""
    here = Path.cwd() / "profiles"
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "profiles"


def load_profiles(names: list[str] | tuple[str, ...] = (), directory: Path | None = None) -> list[Profile]:
    """Load the named profiles (all when ``names`` is empty), in name order. Unknown names are an input error."""
    directory = directory or profiles_dir()
    if not directory.is_dir():
        raise ProfileError(str(directory), "", "no such profiles folder (see --profiles-dir)")
    available = {path.stem: path for path in sorted(directory.glob("*.toml"))}
    if not available:
        raise ProfileError(str(directory), "", "no profiles (*.toml) in this folder (see --profiles-dir)")
    if not names:
        return [load_profile(path) for path in available.values()]
    missing = [name for name in names if name not in available]
    if missing:
        raise ProfileError(
            str(directory / f"{missing[0]}.toml"),
            "",
            f"no such profile; available: {', '.join(available) or 'none'}",
        )
    return [load_profile(available[name]) for name in names]
