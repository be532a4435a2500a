"""``dashgen rollback`` and ``dashgen history``: a recorded copy republished through the same guarded release,
and the ledger's releases of one dashboard on one Grafana instance beside Grafana's own (20-deep) history.
Both read only the ledger records of the instance (URL + org) they talk to."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict

import click

from dashgen.cli.grafana_opts import (
    grafana_client,
    ledger_option,
    release_options,
    resolve_release_paths,
    resolve_target,
    target_options,
)
from dashgen.cli.options import selected_profiles
from dashgen.cli.output import emit_json, format_option, print_table
from dashgen.cli.publish import approval_options, keys_by_panel_id, release, target_of
from dashgen.dashboard import dashboard_specs
from dashgen.errors import InputError
from dashgen.escape import terminal_text
from dashgen.grafana.client import GrafanaClient
from dashgen.publish import ledger as ledger_file
from dashgen.publish import stages
from dashgen.publish.actions import OutcomeKind
from dashgen.publish.alert_rules import recorded_group
from dashgen.publish.backups import backup_dashboard, load_backup
from dashgen.publish.export import connect
from dashgen.publish.ledger import LedgerRecord
from dashgen.publish.library import recorded_element
from dashgen.publish.library_plan import is_library_record
from dashgen.publish.permissions import recorded_access
from dashgen.publish.permissions_plan import KIND as PERMISSIONS_KIND
from dashgen.publish.permissions_plan import FolderAccess
from dashgen.publish.rules_plan import KIND as RULES_KIND
from dashgen.publish.rules_plan import RuleGroupTarget
from dashgen.render.library import LibraryElement


def _panel_keys(ctx: click.Context, profile_name: str, uid: str) -> dict[int, str]:
    """Panel id -> stable key from the current build of the profile (ids derive from keys, so they still match)."""
    try:
        (profile,) = selected_profiles(ctx, [profile_name])
    except (InputError, ValueError):
        return {}
    return next((keys_by_panel_id(spec) for spec in dashboard_specs(profile) if spec.uid == uid), {})


def _dashboard_of(path: Path) -> dict[str, Any]:
    """The dashboard a backup holds: v1 JSON, or a v2 resource (name and spec; republished through /apis v2)."""
    dashboard = backup_dashboard(load_backup(path))
    if dashboard is None:
        raise InputError(f"{path}: neither a dashboard nor a v2 dashboard resource")
    return dashboard


def find_backup(
    uid: str, to: str, records: list[LedgerRecord], backup_dir: Path, client: GrafanaClient
) -> tuple[dict[str, Any], str]:
    """The dashboard JSON to roll back to: a release (build SHA prefix) or a Grafana version number."""
    records = [r for r in records if r.uid == uid]
    to = to.strip()
    if not to:
        raise InputError("--to: give a Grafana version number or a release's build SHA prefix, not an empty value")
    if not to.isdigit():
        for record in reversed(records):
            if str(record.build_sha).startswith(to) and record.published_file:
                return _dashboard_of(Path(record.published_file)), f"release {to}"
        raise InputError(f"{uid}: no published release with build SHA starting {to!r} in the ledger of this Grafana")
    version = int(to)
    for record in reversed(records):
        if record.grafana_version == version and record.published_file:
            return _dashboard_of(Path(record.published_file)), f"release v{version}"
    for record in reversed(records):
        backup = record.backup_file
        # the backup's name ends "-v<version>.json" (backups.backup_path): the version is matched whole, so
        # --to 1 is never v11's backup
        if backup and Path(backup).name.endswith(f"-v{version}.json") and Path(backup).exists():
            return _dashboard_of(Path(backup)), f"backup {backup}"
    kept = client.get_version(uid, version)
    if kept.data:
        return kept.data, f"Grafana version {version}"
    raise InputError(f"{uid}: no backup and no Grafana history for version {version}")


def find_library_release(uid: str, to: str, records: list[LedgerRecord]) -> tuple[LibraryElement, str]:
    """The element a recorded release of library panel ``uid`` stored: a build SHA prefix, or the element version
    it stored (Grafana keeps no history of library panels: only dashgen's read-back copies)."""
    to = to.strip()
    if not to:
        raise InputError("--to: give a release's build SHA prefix or the library panel's version, not an empty value")
    for record in reversed([r for r in records if r.uid == uid and is_library_record(r)]):
        matches = str(record.grafana_version) == to if to.isdigit() else str(record.build_sha).startswith(to)
        element = recorded_element(record, load_backup) if matches else None
        if element is not None:
            return replace(
                element, key=f"queries:{uid}"
            ), f"release {str(record.build_sha)[:12]} (v{record.grafana_version})"
    raise InputError(
        f"{uid}: no recorded release of this library panel matching {to!r} with its read-back copy on disk"
    )


def find_permissions_release(uid: str, to: str, records: list[LedgerRecord]) -> FolderAccess:
    """The folder permissions a recorded release stored (by the stored SHA's or the build SHA's prefix)."""
    to = to.strip()
    for record in reversed([r for r in records if r.uid == uid and r.kind == PERMISSIONS_KIND]):
        if to and (str(record.stored_sha).startswith(to) or str(record.build_sha).startswith(to)):
            access = recorded_access(record)
            if access is not None:
                return access
    raise InputError(f"{uid}: no recorded release of these folder permissions matching {to!r}")


def find_group_release(uid: str, to: str, records: list[LedgerRecord]) -> tuple[RuleGroupTarget, str]:
    """The group a recorded release of rule group ``uid`` stored (by build SHA prefix): its read-back copy."""
    to = to.strip()
    if not to:
        raise InputError("--to: give a release's build SHA prefix, not an empty value")
    for record in reversed([r for r in records if r.uid == uid and r.kind == RULES_KIND]):
        if str(record.build_sha).startswith(to) or str(record.stored_sha).startswith(to):
            group = recorded_group(record, load_backup)
            if group is not None:
                return group, f"release {str(record.build_sha)[:12]} of {record.time}"
    raise InputError(f"{uid}: no recorded release of this rule group matching {to!r} with its read-back copy on disk")


@click.command()
@target_options
@click.argument("uid")
@click.option(
    "--to",
    "to",
    required=True,
    metavar="VERSION_OR_RELEASE",
    help="A Grafana version number, or a release's build SHA prefix from the ledger.",
)
@approval_options
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@release_options
@click.pass_context
def rollback(ctx: click.Context, uid: str, to: str, **params: Any) -> None:
    """Republish a recorded backup of UID through the same guarded path as publish."""
    target = resolve_target(params)
    resolve_release_paths(params)
    params["org_id_resolved"] = target.org_id
    with grafana_client(target, params, params["jobs"]) as client:
        instance = connect(client, target.org_id).instance
        records = ledger_file.of_instance(ledger_file.read(params["ledger"]), instance)
        if any(r.kind == PERMISSIONS_KIND for r in records if r.uid == uid):
            access = find_permissions_release(uid, to, records)
            click.echo(f"rolling the permissions of folder {access.folder_uid!r} back to {to}", err=True)
            release(client, params, [], list, command="dashgen rollback", permissions=(access,))
            return
        if any(r.kind == RULES_KIND for r in records if r.uid == uid):
            group, source = find_group_release(uid, to, records)
            click.echo(f"rolling rule group {group.title!r} ({uid}) back to {source}", err=True)
            release(client, params, [], list, command="dashgen rollback", rule_groups=(group,))
            return
        if any(is_library_record(r) for r in records if r.uid == uid):
            element, source = find_library_release(uid, to, records)
            click.echo(f"rolling library panel {uid} back to {source}", err=True)
            release(client, params, [], list, command="dashgen rollback", library=(element,))
            return
        document, source = find_backup(uid, to, records, params["backup_dir"], client)
        document = {k: v for k, v in document.items() if k not in ("id", "version")}
        profile = next((r.profile for r in reversed(records) if r.uid == uid), "")
        click.echo(f"rolling {uid} back to {source}", err=True)
        targets = [target_of(profile, uid, document, _panel_keys(ctx, profile, uid))]
        release(client, params, [uid], lambda: targets, command="dashgen rollback")


class _VersionRow(TypedDict):
    """One version of ``dashgen history``: Grafana's history entry and dashgen's ledger record of it."""

    version: int
    in_grafana: bool
    grafana_message: str | None
    grafana_created: str | None
    grafana_created_by: str | None
    release_time: str | None
    build_sha: str | None
    git_commit: str | None


@click.command()
@target_options
@click.argument("uid", required=False)
@ledger_option()
@click.option(
    "--release",
    "release_id",
    metavar="RELEASE_ID",
    help="Show one staged release across every context it reached (from the ledger; no Grafana is asked).",
)
@format_option("text", "json")
@click.pass_context
def history(
    ctx: click.Context, uid: str | None, ledger: Path | None, release_id: str | None, output_format: str, **params: Any
) -> None:
    """Show the ledger's releases of UID on this Grafana beside Grafana's own versions (Grafana keeps only 20),
    or with --release ID one staged release across its contexts."""
    params["ledger"] = ledger
    resolve_release_paths(params)
    ledger = params["ledger"]
    if release_id is not None:
        if uid is not None:
            raise InputError("history: give a UID or --release ID, not both")
        release_history(ctx, ledger, release_id, output_format)
        return
    if uid is None:
        raise InputError("history: give the UID of a dashboard (or --release ID)")
    target = resolve_target(params)
    state = ledger_file.load(ledger)
    if state.torn:
        click.echo(f"note: {state.torn_note}", err=True)
    with grafana_client(target, params) as client:
        instance = connect(client, target.org_id).instance
        records = [r for r in ledger_file.of_instance(state.records, instance) if r.uid == uid]
        library = any(r.kind for r in records)  # not a dashboard: Grafana keeps no versions of it
        versions = [] if library else client.list_versions(uid)  # Grafana keeps no history of library panels
    published = [r for r in records if r.outcome == OutcomeKind.PUBLISHED]
    if library:  # a rule group has no version in Grafana: its releases are numbered in ledger order
        by_version = {r.grafana_version or n: r for n, r in enumerate(published, start=1)}
    else:
        by_version = {r.grafana_version: r for r in published if r.grafana_version is not None}
    rows: list[_VersionRow] = []
    for version in sorted({v.version for v in versions} | {k for k in by_version if k is not None}):
        grafana = next((v for v in versions if v.version == version), None)
        record = by_version.get(version)
        rows.append(
            {
                "version": version,
                "in_grafana": grafana is not None,
                "grafana_message": grafana.message if grafana else None,
                "grafana_created": grafana.created if grafana else None,
                "grafana_created_by": grafana.created_by if grafana else None,
                "release_time": record.time if record else None,
                "build_sha": record.build_sha if record else None,
                "git_commit": record.git_commit if record else None,
            }
        )
    if output_format == "json":
        emit_json(
            ctx,
            json.loads(
                json.dumps(
                    {
                        "uid": uid,
                        "instance": instance.label,
                        "versions": rows,
                        "ledger": [r.to_dict() for r in records],
                    },
                    default=str,
                )
            ),
        )
        return
    kind = next((str(r.kind).replace("-", " ") for r in records if r.kind), "")
    click.echo(f"{uid} on {instance.label}" + (f" ({kind})" if kind else ""))
    table = []
    for row in rows:
        kept = "(Grafana keeps no history of it; dashgen keeps its read-back copy)" if library else ""
        note = terminal_text(
            row["grafana_message"] or (kept or "(pruned from Grafana's history)" if not row["in_grafana"] else ""), 300
        )
        table.append(
            [
                str(row["version"]),
                "yes" if row["in_grafana"] else "no",
                row["release_time"] or "-",
                (row["build_sha"] or "-")[:12],
                note,
            ]
        )
    print_table(
        [
            ("version", "right"),
            ("grafana", "left"),
            ("released by dashgen", "left"),
            ("build", "left"),
            ("message", "left"),
        ],
        table,
    )


def release_history(ctx: click.Context, ledger: Path, release_id: str, output_format: str) -> None:
    """The ledger lines of one staged release, grouped by the context (Grafana and org) they were written for."""
    try:
        state: stages.ReleaseState | None = stages.load_state(ledger, release_id)
    except InputError:
        state = None  # the state file is a convenience; the ledger is the record
    records = stages.release_records(ledger_file.read(ledger), release_id)
    if not records and state is None:
        raise InputError(f"{ledger}: no line of release {release_id!r}")
    names = stages.context_names(state)
    rows: list[dict[str, Any]] = [
        {
            "context": names.get((r.grafana_url, r.org_id), ""),
            "grafana_url": r.grafana_url,
            "org_id": r.org_id,
            "uid": r.uid,
            "outcome": str(r.outcome),
            "grafana_version": r.grafana_version,
            "stored_sha": r.stored_sha,
            "time": r.time,
        }
        for r in records
    ]
    if output_format == "json":
        emit_json(
            ctx,
            {
                "release_id": release_id,
                "status": state.status if state else None,
                "stages": [{"name": s.name, "contexts": list(s.contexts)} for s in state.stages] if state else [],
                "lines": rows,
            },
        )
        return
    status = f": {state.status} ({state.note})" if state else ""
    click.echo(f"release {release_id}{status}")
    print_table(
        [
            ("context", "left"),
            ("grafana", "left"),
            ("uid", "left"),
            ("outcome", "left"),
            ("version", "right"),
            ("stored", "left"),
            ("time", "left"),
        ],
        [
            [
                row["context"] or "-",
                f"{row['grafana_url']} org {row['org_id']}",
                str(row["uid"]),
                str(row["outcome"]),
                str(row["grafana_version"] if row["grafana_version"] is not None else "-"),
                str(row["stored_sha"] or "-")[:12],
                str(row["time"]),
            ]
            for row in rows
        ],
    )
