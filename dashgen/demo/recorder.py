"""Recording rules evaluated over imported demo data by the real evaluator: ``vmalert -replay`` over a past
window (the Debian package ``victoria-metrics`` ships vmalert), writing what it records back into the same
store, as a vmalert running beside the store would have written it live.

The demo writes the inventory rules itself (each is ``vector(1)``: there is nothing to evaluate). Rules that
compute from the data, such as the Now row's reason codes (group ``dashgen-<profile>-layer-health``) and the first
screen's lists and counts that read them (group ``dashgen-<profile>-now``, ``NOW``), need the evaluator: only those
groups are replayed, in passes (a rule reading another group's records after it), so the demo's alerts stay the
ones the scenario states; the per-GPU table's statistics (group ``dashgen-<profile>-gpu-window``, ``GPU_WINDOW``)
and the SLO group's request and stage reuse rates (``request-rates``, ``stage-reuse``) are replayed the same way,
over the whole window the panels read. The incident drills (``tests/drills.py``) replay every group
(``every_group=True``), alerts included: vmalert writes ``ALERTS`` and ``ALERTS_FOR_STATE`` back as it would live; cut
to the rules whose output their checks read (``reads``, :func:`rules_read`), one deployment at a time
(:func:`replayed_groups`, :func:`replay_groups`).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dashgen_queries import stage_bands
from dashgen_queries.nodata import RULE_INTERVAL_SECONDS

from dashgen.demo.vmlauncher import find_program
from dashgen.demo.wanted import ALERT_SERIES
from dashgen.deployment.profile import Profile
from dashgen.live.datasource import Datasource
from dashgen.render.yamlemit import dump
from dashgen.rules.render import (
    GPU_WINDOW_GROUP,
    NOW_GROUP,
    REQUEST_RATES_GROUP,
    STAGE_BANDS_GROUP,
    STAGE_REUSE_GROUP,
    rule_groups_data,
)

LAYER_HEALTH = "layer-health"
NOW = NOW_GROUP  # the first screen's records, reading layer-health's: replayed with it, in a later pass
GPU_WINDOW = GPU_WINDOW_GROUP
# The groups the dashboards read over their whole window (each record one rule interval of its series).
WHOLE_WINDOW = (GPU_WINDOW, REQUEST_RATES_GROUP, STAGE_REUSE_GROUP)
# How much of a window's end to replay: the matrix reads a recorded code at most a few evaluation intervals old
# (``queries.nodata.recorded_lookback_seconds``), so the last minutes are enough.
REPLAY_SECONDS = 300.0
REPLAY_TIMEOUT_SECONDS = 300.0  # how long one vmalert -replay pass may run
VMALERT_CANDIDATES = ("vmalert", "/usr/bin/vmalert")


class ReplayError(RuntimeError):
    """vmalert is missing, failed or did not finish; the message says which, with the tail of its output."""


def find_vmalert(explicit: str | None = None) -> str | None:
    """The vmalert binary: ``explicit``, ``$VMALERT_BIN``, or vmalert on PATH / in /usr/bin."""
    return find_program("VMALERT_BIN", VMALERT_CANDIDATES, explicit)


def _groups(profiles: Iterable[Profile], suffix: str | tuple[str, ...] | None) -> list[dict[str, Any]]:
    """Each profile's groups ``dashgen-<profile>-<suffix>`` (every group when ``suffix`` is None). Deployments of one
    profile write groups of the same name, which vmalert refuses in one file: a repeated name gets
    ``@<deployment>``."""
    groups = []
    seen: set[str] = set()
    suffixes = (suffix,) if isinstance(suffix, str) else suffix
    for profile in profiles:
        for group in rule_groups_data(profile):
            if suffixes is not None and group["name"] not in {f"dashgen-{profile.name}-{s}" for s in suffixes}:
                continue
            if group["name"] in seen:
                group = {**group, "name": f"{group['name']}@{profile.deployment}"}
            seen.add(group["name"])
            groups.append(group)
    return groups


def _text(groups: list[dict[str, Any]]) -> str:
    return dump({"groups": groups}, ["Replayed by dashgen.demo.recorder over demo data."])


def rule_text(profiles: Iterable[Profile], suffix: str | None = LAYER_HEALTH) -> str:
    """A vmalert rule file with each profile's group ``dashgen-<profile>-<suffix>`` (as ``dashgen rules`` writes it),
    or every group of each profile when ``suffix`` is None."""
    return _text(_groups(profiles, suffix))


# A run of the characters a metric or record name is made of: a name is read by an expression where it is one whole
# run (``node:x:ratio`` is not read by ``node:x:ratio_other``).
_NAME_RUN = re.compile(r"[\w:]+")


def rule_passes(groups: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The groups split into passes by dependency: a rule reading a series another rule records runs in a later
    pass. vmalert -replay evaluates each rule over the whole range before the next and writes asynchronously, so a
    rule reading its own group's records must wait for a later run (``-replay.rulesDelay`` would cost seconds per
    rule)."""
    by_record: dict[str, list[dict[str, Any]]] = {}
    for group in groups:
        for rule in group["rules"]:
            if "record" in rule:
                by_record.setdefault(str(rule["record"]), []).append(rule)
    # Each expression split into its name runs once: a search per record name and rule was quadratic (the fault
    # suite's fifteen deployments: a million searches, ~3.5 s of CPU per replay).
    reads_of: dict[int, set[str]] = {}

    def reads(rule: dict[str, Any]) -> set[str]:
        found = reads_of.get(id(rule))
        if found is None:
            found = reads_of[id(rule)] = names_in(str(rule["expr"])) & by_record.keys()
        return found

    level: dict[str, int] = {}

    def depth(rule: dict[str, Any], seen: frozenset[str] = frozenset()) -> int:
        names = [name for name in reads(rule) if name not in seen]
        if not names:
            return 0
        return 1 + max(level.setdefault(name, max(depth(r, seen | {name}) for r in by_record[name])) for name in names)

    passes: dict[int, list[dict[str, Any]]] = {}
    for group in groups:
        split: dict[int, list[dict[str, Any]]] = {}
        for rule in group["rules"]:
            split.setdefault(depth(rule), []).append(rule)
        for index, rules in split.items():
            passes.setdefault(index, []).append({**group, "rules": rules})
    return [passes[index] for index in sorted(passes)]


def names_in(expr: str) -> set[str]:
    """Every word of the PromQL ``expr`` that may name a series (more: label names and functions too)."""
    return set(_NAME_RUN.findall(expr))


def rules_read(groups: list[dict[str, Any]], reads: Sequence[str]) -> list[dict[str, Any]]:
    """``groups`` cut to the rules whose output the PromQL expressions ``reads`` can see: every alert when they read
    ``ALERTS`` (or ``ALERTS_FOR_STATE``), and each recording rule whose record they read or a rule kept reads,
    transitively; a group left without a rule is dropped. A rule's output depends only on what it reads, so these
    rules replayed alone give ``reads`` the same answers as every rule replayed. A selector by name pattern
    (``__name__``) is refused: its reads are not its name runs."""
    by_record: dict[str, list[dict[str, Any]]] = {}
    for group in groups:
        for rule in group["rules"]:
            if "record" in rule:
                by_record.setdefault(str(rule["record"]), []).append(rule)
    kept: set[int] = set()
    todo = [str(expr) for expr in reads]
    followed: set[str] = set()
    while todo:
        expr = todo.pop()
        if "__name__" in expr:
            raise ValueError(f"a read by name pattern cannot be followed to the rules it reads: {expr[:200]}")
        names = names_in(expr)
        if names & ALERT_SERIES and not followed & ALERT_SERIES:  # read here or by a record kept: every alert
            followed |= ALERT_SERIES
            alerts = [rule for group in groups for rule in group["rules"] if "alert" in rule]
            kept |= {id(rule) for rule in alerts}
            todo += [str(rule["expr"]) for rule in alerts]
        for name in names & by_record.keys() - followed:
            followed.add(name)
            kept |= {id(rule) for rule in by_record[name]}
            todo += [str(rule["expr"]) for rule in by_record[name]]
    cut = [{**group, "rules": [rule for rule in group["rules"] if id(rule) in kept]} for group in groups]
    return [group for group in cut if group["rules"]]


def _rfc3339(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def replayed_groups(
    profiles: Iterable[Profile],
    *,
    every_group: bool = False,
    groups: tuple[str, ...] = (LAYER_HEALTH, NOW),
    reads: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The rule groups :func:`replay` evaluates: the profiles' groups of the names ``groups`` (every group with
    ``every_group``), cut to what ``reads`` can see (:func:`rules_read`) when given."""
    chosen = _groups(profiles, None if every_group else groups)
    return chosen if reads is None else rules_read(chosen, reads)


def replay(
    store_url: str,
    profiles: Iterable[Profile],
    start: float,
    end: float,
    *,
    write_url: str | None = None,
    binary: str | None = None,
    interval: float = RULE_INTERVAL_SECONDS,
    timeout: float = REPLAY_TIMEOUT_SECONDS,
    every_group: bool = False,
    groups: tuple[str, ...] = (LAYER_HEALTH, NOW),
    reads: Sequence[str] | None = None,
) -> None:
    """Evaluate the profiles' layer-health and now rules (``groups``: the groups of those names; ``every_group``: all
    their groups, alerts included; ``reads``: only the rules whose output those expressions can see), a rule reading
    another's records in a later pass, every ``interval`` from ``start`` to ``end`` (epoch seconds) against
    ``store_url`` and write the results into it (or into ``write_url``, a VictoriaMetrics cluster's
    ``http://vminsert:8480/insert/0/prometheus``); returns when vmalert has finished."""
    chosen = replayed_groups(profiles, every_group=every_group, groups=groups, reads=reads)
    _replay_passes(_vmalert(binary), chosen, store_url, start, end, write_url, interval, timeout)


def replay_groups(
    store_url: str, groups: list[dict[str, Any]], start: float, end: float, interval: float = RULE_INTERVAL_SECONDS
) -> None:
    """Evaluate ``groups`` (:func:`replayed_groups`, or groups of one's own) as :func:`replay` does, every
    ``interval``, into the store they read."""
    _replay_passes(_vmalert(None), groups, store_url, start, end, None, interval, REPLAY_TIMEOUT_SECONDS)


def _vmalert(binary: str | None) -> str:
    found = find_vmalert(binary)
    if found is None:
        raise ReplayError(
            "vmalert not found (install the Debian package 'victoria-metrics': `make debian-deps`, or set VMALERT_BIN)"
        )
    return found


def _replay_passes(
    found: str,
    groups: list[dict[str, Any]],
    store_url: str,
    start: float,
    end: float,
    write_url: str | None,
    interval: float,
    timeout: float,
) -> None:
    if not groups:
        return  # no such group (a profile without a per-GPU source has no gpu-window group): nothing to evaluate
    for number, groups_of_pass in enumerate(rule_passes(groups)):
        if number:  # the previous pass's records must be searchable (single-node VictoriaMetrics; best effort)
            Datasource(store_url, import_url=write_url).flush()
        with tempfile.TemporaryDirectory(prefix="dashgen-replay-") as work:
            rules = Path(work) / "rules.yml"
            rules.write_text(_text(groups_of_pass), encoding="utf-8")
            args = [
                found,
                f"-rule={rules}",
                f"-datasource.url={store_url}",
                f"-remoteWrite.url={write_url or store_url}",
                # replay steps by -datasource.queryStep (default 5m), not by the evaluation interval
                f"-evaluationInterval={interval:g}s",
                f"-datasource.queryStep={interval:g}s",
                f"-replay.timeFrom={_rfc3339(start)}",
                f"-replay.timeTo={_rfc3339(end)}",
                "-replay.disableProgressBar",
                "-replay.rulesDelay=0s",
                "-loggerLevel=ERROR",
            ]
            try:
                done = subprocess.run(
                    args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
                )
            except subprocess.TimeoutExpired:
                raise ReplayError(f"vmalert -replay did not finish within {timeout:g} s") from None
        if done.returncode != 0:
            raise ReplayError(f"vmalert -replay exited {done.returncode}: {(done.stderr or done.stdout)[-2000:]}")


def replay_for_dashboards(
    store_url: str, profiles: Iterable[Profile], start: float, end: float, *, write_url: str | None = None
) -> None:
    """What the dashboards read recorded over a window from ``start`` to ``end``: the layer-health and now rules over
    its last ``REPLAY_SECONDS`` (the Now row reads the newest codes) and the gpu-window, request-rates, stage-reuse and
    stage-bands rules over all of it (the per-GPU table and the SLO group's graphs read them across the window)."""
    chosen = list(profiles)
    replay(store_url, chosen, max(start, end - REPLAY_SECONDS), end, write_url=write_url)
    replay(store_url, chosen, start, end, write_url=write_url, groups=WHOLE_WINDOW)
    by_interval: dict[float, list[Profile]] = {}  # the bands are evaluated at each profile's engine sample interval
    for profile in chosen:
        if profile.exported("sglang"):
            by_interval.setdefault(stage_bands.interval_seconds(profile), []).append(profile)
    for seconds, banded in by_interval.items():
        replay(store_url, banded, start, end, write_url=write_url, groups=(STAGE_BANDS_GROUP,), interval=seconds)
