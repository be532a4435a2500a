"""Which dashboards a profile has, and what goes on each: profile -> DashboardSpecs (pure)."""

from __future__ import annotations

from dashgen.ids import dashboard_uid
from dashgen.profile import Profile
from dashgen.spec import DashboardSpec
from dashgen.topology import Topology
from dashgen.variables import dashboard_variables
from queries.gpu import QUANTITIES, gpu_source

CLUSTER_DASHBOARD = "cluster"


def dashboard_specs(profile: Profile, groups: tuple | None = None) -> list[DashboardSpec]:
    """The profile's dashboards. ``groups`` overrides the panel-group modules (tests use it)."""
    if groups is None:
        from panels import GROUPS

        groups = GROUPS
    topology = Topology(profile)
    source = gpu_source(profile)
    gpu_metric = source.metric(QUANTITIES["power"]) if source else None
    built = tuple(module.build(profile, topology) for module in groups)
    return [
        DashboardSpec(
            profile=profile.name,
            name=CLUSTER_DASHBOARD,
            uid=dashboard_uid(profile.name, CLUSTER_DASHBOARD),
            title=profile.title,
            description=profile.description,
            tags=("dashgen", f"profile:{profile.name}"),
            groups=tuple(group for group in built if group is not None),
            variables=tuple(dashboard_variables(profile, topology, gpu_metric)),
            schema_version=profile.dashboard.schema_version,
            time_from=profile.dashboard.time_from,
            refresh=profile.dashboard.refresh,
        )
    ]
