"""The catalogue of known metric names (``dashgen/data/metric_catalogue.txt``).

The names dashgen reads come from the exporter table (``dashgen.exporters.table``: one row per series, with
its older names and the router's prefix); the text file holds only the other names the sources document. It
is pinned and committed: one name per line, ``#`` comments, and glob lines
(``smg_discovery_*``) for families the source documents only by prefix. Histograms and
summaries are listed with their ``_bucket``/``_sum``/``_count`` series. It was generated once
from the metric tables of the project's metric catalogue document with
``python -m dashgen.lint.catalogue METRICS.md > dashgen/data/metric_catalogue.txt`` (which leaves out the
table's names); the product reads the table and the packaged text file, never the document.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

from dashgen.exporters.availability import every_name

_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:*]*$")
_SPAN_RE = re.compile(r"`([^`]+)`")
_BRACE_RE = re.compile(r"\{([^{}]*)\}")
_HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
_SUMMARY_SUFFIXES = ("_sum", "_count")

# dashgen's own recorded names the catalogue document does not list (the exporters' names are in the exporter table).
EXTRA_NAMES = (
    "node:dashgen_inventory:info",  # dashgen's own node inventory recording rule (queries.inventory)
    "node:dashgen_layer_reason:code",  # dashgen's own recorded reason codes of the Now row (queries.nodata)
    # the first screen's recorded lists and counts (queries.now_records)
    "node:dashgen_layer_not_ok:code",
    "job:dashgen_targets_up:count",
    "target:dashgen_target_missing:state",
    "replica:dashgen_serving_state:code",
    "node_gpu:dashgen_gpu_window_*",  # per-interval GPU statistics of the per-GPU table (queries.gpu_window)
    "deployment:dashgen_sglang_*",  # recorded request rates of the SLO group (queries.request_rates)
    "node_stage:dashgen_sglang_*",  # recorded per-stage prefix reuse and retraction rates (queries.stage_rates)
    "pool:dashgen_sglang_*",  # recorded per-stage gauge bands of the narrowed graphs (queries.stage_bands)
)


@dataclass(frozen=True)
class Catalogue:
    """Known metric names and glob patterns."""

    names: frozenset[str]
    patterns: tuple[str, ...]

    def is_known(self, name: str) -> bool:
        if name in self.names:
            return True
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.patterns)


def parse_catalogue(text: str) -> Catalogue:
    """Parse the catalogue file format (names, globs, ``#`` comments)."""
    names: set[str] = set()
    patterns: list[str] = []
    for line in text.splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        (patterns.append if "*" in entry else names.add)(entry)
    return Catalogue(names=frozenset(names), patterns=tuple(patterns))


def load_catalogue() -> Catalogue:
    """Every name the exporter table (``dashgen.exporters``) knows, in every supported version and scrape path's
    spelling, and the packaged catalogue's other documented names (``dashgen/data/metric_catalogue.txt``)."""
    text = resources.files("dashgen").joinpath("data/metric_catalogue.txt").read_text(encoding="utf-8")
    packaged = parse_catalogue(text)
    return Catalogue(names=packaged.names | every_name(), patterns=packaged.patterns)


def _brace_expand(name: str) -> list[str]:
    match = _BRACE_RE.search(name)
    if not match:
        return [name]
    head, tail = name[: match.start()], name[match.end() :]
    return [x for alt in match.group(1).split(",") for x in _brace_expand(head + alt.strip() + tail)]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _token_variants(middle: str, bases: list[str]) -> Iterable[str]:
    """``_nof_segment_`` applied to ``x_segment_y`` gives ``x_nof_segment_y``."""
    token, _, rest = middle.strip("_").partition("_")
    core = f"_{rest}_"
    for base in bases:
        if core in base and token:
            yield base.replace(core, f"_{token}{core}", 1)


def _names_in_cell(cell: str, row_kind: str) -> Iterable[str]:
    """Metric names of a table's first cell, expanded (braces, prefixes, histogram series)."""
    prefix = ""
    bases: list[str] = []
    previous_end = 0
    for match in _SPAN_RE.finditer(cell):
        span = match.group(1).strip()
        between, previous_end = cell[previous_end : match.start()], match.end()
        if span.startswith("_") and bases:  # "(+ `_mem`, `_nof` variants)" of the names before
            yield from (b.removesuffix("_total") + span for b in bases if "*" not in b)
            continue
        if span.startswith(("...", "…")):  # "`..._nof_segment_...`": the same names with a token added
            yield from _token_variants(span.strip(".… "), bases)
            continue
        if "…" in between.strip() and bases:  # "`a_x_total` … `a_y_total`": a family by prefix
            yield os.path.commonprefix([bases[-1], span]).rstrip("_") + "_*"
        if " " in span:
            continue
        if ":" in span:
            prefix = span.split(":", 1)[0] + ":"
        elif prefix and not span.startswith(("DCGM_", "master_", "mooncake_", "smg_", "node_")):
            span = prefix + span
        elif span.isupper() and not span.startswith("DCGM_"):
            span = "DCGM_FI_DEV_" + span
        after = cell[match.end() : match.end() + 4]
        kind = inline.group(1) if (inline := re.match(r"\s*\(([CGHS])\b", after)) else row_kind
        for name in _brace_expand(span):
            if not _NAME_RE.match(name):
                continue
            bases.append(name)
            if kind == "H" and "*" not in name:  # a histogram's base name is not a series
                yield from (name + s for s in _HISTOGRAM_SUFFIXES)
                continue
            yield name
            if kind == "S" and "*" not in name:
                yield from (name + s for s in _SUMMARY_SUFFIXES)


def build_catalogue(markdown: str) -> list[str]:
    """Extract metric names from the markdown tables whose first column is ``Metric``."""
    names: set[str] = set(EXTRA_NAMES)
    in_metric_table = False
    type_col: int | None = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            in_metric_table = False
            names.update(m for m in _SPAN_RE.findall(line) if re.fullmatch(r"gpm_[a-z0-9_]+", m))
            continue
        cells = _cells(line)
        if not in_metric_table:
            in_metric_table = cells[0].lower().startswith("metric")
            type_col = next((i for i, c in enumerate(cells) if c.lower() == "type"), None)
            continue
        if set(cells[0]) <= {"-", ":", " "}:
            continue
        row_kind = cells[type_col].strip() if type_col is not None and type_col < len(cells) else ""
        names.update(_names_in_cell(cells[0], row_kind))
    return sorted(names)


def render_catalogue(names: Iterable[str], source: str) -> str:
    header = (
        f"# dashgen metric catalogue: generated from {source} by dashgen.lint.catalogue.\n"
        "# One name per line; lines with * are glob patterns. Edit by hand when a source adds metrics.\n"
    )
    return header + "".join(f"{n}\n" for n in names)


if __name__ == "__main__":  # pragma: no cover - one-off generator
    path = sys.argv[1]
    with open(path, encoding="utf-8") as fh:
        table = every_name()
        sys.stdout.write(render_catalogue([n for n in build_catalogue(fh.read()) if n not in table], "metrics.md"))
