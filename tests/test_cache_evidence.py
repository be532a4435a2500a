"""The Cache evidence group, rendered in-process for every profile: the rules S2, S3, S7-S17 it must
hold, checked on the built (and validated) dashboards and their PromQL (parsed with promql_parser)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import promql_parser as pp
import pytest
from dashgen_panels import cache_evidence, reference
from dashgen_queries import hicache as sg
from dashgen_queries import inventory as inv
from dashgen_queries import mooncake as mc

from dashgen.build import build_profile
from dashgen.deployment.profile import TEXT, load_profiles
from dashgen.deployment.sizes import format_binary, format_decimal
from dashgen.deployment.topology import Topology
from dashgen.document import iter_panels
from dashgen.lint.promql import func_name, grouping, metric_names, outer_aggregations, walk
from dashgen.render.spec import GroupSpec
from dashgen.rules.recording import inventory_records

PROFILES = {p.name: p for p in load_profiles(directory=Path(__file__).resolve().parent.parent / "profiles")}
TABLES = ("cache_evidence.occupancy", "cache_evidence.reuse_io", "cache_evidence.reasons")


# The S17 capacity anatomy: the Store's panels that the Reference group shows at the end of the dashboard (S34)
ANATOMY = SimpleNamespace(
    WORKLOADS=reference.WORKLOADS,
    build=lambda profile, topology: GroupSpec(
        key=reference.KEY, title=reference.ANATOMY_TITLE, panels=tuple(reference.anatomy_panels(profile, topology))
    ),
)


@cache
def built(name: str):
    (dashboard,) = build_profile(PROFILES[name], (cache_evidence, ANATOMY))
    return dashboard


def specs(name: str) -> dict:
    groups = built(name).spec.groups  # the group's rows (tables, Store), then Reference's capacity anatomy
    return {panel.key: panel for group in groups for panel in group.panels}


def rendered(name: str) -> dict:
    """Title -> rendered panel, the panels of collapsed rows included (one per spec)."""
    return {site.raw["title"]: site.raw for site in iter_panels(built(name).document) if site.raw["type"] != "row"}


def expand(expr: str) -> str:
    return expr.replace("$__range_s", "3600").replace("$__range", "3600s")


def parse(expr: str):
    return pp.parse(expand(expr))


def columns(panel) -> dict[str, str]:
    """Column title -> PromQL of a merged per-node table."""
    rename = panel.transformations[1]["options"]["renameByName"]
    return {rename[f"Value #{t.ref_id}"]: t.expr for t in panel.targets}


def aggregations(expr: str):
    return [n for n, _ in walk(parse(expr)) if isinstance(n, pp.AggregateExpr)]


def string_arg(node) -> str:
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node.val if isinstance(node, pp.StringLiteral) else ""


NAMES = sorted(PROFILES)
# S25: cache tiers exist only in text-generation pools; a video-only deployment keeps the reasons tables.
TEXT_NAMES = [name for name in NAMES if PROFILES[name].has_kind("text-generation")]


def test_s34_the_cache_evidence_review_follows_the_localising_rows_and_precedes_reference():
    from dashgen_panels import GROUPS, gpu_health, gpu_window_stats, kv_cache_nvme, reference, requests_gateway

    assert cache_evidence.TITLE == "Cache evidence"
    order = list(GROUPS)
    localising = (requests_gateway, gpu_health, gpu_window_stats, kv_cache_nvme)
    assert all(order.index(module) < order.index(cache_evidence) for module in localising)
    assert order.index(cache_evidence) < order.index(reference) == len(order) - 1
    for name in NAMES:
        assert built(name).spec.groups[0].key == "cache_evidence"
        assert built(name).spec.groups[0].title == (
            "Cache evidence" if name in TEXT_NAMES else cache_evidence.NO_CACHE_TITLE
        )


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_s2_every_aggregation_of_the_three_tables_keeps_node(name):
    node = PROFILES[name].label("node")
    keeping = 0  # aggregations checked to keep the node label
    for key in TABLES:
        panel = specs(name)[key]
        assert panel.targets, key
        for target in panel.targets:
            for agg, parents in ((n, p) for n, p in walk(parse(target.expr)) if isinstance(n, pp.AggregateExpr)):
                g = grouping(agg)
                assert g.by, f"{key}: `{agg.op}` uses without/no by: {target.expr[:120]}"
                if any(func_name(p) == "scalar" for p in parents):  # a cluster-wide flag, not a row
                    continue
                assert node in g.labels, f"{key}: `{agg.op} by {sorted(g.labels)}` drops {node}"
                keeping += 1
            flags = {
                str(a)
                for a, parents in walk(parse(target.expr))
                if isinstance(a, pp.AggregateExpr) and any(func_name(p) == "scalar" for p in parents)
            }
            for outer in outer_aggregations(parse(target.expr)):
                if str(outer) not in flags:
                    assert grouping(outer).labels <= {node, PROFILES[name].label("pp_rank")}, key
    targets = sum(len(specs(name)[key].targets) for key in TABLES)
    assert keeping >= targets >= 3 * len(TABLES), (targets, keeping)


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_s2_tables_merge_into_one_row_per_node(name):
    assert len(TABLES) == 3 and set(TABLES) <= set(specs(name))
    for key in TABLES:
        panel = specs(name)[key]
        assert all(t.instant and t.table for t in panel.targets)
        assert panel.transformations[0]["id"] == "merge"
        assert panel.transformations[1]["options"]["renameByName"][PROFILES[name].label("node")] == "Node"


@pytest.mark.parametrize("name", NAMES)
def test_s3_no_sum_across_pp_stages_and_no_footer(name):
    profile = PROFILES[name]
    stage = profile.label("pp_rank")
    assert len(specs(name)) >= 2 and len(rendered(name)) == len(specs(name))
    for key, panel in specs(name).items():
        for target in panel.targets:
            for agg in aggregations(target.expr):
                names = metric_names(agg)
                engine = {n for n in names if n.startswith("sglang:") and n != sg.CACHED}
                if str(agg.op) in ("sum", "count", "avg") and engine:
                    assert stage in grouping(agg).labels, f"{key}: {agg.op} over {sorted(engine)} drops {stage}"
    for panel in rendered(name).values():
        if panel["type"] == "table":
            footer = panel.get("options", {}).get("footer", {})
            assert not footer.get("show") and "sum" not in footer.get("reducer", [])


@pytest.mark.parametrize("name", NAMES)
def test_s7_no_zero_fill(name):
    assert len(specs(name)) >= 2
    for key, panel in specs(name).items():
        assert str(panel.no_value or "").strip() not in ("0", "0.0")
        for target in panel.targets:
            assert not re.search(r"or\s+(on\s*\([^)]*\)\s*)?vector\(", target.expr), key
            for node, _ in walk(parse(target.expr)):
                if func_name(node) == "vector":
                    assert key == "cache_evidence.reasons", f"{key}: constant vectors only as reason codes"
        for mapping in panel.mappings:
            if mapping["type"] == "special":
                assert mapping["options"]["result"]["text"].strip() not in ("0", "0.0")


def test_s8_direction_words_name_the_right_counters():
    for name in TEXT_NAMES:
        profile = PROFILES[name]
        cols = columns(specs(name)["cache_evidence.reuse_io"])
        expected = {}
        if profile.exported("hicache"):
            expected |= {"GPU→Host backup": sg.BACKUP_BYTES, "Host→GPU load-back": sg.LOAD_BACK_BYTES}
            expected |= {f"GPU KV dropped before Host backup, {reason}": sg.DROPPED for reason in sg.DROPPED_REASONS}
        if profile.exported("hicache_storage"):
            expected |= {
                "Host→Store backed-up": sg.BACKUPED,
                "Store→Host prefetched": sg.PREFETCHED,
                "Host→Store dropped before backup": sg.BACKUP_DROPPED,
            }
        for prefix, metric in expected.items():
            (title,) = [t for t in cols if t.startswith(prefix)]
            assert metric_names(parse(cols[title])) == {metric}, title
        arrows = [t for t in cols if "→" in t]
        assert len(arrows) == len([prefix for prefix in expected if "→" in prefix]), name
    assert any("→" in t for t in columns(specs("long-context-64")["cache_evidence.reuse_io"]))


def test_s30_dropped_before_backup_one_column_per_reason_each_saying_what_it_implicates():
    profile = PROFILES["long-context-64"]
    cols = columns(specs("long-context-64")["cache_evidence.reuse_io"])
    dropped = {t: e for t, e in cols.items() if t.startswith("GPU KV dropped before Host backup")}
    assert len(dropped) == len(sg.DROPPED_REASONS) == 2
    for reason in sg.DROPPED_REASONS:
        (title,) = [t for t in dropped if reason in t]
        assert f'reason="{reason}"' in dropped[title] and "reason=~" not in dropped[title]
        assert "sum by (node, pp_rank) (" in dropped[title] and "reason" not in dropped[title].split("(", 1)[0]
    description = specs("long-context-64")["cache_evidence.reuse_io"].description
    assert "host_pressure implicates Host capacity" in description
    assert "write_through_unbacked_eviction not a Host capacity signal" in description
    assert profile.exported("hicache")


def test_s8_bytes_sum_tp_ranks_tokens_read_one_rank():
    profile = PROFILES["long-context-64"]
    dp_rank = profile.label("dp_rank")
    cols = columns(specs("long-context-64")["cache_evidence.reuse_io"])
    assert len([t for t in cols if "(GiB)" in t]) == 2, sorted(cols)
    assert len([t for t in cols if t.startswith(("Host→Store", "Store→Host"))]) == 3, sorted(cols)
    for title, expr in cols.items():
        outer = outer_aggregations(parse(expr))
        found = aggregations(expr)
        if "(GiB)" in title:
            assert [str(a.op) for a in outer] == ["sum"], title
            assert len(found) == 1, f"{title}: per-shard bytes are summed over TP ranks directly"
        elif title.startswith(("Host→Store", "Store→Host")):
            # one TP rank per DP group (max by ..., dp_rank), then the DP groups added
            assert [str(a.op) for a in outer] == ["sum"], title
            assert dp_rank not in grouping(outer[0]).labels, title
            assert [str(a.op) for a in found] == ["sum", "max"] and dp_rank in grouping(found[1]).labels, title


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_s9_final_reuse_is_the_engine_prefill_report_never_prefetch(name):
    panel = specs(name)["cache_evidence.reuse_io"]
    for title, expr in columns(panel).items():
        if title.startswith("Final reuse"):
            assert metric_names(parse(expr)) <= {sg.PREFILL_EFFECTIVE, sg.CACHED, "up", inv.INVENTORY}, title
    assert "prefetch is an attempt, not a reuse" in panel.description


@pytest.mark.parametrize("name", [n for n in NAMES if PROFILES[n].exported("hicache")])
def test_s10_dropped_tokens_are_not_host_eviction(name):
    description = specs(name)["cache_evidence.reuse_io"].description
    assert "hicache_dropped_tokens_total" in description
    assert "NOT Host eviction" in description


def _inventory_join(parents) -> str | None:
    """How a Store selector meets the node inventory above it: "mapped" (``* on(segment_host)
    group_left(node)``), "unmapped" (``unless on(segment_host)``) or None (not joined)."""
    for parent in reversed(parents):
        if not (isinstance(parent, pp.BinaryExpr) and metric_names(parent.rhs) == {inv.INVENTORY}):
            continue
        matching = parent.modifier.matching
        if list(matching.labels) != [inv.SEGMENT_HOST]:
            return None
        if str(parent.op) == "*" and str(parent.modifier.card).endswith("ManyToOne"):
            return "mapped"
        if str(parent.op) == "unless":
            return "unmapped"
    return None


@pytest.mark.parametrize("name", [n for n in NAMES if PROFILES[n].exported("mooncake_master")])
def test_s11_store_per_node_comes_from_the_segment_host(name):
    """Every per-segment Store read takes the segment's host part and joins it with the recorded inventory
    (segment_host -> node): mapped segments get the node, unmapped ones are only ever counted (issue 19:
    the host list is no longer in the query text)."""
    profile = PROFILES[name]
    checked = unmapped = 0
    for key, panel in specs(name).items():
        for target in panel.targets:
            for sel, parents in ((n, p) for n, p in walk(parse(target.expr)) if isinstance(n, pp.VectorSelector)):
                if sel.name not in (mc.ALLOCATED, mc.CAPACITY):
                    continue
                hosts = [
                    p for p in parents if func_name(p) == "label_replace" and string_arg(p.args[1]) == inv.SEGMENT_HOST
                ]
                assert hosts and string_arg(hosts[-1].args[3]) == "segment", f"{key}: no segment_host taken"
                assert string_arg(hosts[-1].args[4]) == "(.*)" + mc.PORT_REGEX, key
                join = _inventory_join(parents)
                assert join is not None, f"{key}: {sel.name} used without the inventory join"
                if (
                    key == "cache_evidence.store_unmapped"
                ):  # every segment flagged 1 (unmapped) or 0 (mapped), then counted
                    assert target.expr == mc.unmapped_segments(PROFILES[name])
                if join == "unmapped":
                    unmapped += 1
                    continue
                checked += 1
        for target in panel.targets:
            assert not [h for h in mc.segment_hosts(profile).values() if f"{h}:" in target.expr], key
    assert checked >= 4 and unmapped >= 2


def test_s11_long_context_maps_segments_by_ip():
    profile = PROFILES["long-context-64"]
    assert mc.segment_hosts(profile)["lc-node-00"] == "10.12.0.10"
    recorded = {dict(rule.labels)["node"]: dict(rule.labels)[inv.SEGMENT_HOST] for rule in inventory_records(profile)}
    assert recorded == mc.segment_hosts(profile)
    occupancy = columns(specs("long-context-64")["cache_evidence.occupancy"])["Store allocated (GiB)"]
    assert f"group_left(node) {inv.host_to_node(profile)}" in occupancy and "10.12.0" not in occupancy
    stat = specs("long-context-64")["cache_evidence.store_unmapped"]
    (target,) = stat.targets
    assert f"unless on({inv.SEGMENT_HOST}) {inv.host_to_node(profile)}" in target.expr


def test_s11_store_queries_do_not_grow_with_the_node_count():
    """VictoriaMetrics refuses queries over 16 KiB (-search.maxQueryLen): every query the cache-evidence
    group builds is the same length for 25 nodes registering under IPs as for the shipped 8 (issue 19)."""
    import copy
    import tomllib

    from dashgen.deployment.profile import profile_from_dict

    data = tomllib.loads((Path(__file__).resolve().parent.parent / "profiles" / "long-context-64.toml").read_text())
    data = copy.deepcopy(data)
    data["cluster"].update(nodes=25, node_addresses={f"lc-node-{i:02d}": f"10.120.100.{200 + i}" for i in range(25)})
    data["pools"][0].update(replicas=25, tp=8, pp=1)
    data.pop("mooncake", None)  # its master mapping names long-context-64's two replicas
    data["capacity"]["global_segment_size"] = 68719476736
    profile = profile_from_dict(data, "profiles/long-context-64.toml")

    def lengths(p) -> dict[tuple[str, str], int]:
        (dashboard,) = build_profile(p, (cache_evidence,))
        return {
            (panel.key, t.ref_id or str(i)): len(t.expr)
            for group in dashboard.spec.groups
            for panel in group.panels
            for i, t in enumerate(panel.targets)
        }

    # the shipped profile with the same one shared master (its [[mooncake.masters]] names 2 replicas): the only
    # difference left is the node count
    shipped_data = copy.deepcopy(
        tomllib.loads((Path(__file__).resolve().parent.parent / "profiles" / "long-context-64.toml").read_text())
    )
    shipped_data.pop("mooncake", None)
    large, shipped = lengths(profile), lengths(profile_from_dict(shipped_data, "profiles/long-context-64.toml"))
    assert large == shipped
    assert max(large.values()) < 16 * 1024


def test_s12_ram_ssd_share_divides_by_ram_plus_ssd_returns():
    panel = specs("long-context-64")["cache_evidence.ram_ssd_share"]
    assert panel.unit == "percent" and (panel.min, panel.max) == (0, 100)
    for target in panel.targets:
        divisions = [n for n, _ in walk(parse(target.expr)) if isinstance(n, pp.BinaryExpr) and str(n.op) == "/"]
        assert len(divisions) == 1
        assert metric_names(divisions[0].rhs) == {mc.RAM_RETURNS, mc.SSD_RETURNS}
        assert len(metric_names(divisions[0].lhs)) == 1
    assert "not a request hit rate" in panel.description.lower()


def test_s13_object_counts_are_never_added():
    panel = specs("long-context-64")["cache_evidence.object_counts"]
    assert len(panel.targets) == 3
    for target in panel.targets:
        assert len(metric_names(parse(target.expr))) == 1
        assert not any(isinstance(n, pp.BinaryExpr) and str(n.op) == "+" for n, _ in walk(parse(target.expr)))
    assert "never summed" in panel.description


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_s14_request_level_reuse_is_na_off_the_entry_node(name):
    profile = PROFILES[name]
    panel = specs(name)["cache_evidence.reuse_io"]
    entries = sorted({replica.nodes[0] for replica in Topology(profile).replicas})
    request_level = {t: e for t, e in columns(panel).items() if "request-level" in t}
    assert request_level
    # the entry nodes are the recorded inventory's replica_entry="true" nodes, not a list in the text (issue 19)
    recorded = sorted(dict(r.labels)["node"] for r in inventory_records(profile) if (inv.ENTRY, "true") in r.labels)
    assert recorded == entries
    for title, expr in request_level.items():
        assert f"* 0 + {sg.NOT_SPLITTABLE})" in expr, title
        assert f"unless on({profile.label('node')}) {inv.entry_nodes(profile)})" in expr, title
    (marker,) = [m for m in panel.mappings if m["type"] == "value"]
    assert marker["options"][str(sg.NOT_SPLITTABLE)]["text"].startswith("N/A")


def test_s14_long_context_splits_reuse_only_where_it_can():
    profile = PROFILES["long-context-64"]
    assert sg.entry_nodes(Topology(profile)) == [profile.node_names[0], profile.node_names[4]]


def test_s15_long_context_names_the_client_metrics_not_exported():
    panel = specs("long-context-64")["cache_evidence.sources_unavailable"]
    assert panel.kind == "text"
    assert "not exported by the client" in panel.content and "mooncake_client" in panel.content


def test_s25_video_has_no_cache_tier_panel_only_the_reasons_and_freshness_tables():
    """A video-generation pool has no KV cache, HiCache or Store: no cache-evidence panel and no "not deployed"
    placeholder for them, only the missing-data reasons and newest-sample-age tables of its layers."""
    found = specs("video-200")
    assert set(found) == {"cache_evidence.reasons", "cache_evidence.freshness"}, sorted(found)
    exprs = " ".join(
        target.expr for key in ("cache_evidence.reasons", "cache_evidence.freshness") for target in found[key].targets
    )
    assert "sglang:diffusion_num_queue_reqs" in exprs and "sglang:diffusion_requests_total" in exprs
    assert sg.KV_MAX not in exprs and sg.REALTIME not in exprs


def test_s16_each_prefetch_reason_is_its_own_series_and_deferred_is_apart():
    found = specs("long-context-64")
    unfulfilled, deferred = found["cache_evidence.prefetch_unfulfilled"], found["cache_evidence.prefetch_deferred"]
    (target,) = unfulfilled.targets
    assert metric_names(parse(target.expr)) == {sg.UNFULFILLED}
    for agg in aggregations(target.expr):
        assert "reason" in grouping(agg).labels
    for reason in ("anchor_lost", "aux_window_trim", "below_threshold", "cache_admission_shortfall"):
        assert reason in target.expr
    assert metric_names(parse(deferred.targets[0].expr)) == {sg.DEFERRED}
    assert "not a final miss" in deferred.description
    assert unfulfilled.transformations[0]["options"]["rowField"] == "reason"


def test_s17_long_context_anatomy_reads_the_article_numbers():
    content = specs("long-context-64")["cache_evidence.capacity_limits"].content
    assert "| Store RAM (Mooncake) | 8 GiB | 64 GiB | 256 GiB | 512 GiB |" in content
    assert "| Host KV (HiCache) | 32 GiB | 256 GiB | 1 TiB |" in content
    assert "| NVMe bucket limit | 240 GB | 1.92 TB |" in content


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_s17_limit_allocation_filesystem_are_three_panels(name):
    profile = PROFILES[name]
    found = specs(name)
    cap = Topology(profile).capacity
    content = found["cache_evidence.capacity_limits"].content
    for value in (cap.store_per_node, cap.host_per_node):
        if value is not None:
            assert format_binary(value) in content
    if cap.nvme_limit_per_node is not None:
        assert format_decimal(cap.nvme_limit_per_node) in content
    assert found["cache_evidence.capacity_limits"].targets == ()
    if profile.exported("node_exporter") and profile.disks.has_cache_tier:
        fs_panel = found["cache_evidence.filesystem_usage"]
        assert all("node_filesystem" in t.expr for t in fs_panel.targets)
        assert "axis maximum is neither capacity nor usage" in fs_panel.description
    if profile.exported("hicache") or profile.exported("mooncake_master"):
        assert all("node_filesystem" not in t.expr for t in found["cache_evidence.logical_allocation"].targets)


@pytest.mark.parametrize("name", NAMES)
def test_every_panel_states_its_evidence(name):
    assert len(specs(name)) >= 2 and len(rendered(name)) == len(specs(name))
    for key, panel in specs(name).items():
        for word in ("Evidence layer:", "Source:", "Quantity:", "Limit:"):
            assert word in panel.description, f"{key} lacks {word}"
    for title, panel in rendered(name).items():
        assert panel.get("description"), title


@pytest.mark.parametrize("name", NAMES)
def test_reasons_table_shows_reason_text_for_every_layer(name):
    panel = specs(name)["cache_evidence.reasons"]
    (mapping,) = [m for m in panel.mappings if m["type"] == "value"]
    assert {v["text"] for v in mapping["options"].values()} >= {"collection failed", "uninitialised", "ok"}
    titles = list(columns(panel))
    assert titles[0].startswith("Engine")
    disk = "Cache disk" if PROFILES[name].has_kind(TEXT) else "Scratch disk"  # S25: a video pool has no KV cache
    assert any(t.startswith(disk) for t in titles) == PROFILES[name].disks.has_cache_tier
    assert any(t.startswith("HiCache Host") for t in titles) == PROFILES[name].exported("hicache")


LOGICAL_COUNTS = {sg.PREFILL_EFFECTIVE, sg.BACKUPED, sg.PREFETCHED, sg.PREFETCH_HIT, sg.BACKUP_DROPPED, sg.DROPPED}


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_logical_counts_of_the_reuse_table_read_only_the_logging_ranks(name):
    """Issue 42: a logical count is non-zero only on the logging TP rank of each DP group (or a copy on every
    rank), so the table reads those ranks alone: ``tp_rank="0"`` or a DP group other than 0, never every rank (at
    1,024 GPUs the table fetched 55 k series, over the 20 k panel budget). Per-shard bytes still read every rank."""
    profile = PROFILES[name]
    tp, dp = profile.label("tp_rank"), profile.label("dp_rank")
    narrowed = 0
    for title, expr in columns(specs(name)["cache_evidence.reuse_io"]).items():
        for node, _ in walk(parse(expr)):
            if not isinstance(node, pp.VectorSelector) or node.name not in LOGICAL_COUNTS:
                continue
            found = {(m.name, str(m.op), m.value) for m in node.matchers.matchers}
            assert (tp, "MatchOp.Equal", "0") in found or (dp, "MatchOp.NotRe", "|0") in found, f"{title}: {node}"
            narrowed += 1
    assert narrowed >= 10, narrowed
