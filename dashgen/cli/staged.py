"""``dashgen publish --stages canary,fleet`` and ``--resume RELEASE_ID``: one release across the contexts of
``dashgen.toml``'s ``[stages]``, stage by stage (the model and the report: ``dashgen.publish.stages``).

Every context is resolved (URL, credentials) and the build made once, before anything is written. A stage's
contexts run their own guarded release (``run_release``: lock, plan, back up, push, read back, ledger) at most
``--stage-jobs`` at a time; the stage then passes only when each context's release was clean and its checks
hold (``dashgen.publish.stage_checks``), after ``--stage-wait`` seconds when given. The next stage starts
only after ``--go`` or a ``--stage-wait``; otherwise the release waits for ``--resume ID --go``. A failing stage
holds every later one (nothing is written there). The state is saved after each step, so a resume goes on
from where the release stopped, with the very same build (a changed build is refused).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import click

from dashgen.cli.grafana_opts import credentials, grafana_client, resolve_release_paths, resolve_target
from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json
from dashgen.cli.paramtypes import PositiveSeconds
from dashgen.deployment.profile import Profile
from dashgen.errors import CheckFailed, DashgenError, InputError, redact
from dashgen.escape import terminal_lines
from dashgen.publish import ledger as ledger_file
from dashgen.publish import stages as model
from dashgen.publish.actions import NOT_ATTEMPTED_OUTCOMES, STORED_OUTCOMES
from dashgen.publish.approvals import remedy
from dashgen.publish.contexts import Context, load_config
from dashgen.publish.execute import now_stamp
from dashgen.publish.export import connect, parallel
from dashgen.publish.ledger import normalise_url
from dashgen.publish.plan import PublishTarget
from dashgen.publish.query_validation import make_validator
from dashgen.publish.release import ReleaseOptions, ReleaseReport, run_release
from dashgen.publish.resource_outcome import ResourceItem
from dashgen.publish.stage_checks import check_published, check_resources, resource_outcomes
from dashgen.publish.stages import FAILED, PUBLISHED, VERIFIED, ContextRun, ReleaseState

CONFLICTING = ("grafana_url", "context_name", "folder_uid", "folder_title", "token_file")


def stage_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options of a staged release (added to ``dashgen publish``)."""
    options = [
        click.option(
            "--stages",
            metavar="NAMES",
            help="Release stage by stage: stage names of dashgen.toml's [stages], in order (e.g. canary,fleet).",
        ),
        click.option(
            "--resume",
            metavar="RELEASE_ID",
            help="Go on with a staged release that was held or waits for a go (the same build only).",
        ),
        click.option("--go", is_flag=True, help="Staged: start the next stage as soon as a stage's checks hold."),
        click.option(
            "--stage-wait",
            type=PositiveSeconds(maximum=86400.0, zero=True),  # FloatRange let nan through
            metavar="SECONDS",
            help="Staged: wait this long after a stage is published, check it again, then start the next.",
        ),
        click.option(
            "--stage-jobs",
            type=click.IntRange(1, 32),
            default=4,
            show_default=True,
            help="Staged: contexts of a stage released at a time.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def wants_stages(params: dict[str, Any]) -> bool:
    return bool(params.get("stages") or params.get("resume"))


@dataclass(frozen=True)
class Hooks:
    """What ``dashgen publish`` lends a staged release: its build, its commit check and its release options."""

    build: Callable[[list[Profile]], list[PublishTarget]]
    commit: Callable[[list[Profile]], str]
    # (context, release id, profiles) -> one context's options, its rule groups and folder permissions included
    options: Callable[[Context, str, list[Profile]], ReleaseOptions]


def staged_publish(ctx: click.Context, params: dict[str, Any], hooks: Hooks) -> None:
    """Run (or resume) a staged release; one report, one exit code."""
    given = [f"--{name.replace('_name', '').replace('_', '-')}" for name in CONFLICTING if params.get(name)]
    if given:
        raise InputError(f"{', '.join(given)}: a staged release publishes to the contexts of its stages, drop it")
    if params["dry_run"]:
        raise InputError(
            "--dry-run: plan each context with publish --context NAME --dry-run (a staged dry run is not kept)"
        )
    config = load_config(params.get("config_path"))
    if config is None:
        raise InputError("--stages: no dashgen.toml here (or give --config FILE) with [contexts.*] and [stages]")
    resolve_release_paths(params)
    ledger = params["ledger"]
    if params["resume"]:
        if params["stages"] or params["profile_names"]:
            raise InputError("--resume goes on with the release's own stages and profiles: drop --stages / --profile")
        state = model.load_state(ledger, params["resume"])
        if state.status == model.DONE:
            raise InputError(f"release {state.release_id} is done: nothing to resume")
        if state.status == model.AWAITING_GO and not _goes(params):
            raise InputError(
                f"release {state.release_id} waits for a go ({state.note}): pass --go, or --stage-wait SECONDS"
            )
        stages = state.stages
        profiles = selected_profiles(ctx, state.profiles)
    else:
        stages = model.stages_of(params["stages"], config.stages, str(config.path))
        profiles = selected_profiles(ctx, list(params["profile_names"]))
    # every context and its credentials found before anything is built or written
    contexts = {name: _context(params, name) for stage in stages for name in stage.contexts}
    _one_context_per_grafana(contexts)
    commit = hooks.commit(profiles)
    params["git_commit"] = commit
    for name, context in contexts.items():  # a context's Grafana-managed rules need its data source: said now
        try:
            hooks.options(context, "", profiles)
        except InputError as exc:
            raise InputError(f"context {name}: {exc}") from None
    targets = hooks.build(profiles)
    builds = {t.uid: t.build_sha for t in targets}
    if params["resume"]:
        changes = model.build_changes(state.builds, builds)
        if changes:
            raise CheckFailed(
                f"release {state.release_id} was started with another build; a resume publishes the same build, "
                f"so start a new release (publish --stages ...): {'; '.join(changes[:5])}"
            )
    else:
        rid = model.new_release_id(datetime.now(UTC), os.urandom(3))
        state = model.new_state(rid, now_stamp(), commit, [p.name for p in profiles], builds, stages)
    _run(state, contexts, targets, params, hooks, profiles)
    _report(ctx, state, params)


def _goes(params: dict[str, Any]) -> bool:
    return bool(params["go"]) or params["stage_wait"] is not None


def _context(params: dict[str, Any], name: str) -> Context:
    try:
        target = resolve_target({**params, "context_name": name})
        credentials(target, os.environ)  # an input error now, not after the canaries were written
    except InputError as exc:
        raise InputError(f"context {name}: {exc}") from None
    return target


def _one_context_per_grafana(contexts: dict[str, Context]) -> None:
    """Two contexts of one release on the same Grafana organisation would race for its lock and ledger lines."""
    seen: dict[tuple[str, int | None], str] = {}
    for name, context in contexts.items():
        key = (normalise_url(context.url), context.org_id)
        if key in seen:
            org = context.org_id or "of the credentials"
            raise InputError(
                f"contexts {seen[key]} and {name} are the same Grafana ({context.url}, org {org}): a release "
                "publishes to each Grafana once"
            )
        seen[key] = name


def _run(
    state: ReleaseState,
    contexts: dict[str, Context],
    targets: list[PublishTarget],
    params: dict[str, Any],
    hooks: Hooks,
    profiles: list[Profile],
) -> None:
    ledger = params["ledger"]
    state.status, state.note = model.RUNNING, ""
    model.save_state(ledger, state)
    documents = {t.uid: t.document for t in targets}
    try:
        for index, stage in enumerate(state.stages):
            runs = state.stage_runs(stage)
            todo = [run for run in runs if run.status != VERIFIED]
            parallel(
                params["stage_jobs"],
                lambda run: _publish(run, contexts[run.name], targets, params, hooks, state, profiles),
                todo,
            )
            model.save_state(ledger, state)
            last = index == len(state.stages) - 1
            released = [run for run in runs if run.status in (PUBLISHED, VERIFIED)]
            if todo and not last and params["stage_wait"] and len(released) == len(runs):
                time.sleep(params["stage_wait"])  # the soak: the checks below run after it
            # checked even when another context of the stage failed: the report says which ones hold
            parallel(params["stage_jobs"], lambda run: _check(run, contexts[run.name], documents, params), released)
            model.save_state(ledger, state)
            failed = [run.name for run in runs if run.status == FAILED]
            if failed:
                later = [s.name for s in state.stages[index + 1 :]]
                state.status = model.HELD
                state.note = f"held at stage {stage.name}: {', '.join(failed)} failed" + (
                    f"; stage(s) {', '.join(later)} not started (nothing written there)" if later else ""
                )
                return
            if last:
                state.status, state.note = (
                    model.DONE,
                    f"every stage passed ({sum(len(s.contexts) for s in state.stages)} contexts)",
                )
                return
            following = state.stage_runs(state.stages[index + 1])
            if not _goes(params) and all(
                run.status == model.PENDING for run in following
            ):  # a started stage had its go
                state.status = model.AWAITING_GO
                state.note = f"stage {stage.name} passed; stage {state.stages[index + 1].name} waits for a go"
                return
    except (KeyboardInterrupt, DashgenError) as exc:  # an interrupt: the contexts in flight finished; say where it is
        state.status = model.HELD
        state.note = f"interrupted ({type(exc).__name__}): {redact(str(exc))}"
        raise
    finally:
        model.save_state(ledger, state)


@contextmanager
def _caught(run: ContextRun) -> Iterator[None]:
    """A context's failure is its own: recorded on its run, never raised into the other contexts' releases."""
    try:
        yield
    except DashgenError as exc:
        run.status = FAILED
        run.problems.append(redact(str(exc)))
    except OSError as exc:
        run.status = FAILED
        run.problems.append(f"{exc.strerror or exc}")


def _publish(
    run: ContextRun,
    context: Context,
    targets: list[PublishTarget],
    params: dict[str, Any],
    hooks: Hooks,
    state: ReleaseState,
    profiles: list[Profile],
) -> None:
    run.problems, run.checks, run.outcomes = [], [], []
    with _caught(run), grafana_client(context, params, params["jobs"]) as client:
        connection = connect(client, context.org_id, params["jobs"])
        run.instance, run.org_id = connection.instance.url, connection.org_id
        options = hooks.options(context, state.release_id, profiles)
        datasource = context.datasource_url or params.get("datasource_url")
        validator = make_validator(datasource) if datasource else None  # new and changed queries, before a push
        result = run_release(connection, [t.uid for t in targets], lambda: targets, options, validator=validator)
        run.outcomes = [
            {
                "uid": o.uid,
                "outcome": str(o.outcome),
                "version": o.version,
                "stored_sha": o.stored_sha,
                "detail": o.detail,
            }
            for o in result.outcomes or []
        ]
        run.outcomes += resource_outcomes(result)
        run.problems += _problems(result)
        run.status = FAILED if run.problems else PUBLISHED


def _problems(result: ReleaseReport) -> list[str]:
    problems = [
        f"{d.target.uid}: REFUSED: {r.reason} -> {remedy(r.key)}" for d in result.plan.dashboards for r in d.refusals
    ]
    problems += [f"{d.target.uid}: INVALID: {p}" for d in result.plan.dashboards for p in d.problems]
    plan = result.plan
    others: list[ResourceItem] = [*plan.library, *plan.rules, *plan.permissions]
    for item in others:  # a refused one blocks the dashboards too
        problems += [f"{item.uid}: REFUSED: {r.reason} -> {remedy(r.key)}" for r in item.refusals]
    problems += [f"{o.uid}: {o.outcome}: {o.detail}" for o in result.failed if o.outcome not in NOT_ATTEMPTED_OUTCOMES]
    problems += [
        f"{o.uid}: {o.outcome}: {o.detail}" for o in result.library_failed if o.outcome not in NOT_ATTEMPTED_OUTCOMES
    ]
    problems += [f"not in the ledger: {o.ledger_line}" for o in result.unrecorded]
    problems += [note for note in result.notes if note.startswith("mixed release")]
    return problems


def _check(run: ContextRun, context: Context, documents: dict[str, dict[str, Any]], params: dict[str, Any]) -> None:
    run.problems, run.checks = [], []
    kept = [o for o in run.outcomes if o["outcome"] in STORED_OUTCOMES]
    stored = {o["uid"]: o["stored_sha"] for o in kept if not o.get("kind")}
    with _caught(run), grafana_client(context, params, params["jobs"]) as client:
        connection = connect(client, context.org_id, params["jobs"])
        datasource = context.datasource_url or params.get("datasource_url")
        result = check_published(connection, stored, documents, datasource, params["timeout"])
        resources = check_resources(connection, [o for o in kept if o.get("kind")])
        run.checks, run.problems = result.held + resources.held, result.problems + resources.problems
        run.status = FAILED if run.problems else VERIFIED


def _report(ctx: click.Context, state: ReleaseState, params: dict[str, Any]) -> None:
    rollback = model.rollback_commands(state, ledger_file.read(params["ledger"])) if state.status == model.HELD else []
    problem = state.note if state.status == model.HELD else None
    if params["output_format"] == "json":
        emit_json(ctx, model.report_dict(state, rollback), 1 if problem else 0, [problem] if problem else [])
    else:
        # problems name panels and carry a data source's answers: shown as text
        click.echo(terminal_lines(model.render_report(state, rollback)))
    if problem:
        raise CheckFailed(f"release {state.release_id} {problem}")
