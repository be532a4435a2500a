"""Why a target that ran came back empty, in two ways:

1. the dashboards' own reason queries (``queries.nodata``: ``layers(profile)`` and
   ``reason_code(profile, layer)``): the layer of the target's source is evaluated per node and
   the nodes with a non-zero code are named;
2. otherwise, or when those say every node is ok, generically from the data: a selector with no
   series in the window -> ``up`` of its job decides collection failed (5) or uninitialised (4);
   a selector whose densest series is below ``share x window / scrape interval`` -> insufficient
   samples (3); a rate/increase over counters that did not move -> no I/O (2, disk counters) or
   no traffic (1); else the filters or guards of the expression removed every sample.
"""

from __future__ import annotations

from collections.abc import Mapping

from dashgen_queries import nodata

from dashgen.deployment.profile import KNOWN_SOURCES, Profile
from dashgen.exporters.availability import switch_of
from dashgen.live.datasource import Datasource
from dashgen.live.expand import ExpandedQuery, Window, expand_text, format_duration, globals_for
from dashgen.live.results import REASON_NAMES, Reason
from dashgen.live.selectors import functions, matcher_op, selector_name, selectors
from dashgen.live.sources import scrape_seconds_for, source_of

RECORDED_BY_DASHGEN = ":dashgen_"  # node:dashgen_layer_reason:code, node_gpu:dashgen_gpu_window_power:max ...

COUNTER_FUNCTIONS = {"rate", "irate", "increase", "delta", "idelta", "resets"}


class ReasonFinder:
    """Explains empty results: the dashboards' reason queries per layer when available, else generic."""

    def __init__(self, datasource: Datasource, window: Window, timeout: float) -> None:
        self.ds = datasource
        self.window = window
        self.timeout = timeout
        self._layer_cache: dict[tuple[str, str], list[Reason]] = {}

    @staticmethod
    def layer_queries(profile: Profile) -> dict[str, list[tuple[str, str, str, str]]]:
        """(layer key, title, switch, per-node reason-code PromQL) per profile source, from queries.nodata."""
        found: dict[str, list[tuple[str, str, str, str]]] = {}
        for layer in nodata.layers(profile):
            source = layer.source
            if source not in profile.sources:
                source = next((s.name for s in profile.sources.values() if s.job == layer.job), "")
            found.setdefault(source, []).append(
                (layer.key, layer.title, layer.switch, nodata.reason_code(profile, layer))
            )
        return found

    def layer_reasons(self, profile: Profile, variables: Mapping[str, str], sources: set[str]) -> list[Reason]:
        reasons: list[Reason] = []
        queries = self.layer_queries(profile)
        for source in sorted(sources):
            for key, title, switch, expr in queries.get(source, []):
                cache_key = (profile.name, key)
                if cache_key not in self._layer_cache:
                    text = expand_text(expr, {**variables, **globals_for(self.window, 60, 60)})
                    result = self.ds.query(text, self.window.end, self.timeout)
                    found = []
                    for item in result.result:
                        code = int(float(item["value"][1]))
                        if code:
                            node = item["metric"].get(profile.label("node"), "")
                            shown = f"{title}; {switch}" if code == 4 and switch else title  # S35: name the switch
                            found.append(Reason(code, f"{REASON_NAMES.get(code, code)} ({shown})", node, key))
                    self._layer_cache[cache_key] = sorted(found, key=lambda r: r.node)
                reasons += self._layer_cache[cache_key]
        return reasons

    def generic(self, query: ExpandedQuery, profile: Profile | None) -> Reason:
        rng = format_duration(self.window.length)
        at = self.window.end
        found = selectors(query.expr)
        if not found:
            return Reason(0, "the expression selects no series (constant or function only)")
        for selector in found:
            text = str(selector)
            name = selector_name(selector) or text
            # A query, not /api/v1/series: VictoriaMetrics answers series by whole days of its index.
            if self.ds.query(f"count(count_over_time({text}[{rng}]))", at, self.timeout).result:
                continue
            source = source_of(name)
            job = (
                profile.source(source).job
                if profile and source in profile.sources
                else KNOWN_SOURCES.get(source or "", {}).get("job")
            )
            if RECORDED_BY_DASHGEN in name:  # written by dashgen's recording rules, not scraped
                where = f"rules/{profile.name}.yml" if profile else "the profile's rule file (dashgen rules)"
                return Reason(
                    4,
                    f"{name}: no series in the window: dashgen's recording rule, written only where a rule "
                    f"evaluator (vmalert, Prometheus) loads {where}",
                )
            if not job:
                return Reason(
                    4, f"{name}: no series in the window and no known scrape job (uninitialised or collection failed)"
                )
            node_matchers = [
                f'{m.name}{matcher_op(m)}"{m.value}"'
                for m in selector.matchers.matchers
                if m.name in ("node", "instance") or (profile and m.name == profile.label("node"))
            ]
            up_selector = "up{" + ", ".join([f'job="{job}"', *node_matchers]) + "}"
            up = self.ds.query(f"max_over_time({up_selector}[{rng}])", at, self.timeout).result
            if not up:
                return Reason(5, f"{name}: no series; no target of job {job!r} in up (target gone)")
            if all(float(item["value"][1]) == 0 for item in up):
                return Reason(5, f"{name}: no series; up == 0 for every {job!r} target (scrape failed)")
            switch = switch_of(name)
            needs = f" ({switch})" if switch else ""
            return Reason(4, f"{name}: {job!r} targets are up but the series was never exported in the window{needs}")
        scrape = scrape_seconds_for(query.expr, profile, stored=True)
        share = profile.insufficient_samples_share if profile else 0.5
        expected = share * self.window.length / scrape
        for selector in found:
            counted = self.ds.query(f"max(count_over_time({selector}[{rng}]))", at, self.timeout).result
            if counted and (samples := float(counted[0]["value"][1])) < expected:
                return Reason(
                    3,
                    f"{selector_name(selector)}: {samples:g} samples in the window, "
                    f"fewer than {expected:g} ({share:g} x window / {format_duration(scrape)})",
                )
        if functions(query.expr) & COUNTER_FUNCTIONS:
            for selector in found:
                moved = self.ds.query(f"max(increase({selector}[{rng}]))", at, self.timeout).result
                if moved and float(moved[0]["value"][1]) == 0:
                    name = selector_name(selector) or ""
                    code = 2 if name.startswith(("node_disk_", "mooncake_ssd_")) else 1
                    return Reason(code, f"{name}: counter did not increase in the window")
        return Reason(
            0,
            "series exist, but the expression's filters or guards (e.g. `> 0` on an idle "
            "denominator) removed every sample",
        )
