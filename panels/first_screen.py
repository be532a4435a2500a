"""Now: the first screen of an incident (S26, S31-S33). One row of 19 grid units answering, for the selected
deployment: what is firing and about which entity (node, GPU, stage, SLI, since when), which targets are
missing against the profile's expected count, the node x layer health matrix (the worst of the Missing-data
reason of S6 and the health state of S32 per cell, with the collector's own state, S23, and the node's clock),
whether each replica is serving, and the SLO as one number.

Only cheap queries: instant ones, over ``ALERTS`` / ``ALERTS_FOR_STATE`` and recorded series: the lists and counts
read what group ``dashgen-<profile>-now`` records (``queries.now_records``: not-ok cells, targets up per job,
missing targets, replica states), the SLO the request-rates records, so the screen reads about as many series as
it shows; the heavy groups load below, collapsed. Every panel here answers "is something wrong, and where"; the
rows below localise it (S34). The top line leaves a width-4 slot after the SLO for the client-visible health of a
deployment with a gateway (S33; ``CLIENT_SLOT``): without it the firing table takes the width.

One staleness bound (S32): every matrix cell, every recorded list, the collector's silence and the rule
evaluator's freshness read ``nodata.recorded_lookback_seconds``.
"""

from __future__ import annotations

from dataclasses import replace

from dashgen_panels.client_health import client_now_panel
from dashgen_panels.slo_health import health_states, recorded_note
from dashgen_queries import client_slo as cs
from dashgen_queries import diffusion, health, nodata, now, now_records, request_rates, serving, sglang_slo
from dashgen_queries import vmagent as va
from dashgen_queries.promql import WINDOW, node_var

from dashgen.deployment.profile import TEXT, Profile
from dashgen.deployment.targets import expected_targets, expected_total
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, Column, RawOptions, Sort, StatText, ratio_axis, ref, stat, table
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Now"
KEY = "first_screen"
WORKLOADS = ("text-generation", "video-generation")
# Targets that are empty exactly when all is well (nothing fires, nothing is missing): (panel title, refId).
# "Alerts firing" and the firing table's evaluator row are empty where no rule evaluator writes (a store
# without the rule file): "rule evaluator silent", never a made-up 0 (S7).
FIRING_TITLE = "What is wrong now: entity, layer, alert, since when, likely cause"
MATRIX_TITLE = "Node × layer health: what is not ok"
HEALTHY_EMPTY = frozenset(
    {
        ("Alerts firing", "A"),
        (FIRING_TITLE, "A"),
        (MATRIX_TITLE, "A"),  # lists only the cells that are not ok
        ("Missing targets", "A"),
        # the Jobs group's list of stuck video instances (video_slo.stuck_panel): empty while none is stuck
        ("Stuck instances: jobs waiting or running, none finished", "A"),
    }
)
TOP, BOTTOM = 6, 12  # the heights of the two lines: 1 + 6 + 12 = 19 grid units with the row header
CLIENT_SLOT = 4  # the top line's slot for the client-visible health (S33) when the profile exports a gateway
# The top line leads with what is wrong now; its width is what the three numbers and the client slot leave.
WRONG_NOW_WIDTH = 24 - 3 - CLIENT_SLOT - 2 - 3


def _staleness(profile: Profile) -> str:
    return f"{nodata.recorded_lookback_seconds(profile):g} s"


def firing_count_panel(profile: Profile) -> PanelSpec:
    return stat(
        key=f"{KEY}.firing_count",
        title="Alerts firing",
        evidence=Evidence(
            source='ALERTS{alertstate="firing"}, written by the rule evaluator (Prometheus or vmalert) for dashgen\'s '
            "rules of this deployment (rules/<profile>.yml; every rule carries the deployment label, S21); "
            f"whether that evaluator runs: the newest sample of its one-series heartbeat {nodata.EVALUATOR_HEARTBEAT} "
            "(the same rule file's layer-health group)",
            quantity="the number of alert series firing at the window end; 0 when none fires and the rule evaluator "
            f"recorded within the last {_staleness(profile)} (the Now row's one staleness bound)",
            limit=f"'{serving.EVALUATOR_SILENT_TEXT}' when no rule of the file was evaluated within "
            f"{_staleness(profile)}: no evaluator loads the file, or it stopped; an absent ALERTS then proves "
            "nothing, so no made-up 0 is shown (S7). Pending alerts are not counted",
        ),
        targets=(Target(serving.firing_count(profile), legend="firing", instant=True),),
        unit="short",
        min=0,
        decimals=0,
        width=2,
        height=TOP,
        no_value=serving.EVALUATOR_SILENT_TEXT,
        thresholds=(("green", None), ("red", 1)),
        color_mode="background",
    )


def slo_panel(profile: Profile) -> PanelSpec | None:
    if not profile.exported("sglang"):
        return None
    if not profile.has_kind(TEXT):
        return job_slo_panel(profile)
    slis = ", ".join(sli.name for sli in sglang_slo.slis(profile))
    engine = serving.slo_health(profile, WINDOW, request_rates.reader(profile))
    if profile.exported("gateway"):
        return client_and_engine_slo_panel(profile, engine, slis)
    return _slo_stat(
        profile,
        title="SLO health (lowest model and SLI)",
        evidence=Evidence(
            source=_engine_slo_source(profile),
            quantity="over the dashboard window, the lowest good share of any model and any SLI "
            f"({slis}); objective {profile.slo.objective:g}",
            limit="one number: the lowest, never an average of models; the SLO and health group below has it per "
            f"model and over time. {_ENGINE_SLO_SCOPE} No requests in the window -> No data, not 100 %",
        ),
        target=Target(engine, legend="lowest", instant=True, interval=request_rates.min_step_of(profile)),
        no_value=request_rates.NO_VALUE,
    )


# The engine's SLO on the first screen reads the deployment's recorded request rates, which no variable narrows.
_ENGINE_SLO_SCOPE = (
    "The engine's share is the whole deployment's, whatever a Replica variable selects (the SLO and health group's "
    "Health panel narrows to it), and over a range longer than the records exist, the recorded part's."
)


def _engine_slo_source(profile: Profile) -> str:
    return recorded_note(profile, "the SGLang tokenizer request histograms (the SLIs of SLO and health's Health panel)")


VIEW = "view"  # the label naming whose SLO a tile of the first screen's SLO stat shows


def client_and_engine_slo_panel(profile: Profile, engine: str, slis: str) -> PanelSpec:
    """The client's SLO (at the gateway, latency counted where its histogram allows) beside the engine's, the
    worse first: what the client saw leads, and an engine that looks fine cannot hide a gateway that sheds."""
    client = cs.client_good_share_with_latency(profile, WINDOW)
    both = (
        f'sort(label_replace({client}, "{VIEW}", "client (gateway)", "", "") '
        f'or label_replace({engine}, "{VIEW}", "engine", "", ""))'
    )
    return _slo_stat(
        profile,
        title="SLO health: client and engine, worse first",
        evidence=Evidence(
            source=f"the model gateway: {cs.RESPONSES}{{status_code}} and {cs.ROUTED} (its routed-request "
            f"duration histogram); the engine: {_engine_slo_source(profile)}",
            quantity="over the dashboard window: the client's good share (valid gateway responses neither shed, "
            f"failed nor timed out, less the share of routed requests slower than the {profile.slo.e2e_seconds:g} s "
            f"E2E bound) and the engine's lowest good share of any model and SLI ({slis}); the lower first; "
            f"objective {profile.slo.objective:g}",
            limit="the gateway's duration histogram has no status code: a request both failed and slow counts "
            "twice (the client share never reads better than the client saw), and where its buckets have no "
            "bound at the E2E objective only failures count. The gateway exports TTFT only in gRPC mode, so the "
            f"client's TTFT is not counted. {_ENGINE_SLO_SCOPE} No requests in the window -> No data, not 100 %",
        ),
        # a read of the recorded request rates keeps the raw tokenizer query's Min step (queries.request_rates)
        target=Target(both, legend=f"{{{{{VIEW}}}}}", instant=True, interval=request_rates.min_step_of(profile)),
        no_value="No requests in window",
        text_mode="value_and_name",
    )


def _slo_stat(
    profile: Profile, title: str, evidence: Evidence, target: Target, no_value: str, text_mode: StatText | None = None
) -> PanelSpec:
    """The first screen's one SLO number (text or job SLO): a good share, coloured by the SLO's health states."""
    return stat(
        key=f"{KEY}.slo",
        title=title,
        evidence=evidence,
        targets=(target,),
        **ratio_axis("percentunit"),
        decimals=2,
        width=3,
        height=TOP,
        no_value=no_value,
        thresholds=health_states(profile),
        color_mode="background",
        text_mode=text_mode,
        # several numbers (client, engine) one under the other, the worse on top, each as wide as the panel
        orientation="horizontal" if text_mode else None,
    )


def coverage_panel(profile: Profile) -> PanelSpec:
    total = expected_total(profile)
    parts = "; ".join(f"{entry.job} {entry.count}" for entry in expected_targets(profile))
    return stat(
        key=f"{KEY}.coverage",
        title="Targets up / expected",
        evidence=Evidence(
            source="the scraper's up series of every job of this deployment, counted per job by "
            + _recorded(profile, now_records.TARGETS_UP)
            + ", and the profile: "
            + parts
            + " (dashgen.deployment.targets: one target per node for each exported per-node source and the "
            "collector, [collector.targets] for the sources on some nodes)",
            quantity=f"targets whose last scrape succeeded (up == 1) at the newest evaluation, beside the {total} the "
            "profile expects",
            limit="a dead collector takes all its node's targets with it: read the matrix's Collector column "
            "before blaming the targets (S23). A target missing from up is counted as not up. "
            f"'{serving.EVALUATOR_SILENT_TEXT}' when no rule of the file was evaluated within {_staleness(profile)}: "
            "no count is recorded, so none is shown",
        ),
        targets=(
            Target(now_records.targets_up_total(profile), legend="up", instant=True, ref_id="A"),
            Target(
                now_records.when_fresh(profile, va.expected_total_expr(profile)),
                legend="expected",
                instant=True,
                ref_id="B",
            ),
        ),
        unit="short",
        decimals=0,
        width=3,
        height=TOP,
        no_value=serving.EVALUATOR_SILENT_TEXT,
        thresholds=(("text", None),),
        color_mode="value",
        text_mode="value_and_name",
    )


def firing_table(profile: Profile) -> PanelSpec:
    evaluator_row = {
        "type": "value",
        "options": {
            str(serving.NONE_FIRING): {
                "text": f"all clear (rule evaluator fresh: recorded within {_staleness(profile)})",
                "color": "green",
                "index": 0,
            },
        },
    }
    headers = {
        "severity": "Severity",
        now.ENTITY: "Entity",
        now.FAILURE_LAYER: "Layer",
        "alertname": "Alert",
        now.CAUSE: "Likely cause",
        now.LOOK: "Open",
    }
    return table(
        key=f"{KEY}.firing",
        title=FIRING_TITLE,
        evidence=Evidence(
            source='ALERTS{alertstate="firing"} of this deployment, and ALERTS_FOR_STATE (the same labels, '
            "value: the time the alert became active), both written by the rule evaluator",
            quantity="one line per entity in trouble and alert: the entity (node, GPU, PP stage, replica, pool, "
            "device or mount point, gateway entry, backend or worker, model, SLI; a target where no node is "
            "named), the layer, the alert, the likely cause and the row to open (the failure-mode catalogue's "
            "labels), and since when it is active; critical first, then the newest",
            limit="'Active since' is when the condition first held (pending), before its 'for' elapsed; an alert "
            f"without a hold (for: 0) has no ALERTS_FOR_STATE: its first ALERTS sample within {now.SINCE_LOOKBACK} "
            "says it (a subquery at the evaluation step: a firing spike shorter than one step is missed), so an "
            f"alert firing longer than {now.SINCE_LOOKBACK} shows that bound. An alert about a gateway's "
            "backend names the backend, not the gateway's host. 'all clear' is a line only while the rule "
            f"evaluator recorded within {_staleness(profile)}; no line at all: "
            f"'{serving.EVALUATOR_SILENT_TEXT}' (see Alerts firing). Each alert's runbook is "
            "docs/alerts.md#<alert name in lower case>",
        ),
        labels=headers,
        # Grafana names a lone query's value either way
        columns=[Column("Active since", now.wrong_now(profile), aliases=("Value",))],
        unit="dateTimeFromNow",
        decimals=0,
        width=WRONG_NOW_WIDTH,
        height=TOP,
        no_value=serving.EVALUATOR_SILENT_TEXT,
        mappings=(evaluator_row,),
        min_width=110,
        sort=(Sort("Severity"), Sort("Active since", descending=True)),
    )


def _recorded(profile: Profile, record: str) -> str:
    """Where a first-screen panel's record comes from and how it is read (one phrase for every such panel)."""
    return (
        f"dashgen's recording rule {record} (rules/{profile.name}.yml, group dashgen-{profile.name}-"
        f"{now_records.GROUP}; the newest value at most {_staleness(profile)} old, the Now row's one staleness bound)"
    )


def staleness_seconds(profile: Profile) -> float:
    """The Now row's one staleness bound (S32): recorded cells, the collector's silence, the evaluator's freshness."""
    return nodata.recorded_lookback_seconds(profile)


def matrix_query(profile: Profile) -> str:
    """The node x layer verdicts that are not ok, one series per (node, layer), as recorded
    (``queries.now_records``: the rule is ``queries.now.verdicts``), or the evaluator-silent line."""
    return now_records.not_ok_cells(profile, node_var(profile))


def matrix_panel(profile: Profile) -> PanelSpec:
    node = profile.label("node")
    bound = staleness_seconds(profile)
    collector = (
        f"'{va.SILENT_TEXT}' (dark purple, layer Collector) stands for every layer of a node when no target of "
        f"the node delivered a sample for {bound:g} s, or the node has no sample at all: the node's vmagent is "
        "dead or cut off, which is a collector fact, not a target fact (S23); else the collector's recorded "
        f"health ('{health.COLLECTOR_DROPPING.text}', '{health.COLLECTOR_QUEUE_FULL.text}'). "
        if profile.collector
        else "The profile has no [collector] section, so a dead collector reads 'collection failed'. "
    )
    silent_mapping = {
        "type": "value",
        "options": {
            str(va.SILENT): {"text": va.SILENT_TEXT, "color": va.SILENT_COLOUR, "index": 0},
            str(now.EVALUATOR_SILENT): {"text": now.EVALUATOR_SILENT_TEXT, "color": va.SILENT_COLOUR, "index": 1},
        },
    }
    return table(
        key=f"{KEY}.matrix",
        title=MATRIX_TITLE,
        evidence=Evidence(
            layer="collection health and layer health (S6, S23, S32)",
            source=f"the not-ok cells as {_recorded(profile, now_records.NOT_OK)} records them from the reason "
            "codes of the Missing-data reasons table per evidence layer, as dashgen's "
            f"recording rule {nodata.LAYER_REASON} records them, and the health states {health.LAYER_HEALTH} per "
            f"layer (plus 'collector' and 'clock'), both in group dashgen-{profile.name}-layer-health, with the node "
            "inventory and up (the collector's silence)",
            quantity="one line per node and layer whose verdict is not ok: the worst of the missing-data reason and "
            "the health state. Ok and idle (no traffic, no I/O) layers "
            "are not listed: an empty list is every layer of every selected node ok or idle. docs/first-screen.md "
            "says which row to open for each",
            limit=collector + "Unreadable data (collection failed, "
            "segment host not mapped, uninitialised, GPU missing) wins over a health state, which cannot be "
            "judged without it; a health state wins over insufficient samples (an engine with requests waiting "
            f"reads '{health.ENGINE_STALLED.text}', never 'no traffic'). The verdicts are the last "
            f"{nodata.RECORDED_WINDOW_SECONDS // 60} minutes, not the dashboard's range; while no rule evaluator "
            f"records, one line says '{now.EVALUATOR_SILENT_TEXT}' instead of an empty, all-ok list. The Cache "
            "evidence group has the reasons of every layer over the dashboard's range, with their full "
            "explanation",
            notes=f"One staleness bound for every line: the newest recorded value counts while at most {bound:g} s "
            f"old ({nodata.RECORDED_LOOKBACK_INTERVALS} rule evaluations plus the store's latency offset), the same "
            "number as the collector's silence; the recorded cell reads the codes with that bound and the panel "
            "reads the cell with it, so a cell that turned ok can stay listed up to twice it. Colour families: "
            "yellow insufficient samples; orange uninitialised; red / dark red collection failed / GPU missing "
            "(k of N); purple segment host not mapped; dark purple collector silent (missing data) or rule "
            "evaluator silent; magenta a health state (dark: critical, e.g. "
            f"'{health.ENGINE_STALLED.text}', '{health.GPU_XID_FATAL.text}'; light: warning, e.g. "
            f"'{health.GPU_THERMAL.text}', '{health.CLOCK_OFF.text}')",
        ),
        labels={node: "Node", nodata.LAYER_LABEL: "Layer"},
        columns=[Column("Verdict", matrix_query(profile), aliases=("Value",))],
        unit="none",
        decimals=0,
        width=8,
        height=BOTTOM,
        no_value="every layer ok or idle",
        mappings=(silent_mapping, *nodata.reason_states().mappings(), *health.health_states().mappings()),
        thresholds=(("text", None),),
        cells="color-background",
        sort=(Sort("Verdict", descending=True), Sort("Node")),
    )


def job_slo_panel(profile: Profile) -> PanelSpec:
    return _slo_stat(
        profile,
        title="Job SLO health (share of jobs meeting the SLO)",
        evidence=Evidence(
            source="SGLang Diffusion request-latency histogram, non-warm-up jobs (the same as Job SLO and health)",
            quantity=f"over the dashboard window, good / all finished jobs (good = succeeded within "
            f"{diffusion.job_bound(profile):g} s); objective {profile.slo.objective:g}",
            limit="a job still queued or running counts only when it finishes, so a stuck instance does not lower "
            "it (see Instance serving state). No job finished in the window -> No data, not 100 %",
        ),
        target=Target(diffusion.pool_slo_health(profile, WINDOW), legend="jobs", instant=True),
        no_value="No jobs finished in window",
    )


def instance_state_panel(profile: Profile) -> PanelSpec:
    node, endpoint = diffusion.instance(profile)
    return table(
        key=f"{KEY}.serving",
        title="Instance serving state",
        evidence=Evidence(
            source="SGLang Diffusion per instance: sglang:diffusion_requests_total (non-warm-up), "
            "sglang:diffusion_num_queue_reqs and sglang:diffusion_num_running_reqs",
            quantity=f"the first that applies over {diffusion.stuck_window(profile)} (2 x the job-latency bound): "
            "finishing jobs > stuck (jobs waited or ran at every sample of the window, none finished) > idle",
            limit="an instance whose engine is not scraped is not listed (the matrix and Missing targets show it); "
            "counts are per job, not per video; 'waited throughout' is judged at the scrape step, so a spike of "
            "idleness shorter than one scrape between two samples is missed",
        ),
        labels={node: "Node", endpoint: "Instance"},
        columns=[Column("State", diffusion.instance_state(profile))],
        unit="none",
        decimals=0,
        width=4,
        height=BOTTOM,
        no_value=NO_DATA_TEXT,
        mappings=serving.replica_state_names(diffusion.INSTANCE_STATES).mappings(),
        cells="color-text",
        min_width=90,
    )


def serving_panel(profile: Profile, topology: Topology) -> PanelSpec | None:
    if not profile.exported("sglang"):
        return None
    if not profile.has_kind(TEXT):
        return instance_state_panel(profile)
    queries = [now_records.replica_states(profile)]
    evaluator_row = {
        "type": "value",
        "options": {str(now.EVALUATOR_SILENT): {"text": now.EVALUATOR_SILENT_TEXT, "color": va.SILENT_COLOUR}},
    }
    return table(
        key=f"{KEY}.serving",
        title="Replica serving state",
        evidence=Evidence(
            source="per replica, as " + _recorded(profile, now_records.SERVING) + " records it from which nodes hold "
            "its PP stages (the node inventory series node:dashgen_inventory:info of the same file), up of the "
            "engine job on those nodes, sglang:realtime_tokens_total and sglang:num_queue_reqs",
            quantity=f"the first that applies: PP stage not scraped (a node of the replica with no engine "
            f"target up) > stalled (requests wait, no token moved over {serving.STALL_WINDOW}) > idle (no token "
            "moved, nothing waits) > serving",
            limit="a replica sharing a node with others is read from the node's series, so one busy replica makes "
            "its node's neighbours look busy too; 'PP stage not scraped' does not prove the ranks are down "
            "(the collector may be, see the matrix); without the inventory rules loaded the table is empty; while "
            f"no rule evaluator records, one line says '{now.EVALUATOR_SILENT_TEXT}'",
        ),
        targets=tuple(Target(q, instant=True, table=True, ref_id=ref(i)) for i, q in enumerate(queries)),
        unit="none",
        decimals=0,
        width=4,
        height=BOTTOM,
        no_value=NO_DATA_TEXT,
        mappings=(*serving.replica_state_names().mappings(), evaluator_row),
        cells="color-text",
        min_width=120,
        # Several queries fill one State column (each returns the replicas in its state, a replica is in exactly
        # one); the kit's merged table gives each query its own column, so the merge is written out here.
        raw_options=RawOptions(
            "several queries share one column",
            transformations=(
                {"id": "merge", "options": {}},
                {
                    "id": "organize",
                    "options": {
                        "excludeByName": {"Time": True},
                        "renameByName": {
                            serving.REPLICA_LABEL: "Replica",
                            **{f"Value #{ref(i)}": "State" for i in range(len(queries))},
                        },
                    },
                },
            ),
        ),
    )


def coverage_table(profile: Profile) -> PanelSpec:
    job = profile.label("job")
    return table(
        key=f"{KEY}.coverage_by_source",
        title="Targets per source: up, expected, missing",
        evidence=Evidence(
            source="up of each job of this deployment, counted per job by "
            + _recorded(profile, now_records.TARGETS_UP)
            + "; the expected counts of the profile (dashgen.deployment.targets)",
            quantity="per scrape job at the newest evaluation: targets up, expected, and expected minus up (0 "
            "where none is missing)",
            limit="expected is the profile's number, written into the query as a constant per job (not a value of a "
            "metric, so nothing is zero-filled, S7); more targets up than expected shows 0 missing. While no "
            f"rule evaluator records (no rule evaluated within {_staleness(profile)}) no column is shown and the "
            f"table says '{serving.EVALUATOR_SILENT_TEXT}', never every target missing",
        ),
        labels={job: "Source (job)"},
        columns=[
            Column("Up", now_records.newest(profile, now_records.TARGETS_UP)),
            Column("Expected", now_records.when_fresh(profile, va.expected_by_job(profile))),
            Column("Missing", now_records.missing_by_job(profile)),
        ],
        unit="short",
        decimals=0,
        width=5,
        height=BOTTOM,
        no_value=serving.EVALUATOR_SILENT_TEXT,
        min_width=85,
    )


def missing_panel(profile: Profile) -> PanelSpec:
    states = {
        "type": "value",
        "options": {
            str(va.FAILING): {"text": "scrape failing (up = 0)", "color": "red", "index": 0},
            str(va.GONE): {"text": "gone (seen in the window, no sample now)", "color": "orange", "index": 1},
            str(now.EVALUATOR_SILENT): {"text": now.EVALUATOR_SILENT_TEXT, "color": va.SILENT_COLOUR, "index": 2},
        },
    }
    window = f"{now_records.MISSING_WINDOW_SECONDS // 60:g} minutes"
    return table(
        key=f"{KEY}.missing",
        title="Missing targets",
        evidence=Evidence(
            source=f"up of every job of this deployment over the last {window}, as "
            + _recorded(profile, now_records.MISSING)
            + " records the targets missing (only those)",
            quantity="each target whose last scrape failed at the newest evaluation, or that had an up sample in "
            f"the last {window} and has none now",
            limit=f"the window is the recorded {window} (the matrix's 'now'), not the dashboard's range: a target "
            f"gone longer ago is not listed, nor one never seen (the per-source counts and the matrix show it "
            "against the profile); a gone node lists all its targets: check the Collector column first. 'none "
            "missing' only while the rule evaluator records; otherwise one line says "
            f"'{now.EVALUATOR_SILENT_TEXT}'",
        ),
        labels={profile.label("node"): "Node", profile.label("job"): "Job", profile.label("instance"): "Target"},
        columns=[Column("State", now_records.missing_targets(profile))],
        unit="none",
        decimals=0,
        width=7,
        height=BOTTOM,
        no_value="none missing",
        mappings=(states,),
        cells="color-text",
        min_width=120,
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    # The line leads with what is wrong now; the client-visible health (S33, width CLIENT_SLOT) follows the SLO
    # when the profile exports a gateway; an optional panel left out widens the line's first panel (_fill).
    top = [
        firing_table(profile),
        slo_panel(profile),
        client_now_panel(profile, KEY, TOP),
        firing_count_panel(profile),
        coverage_panel(profile),
    ]
    bottom = [matrix_panel(profile), serving_panel(profile, topology), coverage_table(profile), missing_panel(profile)]
    panels = [panel for panel in (*top, *bottom) if panel is not None]
    return GroupSpec(key=KEY, title=TITLE, panels=tuple(_fill(panels)))


def _fill(panels: list[PanelSpec]) -> list[PanelSpec]:
    """Widen the first panel of each line (the lists of what is wrong) to the grid's 24 columns when an optional
    panel is left out."""
    out: list[PanelSpec] = []
    for height in (TOP, BOTTOM):
        line = [p for p in panels if p.height == height]
        spare = 24 - sum(p.width for p in line)
        if line and spare > 0:
            line[0] = replace(line[0], width=line[0].width + spare)
        out.extend(line)
    return out
