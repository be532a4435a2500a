"""The first screen's queries at 1,024 GPUs: every query of the Now row of every shipped profile, and of the same
profile scaled to 128 nodes x 8 GPUs, stays within VictoriaMetrics' default 16 KiB ``-search.maxQueryLen``, and its
text does not grow with the node count (a node is a label value the store matches, never a term of the query).
So does every other query of the scaled profiles: each panel's, as Grafana sends it, and each rule's, as vmalert
sends it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dashgen_panels import first_screen
from dashgen_queries import now, now_records

from dashgen.deployment.profile import Profile, load_profiles, profile_from_dict
from dashgen.deployment.topology import Topology

ROOT = Path(__file__).resolve().parent.parent
VM_MAX_QUERY_BYTES = 16 * 1024  # VictoriaMetrics -search.maxQueryLen default
SCALED_NODES = 128  # x 8 GPUs = 1,024
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")
PROFILES = {p.name: p for p in load_profiles([], ROOT / "profiles")}


def scaled(name: str, nodes: int = SCALED_NODES) -> Profile:
    """The shipped profile with ``nodes`` nodes and its replicas multiplied alike (the per-node address table and
    the master -> replica list, naming the shipped nodes and replicas, dropped: one shared master)."""
    import tomllib

    raw = tomllib.loads((ROOT / "profiles" / f"{name}.toml").read_text(encoding="utf-8"))
    factor, rest = divmod(nodes, raw["cluster"]["nodes"])
    if rest:  # a pool of one instance per node (video) simply has as many as nodes
        factor = nodes / raw["cluster"]["nodes"]
    raw["cluster"]["nodes"] = nodes
    raw["cluster"].pop("node_addresses", None)
    raw.pop("mooncake", None)
    for pool in raw["pools"]:
        pool["replicas"] = round(pool["replicas"] * factor)
    return profile_from_dict(raw, f"profiles/{name}.toml")


def now_queries(profile: Profile) -> dict[tuple[str, str], str]:
    """Every query of the Now row, and the rules of the group its lists are recorded by (what the panels ran)."""
    group = first_screen.build(profile, Topology(profile))
    recorded = {(now_records.GROUP, r.record): r.rule for r in now_records.records(profile)}
    return {
        (panel.title, target.ref_id or str(i)): target.expr
        for panel in group.panels
        for i, target in enumerate(panel.targets)
    } | recorded


def shape(query: str) -> str:
    return NUMBER.sub("N", query)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_now_query_fits_16_kib_at_every_profile_and_at_1024_gpus(name: str) -> None:
    big = scaled(name)
    assert big.nodes * big.gpus_per_node == 1024
    for profile in (PROFILES[name], big):
        too_long = {
            key: len(q.encode()) for key, q in now_queries(profile).items() if len(q.encode()) > VM_MAX_QUERY_BYTES
        }
        assert not too_long, (profile.name, too_long)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_no_now_query_grows_with_the_node_count(name: str) -> None:
    """The same text at 512 and 1,024 GPUs (numbers aside: a profile total has more digits, not more terms). The
    shipped sizes are not compared: a large profile adds a variable (``$replica``) once, a step, not a growth."""
    small, large = now_queries(scaled(name, SCALED_NODES // 2)), now_queries(scaled(name))
    assert set(small) == set(large)
    grown = {key: (len(small[key]), len(q)) for key, q in large.items() if shape(q) != shape(small[key])}
    assert not grown


def test_the_matrix_reads_each_recorded_series_by_one_selector() -> None:
    """Issue 42's measure: the matrix used to repeat the inventory and up in each of its layer branches (114 KB
    on video-200); now each is read by one selector, whatever the number of layers."""
    assert len(PROFILES) >= 4
    for profile in PROFILES.values():
        query = now.not_ok_cells(profile)  # the recorded cells' rule (group now) and the evaluator's line
        assert query.count("node:dashgen_inventory:info") <= 1
        assert query.count("up{") <= 1
        assert len(query.encode()) < 2048, (profile.name, len(query))


def test_what_is_wrong_now_writes_out_every_entity_the_catalogue_names() -> None:
    """Every entity role of the failure-mode catalogue (``dashgen.catalogue.ENTITIES``, as each profile labels it)
    has its part in the first screen's entity text: an alert naming it is never listed without it."""
    from dashgen_queries import now

    from dashgen.catalogue import ENTITIES

    assert len(PROFILES) >= 4 and ENTITIES
    for profile in PROFILES.values():
        written = {label for label, _ in now.entity_parts(profile)}
        missing = {role for role in ENTITIES if profile.labels.get(role, role) not in written}
        assert not missing, (profile.name, missing)


def _every_value(match: str, label: str) -> list[str]:
    """What a store of 1,024 GPUs answers a variable's ``label_values`` with: as many values as GPUs (used only
    where a variable selects All without an ``allValue``, when Grafana writes every value into the query)."""
    return [f"{label}-{i:04d}" for i in range(SCALED_NODES * 8)]


@pytest.mark.slow  # about 1 s per profile: the build and rules of 1,024 GPUs
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_panel_and_rule_query_fits_16_kib_at_1024_gpus(name: str) -> None:
    """Issue 42: every query of every profile at 1,024 GPUs, collapsed rows and rules included, within the 16 KiB a
    stock VictoriaMetrics accepts (a longer one is an error on the panel, or a rule that never evaluates)."""
    import time

    from dashgen.build import build_profile
    from dashgen.live.expand import Window
    from dashgen.live.query_check import DashboardInput, plan
    from dashgen.rules.render import rule_groups_data

    big = scaled(name)
    inputs = [DashboardInput(built.uid, built.document, big) for built in build_profile(big)]
    sent = {
        (str(panel.raw.get("title")), query.ref_id): query.expr
        for panel in plan(inputs, Window(time.time(), 3600), label_values=_every_value)
        for query in panel.queries
    }
    rules = [rule for group in rule_groups_data(big) for rule in group["rules"]]
    sent |= {(str(rule.get("record") or rule.get("alert")), str(i)): rule["expr"] for i, rule in enumerate(rules)}
    assert len(sent) > 250, len(sent)  # every panel target and every rule, not a handful
    too_long = {key: len(q.encode()) for key, q in sent.items() if len(q.encode()) > VM_MAX_QUERY_BYTES}
    assert not too_long, too_long
