"""The edges of ``dashgen diff``: read dashboards from files, folders, a git ref, or a live Grafana."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import click

from dashgen.cli.connection import CONNECTION_PARAMS, connection_options
from dashgen.document.budget import MAX_FILE_BYTES, file_over_budget, panels_over_budget
from dashgen.files import read_regular_text
from dashgen.files.parsers import NestedTooDeeply, parse_json


class DiffInputError(Exception):
    """A side of the diff cannot be read; the message names the file or ref."""


def _decode(text: str, where: str) -> Any:
    try:
        doc = parse_json(text)
    except NestedTooDeeply as exc:
        raise DiffInputError(f"{where}: JSON {exc}") from None
    except ValueError as exc:
        raise DiffInputError(f"{where}: not valid JSON: {exc}") from None
    too_many = panels_over_budget(doc)
    if too_many is not None:
        raise DiffInputError(f"{where}: {too_many}")
    return doc


def read_side(path: str | Path) -> dict[str, Any]:
    """``{name: doc}``: a file gives ``{file name: doc}``, a folder its ``*.json`` by relative path."""
    p = Path(path)
    if p.is_dir():
        files = {f.relative_to(p).as_posix(): f for f in sorted(p.rglob("*.json")) if f.is_file()}
    elif os.path.lexists(p):  # a file, or a FIFO / device / looping symlink the reader names as what it is
        files = {p.name: p}
    else:
        raise DiffInputError(f"{p}: no such file or directory")
    docs: dict[str, Any] = {}
    for name, f in files.items():
        try:
            too_large = file_over_budget(f.stat().st_size)
            if too_large is not None:
                raise DiffInputError(f"{f}: {too_large}")
            docs[name] = _decode(read_regular_text(f, MAX_FILE_BYTES), str(f))
        except UnicodeDecodeError as exc:
            raise DiffInputError(f"{f}: not UTF-8 text (byte {exc.start})") from exc
        except OSError as exc:
            raise DiffInputError(f"{f}: cannot read: {exc.strerror or exc}") from exc
    return docs


def _git(args: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DiffInputError(f"git {' '.join(args)}: {exc}") from exc
    if done.returncode != 0:
        raise DiffInputError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def read_git_side(ref: str, folder: str | Path) -> dict[str, Any]:
    """The ``*.json`` files committed under ``folder`` at ``ref`` (``git show REF:path``), by relative path."""
    folder = Path(folder)
    cwd = folder.resolve() if folder.is_dir() else Path.cwd()
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    rel = folder.resolve().relative_to(top).as_posix()
    listing = _git(["ls-tree", "-r", "--name-only", ref, "--", rel], top).splitlines()
    docs: dict[str, Any] = {}
    for path in listing:
        if path.endswith(".json"):
            name = path[len(rel) + 1 :] if rel not in ("", ".") else path
            docs[name] = _decode(_git(["show", f"{ref}:{path}"], top), f"{ref}:{path}")
    return docs


def git_text(ref: str, path: str | Path) -> str:
    """The file ``path`` (of the working tree) as committed at ``ref``."""
    where = Path(path).resolve()
    top = Path(_git(["rev-parse", "--show-toplevel"], where.parent).strip())
    return _git(["show", f"{ref}:{where.relative_to(top).as_posix()}"], top)


def read_git_texts(ref: str, folder: str | Path, suffix: str) -> dict[str, str]:
    """The text files ending in ``suffix`` directly under ``folder`` at ``ref``, by file name."""
    folder = Path(folder)
    cwd = folder.resolve() if folder.is_dir() else Path.cwd()
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    rel = folder.resolve().relative_to(top).as_posix()
    listing = _git(["ls-tree", "--name-only", ref, "--", rel + "/"], top).splitlines()
    return {Path(path).name: _git(["show", f"{ref}:{path}"], top) for path in listing if path.endswith(suffix)}


# ---------------------------------------------------------------------------------------- live Grafana side

# With --live, diff connects like publish does: the same options, from the one light module.
live_options = connection_options


def built_dashboard(profiles: list[Any], uid: str) -> tuple[str, dict[str, Any]]:
    """``(profile name, document)`` of the dashboard ``uid`` in the current build of ``profiles``."""
    from dashgen.build import build_profile
    from dashgen.dashboard import dashboard_specs

    for profile in profiles:
        if any(spec.uid == uid for spec in dashboard_specs(profile)):
            built = next(b for b in build_profile(profile) if b.uid == uid)
            return profile.name, built.document
    raise DiffInputError(f"{uid}: no profile builds a dashboard with this uid")


def read_live_dashboard(uid: str, connection: dict[str, Any]) -> dict[str, Any] | None:
    """The dashboard ``uid`` as Grafana stores it now, read as a release reads it; None when Grafana has none."""
    from dashgen.cli.grafana_opts import make_client
    from dashgen.grafana.errors import GrafanaError
    from dashgen.publish.export import connect, export_one

    # the command's click parameters (connection_options' types): values as click parsed them
    options: dict[str, Any] = {name: connection.get(name) for name in CONNECTION_PARAMS}
    try:
        with make_client(**options) as client:
            live = export_one(connect(client, options["org_id"]), uid)
    except GrafanaError as exc:  # exit 2 whatever Grafana said: 1 means "the dashboards differ"
        raise exc.said_of(f"{uid}: cannot read it from Grafana").as_input_error() from None
    if live is None:
        click.echo(f"{uid}: Grafana has no dashboard with this uid; the build would create it", err=True)
        return None
    if live.stored_v2 and not live.document:  # read through the legacy API only: no v2 object to diff
        raise DiffInputError(
            f"{uid}: Grafana stores it in the v2 schema and its v2 object is not readable; not diffable"
        )
    return live.document  # a v2-stored dashboard: its v2 resource (read through /apis), diffed by stable key
