"""The composition: which dashboards a profile has, which panel groups go on each and in which
order (``panels.GROUPS``, kept when they serve a workload kind of the profile, S25, then the team's own
modules of ``[dashboard] extra_modules``, ``dashgen.team_panels``), and their variables: profile ->
DashboardSpecs (pure but for reading the team's module files). The one place the engine asks ``panels``
for anything."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from dashgen_panels import COLLAPSED_ON_OPEN, GROUPS, PER_GPU_OPEN_MAX_GPUS, PER_GPU_ROWS, TABS, TEAM_TAB
from dashgen_panels.screenful import legible_rows
from dashgen_queries.gpu import gpu_source
from dashgen_queries.promql import coarser_step, min_step

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import topology_of
from dashgen.render import kit
from dashgen.render.exporters import for_deployment, stated_sources
from dashgen.render.ids import CLUSTER_DASHBOARD, dashboard_uid
from dashgen.render.memo import Memo, profile_key
from dashgen.render.spec import DashboardSpec, GroupSpec
from dashgen.team_panels import team_rows
from dashgen.variables import dashboard_variables

# Profile object -> (the profile, its dashboards, the origins of their panels) of a profile with a team's modules
# while ``specs_reused`` is active.
_reused: ContextVar[dict[int, tuple[Profile, list[DashboardSpec], dict[str, tuple[str, str]]]] | None] = ContextVar(
    "dashgen_reused_specs", default=None
)


# A profile's content -> (its dashboards, the origins of their panels), for every profile without a team's modules.
_COMPOSED: Memo[str, tuple[list[DashboardSpec], dict[str, tuple[str, str]]]] = Memo("composed dashboards", 16)


@contextmanager
def specs_reused() -> Iterator[None]:
    """Within the block each profile with a team's modules (the same object) is composed into dashboards once:
    ``dashgen check`` asks for them for the build, the rule files' dashboard links and the panel index, and
    composing is a third of a build. Outside it such a profile is composed anew on every call (a team's module
    file may change between two calls); every other profile is composed once per content in the process
    (``render.memo``: the shipped panels cannot change while it runs)."""
    token = _reused.set({})
    try:
        yield
    finally:
        _reused.reset(token)


def dashboard_specs(profile: Profile, groups: tuple | None = None) -> list[DashboardSpec]:
    """The profile's dashboards. ``groups`` overrides the panel-group modules (tests use it)."""
    if groups is not None:
        return _composed(profile, groups)
    if not profile.dashboard.extra_modules:
        key = profile_key(profile)
        hit = _COMPOSED.get(key)
        if hit is None:
            hit = kit.recorded_while(lambda: _composed(profile, None))
            _COMPOSED.put(key, hit)
        else:
            kit.note_origins(hit[1])
        return list(hit[0])
    memo = _reused.get()
    if memo is None:
        return _composed(profile, None)
    if id(profile) not in memo:
        specs, origins = kit.recorded_while(lambda: _composed(profile, None))
        memo[id(profile)] = (profile, specs, origins)  # the profile kept: its id stays its own
        return list(specs)
    _, specs, origins = memo[id(profile)]
    kit.note_origins(origins)
    return list(specs)


def _composed(profile: Profile, groups: tuple | None) -> list[DashboardSpec]:
    groups = serving(profile, GROUPS if groups is None else groups)
    topology = topology_of(profile)
    source = gpu_source(profile)
    gpu_metric = source.metric("power") if source else None
    built = tuple(
        with_min_steps(profile, row)
        for module in groups
        for group in (module.build(profile, topology),)
        if group is not None
        for row in pool_kind_rows(profile, module, group.shown_rows())
    )
    variables = tuple(dashboard_variables(profile, topology, gpu_metric))
    unscoped: tuple[str, ...] = ()
    if profile.dashboard.extra_modules:
        team = team_rows(profile, topology, variables)
        built += tuple(with_min_steps(profile, row) for group in team.groups for row in group.shown_rows())
        variables += team.variables
        unscoped = team.unscoped
    rows = legible_rows(tuple(group for group in built if group is not None), topology)
    return [
        DashboardSpec(
            profile=profile.name,
            name=CLUSTER_DASHBOARD,
            uid=dashboard_uid(profile.name, CLUSTER_DASHBOARD),
            title=profile.title,
            description=describe(profile),
            tags=("dashgen", f"profile:{profile.name}"),
            groups=rows,
            variables=variables,
            schema_version=profile.dashboard.schema_version,
            time_from=profile.dashboard.time_from,
            refresh=profile.dashboard.refresh,
            tabs=tabs_of(rows),
            unscoped=unscoped,
        )
    ]


def tabs_of(rows: tuple[GroupSpec, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The v2 tabs (``panels.TABS``): each tab's row keys in reading order; tabs without a row left out, rows of
    a module no tab names (a team's) in a last tab ``panels.TEAM_TAB``."""
    named = {module: title for title, modules in TABS for module in modules}
    keys: dict[str, list[str]] = {title: [] for title, _ in TABS}
    keys[TEAM_TAB] = []
    for row in rows:
        keys[named.get(row.key.split(":", 1)[0], TEAM_TAB)].append(row.key)
    return tuple((title, tuple(found)) for title, found in keys.items() if found)


def serving(profile: Profile, groups: tuple) -> tuple:
    """The group modules that serve one of the profile's workload kinds (S25): a group is on the dashboard
    when the profile has a pool of a kind in its ``WORKLOADS``; a mixed profile gets the groups of both."""
    kinds = set(profile.kinds)
    return tuple(module for module in groups if kinds & set(module.WORKLOADS))


def pool_kind_rows(profile: Profile, module: Any, rows: tuple[GroupSpec, ...]) -> tuple[GroupSpec, ...]:
    """The rows of a group that serves only some of a mixed profile's workload kinds (S25), each shown in v2 only
    while its panels return data, so a dashboard of a profile that mixes pool kinds shows the rows of the pools
    that exist; unchanged elsewhere."""
    if len(profile.kinds) < 2 or set(profile.kinds) <= set(module.WORKLOADS):
        return rows
    return tuple(replace(row, when_data=True) for row in rows)


def with_min_steps(profile: Profile, group: GroupSpec | None) -> GroupSpec | None:
    """Every panel of the group as the deployment's exporters can fill it (``render.exporters``, S35), every target
    with the Min step of the sources it reads (``queries.promql.min_step``), and the
    row collapsed when its module is heavy (``COLLAPSED_ON_OPEN``) or it draws per-GPU rows for a deployment of
    more than ``PER_GPU_OPEN_MAX_GPUS`` GPUs."""
    if group is None:
        return None
    stated = stated_sources(profile.sources)
    panels = tuple(
        replace(
            panel,
            targets=tuple(
                replace(target, interval=coarser_step(target.interval, min_step(profile, target.expr)))
                for target in panel.targets
            ),
        )
        for panel in (for_deployment(panel, stated) for panel in group.panels)
    )
    module_key = group.key.split(":", 1)[0]  # every row of a heavy module (split_rows keys "<key>:<row>")
    per_gpu_at_scale = group.key in PER_GPU_ROWS and profile.total_gpus > PER_GPU_OPEN_MAX_GPUS
    return replace(
        group, panels=panels, collapsed=group.collapsed or module_key in COLLAPSED_ON_OPEN or per_gpu_at_scale
    )


def describe(profile: Profile) -> str:
    """The dashboard's description: the profile's, and which series of the store it reads (S21)."""
    if profile.deployment:
        scope = (
            f"Every query reads only the series of this deployment in the shared store: "
            f'{profile.label("deployment")}="{profile.deployment}".'
        )
    else:
        scope = (
            "Assumes a store that holds this deployment alone: its queries carry no deployment label, so a "
            "store shared with other deployments would mix them."
        )
    return f"{profile.description} {scope}".strip()
