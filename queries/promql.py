"""A tiny PromQL vocabulary: selectors with the profile's label names, aggregations, guarded division.

Functions return strings; they never zero-fill (S7): no ``or vector(0)``, and a division by an
idle denominator yields no sample rather than a zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dashgen.deployment.profile import Profile
from dashgen.deployment.reader import parse_duration

RATE_WINDOW = "$__rate_interval"
WINDOW = "$__range"
# What rate() cannot show, for panel limits: it starts from a series' first stored sample.
FIRST_EVENT_RATE = (
    "rate() starts from a series' first stored sample, so a counter created at its first event (absent until "
    "then) never shows that first event: a lone first retraction/abort/rejection/error draws nothing"
)


def matcher(label: str, op: str, value: str) -> str:
    """``label op "value"`` with the value quoted and escaped as a PromQL string (a quote in a profile
    string can never end the string early)."""
    return f"{label}{op}{string_literal(value)}"


def selector(metric: str, *matchers: str) -> str:
    """``metric{m1, m2}``; empty matchers are skipped."""
    kept = [m for m in matchers if m]
    return f"{metric}{{{', '.join(kept)}}}" if kept else metric


def node_var(profile: Profile) -> str:
    """Matcher restricting a series to the nodes chosen in the ``$node`` variable."""
    return f'{profile.label("node")}=~"$node"'


def gpu_var(profile: Profile) -> str:
    return f'{profile.label("gpu")}=~"$gpu"'


def deployment(profile: Profile) -> str:
    """The deployment's own series in the shared store (S21): ``cluster="<deployment>"``, or "" for a
    profile whose store holds it alone (``deployment = ""``)."""
    return matcher(profile.label("deployment"), "=", profile.deployment) if profile.deployment else ""


def job(profile: Profile, source: str) -> str:
    """The matchers of one source's series: its deployment and its scrape job. Every selector of a source's
    series is built with it, so no query reads another deployment's series or another job's."""
    return scoped_job(profile, profile.source(source).job)


def scoped_job(profile: Profile, job_name: str) -> str:
    """``job`` for a job named directly (the per-job ``up`` alerts)."""
    return ", ".join(m for m in (deployment(profile), matcher(profile.label("job"), "=", job_name)) if m)


def in_deployment(profile: Profile, metric: str, *matchers: str) -> str:
    """A selector of series that have no scrape job (recorded series, variables over ``up``), scoped to
    the deployment."""
    return selector(metric, deployment(profile), *matchers)


def min_step(profile: Profile, expr: str) -> str:
    """The Min step a query's target carries: the longest stored sample interval of the sources whose job
    the query reads (the store keeps one sample per it, S24), so Grafana's ``$__rate_interval`` (four Min
    steps at least) always spans four stored samples; "" for a query of no source's series."""
    jobs = set(re.findall(re.escape(profile.label("job")) + r'="([^"]+)"', expr))
    seconds = [source.sample_interval_seconds for source in profile.sources.values() if source.job in jobs]
    collector = profile.collector
    if collector is not None and collector.job in jobs:  # the collector's self-scrape, at the store's resolution
        seconds.append(max(collector.scrape_interval_seconds, profile.store.resolution_seconds))
    return f"{max(seconds):g}s" if seconds else ""


def coarser_step(own: str, source: str) -> str:
    """The longer of a target's own Min step and its sources' (``min_step``): a panel may step coarser than its
    sources where every point already covers a much longer fixed window, never finer."""
    if not own:
        return source
    if not source:
        return own
    return own if parse_duration(own) > parse_duration(source) else source


def newest_sample_age(labels: list[str] | tuple[str, ...], timestamps: str) -> str:
    """Seconds since the newest sample, by ``labels``: ``time() - max by (labels) (timestamps)``, where
    ``timestamps`` is ``timestamp(<selector>)`` (possibly relabelled). A series whose newest sample is older
    than the store's look-back has no sample at all, so no age: the Missing-data reasons table names why."""
    return f"time() - {agg('max', labels, timestamps)}"


def agg(op: str, labels: list[str] | tuple[str, ...], expr: str) -> str:
    """``op by (labels) (expr)``; an empty label list is refused so nothing is summed across nodes by accident."""
    if not labels:
        raise ValueError(f"{op} without 'by' labels would aggregate across nodes/stages: {expr}")
    return f"{op} by ({', '.join(labels)}) ({expr})"


def rate(expr: str, window: str = RATE_WINDOW) -> str:
    return f"rate({expr}[{window}])"


def increase(expr: str, window: str = WINDOW) -> str:
    return f"increase({expr}[{window}])"


def window_increase(expr: str, window: str = WINDOW) -> str:
    """Window increase of a counter that appears only at its first event (metric catalogue §1.5),
    keeping that event when the series is created inside the window. Never a zero-fill.

    A series with a sample in the previous window of the same length gets the plain ``increase``.
    A series created inside the window gets ``max(increase, last value)``: it counted from an
    absent 0, so its last value is its increase when it has not reset. ``max`` rather than
    ``increase + creation value`` because VictoriaMetrics' ``increase`` already counts a new series
    from 0 when its first value is small next to its first step, and the sum would count that first
    value twice. Edges: a reset inside the window after creation can undercount by at most the
    creation value; a series absent for a whole window length before the window and then back
    counts its full value as new.
    """
    plain = increase(expr, window)
    last = over_time("last", expr, window)
    before = f"last_over_time({expr}[{window}] offset {window})"
    created = f"((({plain} >= {last}) or {last}) unless {before})"
    return f"({created} or {plain})"


def window_moved(expr: str, window: str = WINDOW) -> str:
    """The series of a counter that appears only at its first event that moved in the window: exactly those
    whose :func:`window_increase` is above 0, read three times instead of five. A series moved when its
    plain ``increase`` is above 0, or when it was created inside the window (no sample in the window before)
    with a last value above 0: ``window_increase`` is then ``max(increase, last)``, above 0 iff either is."""
    plain = increase(expr, window)
    last = over_time("last", expr, window)
    before = f"last_over_time({expr}[{window}] offset {window})"
    return f"(({plain} > 0) or (({last} > 0) unless {before}))"


def over_time(func: str, expr: str, window: str = WINDOW) -> str:
    return f"{func}_over_time({expr}[{window}])"


def divide(numerator: str, denominator: str) -> str:
    """``(num) / (den > 0)``: an idle denominator gives no sample, never a division by zero or a 0."""
    return f"({numerator}) / ({denominator} > 0)"


def scale(expr: str, factor: float) -> str:
    """Multiply by a unit factor, written as a division when that reads better (``/ 1073741824``)."""
    if factor == 1:
        return expr
    if factor < 1:
        divisor = 1 / factor
        if abs(divisor - round(divisor)) < 1e-6:
            return f"({expr}) / {int(round(divisor))}"
    text = f"{factor:g}" if factor < 1e6 else str(int(factor))
    return f"({expr}) * {text}"


def string_literal(text: str) -> str:
    """``text`` as a double-quoted PromQL string (backslash, quote and control characters escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


# -- the parse budget ------------------------------------------------------------------------------
# promql-parser's memory and time grow with the square of an expression's terms (1,000 ``or`` terms of
# label_replace take ~0.7 GB, 5,000 ``+ up`` terms crash the process with SIGSEGV), so no expression
# reaches it unless it is within this budget. The budget is over 5 x what the shipped dashboards need.
MAX_QUERY_CHARS = 1_000_000
MAX_QUERY_TERMS = 1_000
MAX_QUERY_DEPTH = 100

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`'  # strings: skipped
    r"|\b(and|or|unless|atan2)\b|(==|!=|<=|>=|[-+*/%^<>])|([({\[])|([)}\]])",
    re.DOTALL,
)


@dataclass(frozen=True)
class QuerySize:
    """What the parse budget counts: characters, terms (operators and opening brackets) and nesting depth."""

    chars: int
    terms: int
    depth: int

    def over_budget(self) -> str | None:
        """Why the expression is over the parse budget, or None."""
        if self.chars > MAX_QUERY_CHARS:
            return f"{self.chars} characters, over the budget of {MAX_QUERY_CHARS}"
        if self.terms > MAX_QUERY_TERMS:
            return f"{self.terms} terms, over the budget of {MAX_QUERY_TERMS}"
        if self.depth > MAX_QUERY_DEPTH:
            return f"nested {self.depth} deep, over the budget of {MAX_QUERY_DEPTH}"
        return None


def query_size(expr: str, limit: int = MAX_QUERY_CHARS * 4) -> QuerySize:
    """Count an expression's terms and depth in one linear pass (strings skipped); stops after ``limit``
    characters, so a hostile 100 MB expression costs no more than the budget needs to reject it."""
    terms = depth = deepest = 0
    for match in _TOKEN.finditer(expr, 0, min(len(expr), limit)):
        if match.group(1) or match.group(2):
            terms += 1
        elif match.group(3):
            terms += 1
            depth += 1
            deepest = max(deepest, depth)
        elif match.group(4):
            depth -= 1
    return QuerySize(len(expr), terms, deepest)


_SET_OPERATOR = re.compile(
    r"\s(or|and|unless)\s+(?:(?:on|ignoring)\s*\([^()]*\)\s*)?"
    r"(?:(?:group_left|group_right)\s*(?:\([^()]*\))?\s*)?"
)


def top_level_operands(expr: str) -> list[str]:
    """``expr`` split at its outermost set operators (``or`` / ``and`` / ``unless``, with their modifiers):
    the operands a long chain is made of, each a whole expression. One linear pass."""
    depth, start, parts = 0, 0, []
    for match in _TOKEN.finditer(expr):
        if match.group(3):
            depth += 1
        elif match.group(4):
            depth -= 1
        elif depth == 0 and match.group(1) in ("or", "and", "unless"):
            operator = _SET_OPERATOR.match(expr, max(match.start() - 1, 0))
            if operator is None:
                continue
            parts.append(expr[start : match.start()])
            start = operator.end()
    parts.append(expr[start:])
    return [part.strip() for part in parts]


def _unwrapped(expr: str) -> str:
    """``expr`` without parentheses that enclose all of it (``((a or b))`` -> ``a or b``)."""
    while expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for match in _TOKEN.finditer(expr):
            if match.group(3):
                depth += 1
            elif match.group(4):
                depth -= 1
                if depth == 0 and match.end() < len(expr):
                    return expr
        expr = expr[1:-1].strip()
    return expr


_TERM_CHARS = "-+*/%^<>=!([{"


def surely_within_budget(expr: str) -> bool:
    """A cheap upper bound (C-speed ``str.count``): every term the budget counts holds at least one of these
    characters or is a set-operator word, and every nesting level opens a bracket, so when the counts are
    within the budget the expression is too, without the token pass of :func:`query_size`."""
    if len(expr) > MAX_QUERY_CHARS:
        return False
    if expr.count("(") + expr.count("[") + expr.count("{") > MAX_QUERY_DEPTH:
        return False
    words = expr.count("and") + expr.count("or") + expr.count("unless") + expr.count("atan2")
    return sum(expr.count(c) for c in _TERM_CHARS) + words <= MAX_QUERY_TERMS


def budget_pieces(expr: str) -> tuple[list[str], str | None]:
    """Pieces of ``expr`` each within the parse budget, found by splitting over-budget parts at their
    outermost set operators (inside enclosing parentheses too): parsing every piece checks the syntax of a
    long ``or`` chain without handing the parser the chain. The second value says why a part cannot be split
    into pieces within the budget (None when every piece is within it)."""
    if surely_within_budget(expr):
        return [expr], None
    pieces, pending = [], [expr]
    while pending:
        part = pending.pop()
        over = query_size(part).over_budget()
        if over is None:
            pieces.append(part)
            continue
        split = top_level_operands(_unwrapped(part))
        if len(split) < 2:
            return pieces, over
        pending.extend(reversed(split))
    return pieces, None


def newest_per_node(profile: Profile, metric: str, lookback_seconds: float, *matchers: str) -> str:
    """Each selected node's newest sample of a recorded ``metric`` of this deployment, at most ``lookback_seconds``
    old (the Now row's reading of the layer-health records: reason codes and health states)."""
    recorded = selector(metric, deployment(profile), *matchers, node_var(profile))
    return agg("max", [profile.label("node")], f"last_over_time({recorded}[{lookback_seconds:g}s])")


# --- graphs with more series than fit a screen ----------------------------------------------------
BAND_LABEL = "band"


def worst_series(
    expr: str, labels: tuple[str, ...], k: int, worst: str, split: tuple[str, ...] = (), step: str = "$__interval"
) -> str:
    """The ``k`` entities of ``expr`` (named by ``labels``) that are worst at the end of the graph's range: highest
    (``worst="top"``) or lowest (``"bottom"``), each with all its series (one per value of the ``split`` labels,
    ranked by its highest / lowest one). The choice is made once, at ``end()``, so a range query draws the same
    entities at every step (a plain ``topk`` picks anew at each step and draws many more); the subquery evaluates
    ``expr`` at one step only."""
    pick = {"top": "topk", "bottom": "bottomk"}[worst]
    ranked = f"last_over_time(({expr})[{step}:{step}] @ end())"
    if split:
        ranked = f"{'max' if worst == 'top' else 'min'} by ({', '.join(labels)}) ({ranked})"
    return f"({expr}) and on ({', '.join(labels)}) {pick}({k}, {ranked})"


def band(expr: str, labels: tuple[str, ...]) -> str:
    """min / median / max of ``expr`` across the series named by ``labels`` (every other label kept: one band
    per pool where the series carry it), each tagged ``band="min|median|max"``."""
    without = f"without ({', '.join(labels)})"
    parts = (
        ("min", f"min {without} ({expr})"),
        ("median", f"quantile {without} (0.5, {expr})"),
        ("max", f"max {without} ({expr})"),
    )
    return " or ".join(f'label_replace({agg}, "{BAND_LABEL}", "{name}", "", "")' for name, agg in parts)
