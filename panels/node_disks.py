"""The nodes' disks, filesystems, CPU and host memory as node_exporter sees them, for the KV cache and NVMe group
(its panel keys stay ``kv_cache_nvme.*``): the KV cache tier's disks of a text-generation pool, or the scratch
disks of a video-generation pool, which has no KV cache (S25), so they are never called cache disks there. The
devices and the mount point are the profile's ``[disks]`` either way.

S17 is carried by keeping three kinds of number apart: configured limits (from the profile), logical allocation
and real filesystem usage (node_exporter), each on its own panel; a disk sold as 3.84 TB is shown in decimal TB,
its filesystem in binary TiB.
"""

from __future__ import annotations

from typing import Any

from dashgen_queries import node_exporter as ne
from dashgen_queries.promql import divide

from dashgen.deployment.profile import TEXT, Profile
from dashgen.deployment.sizes import format_binary, format_decimal
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, ratio_axis, ref, stat, text, timeseries
from dashgen.render.spec import Evidence, PanelSpec, Target

GROUP = "kv_cache_nvme"  # the group whose rows hold these panels
NO_IO = "an idle disk gives no point, not 0 (S6 'no I/O'): a gap means nothing completed in the interval"


def group_timeseries(
    key: str, title: str, evidence: Evidence, targets: list[Target], unit: str = "short", width: int = 8, **kw: Any
) -> PanelSpec:
    """A timeseries panel of the group, keyed ``kv_cache_nvme.<key>``."""
    return timeseries(
        key=f"{GROUP}.{key}", title=title, evidence=evidence, targets=tuple(targets), unit=unit, width=width, **kw
    )


_ts = group_timeseries


def for_kind(profile: Profile, cache: str, scratch: str) -> str:
    """``cache`` (a deployment with a text-generation pool: its disks are the KV cache tier) or ``scratch``."""
    return cache if profile.has_kind(TEXT) else scratch


def disk_panels(profile: Profile) -> list[PanelSpec]:
    disks = for_kind(profile, "cache disks", "scratch disks")
    mount = profile.disks.cache_mountpoint
    where = f"{disks} = the block device behind {mount} on each selected node (profile disks.cache_mountpoint)"
    legend = "{{node}} {{device}}"

    def ev(metrics: str, quantity: str, limit: str = "") -> Evidence:
        return Evidence(
            f"node_exporter diskstats ({metrics})",
            f"{quantity}; {where}",
            limit or "per device, never added across nodes; rates over $__rate_interval smooth bursts",
            layer=disks[:-1],
        )

    return [
        _ts(
            "disk_bandwidth",
            for_kind(
                profile, "Cache disk read / write bandwidth (bytes/s)", "Scratch disk read / write bandwidth (bytes/s)"
            ),
            ev(
                "node_disk_read_bytes_total, node_disk_written_bytes_total",
                "bytes read and written per second per device, two series each, not added",
            ),
            [
                Target(ne.disk_rate(profile, "node_disk_read_bytes_total"), legend + " read"),
                Target(ne.disk_rate(profile, "node_disk_written_bytes_total"), legend + " write"),
            ],
            "Bps",
        ),
        _ts(
            "disk_iops",
            for_kind(profile, "Cache disk read / write IOPS", "Scratch disk read / write IOPS"),
            ev(
                "node_disk_reads_completed_total, node_disk_writes_completed_total",
                "completed reads and writes per second per device",
            ),
            [
                Target(ne.disk_rate(profile, "node_disk_reads_completed_total"), legend + " read"),
                Target(ne.disk_rate(profile, "node_disk_writes_completed_total"), legend + " write"),
            ],
            "iops",
        ),
        _ts(
            "disk_latency",
            for_kind(
                profile, "Cache disk read / write latency per I/O (s)", "Scratch disk read / write latency per I/O (s)"
            ),
            ev(
                "node_disk_read_time_seconds_total / node_disk_reads_completed_total, write likewise",
                "mean time per completed I/O (await, queueing included) = Δtime / Δops over $__rate_interval",
                NO_IO + "; a mean per interval hides tail latency",
            ),
            [
                Target(
                    ne.disk_latency(profile, "node_disk_read_time_seconds_total", "node_disk_reads_completed_total"),
                    legend + " read",
                ),
                Target(
                    ne.disk_latency(profile, "node_disk_write_time_seconds_total", "node_disk_writes_completed_total"),
                    legend + " write",
                ),
            ],
            "s",
        ),
        _ts(
            "disk_queue",
            for_kind(
                profile,
                "Cache disk average queue depth (I/Os in flight)",
                "Scratch disk average queue depth (I/Os in flight)",
            ),
            ev(
                "node_disk_io_time_weighted_seconds_total",
                "average number of I/Os in flight = rate of the weighted I/O time",
            ),
            [Target(ne.disk_rate(profile, "node_disk_io_time_weighted_seconds_total"), legend)],
            decimals=2,
        ),
        _ts(
            "disk_busy",
            for_kind(
                profile,
                "Cache disk busy (share of time with I/O in flight)",
                "Scratch disk busy (share of time with I/O in flight)",
            ),
            ev(
                "node_disk_io_time_seconds_total",
                "share of wall time the device had at least one I/O in flight, 0-100 % fixed axis",
                "NVMe devices serve many I/Os in parallel: 100 % busy is not saturation, read it with the queue "
                "depth and latency",
            ),
            [Target(ne.disk_rate(profile, "node_disk_io_time_seconds_total"), legend)],
            **ratio_axis("percentunit"),
        ),
    ]


# The cache disks' sizes, configured and measured: reference material, shown by the Reference group (S34).
SIZE_KEYS = frozenset({f"{GROUP}.disk_configured_sizes", f"{GROUP}.cache_fs_size"})


def filesystem_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    mount = profile.disks.cache_mountpoint
    cap = topology.capacity
    fs_where = f"filesystem mounted at {mount} (profile disks.cache_mountpoint), one value per node"
    sizes = [
        ("disk nominal size (vendor, decimal)", cap.disk_nominal),
        ("NVMe bucket limit per node (profile)", cap.nvme_limit_per_node),
        ("NVMe physical allotment per node (profile)", cap.nvme_physical_per_node),
    ]
    configured = [(label, value) for label, value in sizes if value is not None]
    size = ne.filesystem(profile, "node_filesystem_size_bytes", mount)
    avail = ne.filesystem(profile, "node_filesystem_avail_bytes", mount)
    panels: list[PanelSpec] = []
    if configured:
        described = "; ".join(f"{label}: {format_decimal(value)}" for label, value in configured)
        panels.append(
            stat(
                key=f"{GROUP}.disk_configured_sizes",
                title=for_kind(
                    profile,
                    "Cache disk sizes as configured (profile, decimal TB)",
                    "Scratch disk sizes as configured (profile, decimal TB)",
                ),
                evidence=Evidence(
                    "deployment profile (capacity.disk_nominal_size, nvme_* per rank x ranks per node), "
                    "not a measurement",
                    f"sizes as sold and as configured, in decimal units ({described})",
                    "S17: a disk sold as 3.84 TB holds about 3.49 TiB and its filesystem shows about "
                    "3.44 TiB after metadata; the filesystem size is measured on the next panel, in "
                    "binary TiB — the two are different numbers, never one axis maximum",
                ),
                targets=tuple(
                    Target(f"vector({value})", label, instant=True, ref_id=ref(i))
                    for i, (label, value) in enumerate(configured)
                ),
                unit="decbytes",
                width=12,
                height=5,
                text_mode="value_and_name",
            )
        )
    panels += [
        stat(
            key=f"{GROUP}.cache_fs_size",
            title=for_kind(
                profile,
                "Cache filesystem size per node (measured, binary TiB)",
                "Scratch filesystem size per node (measured, binary TiB)",
            ),
            evidence=Evidence(
                "node_exporter filesystem (node_filesystem_size_bytes)",
                f"size of the {fs_where}, binary units (TiB)",
                "smaller than the disk's nominal size (decimal TB, filesystem metadata): see the "
                "configured sizes panel; no value means the mount point is not on this node",
            ),
            targets=(Target(size, "{{node}}", instant=True),),
            unit="bytes",
            width=12,
            height=5,
            decimals=2,
            no_value=NO_DATA_TEXT,
            text_mode="value_and_name",
        ),
        _ts(
            "cache_fs_used",
            for_kind(
                profile,
                "Cache filesystem used per node (size - free, bytes)",
                "Scratch filesystem used per node (size - free, bytes)",
            ),
            Evidence(
                "node_exporter filesystem (node_filesystem_size_bytes - node_filesystem_free_bytes)",
                f"bytes in use on the {fs_where} (real usage, not the NVMe bucket's logical allocation)",
                for_kind(
                    profile,
                    "includes every file on the filesystem, not only KV objects",
                    "includes every file on the filesystem (outputs, caches, temporary files)",
                ),
            ),
            [Target(f"{size} - {ne.filesystem(profile, 'node_filesystem_free_bytes', mount)}", "{{node}}")],
            "bytes",
        ),
        _ts(
            "cache_fs_available",
            for_kind(
                profile, "Cache filesystem available per node (bytes)", "Scratch filesystem available per node (bytes)"
            ),
            Evidence(
                "node_exporter filesystem (node_filesystem_avail_bytes)",
                f"bytes available to non-root users on the {fs_where}",
                "excludes blocks reserved for root, so size - used is larger than this",
            ),
            [Target(avail, "{{node}}")],
            "bytes",
        ),
        _ts(
            "cache_fs_used_share",
            for_kind(
                profile,
                "Cache filesystem not available to the cache process, share per node (1 - avail / size)",
                "Scratch filesystem not available to the engine, share per node (1 - avail / size)",
            ),
            Evidence(
                "node_exporter filesystem (node_filesystem_avail_bytes / node_filesystem_size_bytes)",
                f"share of the {fs_where} not available to the "
                f"{for_kind(profile, 'cache process', 'engine')}, 0-100 % fixed axis",
                "a share of the filesystem size, not of the nominal disk size nor the NVMe bucket limit",
            ),
            [Target(f"1 - {divide(avail, size)}", "{{node}}")],
            **ratio_axis("percentunit"),
        ),
    ]
    return panels


def no_cache_tier_panel(profile: Profile) -> PanelSpec:
    """A deployment without a KV cache disk tier (or, for a video pool, without a scratch disk in its profile): one
    line instead of disk panels on the OS or model disks."""
    if profile.has_kind(TEXT):
        return text(
            f"{GROUP}.cache_disks_not_deployed",
            "Cache disks: not deployed",
            f"**Cache disks** are not shown for this deployment ({profile.name}): it has no KV cache disk "
            "tier (`[disks] cache_mountpoint` is not set in its profile). The node's other disks (system, "
            "model) are not cache disks and are not drawn as such.",
            width=24,
            height=3,
        )
    return text(
        f"{GROUP}.cache_disks_not_deployed",
        "Scratch disks: not named",
        f"**Scratch disks** are not shown for this deployment ({profile.name}): its profile names none "
        "(`[disks] cache_mountpoint`). The model disk is on the node health "
        "panels.",
        width=24,
        height=3,
    )


def host_panels(profile: Profile, topology: Topology) -> list[PanelSpec]:
    host_note = ""
    if topology.capacity.host_per_node:
        host_note = (
            f" HiCache pins {format_binary(topology.capacity.host_per_node)} of host memory per node "
            "(profile), so a low MemAvailable is expected with the host tier on"
        )
    model = profile.disks.model_mountpoint
    total = ne.memory(profile, "node_memory_MemTotal_bytes")
    available = ne.memory(profile, "node_memory_MemAvailable_bytes")
    return [
        _ts(
            "cpu_busy",
            "CPU busy per node (1 - idle)",
            Evidence(
                'node_exporter cpu (node_cpu_seconds_total{mode="idle"})',
                "share of CPU time not idle, averaged over the node's CPUs, 0-100 % fixed axis",
                "a node average: one saturated core (e.g. a tokenizer or scheduler process) barely shows",
            ),
            [Target(f"1 - {ne.cpu_mode_share(profile, 'idle')}", "{{node}}")],
            **ratio_axis("percentunit"),
        ),
        _ts(
            "cpu_iowait",
            "CPU iowait per node",
            Evidence(
                'node_exporter cpu (node_cpu_seconds_total{mode="iowait"})',
                "share of CPU time idle while waiting for I/O, averaged over the node's CPUs, 0-100 % fixed "
                "axis (rises when disk reads stall the host)",
                "iowait is idle time, not work; it is not a disk metric",
            ),
            [Target(ne.cpu_mode_share(profile, "iowait"), "{{node}}")],
            **ratio_axis("percentunit"),
        ),
        _ts(
            "host_memory_used_share",
            "Host RAM in use per node (1 - MemAvailable / MemTotal)",
            Evidence(
                "node_exporter meminfo collector (node_memory_MemAvailable_bytes, node_memory_MemTotal_bytes; "
                "standard node_exporter metrics, not listed in the metric catalogue tables)",
                "share of host RAM not available for new allocations, 0-100 % fixed axis." + host_note,
                "MemAvailable is the kernel's estimate (page cache counted as reclaimable)",
            ),
            [Target(f"1 - {divide(available, total)}", "{{node}}")],
            **ratio_axis("percentunit"),
        ),
        _ts(
            "host_memory_available",
            "Host RAM available per node (bytes)",
            Evidence(
                "node_exporter meminfo collector (node_memory_MemAvailable_bytes)",
                "bytes of host RAM available for new allocations without swapping",
                "the kernel's estimate; MemTotal is on the share panel's denominator",
            ),
            [Target(available, "{{node}}")],
            "bytes",
        ),
        _ts(
            "model_disk_io",
            "Model disk read / write bandwidth per node (bytes/s)",
            Evidence(
                "node_exporter diskstats (node_disk_read_bytes_total, node_disk_written_bytes_total) of the block "
                f"device behind {model} (profile disks.model_mountpoint), found by its filesystem's device",
                "bytes read and written per second per node: a replica loading its weights reads here (a slow "
                "model disk shows here as a long load, not on the panels of the data disk)",
                NO_IO,
                layer="model disk",
            ),
            [
                Target(ne.disk_rate(profile, "node_disk_read_bytes_total", model), "{{node}} {{device}} read"),
                Target(ne.disk_rate(profile, "node_disk_written_bytes_total", model), "{{node}} {{device}} write"),
            ],
            "Bps",
        ),
        _ts(
            "model_disk_free",
            "Model disk available per node (bytes)",
            Evidence(
                "node_exporter filesystem (node_filesystem_avail_bytes)",
                f"bytes available to non-root users on the filesystem at {model} (profile disks.model_mountpoint)",
                "no value means nothing is mounted there on that node",
            ),
            [Target(ne.filesystem(profile, "node_filesystem_avail_bytes", model), "{{node}}")],
            "bytes",
        ),
        *clock_panels(profile),
    ]


def clock_panels(profile: Profile) -> list[PanelSpec]:
    """The node's clock two ways (S32): the kernel's offset from its time source, and the age of the newest sample
    the node's collector delivered, measured with the store's clock (a clock off skews both)."""
    return [
        _ts(
            "clock_offset",
            "Clock offset per node (node_timex_offset_seconds)",
            Evidence(
                f"node_exporter timex collector ({ne.TIMEX_OFFSET})",
                "the node's clock offset from its NTP / PTP source as the kernel estimates it, seconds, signed",
                "the kernel's estimate against the node's own time source: a node synced to a wrong source "
                "reads near 0 here while its samples' age (beside) is off; no value: the timex collector is "
                "off (node_exporter --no-collector.timex)",
            ),
            [Target(ne.clock_offset(profile), "{{node}}")],
            "s",
        ),
        _ts(
            "newest_sample_age",
            "Newest sample age per node (store clock − newest up sample)",
            Evidence(
                "the scraper's up series of every job of the node (stamped with the node's clock by its "
                "collector) and the store's clock (time())",
                "seconds between the store's clock and the newest up sample of the node: a few scrape intervals "
                "when all is well",
                "negative: the node's clock runs ahead of the store's; growing: it runs behind, or the "
                "collector stopped sending (the Now row's Collector column tells them apart)",
            ),
            [Target(ne.newest_sample_age(profile), "{{node}}")],
            "s",
        ),
    ]
