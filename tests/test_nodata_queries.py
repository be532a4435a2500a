"""Shapes of the missing-data reason expressions (S6) in queries/nodata.py, for every profile.

Issue 4 proves their values on a real VictoriaMetrics; these tests pin the structure: the priority
order of the branches, one row per node (every aggregation ``by (node)`` only, every set operation
matched ``on(node)`` or ``on()``), the profile's node list, and the sample-count arithmetic.
"""

from __future__ import annotations

import re
from pathlib import Path

import promql_parser as pp
import pytest
from dashgen_queries import inventory as inv
from dashgen_queries import mooncake as mc
from dashgen_queries import nodata
from dashgen_queries.promql import window_moved

from dashgen.deployment.profile import load_profiles
from dashgen.deployment.topology import topology_of
from dashgen.lint.promql import func_name, grouping, metric_names, walk
from dashgen.live.reasons import ReasonFinder
from dashgen.rules.render import rule_groups

PROFILES = load_profiles(directory=Path(__file__).resolve().parent.parent / "profiles")
RANGE_S = 3600


def _gpu_missing_counts(code: int) -> tuple[int, int] | None:
    """(seen, expected) of a GPU-missing cell value, None for the other reason codes: the inverse of
    ``nodata.gpu_missing_code``."""
    expected, seen = divmod(code, nodata.GPU_MISSING_BASE)
    return (seen, expected) if expected >= 2 and 0 < seen < expected else None


def _reason_of(code: int) -> int:
    """The reason a cell value stands for (GPU_MISSING for every "k of N" value)."""
    return nodata.GPU_MISSING if _gpu_missing_counts(code) else code


def expand(expr: str) -> str:
    return expr.replace("$__range_s", str(RANGE_S)).replace("$__range", f"{RANGE_S}s")


def layer_cases():
    return [pytest.param(p, layer, id=f"{p.name}:{layer.key}") for p in PROFILES for layer in nodata.layers(p)]


def or_branches(node):
    """The operands of the top-level chain of ``or``, left to right."""
    if isinstance(node, pp.BinaryExpr) and str(node.op) == "or":
        return or_branches(node.lhs) + or_branches(node.rhs)
    return [node]


def branch_codes(node) -> list[int]:
    """The reason codes a branch yields, in priority order: one for a plain branch, two for a branch that reads
    one series for two reasons (``(checked or on(node) uninitialised) != ENOUGH`` or ``... < 100 N + N``),
    whose codes are 4 and then the checked reason's."""
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    if isinstance(node, pp.BinaryExpr) and str(node.op) in ("!=", "<") and isinstance(node.rhs, pp.NumberLiteral):
        checked, rows = or_branches(unparen(node.lhs))
        assert branch_code(rows) == nodata.UNINITIALISED
        if str(node.op) == "!=":  # 3 below the expected samples, the sentinel at or above them
            assert node.rhs.val == nodata.ENOUGH_SAMPLES and "< bool" in str(checked)
            return [nodata.UNINITIALISED, nodata.INSUFFICIENT]
        return [nodata.UNINITIALISED, branch_code(checked)]  # k + 100 N kept below 100 N + N
    return [branch_code(node)]


def unparen(node):
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node


def branch_code(node) -> int:
    """The reason code a plain branch yields: the number literal added last (``... + code``) or the
    constant in ``vector(code)``."""
    node = unparen(node)
    if isinstance(node, pp.BinaryExpr) and str(node.op) == "+" and isinstance(node.rhs, pp.NumberLiteral):
        return int(node.rhs.val)
    if isinstance(node, pp.BinaryExpr) and str(node.op) == "+":  # uninitialised + 2 x any_unmapped: 4 (or 6)
        return branch_code(node.lhs)
    if isinstance(node, pp.BinaryExpr) and str(node.op) in ("or", "unless", "and"):
        return branch_code(node.lhs)
    if func_name(node) == "label_replace":
        return branch_code(node.args[0])
    if func_name(node) == "vector":
        return int(node.args[0].val)
    raise AssertionError(f"cannot read the code of branch {node}")


@pytest.mark.parametrize(("profile", "layer"), layer_cases())
def test_s6_branches_in_priority_order(profile, layer):
    ast = pp.parse(expand(nodata.reason_code(profile, layer)))
    # the GPU-missing branch adds the GPUs seen to 100 x expected: its literal is 100 x expected
    codes = [
        nodata.GPU_MISSING if c >= 2 * nodata.GPU_MISSING_BASE else c for b in or_branches(ast) for c in branch_codes(b)
    ]
    # collection failed is itself "up == 0" or "missing from up": both 5.
    collapsed = [c for i, c in enumerate(codes) if i == 0 or c != codes[i - 1]]
    expected = [nodata.FAILED, nodata.UNINITIALISED]
    if layer.gpus_seen is not None:
        expected.append(nodata.GPU_MISSING)
    expected.append(nodata.INSUFFICIENT)
    if layer.idle_code:
        expected.append(layer.idle_code)
    expected.append(nodata.OK)
    assert collapsed == expected
    assert [nodata.PRIORITY.index(c) for c in collapsed] == sorted(nodata.PRIORITY.index(c) for c in collapsed)


@pytest.mark.parametrize(("profile", "layer"), layer_cases())
def test_s2_reason_rows_are_keyed_by_node_only(profile, layer):
    node = profile.label("node")
    ast = pp.parse(expand(nodata.reason_code(profile, layer)))
    # every branch (failed, uninitialised, insufficient samples, ok...) aggregates to rows: at least 7 in all
    assert sum(isinstance(sub, pp.AggregateExpr) for sub, _ in walk(ast)) >= 7
    for sub, parents in walk(ast):
        if isinstance(sub, pp.AggregateExpr):
            g = grouping(sub)
            if metric_names(sub) == {inv.INVENTORY}:  # the inventory joins: node -> segment host (Store layer)
                assert g.by and node in g.labels and g.labels <= {node, inv.SEGMENT_HOST}, f"inventory {sub.op}"
                continue
            if any(func_name(p) == "scalar" for p in parents):  # the any-unmapped flag: one value per master job
                assert g.by and g.labels == {profile.label("job")}, f"aggregation {sub.op} in scalar()"
                continue
            if any(
                isinstance(p, pp.AggregateExpr) and str(p.op) == "count" and grouping(p).labels == {node}
                for p in parents
            ):  # GPUs reporting: one series per (node, GPU), counted per node (S22)
                assert g.by and g.labels == {node, profile.label("gpu")}, f"aggregation {sub.op} under count"
                continue
            assert g.by and g.labels == {node}, f"aggregation {sub.op} must be `by ({node})` only"
        # set operations under an aggregation work series by series (the first-event-aware increase
        # matches each series with its own past): the rows are made by the aggregation above them
        below_aggregation = any(isinstance(p, pp.AggregateExpr) for p in parents)
        if isinstance(sub, pp.BinaryExpr) and str(sub.op) in ("or", "and", "unless") and not below_aggregation:
            matching = sub.modifier.matching if sub.modifier is not None else None
            assert matching is not None and set(matching.labels) <= {node}, f"{sub.op} without on({node})/on()"
            assert matching.type == pp.LabelModifierType.Include


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_s6_collection_failed_knows_every_profile_node(profile):
    """The expected nodes are the deployment's recorded inventory, one rule per profile node (issue 19):
    the query names no node, the rule file names every one."""
    expected = nodata.expected_nodes(profile)
    assert expected == f'(max by (node) ({inv.INVENTORY}{{cluster="{profile.deployment}"}}) * 0 + {nodata.FAILED})'
    recorded = [
        dict(rule.labels)["node"]
        for group in rule_groups(profile)
        for rule in group.rules
        if getattr(rule, "record", "") == inv.INVENTORY
    ]
    assert recorded == list(profile.node_names)
    for layer in nodata.layers(profile):
        reason = nodata.reason_code(profile, layer)
        assert not [name for name in profile.node_names if f'"{name}"' in reason], layer.key


@pytest.mark.parametrize(("profile", "layer"), layer_cases())
def test_s6_collection_failed_reads_up(profile, layer):
    expr = nodata.collection_failed(profile, layer)
    up = f'up{{cluster="{profile.deployment}", job="{layer.job}"'
    if layer.per_node_target:
        assert f"{up}}} == 0" in expr or f'{up}, node=~"$node"}}) == 0' in expr
        assert f"unless on(node) {up}}}" in expr
    else:  # one shared target (an HA pair, S32): every node fails unless some copy answers
        assert expr.endswith(f"unless on() ({up}}} == 1))")


LAYER_SOURCE = {
    "engine": "sglang",
    "hicache_host": "hicache",
    "hicache_storage": "hicache_storage",
    "mooncake": "mooncake_master",
    "gpm": "gpm",
    "dcgm": "dcgm",
    "disk": "node_exporter",
}


@pytest.mark.parametrize(("profile", "layer"), layer_cases())
def test_s6_insufficient_samples_compares_with_the_sample_interval(profile, layer):
    expr = nodata.insufficient_samples(profile, layer)
    source = profile.source(LAYER_SOURCE[layer.key])
    assert (layer.sample_seconds, layer.scrape_seconds) == (
        source.sample_interval_seconds,
        source.scrape_interval_seconds,
    )
    assert f"< {profile.insufficient_samples_share:g} * $__range_s / {source.sample_interval_seconds:g})" in expr
    ast = pp.parse(expand(expr))
    assert any(func_name(n) == "count_over_time" for n, _ in walk(ast))


def selector_reads(expr: str) -> dict[str, int]:
    """How many times each selector (with its offset) is evaluated: each is a read of every series it matches."""
    reads: dict[str, int] = {}
    for node, _ in walk(pp.parse(expand(expr))):
        if isinstance(node, pp.VectorSelector):
            reads[str(node)] = reads.get(str(node), 0) + 1
    return reads


@pytest.mark.parametrize(("profile", "layer"), layer_cases())
def test_s6_uninitialised_and_the_checked_reason_read_their_series_once(profile, layer):
    """Uninitialised shares one branch with insufficient samples (GPU layers: with GPU missing): the presence
    series (GPUs reporting) is read once for both, not once per reason (issue 42: at 1,024 GPUs the second read
    of the HiCache Store presence was a third of the reasons table's series)."""
    expr = nodata.reason_code(profile, layer)
    checked = nodata.gpus_checked if layer.gpus_seen is not None else nodata.presence_checked
    branch = checked(profile, layer)
    assert f" or on(node) {branch} or on(node) " in expr
    read = layer.gpus_seen if layer.gpus_seen is not None else layer.presence
    (selector,) = [s for s in selector_reads(read) if "offset" not in s]
    # the Store layer reads its segments once more for its "any host unmapped" flag (a join no node row has)
    flag = selector_reads(layer.unmapped).get(selector, 0) if layer.unmapped else 0
    assert selector_reads(branch)[selector] == 1 + flag, selector
    assert nodata.uninitialised(profile, layer) in branch
    if layer.gpus_seen is None:  # the sample count: every non-GPU layer's presence is read once in the whole code
        idle = nodata.idle(profile, layer)  # the disk layer's presence is also one of its activity counters
        again = selector_reads(idle).get(selector, 0) if idle else 0
        assert selector_reads(expr)[selector] == 1 + flag + again, selector


@pytest.mark.parametrize(("profile", "layer"), [case for case in layer_cases() if case.values[1].activity])
def test_idle_reads_each_activity_counter_three_times(profile, layer):
    reads = selector_reads(nodata.idle(profile, layer))
    checked = 0
    for counter in layer.activity:
        (plain,) = [s for s in selector_reads(counter)]
        assert reads[plain] == 2 and reads[f"{plain} offset 1h"] == 1, (plain, reads)
        checked += 1
    assert checked == len(layer.activity) >= 1


@pytest.mark.parametrize(("profile", "layer"), layer_cases())
def test_s7_idle_is_about_counters_increasing_not_zero_filling(profile, layer):
    expr = nodata.reason_code(profile, layer)
    assert not re.search(r"or\s+(on\s*\([^)]*\)\s*)?vector\(", expr), "a constant vector must never be or-ed in"
    idle = nodata.idle(profile, layer)
    if layer.idle_code:
        ast = pp.parse(expand(idle))
        assert not any(isinstance(n, pp.AggregateExpr) and str(n.op) == "sum" for n, _ in walk(ast))
        # each activity counter is read with the first-event-aware test of movement: a counter created in the
        # window (absent until its first event) is activity, not idle
        for counter in layer.activity:
            assert f"{window_moved(counter)})" in idle, counter
        increases = [n for n, _ in walk(ast) if func_name(n) == "increase"]
        assert len(increases) == len(layer.activity)
    else:
        assert idle is None


@pytest.mark.parametrize(("profile", "layer"), [c for c in layer_cases() if c.values[1].key.startswith("hicache")])
def test_idle_reads_one_rank_per_node_and_dp_group(profile, layer):
    """Issue 42: the HiCache layers' activity counters are read on one TP rank per node (per-shard bytes move on
    every rank together) or on the logging rank (logical tokens), plus every rank of DP groups other than 0."""
    tp, dp = profile.label("tp_rank"), profile.label("dp_rank")
    firsts = sorted({min(r.tp_rank for r in topology_of(profile).ranks if r.node == n) for n in profile.node_names})
    for counter in layer.activity:
        assert f'{tp}="0"' in counter or f'{tp}=~"{"|".join(map(str, firsts))}"' in counter or f'{dp}!~"|0"' in counter
    assert len(layer.activity) == 4  # two counters, each on two selectors


def test_s6_h20_dcgm_expects_one_sample_per_collect_interval_not_per_scrape():
    """DCGM collects every 30 s: h20-16 scrapes it every 15 s but expects (and tolerates dedup to) 30 s."""
    profile = next(p for p in PROFILES if p.name == "h20-16")
    (layer,) = [layer for layer in nodata.layers(profile) if layer.key == "dcgm"]
    assert (layer.scrape_seconds, layer.sample_seconds) == (15, 30)
    assert "$__range_s / 30)" in nodata.insufficient_samples(profile, layer)


def test_layers_follow_the_profile_sources():
    by_name = {p.name: [layer.key for layer in nodata.layers(p)] for p in PROFILES}
    assert by_name["long-context-64"] == [
        "engine",
        "hicache_host",
        "hicache_storage",
        "mooncake",
        "gpm",
        "dcgm",
        "disk",
    ]
    assert by_name["video-200"][0] == "engine" and "hicache_host" not in by_name["video-200"]
    assert "mooncake" not in by_name["h20-16"] and "hicache_host" in by_name["h20-16"]


def test_value_mappings_name_each_reason_with_its_colour():
    mapping, larger = nodata.reason_states().mappings()
    options = mapping["options"]
    assert mapping["type"] == "value"
    reasons = {k: (v["text"], v["color"]) for k, v in options.items() if _reason_of(int(k)) != nodata.GPU_MISSING}
    assert reasons == {
        "0": ("ok", "green"),
        "1": ("no traffic", "blue"),
        "2": ("no I/O", "blue"),
        "3": ("insufficient samples", "yellow"),
        "4": ("uninitialised", "orange"),
        "5": ("collection failed", "red"),
        "6": ("segment host not mapped", "purple"),
    }
    # S22: every "k of N" a node of up to MAX_GPUS_PER_NODE GPUs can show, never "ok"; larger nodes: a range
    assert options["807"]["text"] == "GPU missing (7 of 8)" and options["801"]["text"] == "GPU missing (1 of 8)"
    missing = [k for k in options if _reason_of(int(k)) == nodata.GPU_MISSING]
    assert len(missing) == sum(n - 1 for n in range(2, nodata.MAX_GPUS_PER_NODE + 1))
    assert sorted(v["index"] for v in options.values()) == list(range(len(options)))
    assert larger["type"] == "range" and larger["options"]["from"] > max(int(k) for k in options)
    assert "GPU missing" in larger["options"]["result"]["text"]


def test_s22_gpu_missing_codes_carry_seen_and_expected():
    assert nodata.gpu_missing_code(7, 8) == 807 and _gpu_missing_counts(807) == (7, 8)
    assert all(_gpu_missing_counts(code) is None for code in nodata.REASONS)
    assert _reason_of(1507) == nodata.GPU_MISSING and _reason_of(4) == nodata.UNINITIALISED
    with pytest.raises(ValueError):
        nodata.gpu_missing_code(0, 8)  # no GPU reporting while the target is up is uninitialised, not GPU missing


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_s22_gpu_layers_count_gpus_against_the_profile_and_check_it_before_the_sample_count(profile):
    gpu_layers = [layer.key for layer in nodata.layers(profile) if layer.key in ("gpm", "dcgm")]
    assert gpu_layers == [key for key in ("gpm", "dcgm") if profile.exported(key)] and gpu_layers, profile.name
    for layer in nodata.layers(profile):
        if layer.key not in ("gpm", "dcgm"):
            assert layer.gpus_seen is None
            continue
        assert layer.expected_gpus == profile.gpus_per_node
        reason = nodata.reason_code(profile, layer)
        n = profile.gpus_per_node
        checked = nodata.gpus_checked(profile, layer)
        # k GPUs reporting read 100 N + k, kept only below 100 N + N; no GPU reporting: uninitialised's 4
        assert checked.startswith(f"((({layer.gpus_seen} + {100 * n}) or on(node) ")
        assert checked.endswith(f") < {100 * n + n})")
        assert reason.index(checked) < reason.index(nodata.insufficient_samples(profile, layer))
        assert layer.gpus_seen.startswith("count by (node) (max by (node, gpu) (last_over_time(")
        assert 'gpu=~"$gpu"' not in layer.gpus_seen and 'node=~"$node"' in layer.gpus_seen


@pytest.mark.parametrize("profile", [p for p in PROFILES if p.exported("mooncake_master")], ids=lambda p: p.name)
def test_s11_store_layer_reports_unmapped_hosts_apart_from_uninitialised(profile):
    (layer,) = [layer for layer in nodata.layers(profile) if layer.key == "mooncake"]
    assert layer.unmapped == mc.unmapped_in_window(profile)
    uninitialised = nodata.uninitialised(profile, layer)
    # 4, turned into 6 by the scalar flag when segments with unmapped hosts exist
    flag = nodata.any_unmapped(profile, layer)
    assert uninitialised.endswith(f" + {nodata.UNMAPPED - nodata.UNINITIALISED} * {flag})")
    assert uninitialised in nodata.presence_checked(profile, layer)
    assert layer.unmapped in flag and f"unless on({inv.SEGMENT_HOST}) {inv.host_to_node(profile)}" in flag
    reason = nodata.reason_code(profile, layer)
    # segment -> node through the recorded inventory, not a per-node chain in the text (issue 19)
    assert f"* on({inv.SEGMENT_HOST}) group_left(node) {inv.host_to_node(profile)}" in reason
    assert not [host for host in mc.segment_hosts(profile).values() if host in reason]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_every_layer_names_the_profile_source_it_reads(profile):
    """A layer carries its source, so validate-queries explains an empty layer by that source's status and no
    second table maps layer keys to sources."""
    found = nodata.layers(profile)
    assert len(found) >= 3
    for layer in found:
        assert layer.source in profile.sources, layer.key
        assert profile.source(layer.source).job == layer.job, layer.key
    grouped = ReasonFinder.layer_queries(profile)
    assert {layer.source for layer in found} == set(grouped)
