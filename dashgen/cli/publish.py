"""``dashgen publish``: the guarded, verified release (the I/O edge of ``dashgen.publish.release``).

Order: lock -> ledger and preflight -> export (``--jobs`` at a time) -> rebuild and validate -> folders
-> plan -> validate new queries -> [dry run: print and stop] -> back up -> push -> read back -> ledger.
Every decision is taken before the first write; a release with any refusal writes nothing unless
``--partial``.
"""

from __future__ import annotations

import hashlib
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import click

from dashgen.build import build_all
from dashgen.cli.grafana_opts import connection_options as grafana_options
from dashgen.cli.grafana_opts import (
    grafana_client,
    make_client,
    release_options,
    resolve_release_paths,
    resolve_target,
    target_options,
)
from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json, progress
from dashgen.cli.staged import Hooks, stage_options, staged_publish, wants_stages
from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import Profile
from dashgen.errors import CheckFailed, InputError, ReleaseInterrupted
from dashgen.escape import inline_text, terminal_lines
from dashgen.files import atomic_write, read_regular_bytes, read_regular_text
from dashgen.grafana.client import GrafanaClient
from dashgen.grafana.normalise import as_grafana_stores
from dashgen.publish import approved_plan as approved_plan_file
from dashgen.publish import bundle as release_bundle
from dashgen.publish import ledger as ledger_file
from dashgen.publish.actions import BLOCKING, NOT_ATTEMPTED_OUTCOMES, STORED_OUTCOMES
from dashgen.publish.approvals import Approvals
from dashgen.publish.contexts import Context
from dashgen.publish.execute import Outcome
from dashgen.publish.export import Connection, connect
from dashgen.publish.gitinfo import current_commit
from dashgen.publish.permissions_plan import FolderAccess
from dashgen.publish.plan import Plan, PublishTarget
from dashgen.publish.release import ReleaseOptions, ReleaseReport, run_release
from dashgen.publish.report import plan_dict, render_outcomes, render_plan
from dashgen.publish.rules_plan import RuleGroupTarget
from dashgen.render.canonical import content_sha, content_view
from dashgen.render.ids import panel_id
from dashgen.render.library import LibraryElement
from dashgen.render.spec import DashboardSpec
from dashgen.rules.grafana import group_uid
from dashgen.rules.render import GrafanaTarget, profile_grafana_groups

# ``dashgen drift`` and ``diff --live`` use the plain connection options and client from here
__all__ = [
    "approval_options",
    "grafana_options",
    "keys_by_panel_id",
    "make_client",
    "publish",
    "release",
    "report",
    "target_of",
]

ADOPT_LIVE_DEPRECATED = (
    "warning: --adopt-live is deprecated: it never adopted the live edit, it overwrites it "
    "(a backup is kept); use --overwrite-live UID"
)


def approval_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The approval flags of publish and rollback."""
    options = [
        click.option(
            "--approve",
            multiple=True,
            metavar="KEY",
            help="Approve a refused change (see the plan); '<uid>/' scopes it, globs allowed.",
        ),
        click.option(
            "--overwrite-live",
            multiple=True,
            metavar="UID",
            help="Overwrite edits made in Grafana to UID since the last release (a backup is kept; globs allowed).",
        ),
        click.option(
            "--overwrite-v2",
            multiple=True,
            metavar="UID",
            help="Overwrite UID although Grafana stores it in the v2 schema (the plan says what is lost).",
        ),
        click.option(
            "--adopt-live",
            multiple=True,
            metavar="UID",
            help="DEPRECATED alias of --overwrite-live (it never adopted the edit: it overwrites it).",
        ),
        click.option(
            "--partial", is_flag=True, help="Publish what is not refused (default: a refusal anywhere writes nothing)."
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def approvals_from(
    approve: tuple[str, ...],
    overwrite_live: tuple[str, ...],
    overwrite_v2: tuple[str, ...],
    adopt_live: tuple[str, ...],
) -> Approvals:
    if adopt_live:
        click.echo(ADOPT_LIVE_DEPRECATED, err=True)
    return Approvals(tuple(approve), tuple(overwrite_live) + tuple(adopt_live), tuple(overwrite_v2))


def keys_by_panel_id(spec: DashboardSpec) -> dict[int, str]:
    """Panel id -> stable key; ids derive from keys, so the map also holds for older versions of the panel."""
    return {panel_id(panel.key): panel.key for panel in spec.panels()}


def target_of(
    profile: str,
    uid: str,
    document: dict[str, Any],
    panel_keys: dict[int, str],
    min_refresh_interval: str = "5s",
    sha: str | None = None,
    library: tuple[LibraryElement, ...] = (),
) -> PublishTarget:
    """A publish target whose ``expected_sha`` is what Grafana stores after its known save-time rewrites."""
    # the bytes ``content_sha`` hashes, kept so that a push sends them without encoding the dashboard again
    encoded = json.dumps(content_view(document), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )
    sha = sha or hashlib.sha256(encoded).hexdigest()
    stored = as_grafana_stores(document, min_refresh_interval)
    expected = content_sha(stored) if stored != document else sha
    return PublishTarget(profile, uid, document, sha, panel_keys, expected, encoded, library)


def bundle_of(profiles: list[Any], built: list[Any], commit: str) -> release_bundle.Bundle:
    """The release bundle of a build (``dashgen check --bundle``): what the publish job pushes without building."""
    minimum = {p.name: p.dashboard.min_refresh_interval for p in profiles}
    return release_bundle.Bundle(
        commit,
        tuple(
            release_bundle.BundledDashboard(
                b.profile, b.uid, minimum.get(b.profile, "5s"), keys_by_panel_id(b.spec), b.document
            )
            for b in built
        ),
    )


def _read_bundle(path: Path) -> release_bundle.Bundle:
    try:
        data = read_regular_bytes(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the release bundle ({exc.strerror})") from None
    return release_bundle.decode(data, str(path))


def _read_approved_plan(path: Path) -> approved_plan_file.ApprovedPlan:
    try:
        text = read_regular_text(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the approved plan ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: cannot read the approved plan ({exc})") from None
    return approved_plan_file.parse(text, str(path))


def _before_the_first_plan(ctx: click.Context, params: dict[str, Any]) -> bool:
    """Merge-to-apply before its first release: the approved plan is still the empty one ``dashgen init`` commits
    and the ledger records no release, so no one has approved anything and nothing is published. Said in one
    line, exit 0 and no ledger line: pushing a new repository's main is not a refused release. Once a pull
    request's plan was committed or a release ran, a write outside the approved plan is refused as always."""
    plan: approved_plan_file.ApprovedPlan = params["approved_plan_loaded"]
    released = any(r.outcome not in NOT_ATTEMPTED_OUTCOMES for r in ledger_file.read(params["ledger"]))
    if not plan.never_made or released:
        return False
    message = (
        f"nothing published: {plan.source} holds no reviewed plan yet and the ledger no release; the first "
        f"release goes through a pull request: commit the plan its comment shows as {plan.source}, then merge"
    )
    if params["output_format"] == "json":
        emit_json(ctx, {"dry_run": False, "grafana": None, "dashboards": [], "outcomes": [], "notes": [message]})
    else:
        click.echo(message)
    return True


def _release_problem(failed: list[Outcome], total: int) -> str | None:
    """What went wrong, saves that landed but were not fully recorded apart from dashboards not published."""
    landed = [o for o in failed if o.outcome in STORED_OUTCOMES]
    not_published = [o for o in failed if o not in landed]
    parts = []
    if not_published:
        parts.append(
            f"{len(not_published)} of {total} dashboards not published: "
            + ", ".join(f"{o.uid} ({o.outcome})" for o in not_published)
        )
    if landed:
        parts.append(
            f"{len(landed)} of {total} saved in Grafana but not fully recorded (see above): "
            + ", ".join(o.uid for o in landed)
        )
    return "; ".join(parts) or None


def _refusals_named(plan: Plan) -> str:
    """The dry run's one error line: the dashboards refused by uid (a JSON reader has no plan text above it)."""
    uids = [d.target.uid for d in plan.dashboards if d.action in BLOCKING]
    actions = [i.action for i in plan.library] + [i.action for i in plan.rules] + [i.action for i in plan.permissions]
    others = actions.count("refused")
    named = [f"{len(uids)} dashboard(s) refused: {', '.join(uids)}"] if uids else []
    named += [f"{others} library panel(s), rule group(s) or folder permission(s) refused"] if others else []
    return f"the plan has refusals: {'; '.join(named) or 'see the plan'}"


def report(
    result: ReleaseReport,
    output_format: str,
    connection: Connection | None = None,
    approvals_out: Path | None = None,
    commit: str = "",
) -> None:
    """Print the plan (and the outcomes); raise ``CheckFailed`` when anything was refused or failed."""
    plan, outcomes = result.plan, result.outcomes
    for note in result.notes:  # a lock holder's command line, a folder's uid: shown as text
        click.echo(f"note: {inline_text(note)}", err=True)  # a mixed release's note names all its dashboards
    failed = result.failed
    if result.dry_run:
        problem = _refusals_named(plan) if plan.refused else None
    else:
        problem = _release_problem(failed, len(outcomes or []))
        if result.library_failed:
            problem = "; ".join(
                [*([problem] if problem else []), "library panels / rule groups / folder permissions not published: "]
            ) + ", ".join(f"{o.uid} ({o.outcome})" for o in result.library_failed)
    if output_format == "json":
        data = plan_dict(plan)
        data["dry_run"] = result.dry_run
        data["grafana"] = connection.describe() if connection else None
        data["notes"] = result.notes
        if outcomes is not None:
            data["outcomes"] = [{k: v for k, v in asdict(o).items() if k != "ledger_line"} for o in outcomes]
            data["library_outcomes"] = [asdict(o) for o in result.library]
            data["rule_group_outcomes"] = [asdict(o) for o in result.rules]
            data["permission_outcomes"] = [asdict(o) for o in result.permissions]
        errors = [problem] if problem else []
        errors += [f"not in the ledger: {o.ledger_line}" for o in result.unrecorded]
        emit_json(click.get_current_context(), json.loads(json.dumps(data, default=str)), 1 if problem else 0, errors)
    else:
        click.echo(terminal_lines(render_plan(plan, connection.info.label if connection else "")))
        if result.dry_run:
            click.echo("dry run: nothing was written (no backup, no ledger line, no save)")
        if outcomes or result.library or result.rules or result.permissions:
            everything = [*result.library, *result.rules, *result.permissions, *(outcomes or [])]
            click.echo(terminal_lines(render_outcomes(everything)))
    if approvals_out is not None:
        try:
            atomic_write(approvals_out, approved_plan_file.render(plan, commit).encode("utf-8"))
        except OSError as exc:
            raise InputError(f"{approvals_out}: cannot write the plan to approve ({exc.strerror})") from None
        click.echo(f"{approvals_out}: the plan to approve written (commit it as the approved plan)", err=True)
    if result.unrecorded:
        click.echo("error: these saves are NOT in the ledger; append these lines to it by hand:", err=True)
        for outcome in result.unrecorded:
            click.echo(outcome.ledger_line, err=True)
    if problem:
        raise CheckFailed(problem)


def release_options_of(
    params: dict[str, Any],
    command: str,
    folder_uid: str | None,
    folder_title: str,
    release_id: str | None = None,
) -> ReleaseOptions:
    """The options of one release from the command's parameters."""
    approvals = approvals_from(
        params["approve"], params["overwrite_live"], params["overwrite_v2"], params["adopt_live"]
    )
    started = params.setdefault("started_at", time.monotonic())
    deadline = started + params["deadline"] if params.get("deadline") else None
    return ReleaseOptions(
        params["ledger"],
        params["backup_dir"],
        params.get("git_commit") or current_commit(),
        approvals,
        folder_uid,
        folder_title,
        params["partial"],
        params["dry_run"],
        command,
        lock_stale_after=params["lock_stale_after"],
        deadline=deadline,
        release_id=release_id,
        approved_plan=params.get("approved_plan_loaded"),
    )


def release(
    client: GrafanaClient,
    params: dict[str, Any],
    uids: list[str],
    build: Callable[[], list[PublishTarget]],
    validator: Any = None,
    command: str = "dashgen publish",
    folder_uid: str | None = None,
    folder_title: str = "",
    *,
    library: tuple[LibraryElement, ...] = (),
    library_cleanup: bool = False,
    rule_groups: tuple[RuleGroupTarget, ...] = (),
    permissions: tuple[FolderAccess, ...] = (),
) -> None:
    """Connect, run the release with the command's options, and report."""
    connection = connect(client, params.get("org_id_resolved"), params["jobs"])
    options = replace(
        release_options_of(params, command, folder_uid, folder_title),
        library=library,
        library_cleanup=library_cleanup,
        rule_groups=rule_groups,
        permissions=permissions,
    )
    with (
        progress(
            "publishing",
            len(uids),
            enabled=params["output_format"] == "text" and not params["dry_run"] and len(uids) > 1,
        ) as advance,
        terminated_as_interrupt(),
    ):
        result = run_release(connection, uids, build, options, validator=validator, progress=lambda _item: advance(1))
    report(result, params["output_format"], connection, params.get("approvals_out"), options.git_commit)


@contextmanager
def terminated_as_interrupt() -> Iterator[None]:
    """While a release runs, SIGTERM (a CI job cancelled, a pod stopped) stops it like Ctrl-C: no new save is
    sent, the saves in flight finish and every outcome gets its ledger line, the lock is released, exit 143."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise ReleaseInterrupted("release interrupted by SIGTERM before any save", 143)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@click.command()
@target_options
@click.option("--profile", "profile_names", multiple=True, help="Profile to publish (repeatable; default: all).")
@click.option(
    "--folder-uid",
    help="Folder to publish into (default: the context's, else where each dashboard is; "
    "new ones: root). '' is the root.",
)
@click.option("--folder-title", help="Title of the folder when it is created (with --approve create-folder:UID).")
@click.option("--dry-run", is_flag=True, help="Print the complete plan (with query validation); write nothing.")
@approval_options
@click.option("--datasource-url", help="Validate new and changed queries against this Prometheus-compatible API.")
@click.option(
    "--bundle",
    "bundle_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Publish this release bundle (dashgen check --bundle) instead of building: runs no panel module, so a "
    "job holding the token runs no team code.",
)
@click.option(
    "--approved-plan",
    "approved_plan_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Merge-to-apply: write only what this committed plan holds, with its approvals, for its build SHA and "
    "Grafana version; anything else is refused, naming the dashboard.",
)
@click.option(
    "--approvals-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --dry-run: write the plan to approve (TOML, for --approved-plan) to this file.",
)
@click.option(
    "--datasource-uid",
    help="The uid of the Prometheus-compatible data source Grafana-managed alert rules query (profiles whose "
    "[dashboard] ruler is grafana or both; default: the context's datasource_uid).",
)
@click.option(
    "--allow-dirty",
    is_flag=True,
    help="Publish although tracked files of the profiles' repository have uncommitted changes (the "
    "ledger then records the commit with -dirty).",
)
@release_options
@stage_options
@click.pass_context
def publish(ctx: click.Context, **params: Any) -> None:
    """Publish the dashboards of the selected profiles to Grafana, guarded and verified.

    Changed queries of existing panels, changed variable definitions, removals, folder moves and creations,
    edits made in Grafana since the last release and dashboards Grafana stores as v2 are refused unless
    approved; nothing is written while anything is refused. Every push is read back and its SHA compared
    with the build; each dashboard gets a line in the ledger.
    """
    params["started_at"] = time.monotonic()  # --deadline counts from here
    if params["approvals_out"] is not None and not params["dry_run"]:
        raise click.UsageError("--approvals-out writes the plan of a dry run: add --dry-run")
    if wants_stages(params):
        if params["bundle_path"] is not None or params["approved_plan_path"] is not None:
            raise click.UsageError(
                "--stages builds and plans each context itself: leave out --bundle / --approved-plan"
            )
        hooks = Hooks(
            build_targets,
            lambda profiles: released_commit(profiles, params),
            lambda context, rid, profiles: replace(
                release_options_of(params, "dashgen publish", context.folder_uid, context.folder_title, rid),
                library_cleanup=True,
                rule_groups=grafana_rule_groups(profiles, context),
                permissions=context.permissions,
            ),
        )
        with terminated_as_interrupt():  # SIGTERM: the contexts in flight finish, the state says where it stopped
            staged_publish(ctx, params, hooks)
        return
    resolve_release_paths(params)
    if params["approved_plan_path"] is not None:
        params["approved_plan_loaded"] = _read_approved_plan(params["approved_plan_path"])
        # before any Grafana setting is read: a new repository's first push may come before GRAFANA_URL is set
        if not params["dry_run"] and _before_the_first_plan(ctx, params):
            return
    target = resolve_target(params)
    params["org_id_resolved"] = target.org_id
    if params["bundle_path"] is not None:
        _publish_bundle(params, target)
        return
    profiles = selected_profiles(ctx, list(params["profile_names"]))
    params["git_commit"] = released_commit(profiles, params)
    uids = [spec.uid for profile in profiles for spec in dashboard_specs(profile)]

    def build() -> list[PublishTarget]:
        return build_targets(profiles)

    validator = _query_validator(params["datasource_url"]) if params["datasource_url"] else None
    with grafana_client(target, params, params["jobs"]) as client:
        release(
            client,
            params,
            uids,
            build,
            validator,
            folder_uid=target.folder_uid,
            folder_title=target.folder_title,
            library_cleanup=True,
            rule_groups=grafana_rule_groups(profiles, target),
            permissions=target.permissions,
        )


def grafana_rule_groups(profiles: list[Any], target: Context) -> tuple[RuleGroupTarget, ...]:
    """The Grafana-managed rule groups of the profiles whose ruler gives Grafana rules, in the context's alert
    folder, querying its data source; an input error naming what is missing."""
    ruled = [p for p in profiles if p.dashboard.ruler != "prometheus"]
    if not ruled:
        return ()
    names = ", ".join(p.name for p in ruled)
    if not target.datasource_uid:
        raise InputError(
            f"profiles {names} have Grafana evaluate alerts ([dashboard] ruler): give the data source uid the "
            "rules query (--datasource-uid, or datasource_uid of the context in dashgen.toml)"
        )
    folder = target.alert_folder_uid or target.folder_uid
    if not folder:
        raise InputError(
            f"profiles {names} have Grafana evaluate alerts: give their folder (alert_folder_uid or folder_uid of the "
            "context in dashgen.toml, or --folder-uid)"
        )
    where = GrafanaTarget(folder_uid=folder, datasource_uid=target.datasource_uid)
    return tuple(
        RuleGroupTarget(group_uid(p.name, g["title"]), p.name, g)
        for p in ruled
        for g in profile_grafana_groups(p, where)
    )


def released_commit(profiles: list[Profile], params: dict[str, Any]) -> str:
    """The commit the release records; refused when tracked files of the profiles' repository changed (unless
    ``--allow-dirty``, or a dry run)."""
    folder = Path(profiles[0].path).parent if profiles else None
    ledger = params.get("ledger")
    commit = current_commit(folder, [Path(ledger)] if ledger else [])
    if commit.endswith("-dirty") and not params["allow_dirty"] and not params["dry_run"]:
        raise CheckFailed(
            f"publish refused: the repository of {folder} has uncommitted changes to "
            "tracked files, so no commit holds what would be released; commit them, or pass "
            "--allow-dirty (the ledger records the commit as -dirty)"
        )
    return commit


def build_targets(profiles: list[Profile]) -> list[PublishTarget]:
    """The build of ``profiles`` as publish targets."""
    minimum = {p.name: p.dashboard.min_refresh_interval for p in profiles}
    return [
        target_of(
            b.profile, b.uid, b.document, keys_by_panel_id(b.spec), minimum.get(b.profile, "5s"), library=b.library
        )
        for b in build_all(profiles)
    ]


def _publish_bundle(params: dict[str, Any], target: Any) -> None:
    """Publish a release bundle: the targets come from the file, no profile or panel module is loaded."""
    bundle = _read_bundle(params["bundle_path"])
    wanted = set(params["profile_names"])
    entries = [d for d in bundle.dashboards if not wanted or d.profile in wanted]
    missing = wanted - {d.profile for d in bundle.dashboards}
    if missing:
        raise InputError(f"{params['bundle_path']}: holds no dashboard of profile {sorted(missing)[0]!r}")
    params["git_commit"] = bundle.commit

    def build() -> list[PublishTarget]:
        return [target_of(d.profile, d.uid, d.document, d.panel_keys, d.min_refresh_interval) for d in entries]

    validator = _query_validator(params["datasource_url"]) if params["datasource_url"] else None
    with grafana_client(target, params, params["jobs"]) as client:
        release(
            client,
            params,
            [d.uid for d in entries],
            build,
            validator,
            folder_uid=target.folder_uid,
            folder_title=target.folder_title,
        )


def _query_validator(datasource_url: str) -> Any:
    from dashgen.publish.query_validation import make_validator

    return make_validator(datasource_url)
