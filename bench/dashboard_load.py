"""Dashboard-load benchmark: every query of the long-context dashboard, expanded the way Grafana would
(variables = All, ``$__range``, ``$__rate_interval``; instant at the window end for instant/table targets,
range with step = ``$__interval`` for graphs), against a local VictoriaMetrics holding synthetic data from
``dashgen.demo`` for clusters of growing size.

Sizes keep the long-context topology (TP8 x PP4 replicas of 32 GPUs, 8 GPUs per node): 64, 192 and 1024
GPUs, the multiples of 32 nearest 200 and 1000, so the dashboard has the same shape at every size. The ladder
loads one hour (the dashboard's default range) at a 30 s sample spacing for every source, so only the GPU
count changes between sizes; a 64-GPU run at native scrape intervals (GPM 1 s) shows what 1 s data costs.
Each query's time (median of REPEAT) is fitted against GPU count; exponents above 1.2 are flagged.
"""

from __future__ import annotations

import math
import statistics
import time
import tomllib
from dataclasses import dataclass
from typing import Any

import requests

from bench.harness import ROOT, BenchResult, Row

PROFILE = "long-context-64"
LADDER = (64, 192, 1024)
WINDOW_HOURS = 1.0
LADDER_SPACING = 30.0  # seconds: every source at max(scrape interval, this)
NATIVE_GPUS = 64
GRAFANA_SCRAPE = {"ladder": 30.0, "native": 15.0}  # the data source's scrape-interval setting in Grafana
REPEAT = 3
FLAG_EXPONENT = 1.2
FLAG_MIN_SECONDS = 0.010  # below this at the largest size, a query's time is HTTP overhead and noise
VM_MAX_QUERY_LEN = 16384  # VictoriaMetrics' default -search.maxQueryLen; raised here so long queries still run


@dataclass(frozen=True)
class Dataset:
    name: str
    gpus: int
    step: float  # demo step: 0 keeps each source's scrape interval
    scrape: float


def variant_profile(gpus: int):
    """long-context-64 with ``gpus`` GPUs: same TP8 x PP4 replicas and node shape, more of them."""
    from dashgen.deployment.profile import profile_from_dict

    path = ROOT / "profiles" / f"{PROFILE}.toml"
    raw = tomllib.loads(path.read_text())
    per_replica = raw["pools"][0]["tp"] * raw["pools"][0]["pp"]
    if gpus % per_replica:
        raise ValueError(f"{gpus} GPUs is not a whole number of {per_replica}-GPU replicas")
    raw["name"] = f"bench-lc-{gpus}"
    raw["title"] = f"Long-context bench ({gpus} GPUs)"
    raw["cluster"]["nodes"] = gpus // raw["cluster"]["gpus_per_node"]
    raw["pools"][0]["replicas"] = gpus // per_replica
    for master in raw.get("mooncake", {}).get("masters", []):  # one master keeps serving every replica
        master["replicas"] = [f"{raw['pools'][0]['name']}-{i}" for i in range(gpus // per_replica)]
    return profile_from_dict(raw, str(path))


def grafana_queries(document: dict[str, Any], end: float, scrape: float, label_values) -> list[dict[str, Any]]:
    from dashgen.document import iter_panels
    from dashgen.live.expand import Window, expand_target, variable_values

    window = Window(end=end, length=WINDOW_HOURS * 3600)
    values = variable_values(document["templating"]["list"], label_values)
    queries = []
    top_level = {id(raw) for raw in document.get("panels") or []}  # a collapsed row's panels run when it opens
    for site in iter_panels(document):
        panel = site.raw
        for target in panel.get("targets") or []:
            for q in expand_target(panel, target, values, window, scrape_seconds=scrape):
                queries.append(
                    {
                        "key": f"{panel.get('title')} [{q.ref_id} {q.kind}]",
                        "kind": q.kind,
                        "expr": q.expr,
                        "start": q.start,
                        "end": q.end,
                        "step": q.step,
                        "on_open": id(panel) in top_level,
                    }
                )
    return queries


def _send(session: requests.Session, url: str, query: dict[str, Any]) -> tuple[float, int]:
    if query["kind"] == "instant":
        path, params = "/api/v1/query", {"query": query["expr"], "time": f"{query['end']:.3f}"}
    else:
        path, params = (
            "/api/v1/query_range",
            {
                "query": query["expr"],
                "start": f"{query['start']:.3f}",
                "end": f"{query['end']:.3f}",
                "step": f"{query['step']:g}",
            },
        )
    began = time.perf_counter()
    response = session.post(url + path, data=params, timeout=120)
    _ = response.content
    seconds = time.perf_counter() - began
    body = response.json()
    if body.get("status") != "success":
        raise RuntimeError(f"{query['key']}: {body.get('error')}")
    return seconds, len(body["data"]["result"])


def measure(dataset: Dataset, end: float, repeat: int) -> dict[str, Any]:
    from dashgen.build import build_profile
    from dashgen.demo import recorder, vmlauncher
    from dashgen.demo.run import import_demo
    from dashgen.live.datasource import Datasource

    profile = variant_profile(dataset.gpus)
    document = build_profile(profile)[0].document
    # a stock VictoriaMetrics (default -search.maxQueryLen 16 KiB): since issue 19 no query carries the node list
    server = vmlauncher.start()
    try:
        datasource = Datasource(server.url, timeout=300)
        began = time.perf_counter()
        summary = import_demo(datasource, profile, "healthy", end, WINDOW_HOURS, dataset.step)
        datasource.flush()
        # the Now row's recorded reason codes, as a vmalert beside the store records them (dashgen rules)
        recorder.replay_for_dashboards(server.url, [profile], end - WINDOW_HOURS * 3600, end)
        datasource.flush()
        loaded = time.perf_counter() - began

        def label_values(match: str, label: str) -> list[str]:
            return datasource.label_values(label, [match], end - WINDOW_HOURS * 3600, end)

        queries = grafana_queries(document, end, dataset.scrape, label_values)
        session = requests.Session()
        for query in queries:  # one unrecorded pass: warms the OS page cache and VM's index, not its results
            _send(session, server.url, query)
        times: dict[str, list[float]] = {q["key"]: [] for q in queries}
        series: dict[str, int] = {}
        passes: list[float] = []
        opened: list[float] = []
        for _ in range(repeat):
            total = on_open = 0.0
            for query in queries:
                seconds, count = _send(session, server.url, query)
                times[query["key"]].append(seconds)
                series[query["key"]] = count
                total += seconds
                on_open += seconds if query["on_open"] else 0.0
            passes.append(total)
            opened.append(on_open)
        cost = open_cost(datasource, profile, document, end)
    finally:
        server.stop()
    per_query = {k: statistics.median(v) for k, v in times.items()}
    slowest = max(per_query, key=per_query.get)
    return {
        "dataset": dataset.name,
        "gpus": dataset.gpus,
        "nodes": profile.nodes,
        "series": summary.series,
        "samples": summary.samples,
        "load_seconds": round(loaded, 1),
        "queries": len(queries),
        "passes": passes,
        "on_open": opened,
        "queries_on_open": sum(q["on_open"] for q in queries),
        "per_query": per_query,
        "series_per_query": series,
        "empty_queries": sorted(k for k, v in series.items() if v == 0),
        "too_long_for_vm_default": {
            q["key"]: len(q["expr"].encode()) for q in queries if len(q["expr"].encode()) > VM_MAX_QUERY_LEN
        },
        "slowest": slowest,
        "slowest_seconds": per_query[slowest],
        "cost": cost,
        "exprs": {q["key"]: q["expr"] for q in queries},
    }


def open_cost(datasource, profile, document: dict[str, Any], end: float) -> dict[str, Any]:
    """What ``dashgen cost`` reports for the dashboard at its default range: totals on open and the verdict
    against the profile's budgets (the same functions the command runs)."""
    from dashgen.live.cost import Budget, measure, totals, violations
    from dashgen.live.expand import Window
    from dashgen.live.query_check import DashboardInput, plan

    span = Window(end=end, length=WINDOW_HOURS * 3600)
    planned = plan([DashboardInput(profile.name, document, profile)], span)
    panels = measure(datasource, planned, {id(raw) for raw in document["panels"]}, timeout=120)
    (total,) = totals(panels)
    settings = profile.dashboard
    budget = Budget(
        settings.cost_panel_series,
        settings.cost_panel_samples,
        settings.cost_dashboard_series,
        settings.cost_dashboard_samples,
    )
    heaviest = max((p for p in panels if p.on_open), key=lambda p: p.samples_scanned or 0)
    return {
        "series_fetched": total.series_fetched,
        "samples_scanned": total.samples_scanned,
        "seconds": total.seconds,
        "panels_on_open": total.panels_on_open,
        "panels": total.panels,
        "over_budget": violations(panels, budget),
        "errors": [e for p in panels for e in p.errors],
        "heaviest": f"{heaviest.title} ({heaviest.samples_scanned:,} samples)",
    }


def fit_exponent(gpus: list[int], seconds: list[float]) -> float:
    """Least-squares slope of log(time) against log(GPUs)."""
    xs = [math.log(g) for g in gpus]
    ys = [math.log(max(s, 1e-6)) for s in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def run(repeat: int = REPEAT) -> BenchResult:
    result = BenchResult("dashboard_load")
    end = float(int(time.time()) // 60 * 60)
    ladder = [measure(Dataset(f"ladder-{g}", g, LADDER_SPACING, GRAFANA_SCRAPE["ladder"]), end, repeat) for g in LADDER]
    native = measure(Dataset(f"native-{NATIVE_GPUS}", NATIVE_GPUS, 0.0, GRAFANA_SCRAPE["native"]), end, repeat)

    base = ladder[0]
    for data in ladder:
        what = (
            f"{data['gpus']} GPUs/{data['nodes']} nodes, 1 h @ {LADDER_SPACING:g} s: {data['series']} series, "
            f"{data['samples'] / 1e6:.1f} M samples; {data['queries']} queries"
        )
        row = result.add(
            Row(
                "dashboard_load",
                f"{data['gpus']} GPUs: all queries",
                "s",
                data["passes"],
                baseline=None if data is base else "64 GPUs: all queries",
                note=what,
            )
        )
        row.note = what
        result.add(
            Row(
                "dashboard_load",
                f"{data['gpus']} GPUs: on open",
                "s",
                data["on_open"],
                baseline=None if data is base else "64 GPUs: on open",
                note=f"the {data['queries_on_open']} queries of the panels outside collapsed rows (what "
                "opening the dashboard runs)" + ("" if data is base else "; target <= 3x"),
            )
        )
        result.add(
            Row(
                "dashboard_load",
                f"{data['gpus']} GPUs: slowest query",
                "s",
                [data["slowest_seconds"]],
                note=data["slowest"],
            )
        )
    result.add(
        Row(
            "dashboard_load",
            f"{NATIVE_GPUS} GPUs native (GPM 1 s): all queries",
            "s",
            native["passes"],
            baseline="64 GPUs: all queries",
            note=f"1 h at each source's scrape interval: {native['series']} series, "
            f"{native['samples'] / 1e6:.1f} M samples; Grafana scrape setting 15 s",
        )
    )
    result.add(
        Row(
            "dashboard_load",
            f"{NATIVE_GPUS} GPUs native: slowest query",
            "s",
            [native["slowest_seconds"]],
            note=native["slowest"],
        )
    )

    gpus = [d["gpus"] for d in ladder]
    totals = [statistics.median(d["passes"]) for d in ladder]
    exponents = {}
    for key in ladder[0]["per_query"]:
        if all(key in d["per_query"] for d in ladder):
            exponents[key] = fit_exponent(gpus, [d["per_query"][key] for d in ladder])
    largest = ladder[-1]["per_query"]
    flagged = sorted(
        (k for k, e in exponents.items() if e > FLAG_EXPONENT and largest[k] >= FLAG_MIN_SECONDS),
        key=lambda k: -exponents[k],
    )
    noisy = sorted(k for k, e in exponents.items() if e > FLAG_EXPONENT and largest[k] < FLAG_MIN_SECONDS)
    result.add(
        Row(
            "dashboard_load",
            "exponent of total time vs GPUs",
            "count",
            [fit_exponent(gpus, totals)],
            note=f"fit over {gpus[0]}->{gpus[-1]} GPUs; 1.0 = linear",
        )
    )
    result.add(
        Row(
            "dashboard_load",
            "queries growing faster than linear",
            "count",
            [len(flagged)],
            note=(
                f"exponent > {FLAG_EXPONENT} and >= {FLAG_MIN_SECONDS * 1000:g} ms at {gpus[-1]} GPUs: "
                + ("; ".join(f"{k} ({exponents[k]:.2f})" for k in flagged) or "none")
            ),
        )
    )
    too_long = {d["gpus"]: d["too_long_for_vm_default"] for d in ladder if d["too_long_for_vm_default"]}
    result.add(
        Row(
            "dashboard_load",
            "queries over VM's default 16 KiB query length",
            "count",
            [len(ladder[-1]["too_long_for_vm_default"])],
            note=(
                "; ".join(f"{g} GPUs: " + ", ".join(f"{k} {n} B" for k, n in q.items()) for g, q in too_long.items())
                or "none"
            )
            + " (a stock VictoriaMetrics: such a query would fail the run)",
        )
    )
    for data in ladder:
        cost = data["cost"]
        verdict = "within the profile budget" if not cost["over_budget"] else f"OVER: {cost['over_budget'][0]}"
        result.add(
            Row(
                "dashboard_load",
                f"{data['gpus']} GPUs: cost on open, samples scanned",
                "count",
                [cost["samples_scanned"]],
                note=f"dashgen cost: {cost['panels_on_open']} of {cost['panels']} panels on open, "
                f"{cost['series_fetched']:,} series fetched, data source {cost['seconds']:.2f} s; "
                f"heaviest on open {cost['heaviest']}; {verdict}"
                + (f"; {len(cost['errors'])} query errors" if cost["errors"] else ""),
            )
        )
    for figure in ("samples_scanned", "series_fetched"):
        values = [d["cost"][figure] for d in ladder]
        result.add(
            Row(
                "dashboard_load",
                f"exponent of cost on open ({figure.replace('_', ' ')}) vs GPUs",
                "count",
                [fit_exponent(gpus, values)],
                note=f"{' -> '.join(f'{v:,}' for v in values)} over {gpus[0]}->{gpus[-1]} GPUs; 1.0 = linear",
            )
        )
    top = sorted(exponents, key=lambda k: -largest[k])[:10]
    result.details = {
        "window_hours": WINDOW_HOURS,
        "ladder_spacing_s": LADDER_SPACING,
        "grafana_scrape_setting": GRAFANA_SCRAPE,
        "datasets": [
            {k: v for k, v in d.items() if k not in ("per_query", "series_per_query", "exprs")}
            for d in [*ladder, native]
        ],
        "flagged": {
            k: {
                "exponent": round(exponents[k], 2),
                "seconds": [round(d["per_query"][k], 4) for d in ladder],
                "expr": ladder[-1]["exprs"][k],
            }
            for k in flagged
        },
        "above_threshold_but_under_10ms": {k: round(exponents[k], 2) for k in noisy},
        "slowest_at_largest": {
            k: {
                "seconds": [round(d["per_query"][k], 4) for d in ladder],
                "exponent": round(exponents[k], 2),
                "series": ladder[-1]["series_per_query"].get(k),
            }
            for k in top
        },
        "exponent_distribution": {
            "median": round(statistics.median(exponents.values()), 2),
            "max": round(max(exponents.values()), 2),
        },
        "native_slowest": {k: round(v, 4) for k, v in sorted(native["per_query"].items(), key=lambda kv: -kv[1])[:5]},
    }
    result.resolve_ratios()
    return result
