"""The collector's alerts (S23): near its memory limit, near its send-queue bound, dropping data, silent
(down, or cut off), and the deployment's target coverage below the profile's expected count.

A dead vmagent is a collector fact: with ``Restart=no`` it stays dead and every series of its node stops
at once, so the per-source ``*TargetMissing`` alerts fire for each target and blame them. ``CollectorSilent``
names the cause: no target of the node delivered a fresh sample. Memory and queue read the profile's bounds
(``[collector]``) and, for memory, the limit vmagent itself reports (the lower of the two counts).
Written only for profiles with a ``[collector]`` section; the coverage alert for every profile.
"""

from __future__ import annotations

from dashgen_queries import vmagent as va

from dashgen.deployment.profile import Profile
from dashgen.deployment.targets import expected_targets
from dashgen.rules.model import AlertRule

NODES_PER_RULE = 25  # as the target-missing alerts: one readable `or` chain of the node list per rule
# The send-queue and dropping alerts read the node's own vmagent series, which reach the store gappy exactly when
# those alerts matter (a full queue drops two samples in three): they look back over this window, so one sample
# in it is enough, and the queue alert's `for` is shorter than the window.
GAPPY_HOLD = "15m"
QUEUE_FOR = "5m"


def _node(profile: Profile) -> str:
    return f"{{{{ $labels.{profile.label('node')} }}}}"


def memory_alert(profile: Profile) -> AlertRule:
    limit = va.collector(profile).memory_limit_bytes
    node = profile.label("node")
    # The peak over GAPPY_HOLD, as the queue alert: a node near its memory limit is also one whose own samples
    # may arrive gappy (a backed-up send queue holds data in memory).
    rss = va.per_node(profile, "max", f"max_over_time({va.own(profile, va.RSS, selected=False)}[{GAPPY_HOLD}])")
    own_limit = va.per_node(
        profile, "max", f"last_over_time({va.own(profile, va.MEMORY_LIMIT, selected=False)}[{GAPPY_HOLD}])"
    )
    share = va.MEMORY_NEAR_SHARE
    expr = f"({rss} / on({node}) ({own_limit} > 0) > {share:g}) or on({node}) ({rss} / {limit} > {share:g})"
    return AlertRule(
        alert="CollectorMemoryNearLimit",
        expr=expr,
        for_="5m",
        severity="warning",
        summary=f"vmagent near its memory limit on {_node(profile)}",
        description=(
            f"Node {_node(profile)}: vmagent's resident memory is above {share:.0%} of its limit (the "
            f"limit vmagent reports, process_memory_limit_bytes, or the profile's [collector] memory_limit "
            f"{limit} bytes, whichever is lower; the peak within {GAPPY_HOLD}) for 5m: value "
            "{{ $value | humanizePercentage }}. With "
            "swap 0 the next step is an OOM kill, and with Restart=no the collector then stays dead and "
            "the node turns silent. Look for new series (Samples scraped per target) or a backed-up send "
            "queue."
        ),
        anchor="collectormemorynearlimit",
    )


def queue_alert(profile: Profile) -> AlertRule:
    """The queue's peak per series over ``GAPPY_HOLD``, summed per node: a node whose own samples reach the store
    gappy (its send queue is the thing that is full) still holds the condition at every evaluation."""
    bound = va.collector(profile).send_queue_limit_bytes
    share = va.QUEUE_NEAR_SHARE
    peak = va.per_node(profile, "sum", f"max_over_time({va.own(profile, va.PENDING, selected=False)}[{GAPPY_HOLD}])")
    return AlertRule(
        alert="CollectorSendQueueNearBound",
        expr=f"{peak} > {share:g} * {bound}",
        for_=QUEUE_FOR,
        severity="warning",
        summary=f"vmagent send queue near its bound on {_node(profile)}",
        description=(
            f"Node {_node(profile)}: {{{{ $value | humanize1024 }}}}B wait to be remote-written (the peak "
            f"within {GAPPY_HOLD}), above {share:.0%} of the profile's [collector] send_queue_limit "
            f"({bound} bytes, -remoteWrite.maxDiskUsagePerURL), held for {QUEUE_FOR}. The central store is "
            "slow or unreachable from this node; at the bound vmagent drops the oldest data for good "
            "(CollectorDroppingSamples). The node's own samples arrive gappy then, so the alert reads the "
            f"peak over {GAPPY_HOLD}, not the last sample."
        ),
        anchor="collectorsendqueuenearbound",
    )


def dropping_alert(profile: Profile) -> AlertRule:
    """Drops within ``GAPPY_HOLD``: a rate needs two samples of the counter in its window, and a dropping node's own
    samples are the ones that go missing."""
    node = profile.label("node")
    window = GAPPY_HOLD
    packets = va.dropped_rate(profile, va.PACKETS_DROPPED, window, selected=False)
    queue = va.dropped_rate(profile, va.QUEUE_DROPPED, window, selected=False)
    return AlertRule(
        alert="CollectorDroppingSamples",
        expr=f"({packets} > 0) or on({node}) ({queue} > 0)",
        for_="0m",
        severity="warning",
        summary=f"vmagent dropping data on {_node(profile)}",
        description=(
            f"Node {_node(profile)}: vmagent dropped remote-write blocks "
            f"({va.PACKETS_DROPPED}) or persistent-queue bytes ({va.QUEUE_DROPPED}) within the last "
            f"{window}. The data is lost for good: this node's panels have gaps for that time, which read "
            "'insufficient samples', not a fault of the targets."
        ),
        anchor="collectordroppingsamples",
    )


def silent_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    after = va.silent_after_seconds(profile)
    nodes = profile.node_names
    return tuple(
        AlertRule(
            alert="CollectorSilent",
            expr=va.silent_nodes(profile, 1, nodes[start : start + NODES_PER_RULE]),
            for_="2m",
            severity="critical",
            summary=f"No fresh sample from any target of {_node(profile)}: its collector is down or cut off",
            description=(
                f"Node {_node(profile)}: the profile lists this node, but no target of it (vmagent's own "
                f"job {va.collector(profile).job} included) delivered a sample for more than {after:g} s, for 2m. "
                "The node's vmagent is dead (Restart=no: it stays dead until restarted by hand), the node is "
                "down, or its path to the store is cut. The per-source TargetMissing alerts of this node "
                "follow from this one; every layer of the node reads 'collector silent' on the Now row."
            ),
            anchor="collectorsilent",
        )
        for start in range(0, len(nodes), NODES_PER_RULE)
    )


def coverage_alert(profile: Profile) -> AlertRule:
    job = profile.label("job")
    expected = ", ".join(f"{entry.job} {entry.count}" for entry in expected_targets(profile))
    return AlertRule(
        alert="TargetCoverageBelowExpected",
        expr=va.missing_by_job(profile),
        for_="5m",
        severity="warning",
        summary=f"{{{{ $value }}}} scrape targets of job {{{{ $labels.{job} }}}} missing or failing",
        description=(
            f"Cluster-wide, job {{{{ $labels.{job} }}}}: {{{{ $value }}}} fewer targets are up than the "
            f"profile expects, for 5m (expected per job: {expected}; dashgen.deployment.targets). The "
            "Now row's Missing targets lists which; a whole node gone is CollectorSilent."
        ),
        anchor="targetcoveragebelowexpected",
    )


def collector_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    alerts: list[AlertRule] = []
    if profile.collector is not None:
        alerts += [memory_alert(profile), queue_alert(profile), dropping_alert(profile), *silent_alerts(profile)]
    alerts.append(coverage_alert(profile))
    return tuple(alerts)
