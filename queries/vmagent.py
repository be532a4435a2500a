"""vmagent, the per-node collector (S23): its own metrics against the profile's ``[collector]`` bounds,
the targets it scrapes (coverage against the profile's expected count), and the silent node.

Names are vmagent's own (metric catalogue §10, checked against the Debian package's vmagent 1.79):
``process_cpu_seconds_total`` / ``process_cpu_cores_available`` (the cgroup CPU quota as cores),
``process_resident_memory_bytes`` / ``process_memory_limit_bytes`` (min of RAM and the cgroup limit),
``process_num_threads`` (what systemd's ``TasksMax`` counts), ``vmagent_remotewrite_pending_data_bytes``
and ``vm_persistentqueue_bytes_pending`` (the send queue), ``vmagent_remotewrite_packets_dropped_total``
and ``vm_persistentqueue_bytes_dropped_total`` (dropped), ``vm_promscrape_scrapes_failed_total``; per
target the scraper's own ``up``, ``scrape_duration_seconds`` and ``scrape_samples_scraped``.

Silent node: with ``Restart=no`` a dead vmagent stays dead and every series of its node stops at once.
The node's newest ``up`` sample (any target) is then older than ``silent_after_seconds``; after the
store's look-back it has none at all, so the profile's node list says which nodes should be there.
"""

from __future__ import annotations

from dashgen_queries.nodata import expected_nodes
from dashgen_queries.promql import RATE_WINDOW, WINDOW, agg, deployment, node_var, scoped_job, selector

from dashgen.deployment.collector import Collector
from dashgen.deployment.profile import Profile
from dashgen.deployment.targets import expected_targets, expected_total
from dashgen.exporters.table import GPM, VMAGENT

# The one definition of each collector threshold (panels and alerts read these).
MEMORY_NEAR_SHARE = 0.9  # resident memory / limit above which the collector is near its memory limit
QUEUE_NEAR_SHARE = 0.8  # pending send-queue bytes / bound above which the queue is near its bound
SILENT_INTERVALS = 3  # a node is silent when its newest sample is this many collector intervals old (+ store lag)
SILENT = 8  # the node x layer matrix's code for "collector silent" (after nodata's codes 0-7)
SILENT_TEXT, SILENT_COLOUR = "collector silent", "dark-purple"
FAILING, GONE = 1, 2  # missing-target states
DROP_WINDOW = "5m"  # the dropping-samples alert's window

CPU = VMAGENT.name("process_cpu_seconds_total")
CPU_AVAILABLE = VMAGENT.name("process_cpu_cores_available")
RSS = VMAGENT.name("process_resident_memory_bytes")
MEMORY_LIMIT = VMAGENT.name("process_memory_limit_bytes")
THREADS = VMAGENT.name("process_num_threads")
PENDING = VMAGENT.name("vmagent_remotewrite_pending_data_bytes")
QUEUE_PENDING = VMAGENT.name("vm_persistentqueue_bytes_pending")
PACKETS_DROPPED = VMAGENT.name("vmagent_remotewrite_packets_dropped_total")
QUEUE_DROPPED = VMAGENT.name("vm_persistentqueue_bytes_dropped_total")
SCRAPES_FAILED = VMAGENT.name("vm_promscrape_scrapes_failed_total")
SCRAPE_DURATION = VMAGENT.name("scrape_duration_seconds")
SAMPLES_SCRAPED = VMAGENT.name("scrape_samples_scraped")


def collector(profile: Profile) -> Collector:
    """The profile's ``[collector]``; callers check ``profile.collector`` first."""
    if profile.collector is None:
        raise ValueError(f"profile {profile.name!r} has no [collector] section")
    return profile.collector


def own(profile: Profile, metric: str, *, selected: bool = True) -> str:
    """A vmagent self-metric of the deployment's collectors (``$node`` with ``selected``)."""
    return selector(metric, scoped_job(profile, collector(profile).job), node_var(profile) if selected else "")


def per_node(profile: Profile, op: str, expr: str) -> str:
    return agg(op, [profile.label("node")], expr)


def cpu_used_cores(profile: Profile) -> str:
    return per_node(profile, "max", f"rate({own(profile, CPU)}[{RATE_WINDOW}])")


def cpu_available_cores(profile: Profile) -> str:
    return per_node(profile, "max", own(profile, CPU_AVAILABLE))


def rss_bytes(profile: Profile, *, selected: bool = True) -> str:
    return per_node(profile, "max", own(profile, RSS, selected=selected))


def memory_limit_bytes(profile: Profile, *, selected: bool = True) -> str:
    return per_node(profile, "max", own(profile, MEMORY_LIMIT, selected=selected))


def threads(profile: Profile) -> str:
    return per_node(profile, "max", own(profile, THREADS))


def pending_bytes(profile: Profile, *, selected: bool = True) -> str:
    """Remote-write bytes not yet sent, all URLs of the node's vmagent (in memory and on disk)."""
    return per_node(profile, "sum", own(profile, PENDING, selected=selected))


def queue_pending_bytes(profile: Profile) -> str:
    return per_node(profile, "sum", own(profile, QUEUE_PENDING))


def dropped_rate(profile: Profile, metric: str, window: str = RATE_WINDOW, *, selected: bool = True) -> str:
    return per_node(profile, "sum", f"rate({own(profile, metric, selected=selected)}[{window}])")


def scrape_errors_rate(profile: Profile) -> str:
    return per_node(profile, "sum", f"rate({own(profile, SCRAPES_FAILED)}[{RATE_WINDOW}])")


def per_target(profile: Profile, metric: str) -> str:
    """A per-target series the scraper writes itself (``scrape_duration_seconds``...), by node, job and target."""
    keys = [profile.label("node"), profile.label("job"), profile.label("instance")]
    return agg("max", keys, selector(metric, deployment(profile), node_var(profile)))


def newest_up_age(profile: Profile) -> str:
    """Seconds since the newest ``up`` sample per node and job: the age of what the collector last delivered."""
    keys = [profile.label("node"), profile.label("job")]
    return f"time() - {agg('max', keys, 'timestamp(' + selector('up', deployment(profile), node_var(profile)) + ')')}"


def silent_after_seconds(profile: Profile) -> float:
    """A node is silent when its newest sample is older than this: ``SILENT_INTERVALS`` collector scrape
    intervals (at least the store's resolution each) plus the store's latency offset (S24)."""
    interval = max(collector(profile).scrape_interval_seconds, profile.store.resolution_seconds)
    return SILENT_INTERVALS * interval + profile.store.latency_offset_seconds


def silent_nodes(
    profile: Profile, code: int = SILENT, nodes: tuple[str, ...] | None = None, after_seconds: float | None = None
) -> str:
    """The profile's nodes (or ``nodes``) with no sample from any target newer than ``after_seconds``
    (``silent_after_seconds`` by default; the Now row passes its one staleness bound): value ``code``.
    With ``after_seconds`` the samples are looked for over the bound itself, so a bound longer than the store's
    instant look-back still finds them."""
    node = profile.label("node")
    up = selector("up", deployment(profile))
    if after_seconds is None:
        fresh = f"({agg('max', [node], f'timestamp({up})')} > time() - {silent_after_seconds(profile):g})"
    else:  # a sample inside the bound, whatever the store's instant look-back (Prometheus and VictoriaMetrics)
        fresh = agg("max", [node], f"count_over_time({up}[{after_seconds:g}s])")
    listed = (
        expected_nodes(profile, code)
        if nodes is None
        else "("
        + f" or on({node}) ".join(f'label_replace(vector({code}), "{node}", "{name}", "", "")' for name in nodes)
        + ")"
    )
    return f"({listed} unless on({node}) {fresh})"


# --- coverage ------------------------------------------------------------------------------------


def targets_up_by_job(profile: Profile) -> str:
    return agg("count", [profile.label("job")], f"{selector('up', deployment(profile))} == 1")


def expected_by_job(profile: Profile) -> str:
    """The profile's expected target count per job, as constant series ``{job="<job>"} count``: a number of
    the profile, not a value of a metric, so no zero is filled in (S7)."""
    job = profile.label("job")
    terms = [
        f'label_replace(vector({entry.count}), "{job}", "{entry.job}", "", "")' for entry in expected_targets(profile)
    ]
    return "(" + f" or on({job}) ".join(terms) + ")"


def shortfall_by_job(profile: Profile, up: str | None = None) -> str:
    """Expected minus up, per expected job (negative where more are up than expected); a job with no target up
    misses all its targets (its up count reads 0 from the expected job's own row). ``up`` is read once: the
    expected counts are constants. ``up``: the targets up per job to subtract (``targets_up_by_job`` by default;
    the first screen passes its record)."""
    job = profile.label("job")
    expected = expected_by_job(profile)
    up = targets_up_by_job(profile) if up is None else up
    return f"{expected} - on({job}) ({up} or on({job}) ({expected} * 0))"


def missing_by_job(profile: Profile, up: str | None = None) -> str:
    """The jobs missing targets and how many (``shortfall_by_job`` where positive): nothing when none is."""
    return f"({shortfall_by_job(profile, up)}) > 0"


def targets_up_total(profile: Profile) -> str:
    return f"count({selector('up', deployment(profile))} == 1)"


def expected_total_expr(profile: Profile) -> str:
    return f"vector({expected_total(profile)})"


def missing_targets(profile: Profile, window: str = WINDOW) -> str:
    """Each target failing now (``FAILING``) or seen in ``window`` but without a sample now (``GONE``). ``up`` is
    read twice, now and over the window: every target answering now has a row (``FAILING`` or 0) before the
    window's targets are added, so only those without a sample now read ``GONE``; the 0 rows are dropped last."""
    keys = ", ".join((profile.label("node"), profile.label("job"), profile.label("instance")))
    up = selector("up", deployment(profile))
    now = f"(({up} == bool 0) * {FAILING})"
    gone = f"(last_over_time({up}[{window}]) * 0 + {GONE})"
    return f"({now} or on({keys}) {gone}) > 0"


def gpm_valid_share(profile: Profile) -> str:
    """The GPM sampler's share of valid samples per node (``gpm_sample_valid`` is 1 when the validity code is OK)."""
    gpm = profile.source("gpm")
    return per_node(
        profile, "avg", selector(GPM.name("gpm_sample_valid"), scoped_job(profile, gpm.job), node_var(profile))
    )
