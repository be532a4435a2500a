"""The catalogue rows of the platform: clocks, the collector, scrape targets of every source, and the SLOs."""

from __future__ import annotations

from dashgen_queries import diffusion, health

from dashgen.catalogue import conditions as c
from dashgen.catalogue.build import (
    exports,
    fault,
    reads,
)
from dashgen.catalogue.model import FailureMode, Paint
from dashgen.exporters.table import TABLES

CLOCK_ROWS = (
    FailureMode(
        id="clock-skew",
        alert="ClockSkew",
        component="clock",
        layer="clock",
        reads=reads(
            "node_exporter", "node_timex_offset_seconds", "node_timex_sync_status", "node_timex_maxerror_seconds"
        ),
        entity=("node",),
        test="|clock offset| above 0.5 s, or unsynchronised with an estimated error of 16 s or more",
        test_reason="the node's samples land early or late; TLS and timeouts misbehave",
        hold="5m",
        hold_reason="chrony slews small offsets away within minutes",
        severity="warning",
        cause="node clock off (NTP / chrony)",
        look="Now: node x layer health (clock)",
        runbook="`chronyc tracking` on the node; restart chronyd; check its time sources.",
        demo=fault("clock-skew", "one node's clock 100 s behind: offset 100, sync 0, stamps early"),
        applies=exports("node_exporter"),
        paints=(Paint(health.CLOCK_OFF, health.clock_off),),
    ),
)


# A silent node's targets all vanish: their TargetMissing rows follow from it.
SILENT_ALSO = (
    "collector-coverage",
    "engine-target-missing",
    *(f"{source.replace('_', '-')}-target-missing" for source in ("dcgm", "gpm", "node_exporter", "mooncake_client")),
)

COLLECTOR_ROWS = (
    FailureMode(
        id="collector-memory-near-limit",
        alert="CollectorMemoryNearLimit",
        component="collector",
        layer="",
        reads=reads("vmagent", "process_resident_memory_bytes", "process_memory_limit_bytes"),
        entity=("node",),
        test="vmagent's resident memory above 90 % of its limit",
        test_reason="with swap 0 the next step is an OOM kill, and Restart=no keeps it dead",
        hold="5m",
        hold_reason="a scrape of a large target peaks for seconds",
        severity="warning",
        cause="collector near its memory limit (new series, backed-up queue)",
        look="Collector: memory",
        runbook="Samples scraped per target (a cardinality jump?) and the send queue; raise MemoryMax or cut series.",
        demo=fault("fault:collector-memory-near-limit", "one node's vmagent RSS climbs to 500 MiB of 512"),
        applies=lambda p: p.collector is not None,
    ),
    FailureMode(
        id="collector-queue-near-bound",
        alert="CollectorSendQueueNearBound",
        component="collector",
        layer="collector",
        reads=reads("vmagent", "vmagent_remotewrite_pending_data_bytes"),
        entity=("node",),
        test="pending remote-write bytes above 80 % of [collector] send_queue_limit",
        test_reason="at the bound vmagent drops the oldest data for good",
        hold="5m",
        hold_reason="a store restart backs the queue up for minutes",
        severity="warning",
        cause="store slow or unreachable from the node (queue filling)",
        look="Collector: send queue",
        runbook="Can the node reach the store (`curl` its /health)? Is the store ingesting (its own dashboards)?",
        demo=fault("collector-dropping", "one node's pending bytes at the bound and its drop counters climbing"),
        applies=lambda p: p.collector is not None,
        paints=(Paint(health.COLLECTOR_QUEUE_FULL),),
        also=("collector-dropping",),
    ),
    FailureMode(
        id="collector-dropping",
        alert="CollectorDroppingSamples",
        component="collector",
        layer="collector",
        reads=reads("vmagent", "vmagent_remotewrite_packets_dropped_total", "vm_persistentqueue_bytes_dropped_total"),
        entity=("node",),
        test="vmagent's dropped-packet or dropped-queue-bytes counters grew within 15m",
        test_reason="dropped data is lost for good: the node's panels have gaps that read 'insufficient samples'",
        hold="0m",
        hold_reason="a drop is an event",
        severity="warning",
        cause="collector dropping data (queue full)",
        look="Collector: send queue",
        runbook="As CollectorSendQueueNearBound; the gaps are permanent.",
        demo=fault("collector-dropping", "one node's drop counters climb and two samples in three go missing"),
        applies=lambda p: p.collector is not None,
        paints=(Paint(health.COLLECTOR_DROPPING),),
        also=("collector-queue-near-bound",),
    ),
    FailureMode(
        id="collector-silent",
        alert="CollectorSilent",
        component="collector",
        layer="",
        reads=reads("vmagent", "up"),
        entity=("node",),
        test="no target of the node delivered a sample within 3 scrape intervals plus the store's latency offset",
        test_reason="a dead vmagent stops every series of its node at once",
        hold="2m",
        hold_reason="a vmagent restart takes seconds",
        severity="critical",
        cause="collector down or node cut off",
        look="Now: node x layer health (collector)",
        runbook="`systemctl status vmagent` on the node (Restart=no: start it by hand); is the node up?",
        demo=fault("fault:collector-silent", "every series of one node stops"),
        applies=lambda p: p.collector is not None,
        also=SILENT_ALSO,
    ),
    FailureMode(
        id="store-ingestion-backlog",
        alert="StoreIngestionBacklog",
        component="store",
        layer="",
        reads=reads("vmagent", "vmagent_remotewrite_pending_data_bytes"),
        entity=(),
        test=f"at least {c.BACKLOG_NODE_SHARE:.0%} of the nodes' collectors hold more than "
        f"{c.BACKLOG_BYTES // 2**20} MiB waiting to be written to the store",
        test_reason="one node's queue is its network; every node's queue at once is the store itself slow or "
        "refusing writes (a dead store is seen by nothing that queries it: watch it from outside)",
        hold="10m",
        hold_reason="a store restart backs every queue up for minutes",
        severity="critical",
        cause="the metrics store slow or refusing writes",
        look="Collector: send queue",
        runbook="The store's own health (/health, its log, its disk); every panel's recent data is late or "
        "missing until the queues drain.",
        demo=fault("fault:store-ingestion-backlog", "every node's vmagent pending bytes climb to 200 MiB"),
        applies=lambda p: p.collector is not None,
        expr=c.store_ingestion_backlog,
        summary="The metrics store is not keeping up with {deployment}: collectors of most nodes queue data",
        scope="cluster",
    ),
    FailureMode(
        id="collector-coverage",
        alert="TargetCoverageBelowExpected",
        component="collector",
        layer="",
        reads=reads("vmagent", "up"),
        entity=("job",),
        test="fewer targets of a job are up than the profile expects",
        test_reason="a target missing from discovery reads as nothing at all, not as down",
        hold="5m",
        hold_reason="a rolling restart takes minutes",
        severity="warning",
        cause="scrape targets missing or failing",
        look="Now: Missing targets",
        runbook="The Now row's Missing targets lists which; a whole node gone is CollectorSilent.",
        demo=fault("fault:engine-scrape-failing", "one target of a job reads up 0"),
        applies=lambda p: True,
        scope="cluster",
    ),
)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


SCRAPED = ("dcgm", "gpm", "node_exporter", "gateway", "mooncake_master", "mooncake_client", "mooncake_tent")
CLUSTER_SOURCES = ("mooncake_master", "gateway")
COMPONENTS = {
    "dcgm": "gpu",
    "gpm": "gpu",
    "node_exporter": "host",
    "mooncake_client": "mooncake_store",
    "mooncake_tent": "mooncake_store",
}


def _collection_row(source: str) -> FailureMode:
    what = TABLES[source].exporter
    component = COMPONENTS.get(source, source)
    return FailureMode(
        id=f"{source.replace('_', '-')}-scrape-failing",
        alert=f"{_camel(source)}CollectionFailed",
        component=component,  # type: ignore[arg-type]
        layer="",
        reads=reads("vmagent", "up"),
        entity=("node", "job"),
        test=f"more than {c.SCRAPE_FAILED_SHARE:.0%} of the {source} job's scrapes failed over {c.SCRAPE_WINDOW}",
        test_reason=f"{what} is down or times out now and then (a flapping target never reads 0 for minutes): its "
        "panels read 'collection failed', not zero",
        hold="5m",
        hold_reason="an exporter restart fails a scrape or two",
        severity="warning",
        cause=f"{what} down or not answering",
        look="Now: Missing-data reasons",
        runbook=f"The {what} process on the node (`systemctl status`, its log); its port reachable from vmagent?",
        demo=fault(f"fault:{source.replace('_', '-')}-scrape-failing", f"up of the {source} target on one node is 0"),
        applies=exports(source),
        scope="cluster" if source in CLUSTER_SOURCES else "entity",
        also=("collector-coverage",),
        watches=source,
    )


def _missing_row(source: str) -> FailureMode:
    what = TABLES[source].exporter
    component = COMPONENTS.get(source, source)
    cluster = source in CLUSTER_SOURCES
    return FailureMode(
        id=f"{source.replace('_', '-')}-target-missing",
        alert=f"{_camel(source)}TargetMissing",
        component=component,  # type: ignore[arg-type]
        layer="",
        reads=reads("vmagent", "up"),
        entity=("job",) if cluster else ("node", "job"),
        test=f"no up series for the {source} job" + ("" if cluster else " on a node the profile lists"),
        test_reason="a target gone from discovery disappears instead of reading 0",
        hold="5m",
        hold_reason="a rolling restart takes minutes",
        severity="warning",
        cause=f"{what} target gone (node down, left discovery)",
        look="Now: Missing targets",
        runbook=f"Is the node up? Is {what} deployed on it (pod, unit)? The Now row's Missing targets lists it.",
        demo=fault(f"fault:{source.replace('_', '-')}-target-missing", f"the {source} target's up series ends"),
        applies=exports(source),
        scope="cluster" if cluster else "entity",
        also=("collector-coverage",),
        watches=source,
    )


TARGET_ROWS = tuple(_collection_row(s) for s in SCRAPED) + tuple(_missing_row(s) for s in SCRAPED)

SLO_ROWS = (
    FailureMode(
        id="slo-fast-burn",
        alert="SloErrorBudgetFastBurn",
        component="slo",
        layer="",
        reads=reads(
            "sglang",
            "sglang:time_to_first_token_seconds",
            "sglang:e2e_request_latency_seconds",
            "sglang:request_time_per_output_token_seconds",
            "sglang:num_aborted_requests_total",
        ),
        entity=("model_name", "slo"),
        test="engine-side error ratio above 14.4 x the budget over 1h and 5m",
        test_reason="2 % of a 30-day budget in an hour: pages (SRE workbook multiwindow burn)",
        hold="2m",
        hold_reason="the 5m window already confirms the 1h one",
        severity="critical",
        cause="engine-side SLO burning fast",
        look="SLO health",
        runbook="Which SLI (ttft / tpot / e2e) and which stage: the SLO group's per-stage panels; the first "
        "screen's list names the entity in trouble.",
        demo=fault("fault:slo-burn", "no request of the model answers its first token within the TTFT bound"),
        applies=exports("sglang", text=True),
        scope="cluster",
    ),
    FailureMode(
        id="slo-slow-burn",
        alert="SloErrorBudgetSlowBurn",
        component="slo",
        layer="",
        reads=reads("sglang", "sglang:time_to_first_token_seconds"),
        entity=("model_name", "slo"),
        test="engine-side error ratio above 6 x the budget over 6h and 30m",
        test_reason="5 % of the budget in 6h: a ticket, not a page",
        hold="15m",
        hold_reason="slow burns are confirmed slowly",
        severity="warning",
        cause="engine-side SLO burning slowly",
        look="SLO health",
        runbook="As SloErrorBudgetFastBurn, with time to look at trends.",
        demo=fault("fault:slo-burn", "no request of the model answers its first token within the TTFT bound"),
        applies=exports("sglang", text=True),
        scope="cluster",
    ),
    FailureMode(
        id="client-slo-fast-burn",
        alert="ClientSloErrorBudgetFastBurn",
        component="slo",
        layer="",
        reads=reads("gateway", "smg_http_responses_total", "smg_worker_health"),
        entity=("slo",),
        test="client-side error ratio (429, 408 / 504, 5xx) above 14.4 x the budget over 1h and 5m, or no valid "
        "response over 5m while a gateway sees fewer healthy backends than replicas",
        test_reason="what the client sees, including what no engine saw; a gateway that stopped sending traffic "
        "(open circuit) leaves no ratio, and the alert must not clear while the backends are still out",
        hold="2m",
        hold_reason="as the engine-side fast burn",
        severity="critical",
        cause="clients failing at the gateway",
        look="Gateway: what the client sees",
        runbook="Which instance and which class: the first screen's gateway panel.",
        demo=fault("gateway-shedding", "one gateway instance answers 30 % 429"),
        applies=exports("gateway"),
        scope="cluster",
    ),
    FailureMode(
        id="client-slo-slow-burn",
        alert="ClientSloErrorBudgetSlowBurn",
        component="slo",
        layer="",
        reads=reads("gateway", "smg_http_responses_total"),
        entity=("slo",),
        test="client-side error ratio above 6 x the budget over 6h and 30m",
        test_reason="a ticket-grade burn at the gateway",
        hold="15m",
        hold_reason="slow burns are confirmed slowly",
        severity="warning",
        cause="clients failing at the gateway (slowly)",
        look="Gateway: what the client sees",
        runbook="As ClientSloErrorBudgetFastBurn.",
        demo=fault("gateway-shedding", "one gateway instance answers 30 % 429"),
        applies=exports("gateway"),
        scope="cluster",
    ),
    FailureMode(
        id="video-job-slo-fast-burn",
        alert="VideoJobSloFastBurn",
        component="video",
        layer="",
        reads=reads("sglang", "sglang:diffusion_requests_total", "sglang:diffusion_request_latency_seconds"),
        entity=(),
        test="video job error ratio above 14.4 x the budget over 1h and 5m",
        test_reason="as the text fast burn, on jobs",
        hold="2m",
        hold_reason="as the text fast burn",
        severity="critical",
        cause="video jobs failing or late",
        look="Jobs: outcomes per instance",
        runbook="Outcomes and latency per instance in the Jobs group; a stuck instance is VideoInstanceStuck.",
        demo=fault("fault:video-jobs-late", "every job finishes past the job-latency bound"),
        applies=exports("sglang", video=True),
        scope="cluster",
        also=("video-job-slo-slow-burn",),  # a fast burn spends the slow windows' budget too
    ),
    FailureMode(
        id="video-job-slo-slow-burn",
        alert="VideoJobSloSlowBurn",
        component="video",
        layer="",
        reads=reads("sglang", "sglang:diffusion_requests_total"),
        entity=(),
        test="video job error ratio above 6 x the budget over 6h and 30m",
        test_reason="as the text slow burn",
        hold="15m",
        hold_reason="as the text slow burn",
        severity="warning",
        cause="video jobs failing or late (slowly)",
        look="Jobs: outcomes per instance",
        runbook="As VideoJobSloFastBurn.",
        demo=fault("fault:video-jobs-late", "every job finishes past the job-latency bound"),
        applies=exports("sglang", video=True),
        scope="cluster",
        also=("video-job-slo-fast-burn",),
    ),
    FailureMode(
        id="video-instance-stuck",
        alert="VideoInstanceStuck",
        component="video",
        layer="engine",
        reads=reads("sglang", "sglang:diffusion_num_queue_reqs", "sglang:diffusion_requests_total"),
        entity=("node", "replica"),
        test="an instance has jobs queued or running and finished none over 2 x the job bound",
        test_reason="the engine keeps serving /metrics: only progress tells",
        hold="5m",
        hold_reason="a long job holds the counter for one bound, not two",
        severity="critical",
        cause="video engine instance stuck",
        look="Jobs: throughput per instance",
        runbook="The engine's log on the node and its GPUs (Xid, memory); restart the instance.",
        demo=fault("stuck-instance", "one instance's running jobs never finish"),
        applies=exports("sglang", video=True),
        paints=(Paint(health.VIDEO_STUCK, diffusion.stuck_instances),),
    ),
    FailureMode(
        id="video-pool-stuck",
        alert="VideoPoolStuck",
        component="video",
        layer="",
        reads=reads("sglang", "sglang:diffusion_num_queue_reqs", "sglang:diffusion_requests_total"),
        entity=(),
        test="the video pools have jobs queued and finished none over 2 x the job bound",
        test_reason="no instance makes progress",
        hold="5m",
        hold_reason="as VideoInstanceStuck",
        severity="critical",
        cause="every video instance stuck",
        look="Jobs: throughput per instance",
        runbook="A shared dependency: the model storage, the scratch disk, the job queue; then each instance.",
        demo=fault("fault:video-pool-stuck", "every instance stops finishing jobs"),
        applies=exports("sglang", video=True),
        scope="cluster",
        also=("video-instance-stuck",),  # every instance of the pool is stuck as well
    ),
)
