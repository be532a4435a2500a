"""Collector: each node's vmagent against the bounds the profile's ``[collector]`` states (S23), and what it
scrapes: CPU against the quota, resident memory against the limit, threads against ``TasksMax``, the send
queue against its bound, dropped data, scrape duration and samples per target, scrape errors, the age of
the newest sample per node and source, and the GPM sampler's own health.

Where vmagent exports its own limit (``process_cpu_cores_available``, ``process_memory_limit_bytes``: what
the cgroup really allows) it is drawn as a series beside the usage, and the profile's bound as a threshold
line: the two disagree when the unit file is not what the profile says. One row per node, never summed.
The row is collapsed: the Now row's matrix shows a silent collector; open this when one is suspected.
"""

from __future__ import annotations

from dashgen_queries import vmagent as va

from dashgen.deployment.profile import Profile
from dashgen.deployment.sizes import format_binary, format_decimal
from dashgen.deployment.topology import Topology
from dashgen.render.kit import ratio_axis, text, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Collector (vmagent)"
KEY = "collector"
WORKLOADS = ("text-generation", "video-generation")
NODE = "{{node}}"


def format_size(num_bytes: int) -> str:
    """A bound as the profile is likely to write it: binary units when exact ("512 MiB"), else decimal ("1 GB")."""
    return format_binary(num_bytes) if num_bytes % (1 << 20) == 0 else format_decimal(num_bytes)


def _source(profile: Profile, metrics: str) -> str:
    collector = va.collector(profile)
    return (
        f"vmagent's own /metrics (job {collector.job}, scraped by each node's vmagent every "
        f"{collector.scrape_interval}): {metrics}"
    )


def _against_bound(
    key: str,
    title: str,
    evidence: Evidence,
    targets: tuple[Target, ...],
    *,
    unit: str,
    bound: float,
    near_share: float | None = None,
) -> PanelSpec:
    """A per-node line against a bound of the profile's ``[collector]``: the bound as a red threshold line, and
    where its alert fires (``near_share`` of it) as an orange one."""
    near = (("orange", near_share * bound),) if near_share is not None else ()
    return timeseries(
        key=key,
        title=title,
        evidence=evidence,
        targets=targets,
        unit=unit,
        min=0,
        width=8,
        thresholds=(("green", None), *near, ("red", float(bound))),
        threshold_style="line",
    )


def cpu_panel(profile: Profile) -> PanelSpec:
    quota = va.collector(profile).cpu_quota_cores
    return _against_bound(
        key=f"{KEY}.cpu",
        title="Collector CPU against its quota (cores)",
        evidence=Evidence(
            source=_source(
                profile, f"rate({va.CPU}) and {va.CPU_AVAILABLE} (the cgroup CPU quota as cores, else the host's cores)"
            ),
            quantity=f"per node, CPU seconds per second used by vmagent, and the cores it may use; the red line is "
            f"the profile's quota [collector] cpu_quota = {quota * 100:g} % = {quota:g} cores",
            limit="a quota series equal to the host's core count means no cgroup quota is set: the unit file does "
            "not match the profile. CPU throttling itself is not exported by vmagent",
        ),
        targets=(
            Target(va.cpu_used_cores(profile), legend=f"{NODE} used"),
            Target(va.cpu_available_cores(profile), legend=f"{NODE} allowed (vmagent)"),
        ),
        unit="short",
        bound=quota,
    )


def memory_panel(profile: Profile) -> PanelSpec:
    limit = va.collector(profile).memory_limit_bytes
    return _against_bound(
        key=f"{KEY}.memory",
        title="Collector resident memory against its limit",
        evidence=Evidence(
            source=_source(profile, f"{va.RSS} and {va.MEMORY_LIMIT} (min of RAM and the cgroup memory.max)"),
            quantity=f"per node, vmagent's resident memory and the limit it sees; the lines are the profile's "
            f"[collector] memory_limit = {format_size(limit)} (red) and {va.MEMORY_NEAR_SHARE:.0%} of it "
            "(orange, where CollectorMemoryNearLimit fires)",
            limit="a limit series equal to the node's RAM means no memory limit is set. With swap 0, reaching the "
            "limit is an OOM kill, and with Restart=no the collector then stays dead (the node turns silent)",
        ),
        targets=(
            Target(va.rss_bytes(profile), legend=f"{NODE} resident"),
            Target(va.memory_limit_bytes(profile), legend=f"{NODE} limit (vmagent)"),
        ),
        unit="bytes",
        bound=limit,
        near_share=va.MEMORY_NEAR_SHARE,
    )


def threads_panel(profile: Profile) -> PanelSpec:
    tasks = va.collector(profile).tasks_max
    return _against_bound(
        key=f"{KEY}.threads",
        title="Collector threads against TasksMax",
        evidence=Evidence(
            source=_source(profile, va.THREADS),
            quantity=f"per node, vmagent's OS threads (what systemd's TasksMax counts); the red line is the "
            f"profile's [collector] tasks_max = {tasks}",
            limit="at TasksMax the kernel refuses new threads: scrapes and sends stall without a crash",
        ),
        targets=(Target(va.threads(profile), legend=NODE),),
        unit="short",
        bound=tasks,
    )


def queue_panel(profile: Profile) -> PanelSpec:
    bound = va.collector(profile).send_queue_limit_bytes
    return _against_bound(
        key=f"{KEY}.queue",
        title="Send queue: pending bytes against the bound",
        evidence=Evidence(
            source=_source(
                profile, f"{va.PENDING} (all remote-write URLs) and {va.QUEUE_PENDING} (the on-disk persistent queue)"
            ),
            quantity=f"per node, bytes waiting to be sent; the lines are the profile's [collector] send_queue_limit = "
            f"{format_size(bound)} (-remoteWrite.maxDiskUsagePerURL; red) and {va.QUEUE_NEAR_SHARE:.0%} of "
            "it (orange, where CollectorSendQueueNearBound fires)",
            limit="the bound applies per remote-write URL; past it vmagent drops the oldest data (see Dropped). "
            "vmagent 1.79 does not export the configured bound, so only the profile's is drawn",
        ),
        targets=(
            Target(va.pending_bytes(profile), legend=f"{NODE} remote write"),
            Target(va.queue_pending_bytes(profile), legend=f"{NODE} persistent queue"),
        ),
        unit="bytes",
        bound=bound,
        near_share=va.QUEUE_NEAR_SHARE,
    )


def dropped_packets_panel(profile: Profile) -> PanelSpec:
    return timeseries(
        key=f"{KEY}.dropped_packets",
        title="Remote write: blocks dropped per second",
        evidence=Evidence(
            source=_source(profile, f"{va.PACKETS_DROPPED} (counter)"),
            quantity="per node, blocks of samples remote write gave up on, per second",
            limit="anything above 0 is data lost for good; newer vmagent versions also count dropped samples "
            "(vmagent_remotewrite_samples_dropped_total), which 1.79 does not export",
        ),
        targets=(Target(va.dropped_rate(profile, va.PACKETS_DROPPED), legend=NODE),),
        unit="short",
        min=0,
        width=8,
    )


def dropped_queue_panel(profile: Profile) -> PanelSpec:
    return timeseries(
        key=f"{KEY}.dropped_queue",
        title="Persistent queue: bytes dropped per second",
        evidence=Evidence(
            source=_source(profile, f"{va.QUEUE_DROPPED} (counter)"),
            quantity="per node, bytes the on-disk queue discarded because it reached its bound, per second",
            limit="anything above 0 is data lost for good: the queue was full (see the send queue)",
        ),
        targets=(Target(va.dropped_rate(profile, va.QUEUE_DROPPED), legend=NODE),),
        unit="Bps",
        min=0,
        width=8,
    )


def scrape_errors_panel(profile: Profile) -> PanelSpec:
    return timeseries(
        key=f"{KEY}.scrape_errors",
        title="Failed scrapes per second",
        evidence=Evidence(
            source=_source(profile, f"{va.SCRAPES_FAILED} (counter, all targets of the node's vmagent)"),
            quantity="per node, scrapes that failed (connection, timeout, parse), per second",
            limit="which target fails is in the Now row's Missing targets (up == 0); a dead collector counts no "
            "failure at all",
        ),
        targets=(Target(va.scrape_errors_rate(profile), legend=NODE),),
        unit="short",
        min=0,
        width=8,
    )


def _per_target_panel(
    profile: Profile, key: str, title: str, metric: str, quantity: str, limit: str, unit: str
) -> PanelSpec:
    """A series vmagent writes for every target it scrapes, per node, job and target."""
    return timeseries(
        key=f"{KEY}.{key}",
        title=title,
        evidence=Evidence(
            source=f"{metric}, written by the node's vmagent for every target it scrapes",
            quantity=f"per node, job and target, {quantity}",
            limit=limit,
        ),
        targets=(Target(va.per_target(profile, metric), legend="{{node}} {{job}} {{instance}}"),),
        unit=unit,
        min=0,
        width=12,
    )


def scrape_duration_panel(profile: Profile) -> PanelSpec:
    return _per_target_panel(
        profile,
        "scrape_duration",
        "Scrape duration per target (s)",
        va.SCRAPE_DURATION,
        quantity="how long its last scrape took",
        limit="a scrape longer than its interval delays the next; vm_promscrape_scrape_duration_seconds is a "
        "VictoriaMetrics histogram (MetricsQL only) and is not used",
        unit="s",
    )


def samples_panel(profile: Profile) -> PanelSpec:
    return _per_target_panel(
        profile,
        "samples",
        "Samples scraped per target",
        va.SAMPLES_SCRAPED,
        quantity="the samples its last scrape returned",
        limit="a sudden drop means a collector inside the target stopped exporting; a jump, new series "
        "(cardinality) that cost the collector memory",
        unit="short",
    )


def freshness_panel(profile: Profile) -> PanelSpec:
    bound = va.silent_after_seconds(profile)
    return timeseries(
        key=f"{KEY}.freshness",
        title="Newest sample age per node and source (s)",
        evidence=Evidence(
            source="timestamp() of up of every job of this deployment, per node",
            quantity=f"seconds since the newest stored sample of each node and job; the red line is {bound:g} s, "
            f"where a node whose every job is that old counts as silent ({va.SILENT_INTERVALS} collector "
            f"scrape intervals plus the store's latency offset {profile.store.latency_offset})",
            limit="after the store's look-back (5 minutes by default) a silent node has no sample and so no age: "
            "the line ends, and the Now row's matrix reads 'collector silent'. Samples arrive with their "
            "scrape timestamps, so a backed-up send queue shows as age too",
        ),
        targets=(Target(va.newest_up_age(profile), legend="{{node}} {{job}}"),),
        unit="s",
        min=0,
        width=12,
        thresholds=(("green", None), ("red", bound)),
        threshold_style="line",
    )


def gpm_panel(profile: Profile) -> PanelSpec | None:
    if not profile.exported("gpm"):
        return None
    return timeseries(
        key=f"{KEY}.gpm_valid",
        title="GPM sampler: share of valid samples",
        evidence=Evidence(
            source=f"gpm_sample_valid of the GPM sampler (job {profile.source('gpm').job}; 1 when the sample's "
            "validity code is OK, else 0), per GPU",
            quantity="per node, the mean over its GPUs of the last sample's validity: 1 = every GPU's sample valid",
            limit="the sampler's ring fill and oldest frame are not in the metric contract (metrics.md), so they are "
            "not shown; an absent line is a sampler that stopped exporting (see the matrix's GPM column)",
        ),
        targets=(Target(va.gpm_valid_share(profile), legend=NODE),),
        **ratio_axis("percentunit"),
        width=12,
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    if profile.collector is None:
        panels: list[PanelSpec | None] = [
            text(
                f"{KEY}.not_stated",
                "Collector bounds: not stated",
                f"The profile {profile.name} has no `[collector]` section: the collector's bounds (CPU quota, memory "
                "limit, send queue, TasksMax) and its own scrape job are unknown, so nothing is drawn against them. "
                "See docs/collector.md.",
                width=24,
                height=3,
            )
        ]
    else:
        panels = [
            cpu_panel(profile),
            memory_panel(profile),
            threads_panel(profile),
            queue_panel(profile),
            dropped_packets_panel(profile),
            dropped_queue_panel(profile),
            scrape_errors_panel(profile),
            scrape_duration_panel(profile),
            samples_panel(profile),
            freshness_panel(profile),
            gpm_panel(profile),
        ]
    return GroupSpec(key=KEY, title=TITLE, panels=tuple(p for p in panels if p is not None), collapsed=True)
