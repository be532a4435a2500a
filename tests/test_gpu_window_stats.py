"""Per-GPU window statistics and the clock-event panel, run against a real VictoriaMetrics with
hand-made series, the table's recorded statistics written by the real evaluator (vmalert -replay of the
gpu-window group): GPM validity (an invalid sample with a garbage value is no window peak or mean),
series split by exporter labels (Kubernetes pod) counted once per GPU (S2), the bits of a combined
clock-event reason mask each drawn and coloured, and descriptions that name the real source (S18). The
table reads each GPU's series few enough times to stay within ``dashgen cost``'s budget at 1,024 GPUs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from dashgen_panels import gpu_timelines, gpu_window_stats
from dashgen_queries import dcgm, gpu_window
from dashgen_queries.gpu import CLOCK_EVENT_BITS, THROTTLE_BITS, gpu_source
from group_checks import PROFILE_NAMES, PROFILES, group_panels

from dashgen.demo import recorder
from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.lint.promql import expand_variables
from dashgen.live.datasource import Datasource
from dashgen.live.selectors import metric_names

BIT_OF = {name: bit for bit, name in CLOCK_EVENT_BITS}

WINDOW = 600  # seconds
BAD = 40  # seconds of invalid GPM samples
NODE = "wstat-node"


def _end() -> int:
    # 12 h before the demo imports (tests/victoriametrics.py IMPORTS): no demo query sees these series
    import time

    return int(time.time() // 3600) * 3600 - 12 * 3600


# The deployment (S21) whose queries read these hand-made series: GPM ones long-context-64's, DCGM ones h20-16's.
DEPLOYMENT_OF_JOB = {"gpm": "long-context-64", "dcgm": "h20-16", "dcgm-duplicate": "h20-16"}


def _series(metric: str, labels: dict, points: list[tuple[int, float]]) -> dict:
    cluster = DEPLOYMENT_OF_JOB[labels["job"]]
    return {
        "metric": {"__name__": metric, "node": NODE, "gpu": "0", "cluster": cluster, **labels},
        "values": [v for _, v in points],
        "timestamps": [t * 1000 for t, _ in points],
    }


def _substitute(expr: str) -> str:
    # $__interval: Grafana's for a 600 s window is its Min step (600 s / max data points is shorter): 1 s here,
    # the hand-made series' spacing, so the window subquery sees every sample
    return (
        expr.replace("$node", NODE)
        .replace("$gpu", ".+")
        .replace("$__range", f"{WINDOW}s")
        .replace("$__rate_interval", "60s")
        .replace("$__interval", "1s")
    )


def _value(ds: Datasource, expr: str, at: int) -> float:
    (item,) = ds.query(_substitute(expr), at).result
    return float(item["value"][1])


def _record(url: str, ds: Datasource, profile: Profile, end: int) -> None:
    """The profile's gpu-window rules evaluated over the window, as a vmalert beside the store writes them (the
    evaluation at ``end`` included)."""
    recorder.replay(url, [profile], end - WINDOW, end + 60, groups=(recorder.GPU_WINDOW,))
    ds.flush()


def _table(profile_name: str):
    profile = PROFILES[profile_name]
    source = gpu_source(profile)
    return gpu_window_stats.window_table(profile, Topology(profile), source), source


def _expr(table, header: str) -> str:
    """The query of the column titled ``header`` (the table merges its instant queries by refId)."""
    renames = table.transformations[1]["options"]["renameByName"]
    (ref_id,) = [name.removeprefix("Value #") for name, title in renames.items() if title == header]
    return next(target.expr for target in table.targets if target.ref_id == ref_id)


@pytest.fixture(scope="module")
def gpm_split(victoriametrics):
    """One GPM GPU (1 s samples) whose series split at mid-window (pod label), with invalid 9999 W samples for
    ``BAD`` seconds: longer than the stored sample interval the rules step at, so they are read and must be
    dropped."""
    end = _end()
    start = end - WINDOW + 1
    half = start + WINDOW // 2
    bad = range(start + 400, start + 400 + BAD)
    series = []
    for pod, first, last in (("a", start, half), ("b", half, end + 1)):
        labels = {"job": "gpm", "uuid": "GPU-x", "pod": pod}
        times = range(first, last)
        series.append(_series("gpm_power_watts", labels, [(t, 9999.0 if t in bad else 100.0) for t in times]))
        series.append(_series("gpm_sample_valid", labels, [(t, 0.0 if t in bad else 1.0) for t in times]))
    ds = Datasource(victoriametrics.url)
    ds.import_series(series)
    ds.flush()
    _record(victoriametrics.url, ds, PROFILES["long-context-64"], end)
    return ds, end


@pytest.fixture(scope="module")
def dcgm_split(victoriametrics):
    """One DCGM GPU (30 s samples) whose series split at mid-window: 100 W under pod a, 200 W under pod b."""
    end = _end() - 3600
    times = list(range(end - WINDOW + 30, end + 1, 30))
    half = len(times) // 2
    series = [
        _series(
            "DCGM_FI_DEV_POWER_USAGE", {"job": "dcgm", "UUID": "GPU-y", "pod": "a"}, [(t, 100.0) for t in times[:half]]
        ),
        _series(
            "DCGM_FI_DEV_POWER_USAGE", {"job": "dcgm", "UUID": "GPU-y", "pod": "b"}, [(t, 200.0) for t in times[half:]]
        ),
        _series("DCGM_FI_DEV_POWER_USAGE", {"job": "dcgm-duplicate", "UUID": "GPU-y"}, [(t, 5000.0) for t in times]),
    ]
    ds = Datasource(victoriametrics.url)
    ds.import_series(series)
    ds.flush()
    _record(victoriametrics.url, ds, PROFILES["h20-16"], end)
    return ds, end, len(times)


def test_s19_invalid_gpm_samples_are_no_peak_or_mean_and_their_share_is_shown(gpm_split):
    ds, end = gpm_split
    table, source = _table("long-context-64")
    power = gpu_window_stats.column_title
    assert _value(ds, _expr(table, power(source, "power", "peak")), end) == 100.0  # 9999 W invalid: not the peak
    assert _value(ds, _expr(table, power(source, "power", "mean")), end) == pytest.approx(100.0)
    assert _value(ds, _expr(table, gpu_window_stats.samples_title(source)), end) == WINDOW  # every sample, both pods
    assert _value(ds, _expr(table, gpu_window_stats.valid_title(source)), end) == pytest.approx(
        100 * (WINDOW - BAD) / WINDOW
    )
    assert "excluded from the mean and the peak" in table.evidence.limit


def test_s2_dcgm_series_split_by_pod_counts_once_and_keeps_one_exact_mean(dcgm_split):
    ds, end, samples = dcgm_split
    table, source = _table("h20-16")
    count = len(gpu_window_stats.columns(source))
    power = gpu_window_stats.column_title
    assert source.key == "dcgm"
    assert _value(ds, _expr(table, power(source, "power", "mean")), end) == pytest.approx(150.0)  # not 200
    assert _value(ds, _expr(table, power(source, "power", "peak")), end) == 200.0  # no other job's 5000 W (#23)
    assert _value(ds, _expr(table, gpu_window_stats.samples_title(source)), end) == samples
    heat = sum(1 for key, _, _ in gpu_window_stats.HEAT_COLUMNS if source.collects(key))
    assert not source.collects("clock_event_reasons")  # h20-16's DCGM runs the default field list: no mask
    # mean and peak per quantity, temperature and clock, last Xid, samples (with the UUID): no validity column
    assert len(table.targets) == 2 * count + heat + 1 + 1
    assert "split by Kubernetes pod labels" in table.evidence.notes  # the tooltip points there


HOT_NODE = "wstat-hot"


def _collecting_the_mask(h20: Profile) -> Profile:
    """h20-16 with DCGM collecting the clock-event reason mask (not in its default field list)."""
    fields = (*dcgm.fields(h20), "DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    return replace(h20, sources={**h20.sources, "dcgm": replace(h20.source("dcgm"), fields=fields)})


@pytest.fixture(scope="module")
def dcgm_thermal(victoriametrics):
    """Two DCGM GPUs (30 s samples) of one node: GPU 0 cool and unthrottled; GPU 1 heats to 91 °C, its SM clock
    drops from 1980 to 1200 MHz and its thermal bit (hw_thermal, with sw_power_cap in the same mask) is set in
    the second half of the window, and it reported Xid 79."""
    end = _end() - 7200
    times = list(range(end - WINDOW + 30, end + 1, 30))
    half = len(times) // 2
    hot = [t >= times[half] for t in times]

    def gpu(index: str, metric: str, values: list[float]) -> dict:
        return {
            "metric": {
                "__name__": metric,
                "node": HOT_NODE,
                "gpu": index,
                "cluster": "h20-16",
                "job": "dcgm",
                "UUID": f"GPU-hot-{index}",
            },
            "values": values,
            "timestamps": [t * 1000 for t in times],
        }

    series = [
        gpu("0", "DCGM_FI_DEV_GPU_TEMP", [60.0] * len(times)),
        gpu("0", "DCGM_FI_DEV_SM_CLOCK", [1980.0] * len(times)),
        gpu("0", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", [0.0] * len(times)),
        gpu("0", "DCGM_FI_DEV_XID_ERRORS", [0.0] * len(times)),
        gpu("1", "DCGM_FI_DEV_GPU_TEMP", [91.0 if h else 70.0 for h in hot]),
        gpu("1", "DCGM_FI_DEV_SM_CLOCK", [1200.0 if h else 1980.0 for h in hot]),
        gpu("1", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", [float(0x40 | 0x4) if h else 0.0 for h in hot]),
        gpu("1", "DCGM_FI_DEV_XID_ERRORS", [79.0 if h else 0.0 for h in hot]),
    ]
    ds = Datasource(victoriametrics.url)
    ds.import_series(series)
    ds.flush()
    _record(victoriametrics.url, ds, _collecting_the_mask(PROFILES["h20-16"]), end)
    return ds, end, half / len(times)


def test_s34_the_hot_gpu_of_a_thermal_event_is_found_in_the_window_table(dcgm_thermal):
    """Temperature (mean, peak), SM clock (mean, low), thermal / power throttle share and the last Xid are
    columns of the per-GPU table: the hot, throttled GPU stands out from its cool neighbour on the same rows."""
    ds, end, cool_share = dcgm_thermal
    profile = _collecting_the_mask(PROFILES["h20-16"])
    source = gpu_source(profile)
    table = gpu_window_stats.window_table(profile, Topology(profile), source)
    title = gpu_window_stats.column_title

    def per_gpu(header: str) -> dict[str, float]:
        expr = _substitute(_expr(table, header)).replace(NODE, HOT_NODE)
        return {item["metric"]["gpu"]: float(item["value"][1]) for item in ds.query(expr, end).result}

    assert per_gpu(title(source, "temperature", "peak")) == {"0": 60.0, "1": 91.0}
    mean = per_gpu(title(source, "temperature", "mean"))
    assert mean["0"] == 60.0 and mean["1"] == pytest.approx(70 * cool_share + 91 * (1 - cool_share))
    assert per_gpu(title(source, "sm_clock", "low")) == {"0": 1980.0, "1": 1200.0}  # MHz, as the header says
    assert per_gpu(title(source, "sm_clock", "mean"))["1"] < 1980.0
    caption = source.title_caption()
    thermal = per_gpu(f"{gpu_window_stats.THROTTLE_COLUMNS[0][0]} · {caption}")
    power = per_gpu(f"{gpu_window_stats.THROTTLE_COLUMNS[1][0]} · {caption}")
    assert thermal["0"] == 0.0 and power["0"] == 0.0
    assert thermal["1"] == pytest.approx(100 * (1 - cool_share), abs=6)  # the hot half of the window
    assert power["1"] == pytest.approx(thermal["1"])  # sw_power_cap rode in the same mask
    assert per_gpu(gpu_window_stats.XID_HEADER) == {"0": 0.0, "1": 79.0}


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s18_table_descriptions_name_the_real_source_and_the_percent_scale(name: str) -> None:
    table, source = _table(name)
    text = table.description
    ratios = [k for k in ("sm_active", "dram_active", "busy") if source.collects(k)]
    assert text.count("the metric is 0-1, the column shows it x100 in %") == len(ratios)
    if source.key == "gpm":  # only the last-Xid column is DCGM's, and says so
        assert text.count(gpu_window_stats.xid_text()) == 1
        text = text.replace(gpu_window_stats.xid_text(), "")
        assert "DCGM" not in text and "converted" not in text
    else:
        assert "GPM SM_ACTIVE" not in text and "sample rings" not in text and "no GPM sampler here" in text
        assert "collects every 30s by default" in text and "DCGM 30s" in table.title
        assert "DCGM reports MiB; converted to GiB" in text


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s28_one_row_per_gpu_holds_its_mean_and_peak_side_by_side_with_uuid_and_placement(name: str) -> None:
    table, source = _table(name)
    profile = PROFILES[name]
    headers = list(table.transformations[1]["options"]["renameByName"].values())
    assert headers[:3] == ["Node", "GPU", "UUID"]
    for key in gpu_window_stats.columns(source):
        mean = headers.index(gpu_window_stats.column_title(source, key, "mean"))
        assert headers[mean + 1] == gpu_window_stats.column_title(source, key, "peak")
    assert table.options["sortBy"][0]["displayName"] == gpu_window_stats.column_title(source, "power", "peak")
    shown = table.mappings[0]["options"]
    assert set(shown) == set(profile.node_names)
    if profile.has_pp:
        assert all(" PP " in entry["text"] for entry in shown.values())


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s18_timeline_descriptions_name_the_real_source(name: str) -> None:
    source = gpu_source(PROFILES[name])
    # the text panels say a quantity is not collected (S22): checked in test_gpu_timelines
    timelines = [panel for panel in group_panels(name, gpu_timelines.TITLE) if panel["type"] != "text"]
    assert len(timelines) >= 8, f"{name}: one timeline per collected quantity"
    for panel in timelines:
        text = panel.get("description", "")
        if source.key == "gpm":
            assert "DCGM reports" not in text and "converted" not in text, panel["title"]
        else:
            assert "GPM SM_ACTIVE" not in text and "sample rings" not in text, panel["title"]
            assert "whatever the scrape interval" in text, panel["title"]


def test_each_power_and_thermal_bit_of_a_combined_mask_is_its_own_coloured_row(victoriametrics):
    profile = PROFILES["long-context-64"]
    source = gpu_source(profile)
    panel = gpu_timelines.clock_events_panel(profile, source)
    end = _end() - 2 * 3600
    masks = {end - 40: 12, end - 30: 36, end - 20: 5, end - 10: 1, end: 0xEC}
    ds = Datasource(victoriametrics.url)
    ds.import_series([_series("gpm_clock_event_reasons", {"job": "gpm", "uuid": "GPU-z"}, sorted(masks.items()))])
    ds.flush()
    (mapping,) = panel.mappings
    options = mapping["options"]
    assert options["0"]["color"] == "green"
    assert len(panel.targets) == len(THROTTLE_BITS)
    for at, mask in masks.items():
        for target in panel.targets:
            (item,) = ds.query(_substitute(target.expr), at).result
            value = int(float(item["value"][1]))
            bit = BIT_OF[item["metric"]["reason"]]
            assert value == (bit if mask & bit else 0), f"mask {mask}, bit {bit}"
            assert item["metric"]["reason"] == options[str(bit)]["text"]
            assert "{{reason}}" in target.legend and "{{gpu}}" in target.legend
            if value:
                assert options[str(value)]["color"] in ("red", "orange")
    assert {BIT_OF[options[str(bit)]["text"]] for bit in THROTTLE_BITS} == set(THROTTLE_BITS)
    for benign in (0x1, 0x2, 0x10, 0x100):
        assert str(benign) not in options


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_s19_window_columns_read_one_recorded_series_each_and_the_rules_see_every_stored_sample(name: str) -> None:
    """Issue 42: each statistic column combines one recorded series over the window (no subquery, so no cost
    that grows with the range's steps), every recorded statistic is read by a column, and the rules step at the
    stored sample interval over one rule interval, so they see every stored sample."""
    profile = PROFILES[name]
    table, source = _table(name)
    records = {statistic.record: statistic for statistic in gpu_window.window_records(profile, source)}
    read = []
    for target in table.targets:
        names = metric_names(expand_variables(target.expr, {}))
        recorded = [n for n in names if gpu_window.is_window_record(n)]
        if recorded:
            assert names == recorded and len(recorded) == 1, target.expr
            assert "[$__range]" in target.expr and ":$__interval" not in target.expr, target.expr
            combine = records[recorded[0]].combine
            assert f"{combine}_over_time({recorded[0]}{{" in target.expr
            read += recorded
    assert sorted(read) == sorted(records)
    interval = f"{gpu_window.INTERVAL_SECONDS:g}s"
    for statistic in records.values():
        assert "$" not in statistic.rule  # a rule has no dashboard variable
        subquery = f"[{interval}:{source.sample_interval}])"
        assert subquery in statistic.rule or f"[{interval}]" in statistic.rule, statistic.rule
    assert "every stored sample at the stored interval" in table.evidence.notes or source.validity_metric is None


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_the_table_reads_each_gpus_series_within_the_panel_budget_at_1024_gpus(name: str) -> None:
    """Issue 42: every selector of the table matches one series per GPU (a recorded statistic, the samples count, the
    last Xid), so at 1,024 GPUs it fetches selectors x 1,024 series; that must stay within the profile's
    ``cost_panel_series`` (reading the quantity and the validity series per column, it fetched 36,864)."""
    import promql_parser as pp

    from dashgen.lint.promql import walk

    profile = PROFILES[name]
    table, _source = _table(name)
    selectors = 0
    for target in table.targets:
        tree = pp.parse(expand_variables(target.expr, {}))
        selectors += sum(1 for node, _ in walk(tree) if isinstance(node, pp.VectorSelector))
    assert selectors * 1024 <= profile.dashboard.cost_panel_series, f"{name}: {selectors} reads per GPU"


def test_s31_the_per_gpu_throttle_columns_count_the_bits_the_health_matrix_and_alerts_count():
    """One thermal / power / HW slowdown split (queries.gpu): the per-GPU power column counts HW slowdown (0x8) beside
    the power cap and brake (its own alert and matrix state), and every throttle bit is in exactly one column."""
    from dashgen_queries.gpu import HW_SLOWDOWN_BITS, POWER_BITS, THERMAL_BITS

    columns = dict(gpu_window_stats.THROTTLE_COLUMNS)
    assert list(columns.values()) == [THERMAL_BITS, POWER_BITS + HW_SLOWDOWN_BITS]
    counted = [bit for bits in columns.values() for bit in bits]
    assert sorted(counted) == sorted(THROTTLE_BITS) and len(counted) == 5


def test_throttle_columns_read_the_mask_once_per_run_of_adjacent_bits_and_test_the_same_bits():
    """Issue 42: a run of adjacent bits is tested with one read of the mask (``floor(x / low) % 2 ** n``); for every
    8-bit mask the runs say "set" exactly when one of the column's bits is set."""
    from dashgen_queries.gpu import HW_SLOWDOWN_BITS, POWER_BITS, THERMAL_BITS

    assert gpu_window.bit_runs(THERMAL_BITS) == [(0x20, 2)]
    assert gpu_window.bit_runs(POWER_BITS) == [(0x4, 1), (0x80, 1)]
    assert gpu_window.bit_runs(POWER_BITS + HW_SLOWDOWN_BITS) == [(0x4, 2), (0x80, 1)]
    for bits in (THERMAL_BITS, POWER_BITS, POWER_BITS + HW_SLOWDOWN_BITS, (0x1, 0x4, 0x8, 0x10, 0x40), (0x2,)):
        runs = gpu_window.bit_runs(bits)
        for mask in range(512):
            assert any((mask // low) % 2**width for low, width in runs) == any(mask & bit for bit in bits), (bits, mask)
    table, source = _table("h20-16")
    for what, bits in gpu_window.THROTTLES:
        expr = gpu_window.throttle_statistic(PROFILES["h20-16"], source, what, bits).rule
        assert expr.count("floor(") == len(gpu_window.bit_runs(bits)) < len(bits), what
