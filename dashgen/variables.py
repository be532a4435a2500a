"""Template variables of a profile's dashboards: datasource, node, gpu, and the pool / replica /
PP stage selectors where the profile has them, chained so that a replica narrows nodes and a
node narrows GPUs. Values come from the profile's topology and label contract, never literals.
"""

from __future__ import annotations

from typing import Any

import grafanalib.core as G
from dashgen_queries.promql import in_deployment, job, selector

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.render.grafanalib_bridge import DATASOURCE

ALL = {"selected": True, "text": ["All"], "value": ["$__all"]}


def _query_variable(name: str, label: str, query: str, description: str) -> dict[str, Any]:
    template = G.Template(
        name=name,
        label=label,
        query=query,
        dataSource=DATASOURCE,
        type="query",
        includeAll=True,
        multi=True,
        allValue=".+",
        refresh=2,
        sort=3,
    )
    data = template.to_json_data()
    data.update(current=dict(ALL), options=[], definition=query, description=description)
    return data


def _custom_variable(name: str, label: str, choices: list[tuple[str, str]], description: str) -> dict[str, Any]:
    query = ",".join(f"{text} : {value}" if text != value else value for text, value in choices)
    template = G.Template(name=name, label=label, query=query, type="custom", includeAll=True, multi=True)
    data = template.to_json_data()
    data.update(
        current=dict(ALL),
        allValue=".+",
        description=description,
        options=[{"selected": True, "text": "All", "value": "$__all"}]
        + [{"selected": False, "text": text, "value": value} for text, value in choices],
    )
    return data


ENGINE_POOL_METRIC = "sglang:num_running_reqs"  # every scheduler reports it, labelled with its engine_type


def is_pd(profile: Profile) -> bool:
    roles = [pool.role for pool in profile.pools]
    return len(roles) > 1 and set(roles) <= {"prefill", "decode"}


def node_group_variable(profile: Profile, topology: Topology) -> dict[str, Any] | None:
    """``pool`` (several pools) or ``replica`` (replicas spanning several nodes) mapped to node regexes. A PD
    deployment's pools come from the engine's own ``engine_type`` label (P:D ratios change), not from a node
    list frozen in the profile (S27)."""
    if is_pd(profile):
        query = f"label_values({selector(ENGINE_POOL_METRIC, job(profile, 'sglang'))}, engine_type)"
        return _query_variable(
            "pool",
            "Pool",
            query,
            "Engine pool (prefill / decode) as the engines label themselves (engine_type); "
            "selects the nodes that run it now.",
        )
    if topology.node_group == "pool":
        choices = [(pool.name, "|".join(topology.nodes_of_pool(pool.name))) for pool in profile.pools]
        return _custom_variable("pool", "Pool", choices, "Engine pool; selects the nodes that run it.")
    if topology.node_group == "replica":
        choices = [(replica.key, "|".join(replica.nodes)) for replica in topology.multi_node_replicas]
        return _custom_variable("replica", "Replica", choices, "Engine replica; selects the nodes it spans.")
    return None


def dashboard_variables(profile: Profile, topology: Topology, gpu_metric: str | None) -> list[dict[str, Any]]:
    """All variables of a profile's dashboard, in the order they chain."""
    node, gpu = profile.label("node"), profile.label("gpu")
    datasource = G.Template(
        name="datasource", label="Data source", query="prometheus", type="datasource"
    ).to_json_data()
    datasource["current"] = {"selected": True, "text": "default", "value": "default"}
    variables: list[dict[str, Any]] = [datasource]
    group = node_group_variable(profile, topology)
    if group:
        variables.append(group)
    # :pipe joins the chosen options with "|" unescaped; the default regex escaping would turn each
    # option's "a|b" into a literal "a\\|b" that matches no node.
    narrow = f'{node}=~"${{{group["name"]}:pipe}}"' if group else ""
    nodes_of = in_deployment(profile, "up", narrow)
    if is_pd(profile):
        nodes_of = selector(ENGINE_POOL_METRIC, job(profile, "sglang"), 'engine_type=~"$pool"')
    scope = f" in deployment {profile.label('deployment')}={profile.deployment!r}" if profile.deployment else ""
    variables.append(
        _query_variable(
            "node",
            "Node",
            f"label_values({nodes_of}, {node})",
            f"Nodes of this deployment{scope} (label '{node}' set by each node's vmagent).",
        )
    )
    if gpu_metric:
        variables.append(
            _query_variable(
                "gpu",
                "GPU",
                f"label_values({in_deployment(profile, gpu_metric, f'{node}=~{chr(34)}$node{chr(34)}')}, {gpu})",
                "GPU index on the selected nodes (NVML index).",
            )
        )
    if profile.has_pp:
        stages = [(str(stage), str(stage)) for stage in range(profile.max_pp)]
        variables.append(
            _custom_variable(
                "stage",
                "PP stage",
                stages,
                "Pipeline-parallel stage; SGLang series are never summed across stages (S3).",
            )
        )
    return variables
