"""A staged release across Grafanas (``publish --stages canary,fleet``): what it is, where it stands, what it says.

A release publishes the same build to the contexts of each stage in turn (``[stages]`` of ``dashgen.toml``). A
stage's contexts are published, then checked (every dashboard read back still holds the SHA the release
verified; where the context names a data source, every query of what was published runs there); the next stage
starts only when every check of the stage holds and the operator said go (``--go``, or ``--stage-wait`` seconds
passed and the checks held after the wait). A stage that fails holds the rest: nothing is written to a later
stage, and the report says how to resume (``--resume RELEASE_ID``) or roll the published contexts back.

The release's state is one JSON file per release beside the ledger (``<ledger dir>/stages/<id>.json``), written
after each step; each context's ledger lines carry the release id (``LedgerRecord.release_id``). Pure but for
``load_state`` / ``save_state``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal

from dashgen.errors import InputError
from dashgen.escape import inline_text
from dashgen.files import atomic_write, read_regular_text
from dashgen.files.parsers import parse_json
from dashgen.publish.actions import STORED_OUTCOMES, OutcomeKind
from dashgen.publish.ledger import Instance, LedgerRecord

RELEASE_ID = re.compile(r"^r-\d{8}T\d{6}Z-[0-9a-f]{6}\Z")
# context status: pending -> published (its release ran clean) -> verified (its checks held) | failed
ContextStatus = Literal["pending", "published", "verified", "failed"]
PENDING: Final = "pending"
PUBLISHED: Final = "published"
VERIFIED: Final = "verified"
FAILED: Final = "failed"
ReleaseStatus = Literal["running", "held", "awaiting-go", "done"]
RUNNING: Final = "running"
HELD: Final = "held"
AWAITING_GO: Final = "awaiting-go"
DONE: Final = "done"


@dataclass(frozen=True)
class Stage:
    name: str
    contexts: tuple[str, ...]


@dataclass
class ContextRun:
    """One context of the release: where it is, how far it got, what was found."""

    name: str
    stage: str
    status: ContextStatus = PENDING
    instance: str = ""  # the normalised Grafana URL, once connected
    org_id: int | None = None
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # what was checked and held
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # uid, outcome, version, stored_sha, detail

    def holds(self, record: LedgerRecord) -> bool:
        return bool(self.instance) and Instance(self.instance, self.org_id or 1).holds(record)


@dataclass
class ReleaseState:
    release_id: str
    started: str
    git_commit: str
    profiles: list[str]
    builds: dict[str, str]  # uid -> build SHA: a resume publishes exactly this build
    stages: list[Stage]
    contexts: dict[str, ContextRun]
    status: ReleaseStatus = RUNNING
    note: str = ""  # why it is held / what it waits for

    def stage_runs(self, stage: Stage) -> list[ContextRun]:
        return [self.contexts[name] for name in stage.contexts]

    def passed(self, stage: Stage) -> bool:
        return all(run.status == VERIFIED for run in self.stage_runs(stage))

    def current(self) -> Stage | None:
        """The first stage not yet passed (None when every stage passed)."""
        return next((stage for stage in self.stages if not self.passed(stage)), None)

    def to_json(self) -> str:
        data = asdict(self)
        data["stages"] = [{"name": s.name, "contexts": list(s.contexts)} for s in self.stages]
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def new_release_id(now: datetime, entropy: bytes) -> str:
    """``r-<UTC time>-<6 hex>``: sortable by start, unique enough for one repository's releases."""
    return f"r-{now.strftime('%Y%m%dT%H%M%SZ')}-{entropy.hex()[:6]}"


def stages_of(names: str, configured: Mapping[str, tuple[str, ...]], where: str) -> list[Stage]:
    """The stages ``--stages a,b`` names, in that order, from ``[stages]`` of the config at ``where``."""
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    if not wanted:
        raise InputError("--stages: give the stage names in order, e.g. --stages canary,fleet")
    if not configured:
        raise InputError(f"--stages: {where} has no [stages] table (stage = [context names])")
    stages: list[Stage] = []
    for name in wanted:
        if name not in configured:
            raise InputError(f"--stages: no stage {name!r} in {where} (stages: {', '.join(sorted(configured))})")
        if any(stage.name == name for stage in stages):
            raise InputError(f"--stages: stage {name!r} is named twice")
        stages.append(Stage(name, tuple(configured[name])))
    return stages


def new_state(
    release_id: str, started: str, git_commit: str, profiles: list[str], builds: dict[str, str], stages: list[Stage]
) -> ReleaseState:
    runs = {name: ContextRun(name, stage.name) for stage in stages for name in stage.contexts}
    return ReleaseState(release_id, started, git_commit, profiles, builds, stages, runs)


def build_changes(recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """How the build differs from the one a release started with (a resume must publish the very same)."""
    changes = [
        f"{uid}: build {sha[:12]} -> {now[uid][:12]}" for uid, sha in recorded.items() if now.get(uid, sha) != sha
    ]
    changes += [f"{uid}: no longer built" for uid in recorded if uid not in now]
    changes += [f"{uid}: new in the build" for uid in now if uid not in recorded]
    return sorted(changes)


def rollback_commands(state: ReleaseState, records: Sequence[LedgerRecord]) -> list[str]:
    """How to put each dashboard this release saved back to what its context held before the release: a
    ``dashgen rollback`` per dashboard (to the build of its last earlier release there), or, for a dashboard the
    release created, that there is nothing to go back to."""
    lines = []
    for run in state.contexts.values():
        mine = [r for r in records if run.holds(r)]
        saved = [r for r in mine if r.release_id == state.release_id and r.outcome == OutcomeKind.PUBLISHED]
        for uid in dict.fromkeys(str(r.uid) for r in saved):
            first = next(i for i, r in enumerate(mine) if r.uid == uid and r.release_id == state.release_id)
            before = [r for r in mine[:first] if r.uid == uid and r.outcome in STORED_OUTCOMES and r.build_sha]
            if before:
                sha = before[-1].build_sha[:12]
                lines.append(f"dashgen rollback {uid} --context {run.name} --to {sha}")
            else:
                lines.append(f"# {uid} is new on {run.name} (no earlier release there): delete it in Grafana")
    return lines


def report_dict(state: ReleaseState, rollback: Sequence[str]) -> dict[str, Any]:
    data = json.loads(state.to_json())
    data["resume"] = resume_command(state)
    data["rollback"] = list(rollback)
    return data


def resume_command(state: ReleaseState) -> str | None:
    if state.status == HELD:
        return f"dashgen publish --resume {state.release_id}"
    if state.status == AWAITING_GO:
        return f"dashgen publish --resume {state.release_id} --go"
    return None


def stage_status(state: ReleaseState, stage: Stage) -> str:
    statuses = {run.status for run in state.stage_runs(stage)}
    if statuses == {VERIFIED}:
        return "passed"
    if FAILED in statuses:
        return "failed"
    return "not started" if statuses == {PENDING} else "incomplete"


def render_report(state: ReleaseState, rollback: Sequence[str]) -> str:
    """The one report of a staged release: each stage and context, then what holds it and how to go on."""
    lines = [
        f"release {state.release_id} (commit {state.git_commit[:12]}, {len(state.builds)} dashboards, "
        f"stages {' -> '.join(s.name for s in state.stages)}): {state.status}"
    ]
    for stage in state.stages:
        lines.append(f"stage {stage.name}: {stage_status(state, stage)}")
        for run in state.stage_runs(stage):
            counts: dict[str, int] = {}
            for outcome in run.outcomes:
                counts[outcome["outcome"]] = counts.get(outcome["outcome"], 0) + 1
            tally = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing written"
            lines.append(f"  {inline_text(run.name):<14} {run.status:<9} {inline_text(run.instance or '-')}: {tally}")
            lines += [f"      checked: {inline_text(check)}" for check in run.checks]
            lines += [f"      PROBLEM: {inline_text(problem)}" for problem in run.problems]
    if state.note:
        lines.append(inline_text(state.note))
    command = resume_command(state)
    if command:
        lines.append(
            f"resume: {command}"
            + (" (after fixing the cause; approvals as the plan asks)" if state.status == HELD else "")
        )
    if rollback and state.status == HELD:
        lines.append("or roll back what the release published:")
        lines += [f"  {inline_text(line)}" for line in rollback]
    return "\n".join(lines)


def state_path(ledger_path: Path, release_id: str) -> Path:
    return ledger_path.parent / "stages" / f"{release_id}.json"


def save_state(ledger_path: Path, state: ReleaseState) -> None:
    atomic_write(state_path(ledger_path, state.release_id), state.to_json().encode("utf-8"), fsync=True)


def load_state(ledger_path: Path, release_id: str) -> ReleaseState:
    """The state of release ``release_id`` kept beside the ledger; an input error naming the file otherwise."""
    if not RELEASE_ID.match(release_id):
        raise InputError(f"--resume {release_id!r}: not a release id (r-YYYYMMDDTHHMMSSZ-xxxxxx)")
    path = state_path(ledger_path, release_id)
    try:
        data = parse_json(read_regular_text(path))
        stages = [Stage(s["name"], tuple(s["contexts"])) for s in data["stages"]]
        contexts = {name: ContextRun(**run) for name, run in data["contexts"].items()}
        return ReleaseState(
            data["release_id"],
            data["started"],
            data["git_commit"],
            list(data["profiles"]),
            dict(data["builds"]),
            stages,
            contexts,
            data["status"],
            data.get("note", ""),
        )
    except FileNotFoundError:
        raise InputError(f"{path}: no such release (releases are kept beside the ledger)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a staged release's state ({exc})") from None


def release_records(records: Sequence[LedgerRecord], release_id: str) -> list[LedgerRecord]:
    """The ledger lines of one release, across every Grafana it reached, in the order they were written."""
    return [r for r in records if r.release_id == release_id]


def context_names(state: ReleaseState | None) -> dict[tuple[str, int], str]:
    """(Grafana URL, org) -> the context name the release knew it by."""
    if state is None:
        return {}
    return {(run.instance, run.org_id or 1): name for name, run in state.contexts.items() if run.instance}
