"""The Prometheus demo's OpenMetrics text and blocks (``tests/prometheus.py``): the text is the per-sample
definition's byte for byte, and the blocks are built once per test run, shared by the query tests and the rule tests
and, under xdist, by every worker."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import prometheus
import pytest
from prometheus import Backfill, DemoBlocks, demo_blocks, keyed_series, metric_kinds, window_end, write_openmetrics
from xdist_scheduling import GROUPS_ENV

from dashgen.demo.run import demo_models, demo_plan
from dashgen.demo.series import generate
from dashgen.deployment.profile import load_profiles


def _per_sample(series: list[dict], kinds: dict[str, tuple[str, str]]) -> bytes:
    """The OpenMetrics text as the demo wrote it before: one formatted line per sample (the series in the writer's
    order: only how a sample's line is made changed)."""
    out, current = [], None
    for family, name, text, kind, values, stamps in keyed_series(series, kinds):
        if family != current:
            current = family
            out.append(f"# TYPE {family} {kind}\n")
        prefix = f"{name}{{{text}}} " if text else f"{name} "
        out.append(
            "".join(
                f"{prefix}{prometheus._value(v)} {prometheus._seconds(ms)}\n"
                for v, ms in zip(values, stamps, strict=True)
            )
        )
    out.append("# EOF\n")
    return "".join(out).encode()


def test_openmetrics_text_is_the_per_sample_definition_byte_for_byte(tmp_path: Path) -> None:
    (profile,) = load_profiles(["h20-16"])  # every kind of series the demo writes, in a second
    models, _ = demo_models(profile)
    series = list(generate(demo_plan(profile, "healthy", window_end(0), 5 / 60), models))
    odd = [  # what the demo's series do not hold: non-finite and integer values, part seconds, quotes, no samples
        {
            "metric": {"__name__": "odd_gauge", "a": 'x"y\\z\n'},
            "values": [math.nan, 1, -math.inf],
            "timestamps": [1, 1500, 2000],
        },
        {
            "metric": {"__name__": "odd_gauge", "a": "b"},
            "values": [math.inf, True, 2.5],
            "timestamps": [3000, 4000, 5001],
        },
        {"metric": {"__name__": "odd_empty"}, "values": [], "timestamps": []},
        {"metric": {"__name__": "odd_bare"}, "values": [0.1, 7], "timestamps": [6000, 7000]},
    ]
    kinds = metric_kinds(m for m, _ in models)
    written = write_openmetrics([*series, *odd], kinds, tmp_path / "demo.om")
    got = (tmp_path / "demo.om").read_bytes()
    want = _per_sample([*series, *odd], kinds)
    assert len(series) > 500
    assert written.samples == sum(len(item["timestamps"]) for item in [*series, *odd])
    assert hashlib.sha256(got).hexdigest() == hashlib.sha256(want).hexdigest()
    with pytest.raises(ValueError, match="odd_short"):
        write_openmetrics(
            [{"metric": {"__name__": "odd_short"}, "values": [1.0], "timestamps": [1000, 2000]}], kinds, tmp_path / "x"
        )


def _fake_build(calls: list[Path]):
    def build(promtool: str, backfills: dict[str, Backfill], folder: Path) -> DemoBlocks:
        calls.append(folder)
        (folder / "data" / "01BLOCK").mkdir(parents=True)
        ends = {name: window_end(spec.slot) for name, spec in backfills.items()}
        return DemoBlocks(folder / "data", ends, {name: frozenset({"up"}) for name in backfills}, 42)

    return build


def test_the_blocks_are_built_once_per_process_and_once_for_every_xdist_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caching alone (promtool's part is the query and rule tests'): a second call in the process and a second
    worker sharing the run's folder read what the first built."""
    monkeypatch.setattr(prometheus, "binaries_or_skip", lambda: ("prometheus", "promtool"))
    calls: list[Path] = []
    monkeypatch.setattr(prometheus, "_build_blocks", _fake_build(calls))
    monkeypatch.setattr(prometheus, "_BLOCKS", {})
    monkeypatch.setenv(GROUPS_ENV, str(tmp_path))
    backfills = {"h20-16": Backfill(1)}
    first = demo_blocks(backfills)
    assert demo_blocks(backfills) is first
    monkeypatch.setattr(prometheus, "_BLOCKS", {})  # another worker: its own process, the same folder
    second = demo_blocks(backfills)
    assert len(calls) == 1
    assert calls[0].parent == tmp_path
    assert (second.folder, second.ends, second.names, second.samples) == (
        first.folder,
        first.ends,
        first.names,
        first.samples,
    )
    assert (second.folder / "01BLOCK").is_dir()
    monkeypatch.setattr(prometheus, "_BLOCKS", {})
    demo_blocks({"h20-16": Backfill(1, minutes=20)})  # other windows: other blocks
    assert len(calls) == 2
