"""S35: every series knows its exporter version and switches. The one exporter table (``dashgen.exporters``) is
what the dashboards, rules, lint catalogue and demo read; a profile's stated version, features and prefix change
the names queried, and a panel whose series the deployment never writes is a text naming the switch."""

from __future__ import annotations

import re

import pytest
from source_trees import tree, walked
from stated_profiles import ROOT, restate, restated

from dashgen.build import build_profile
from dashgen.deployment.edit import set_source_fields
from dashgen.deployment.profile import FEATURE_SOURCES, KNOWN_SOURCES, load_profile, load_profiles
from dashgen.document import iter_panels, unwrap
from dashgen.errors import ProfileError
from dashgen.exporters.availability import Stated, adapt, every_name, lookup, missing_reason, switch_of
from dashgen.exporters.inference import differences, infer, proposed
from dashgen.exporters.table import ALL_SCHEDULERS, ENGINE_METRICS, MAX_CONCURRENT, SPECULATIVE, TABLES
from dashgen.lint.catalogue import load_catalogue
from dashgen.lint.promql import expand_variables
from dashgen.live.selectors import metric_names
from dashgen.rules.render import rule_groups

SHIPPED = load_profiles()
TPOT = "sglang:request_time_per_output_token_seconds"
GATEWAY_FLAG_PANELS = {
    "Gateway admission: requests in flight (layer 1)": MAX_CONCURRENT,
    "Gateway admission: queue depth (layer 1)": MAX_CONCURRENT,
    "Gateway admission rejections by reason (req/s)": MAX_CONCURRENT,
    "Gateway view: engine running requests per backend": ENGINE_METRICS,
    "Gateway view: engine waiting requests per backend": ENGINE_METRICS,
}


_BUILT: dict[int, tuple] = {}  # id(profile) -> (profile, its panels): a profile's build, once per session


def panels(profile):
    """The panels of ``profile``'s build (built once per profile object; the tests only read them)."""
    if id(profile) not in _BUILT:
        built = build_profile(profile)
        _BUILT[id(profile)] = (profile, tuple(site.raw for b in built for site in iter_panels(unwrap(b.document))))
    return _BUILT[id(profile)][1]


def exprs(profile):
    # Grafana's globals expanded ($__range in a range selector does not parse), the dashboard variables kept
    found = [expand_variables(t.get("expr", ""), {}) for panel in panels(profile) for t in panel.get("targets") or []]
    found += [rule.expr for group in rule_groups(profile) for rule in group.rules]
    return found


@pytest.fixture(scope="module")
def stated(tmp_path_factory):
    return restated(tmp_path_factory.mktemp("stated"))


@pytest.mark.parametrize("profile", SHIPPED, ids=lambda p: p.name)
def test_s35_every_selector_of_a_shipped_profile_is_exported_by_its_stated_versions_and_features(profile):
    """Each metric a dashboard or rule reads is in the table (or recorded by the profile's own rules), and the
    stated (default: latest, every flag) version and features of its source write it under that name."""
    recorded = {rule.record for group in rule_groups(profile) for rule in group.rules if hasattr(rule, "record")}
    checked = 0
    for expr in exprs(profile):
        for name in metric_names(expr):
            if name in recorded:
                continue
            found = lookup(name)
            assert found is not None, f"{profile.name}: {name} is in no exporter table"
            table, series = found
            if table.source in profile.sources:
                assert missing_reason(table, series, profile.source(table.source).stated) is None, name
            checked += 1
    assert checked > 200


@pytest.mark.parametrize("profile", SHIPPED, ids=lambda p: p.name)
def test_s35_a_panel_needing_a_non_default_flag_says_so_in_its_description(profile):
    seen = 0
    for panel in panels(profile):
        for target in panel.get("targets") or []:
            for flag in adapt(target.get("expr", ""), {n: s.stated for n, s in profile.sources.items()}).flags:
                assert flag[1] in panel.get("description", ""), (panel["title"], flag)
                seen += 1
    # The gateway's --engine-metrics / --max-concurrent-requests panels, the speculative-decoding panels
    # (--speculative-algorithm) of a profile that states a draft algorithm, and the Store tenant targets
    # (--enable_multi_tenants: three quota gauges, the over-quota flag, refusals and tenant evictions).
    assert seen == (5 if profile.exported("gateway") else 0) + (3 if profile.speculative.algorithm else 0) + (
        6 if profile.exported("mooncake_master") else 0
    )


def test_s35_a_default_gateway_gets_text_panels_naming_the_flag(stated):
    shown = {panel["title"]: panel for panel in panels(stated["lc-router"])}
    for title, flag in GATEWAY_FLAG_PANELS.items():
        assert shown[title]["type"] == "text", title
        assert flag in shown[title]["options"]["content"] and "features" in shown[title]["options"]["content"]
    assert not [e for e in exprs(stated["lc-router"]) if re.search(r"smg_(engine|admission)_", e)]


def test_s35_sglang_0_5_10_queries_the_old_queue_name_and_shows_tpot_as_not_exported(stated):
    profile = stated["pd-old"]
    everything = "\n".join(exprs(profile))
    assert "num_prefill_prealloc_queue_reqs" in everything
    assert "num_prefill_bootstrap_queue_reqs" not in everything
    assert "request_time_per_output_token" not in everything  # no panel, SLO, burn rate or alert reads TPOT
    texts = [p for p in panels(profile) if p["type"] == "text" and TPOT in p["options"].get("content", "")]
    assert texts and all("0.5.22" in p["options"]["content"] for p in texts)
    slo = [p for p in panels(profile) if p["title"] == "Burn rate over 1h"]
    assert slo and "TPOT is not counted: not exported by SGLang 0.5.10" in slo[0]["description"]
    first_screen_slo = ("SLO health (lowest model and SLI)", "SLO health: client and engine, worse first")
    (first,) = [p for p in panels(profile) if p["title"] in first_screen_slo]
    assert "SLI (TTFT, E2E)" in first["description"]  # the first screen names only the SLIs it counts


def test_s35_the_router_prefix_is_queried_where_the_engine_is_scraped_through_the_router(stated):
    everything = exprs(stated["lc-router"])
    own = [m for e in everything for m in metric_names(e) if m.startswith("sglang:")]
    assert not own, own[:5]
    assert sum("sglang_time_to_first_token_seconds_bucket" in e for e in everything) > 3


@pytest.mark.parametrize(
    ("source", "fields", "field"),
    [
        ("sglang", {"version": "0.5.9"}, "sources.sglang.version"),
        ("sglang", {"version": "latest"}, "sources.sglang.version"),
        ("gateway", {"features": ["--engine-metric"]}, "sources.gateway.features"),
        ("sglang", {"metric_prefix": "sgl_"}, "sources.sglang.metric_prefix"),
        ("hicache", {"version": "0.5.22"}, "sources.hicache.version"),
    ],
)
def test_s35_a_statement_the_table_cannot_honour_is_refused_naming_the_field(tmp_path, source, fields, field):
    with pytest.raises(ProfileError) as raised:
        restate(tmp_path, "bad", "pd-128", {source: fields})
    assert raised.value.field == field


def test_s35_the_oldest_supported_version_is_accepted(tmp_path):
    assert (
        restate(tmp_path, "oldest", "pd-128", {"sglang": {"version": TABLES["sglang"].oldest}})
        .source("hicache")
        .version
    )


def test_s35_uninitialised_names_the_switch():
    assert ENGINE_METRICS in switch_of("smg_engine_running_requests")
    assert "prefill side" in switch_of("sglang_kv_transfer_latency_ms_bucket")
    assert "0.5.22" in switch_of(f"{TPOT}_count")
    assert switch_of("sglang:num_running_reqs") == "needs `--enable-metrics` on SGLang"
    assert switch_of("DCGM_FI_DEV_GPU_TEMP") == ""


def test_issue31_the_lint_catalogue_reads_the_table_and_its_file_repeats_none_of_it():
    catalogue, table = load_catalogue(), every_name()
    assert {"sglang:num_prefill_prealloc_queue_reqs", "sglang_num_running_reqs", "smg_engine_running_requests"} <= table
    assert all(catalogue.is_known(name) for name in table)
    listed = (ROOT / "dashgen/data/metric_catalogue.txt").read_text(encoding="utf-8").split()
    assert not set(listed) & table


def test_s35_doctor_infers_prefix_version_and_flags_from_names():
    names = {
        "sglang_max_total_num_tokens",
        "sglang_num_prefill_prealloc_queue_reqs",
        "sglang_time_to_first_token_seconds_bucket",
        "smg_http_requests_total",
        "smg_admission_inflight",
    }
    found = infer(names)
    sglang, gateway = found["sglang"], found["gateway"]
    assert (sglang.prefix, sglang.before, sglang.since) == ("sglang_", "0.5.16", "")
    assert (gateway.flags_on, gateway.flags_off) == ((MAX_CONCURRENT,), (ENGINE_METRICS,))
    assert not found["dcgm"].present
    said = Stated(features=(ENGINE_METRICS, MAX_CONCURRENT))
    assert differences(gateway, said) == [f"features: {ENGINE_METRICS} is stated but off in the store"]
    assert proposed(gateway, said) == {"features": [MAX_CONCURRENT]}
    # No spec_* series: the draft flag is off; the flag no name can show (all schedulers) stays assumed on.
    assert sglang.flags_off == (SPECULATIVE,)
    assert proposed(sglang, Stated()) == {"metric_prefix": "sglang_", "version": "0.5.10", "features": [ALL_SCHEDULERS]}
    assert differences(sglang, Stated("0.5.10", None, "sglang_")) == [
        f"features: {SPECULATIVE} is off in the store; the profile states no features (all assumed on)"
    ]
    assert differences(sglang, Stated("0.5.10", (ALL_SCHEDULERS,), "sglang_")) == []


def test_doctor_write_keeps_every_other_line(tmp_path):
    text = (ROOT / "profiles/pd-128.toml").read_text(encoding="utf-8")
    written = set_source_fields(text, "pd-128.toml", "gateway", {"features": ["--engine-metrics"], "version": "1"})
    added = [line for line in written.splitlines() if line not in text.splitlines()]
    assert added == ['features = ["--engine-metrics"]', 'version = "1"']
    assert set_source_fields(written, "x", "gateway", {"features": []}).count("features = []") == 1
    path = tmp_path / "pd-128.toml"
    path.write_text(written.replace('version = "1"\n', ""), encoding="utf-8")
    assert load_profile(path).source("gateway").features == ("--engine-metrics",)


@pytest.mark.parametrize("profile", SHIPPED, ids=lambda p: p.name)
def test_every_recorded_series_is_read_by_a_panel_or_a_rule(profile):
    """Issue 28 item 5: a recording rule whose series nothing reads is not written (the 3d error ratios and the
    per-node GPU maxima were)."""
    groups = rule_groups(profile)
    recorded = {rule.record for group in groups for rule in group.rules if hasattr(rule, "record")}
    read = {name for expr in exprs(profile) for name in metric_names(expr)}
    read |= {
        name
        for group in groups
        for rule in group.rules
        for name in metric_names(rule.expr)
        if getattr(rule, "record", None) != name
    }
    assert len(recorded) >= 5
    assert recorded - read == set()


def test_s35_the_readme_shows_the_table_as_it_is():
    from dashgen.exporters.docs import conditions_markdown

    assert conditions_markdown() in (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")


def test_s35_lint_knows_every_name_an_older_version_or_the_router_writes(stated):
    from dashgen.lint.runner import lint_dashboard

    linted = 0
    for profile in stated.values():
        for built in build_profile(profile):
            unknown = [f for f in lint_dashboard(built.document) if "not in the catalogue" in f.message]
            assert unknown == [], (profile.name, unknown[:3])
            linted += 1
    assert linted >= len(stated) >= 2


class _Uninitialised:
    """A data source answering every reason-code query with one node reading 4 (uninitialised)."""

    def query(self, text, at, timeout):
        from types import SimpleNamespace

        return SimpleNamespace(result=[{"value": [at, "4"], "metric": {"node": "node-0"}}])


def test_s35_an_uninitialised_layer_names_its_switch():
    from dashgen.live.expand import Window
    from dashgen.live.reasons import ReasonFinder

    (profile,) = load_profiles(["long-context-64"])
    finder = ReasonFinder(_Uninitialised(), Window(end=7200.0, length=3600.0), 5.0)
    texts = {reason.text for reason in finder.layer_reasons(profile, {}, {"sglang", "hicache", "dcgm"})}
    assert "uninitialised (HiCache Host tier; needs `--enable-hierarchical-cache` on SGLang HiCache)" in texts
    assert any(text.startswith("uninitialised (Engine (SGLang); needs `--enable-metrics`") for text in texts)
    assert "uninitialised (GPU (DCGM exporter))" in texts  # nothing to switch on: said as before


def test_s35_validate_queries_knows_the_source_of_any_spelling():
    from dashgen.live.sources import source_of

    assert source_of("sglang_time_to_first_token_seconds_bucket") == "sglang"  # its scrape interval applies
    assert source_of("sglang:num_prefill_prealloc_queue_reqs") == "sglang"
    assert source_of("sglang_hicache_host_total_tokens") == "hicache"


def test_issue31_the_query_builders_read_every_metric_name_from_the_table():
    """A metric name written in queries/ is the argument of its source's ``<TABLE>.name(...)`` (which refuses a name
    no row registers), never a bare string: a new metric is registered once, in the table. ``up`` is the scraper's."""
    import ast

    from dashgen.exporters import table as tables

    by_var = {var: value for var, value in vars(tables).items() if var.isupper() and hasattr(value, "series")}
    bare, read = [], 0
    for path in sorted((ROOT / "queries").glob("*.py")):
        nodes = walked(tree(path))  # the session's shared parse of the module (read only)
        wrapped = {}
        for node in nodes:
            reads = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "name"
            if reads and isinstance(node.func.value, ast.Name) and node.func.value.id in by_var:
                wrapped.update({id(arg): by_var[node.func.value.id] for arg in node.args})
        for node in nodes:
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value != "up"):
                continue
            found = lookup(node.value)
            if found is None or found[1].name != node.value:
                continue
            if id(node) not in wrapped:
                bare.append(f"{path.name}:{node.lineno} {node.value}")
            else:
                assert wrapped[id(node)].source == found[0].source, (path.name, node.value)
                read += 1
    assert bare == []
    assert read > 150
    with pytest.raises(KeyError, match="add its row there"):
        TABLES["gateway"].name("smg_not_a_metric")


def test_s35_the_missing_data_reasons_table_names_each_layers_switch():
    (profile,) = load_profiles(["long-context-64"])
    (table,) = [p for p in panels(profile) if p["title"] == "Missing-data reasons per node and evidence layer"]
    for switch in ("--enable-metrics", "--enable-hierarchical-cache", "--hicache-storage-backend"):
        assert f"uninitialised: needs `{switch}`" in table["description"]


def test_the_sources_a_profile_declares_and_their_jobs_come_from_the_exporter_table():
    """One table says which sources there are, their default job and their name: the profile's source list and
    the feature sources (collectors inside another source's process) are read from it, not restated beside it."""
    declared = [table for table in TABLES.values() if table.job]
    assert list(KNOWN_SOURCES) == [table.source for table in declared] and len(declared) >= 9
    assert all(KNOWN_SOURCES[t.source] == {"job": t.job, "what": t.what, "unstated": t.unstated} for t in declared)
    assert (
        FEATURE_SOURCES
        == {t.source: t.version_of for t in declared if t.version_of}
        == {
            "hicache": "sglang",
            "hicache_storage": "sglang",
            "mooncake_tent": "mooncake_client",
        }
    )
    assert (
        "vmagent" not in KNOWN_SOURCES and "rule_evaluator" not in KNOWN_SOURCES
    )  # series of their own, no profile entry
    written = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "dashgen").rglob("*.py"))
        if '"Mooncake Store client (incl. SSD metrics)"' in path.read_text(encoding="utf-8")
    ]
    assert written == ["dashgen/exporters/table.py"], written
    profile = load_profiles(["h20-16"], ROOT / "profiles")[0]
    assert profile.source("hicache").job == profile.source("sglang").job  # a feature source defaults to its host's
