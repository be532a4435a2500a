"""What a deployment writes for a query (``dashgen.exporters.availability.adapt``) is worked out once per
expression and statements: every build of a profile, its rule files and the demo adapt the same queries again,
and the renaming asks Python once per name-like token of each (43,001 calls in one ``make test-fast``)."""

from __future__ import annotations

from dashgen.deployment.profile import load_profiles
from dashgen.exporters import availability
from dashgen.exporters.availability import Stated, adapt
from dashgen.rules.render import as_deployed, rule_groups

QUEUE = "sum(sglang:num_prefill_bootstrap_queue_reqs) + sum(rate(sglang:request_time_per_output_token_seconds_sum[5m]))"


def test_the_same_expression_and_statements_are_adapted_once_and_other_statements_get_their_own_answer() -> None:
    latest = {"sglang": Stated()}
    old = {"sglang": Stated(version="0.5.10")}
    first = adapt(QUEUE, latest)
    before = availability._adapted.cache_info()
    assert adapt(QUEUE, dict(latest)) is first  # an equal mapping, not the same object
    older = adapt(QUEUE, old)
    after = availability._adapted.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses + (older is not first))
    # the statements are part of the key: 0.5.10 writes the queue's old name and no TPOT
    assert first.expr == QUEUE and not first.missing
    assert "sglang:num_prefill_prealloc_queue_reqs" in older.expr and "bootstrap" not in older.expr
    assert [m.name for m in older.missing] == ["sglang:request_time_per_output_token_seconds"]
    assert adapt(QUEUE, {}) == availability.Adapted(QUEUE)  # a source not stated is left as it is
    prefixed = adapt(QUEUE, {"sglang": Stated(metric_prefix="sglang_")})  # scraped through the router
    assert prefixed.expr == QUEUE.replace("sglang:", "sglang_")
    assert adapt(QUEUE, latest) is first  # the other statements' answers did not replace it


def test_rules_adapted_again_are_not_worked_out_again() -> None:
    (profile,) = load_profiles(["h20-16"])
    rules = tuple(rule for group in rule_groups(profile) for rule in group.rules)
    assert len(rules) > 50
    once = as_deployed(profile, rules)
    before = availability._adapted.cache_info()
    assert as_deployed(profile, rules) == once
    after = availability._adapted.cache_info()
    assert after.misses == before.misses and after.hits - before.hits == len(rules)
