"""What the commands that talk to Grafana share: their options, the context they resolve to (``dashgen.toml``
or flags or ``GRAFANA_URL``), the credentials, and the client. Credentials are read from the environment or a
file and go straight into the client: they are never echoed, logged or written."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from dashgen.cli.connection import connection_options, retry_policy
from dashgen.cli.output import format_option, insecure_warned_once
from dashgen.cli.paramtypes import SECONDS
from dashgen.deployment.reader import parse_duration
from dashgen.errors import InputError
from dashgen.grafana.client import GrafanaClient
from dashgen.publish import ledger as ledger_file
from dashgen.publish.backups import DEFAULT_BACKUP_DIR
from dashgen.publish.contexts import Context, load_config, org_id_problem, resolve


def context_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--context NAME`` and ``--config FILE``: a named Grafana of ``dashgen.toml``."""
    options = [
        click.option(
            "--context",
            "context_name",
            metavar="NAME",
            help="A named Grafana of dashgen.toml (url, org, folder, token variable, CA bundle).",
        ),
        click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="The contexts file (default: ./dashgen.toml when it exists).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def target_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Connection and context options: publish, rollback and history."""
    return context_options(connection_options(function))


class LockAge(click.ParamType):
    """A duration like ``90s``, ``30m`` or ``2h`` (seconds as a float)."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            return float(value)
        try:
            return parse_duration(str(value).strip())
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def ledger_option() -> Callable[..., Any]:
    return click.option(
        "--ledger",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help=f"The release ledger (JSON lines), keyed by instance, org and uid [default: "
        f"dashgen.toml's ledger, else {ledger_file.DEFAULT_LEDGER}].",
    )


def resolve_release_paths(params: dict[str, Any]) -> None:
    """Fill ``params["ledger"]`` (and ``backup_dir`` when the command has it) where not given: ``dashgen.toml``'s
    ``ledger`` (backups beside it), else the defaults (releases/ledger.jsonl, releases/backups)."""
    config = load_config(params.get("config_path"))
    configured = config.project.ledger if config is not None and config.project is not None else None
    if params.get("ledger") is None:
        params["ledger"] = configured or ledger_file.DEFAULT_LEDGER
    if "backup_dir" in params and params["backup_dir"] is None:
        params["backup_dir"] = (configured.parent / "backups") if configured is not None else DEFAULT_BACKUP_DIR


def release_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Options of the commands that write a release: ledger, backup folder, output format and concurrency."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        ledger_option(),
        click.option(
            "--backup-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help=f"Where exports and read-backs are kept [default: backups/ beside the ledger, {DEFAULT_BACKUP_DIR}].",
        ),
        format_option("text", "json"),
        click.option(
            "--jobs",
            type=click.IntRange(1, 32),
            default=4,
            show_default=True,
            help="Dashboards exported, validated and pushed at a time.",
        ),
        click.option(
            "--deadline",
            type=SECONDS,
            default=None,
            metavar="SECONDS",
            help="Start no save after this many seconds from the start: what is sent finishes and is "
            "recorded, the rest is held (exit 1).",
        ),
        click.option(
            "--lock-stale-after",
            type=LockAge(),
            default="1h",
            show_default=True,
            help="A release lock older than this (e.g. 30m, 2h) is taken over with a warning; a lock whose "
            "process on this host is gone is taken over at once.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def resolve_target(params: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Context:
    """The Grafana a command talks to, from its ``--context``/``--config`` and its own flags.

    A ``--grafana-url`` that click took from ``GRAFANA_URL`` ranks below the context, as the variable does.
    """
    env = os.environ if env is None else env
    config = load_config(params.get("config_path"))
    url = params.get("grafana_url")
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.get_parameter_source("grafana_url") == click.core.ParameterSource.ENVIRONMENT:
        url = None
    org_id = params.get("org_id")
    if org_id is not None and (problem := org_id_problem(org_id)) is not None:
        raise InputError(f"--org-id: {problem}")
    flags = {
        "url": url,
        "org_id": org_id,
        "ca_bundle": params.get("ca_bundle"),
        "insecure": params.get("insecure"),
        "token_file": params.get("token_file"),
        "folder_uid": params.get("folder_uid"),
        "folder_title": params.get("folder_title"),
        "datasource_uid": params.get("datasource_uid"),
    }
    return resolve(config, params.get("context_name"), flags, env)


TOKEN_FILE_MAX_BYTES = 4096
_SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))


def read_token_file(path: Path) -> str:
    """The one line of a token file: a regular file of at most 4 KiB, not under /proc, /sys or /dev (where
    ``/proc/self/environ`` would send the whole environment as a token), symlinks followed first."""
    try:
        real = path.resolve(strict=True)
        info = real.stat()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the token file ({exc.strerror or exc})") from None
    if any(real.is_relative_to(tree) for tree in _SYSTEM_TREES) or not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: not a token file (a regular file outside /proc, /sys and /dev is required)")
    if info.st_size > TOKEN_FILE_MAX_BYTES:
        raise InputError(f"{path}: {info.st_size:,} bytes, over the {TOKEN_FILE_MAX_BYTES:,} of a token file")
    try:
        lines = [line.strip() for line in real.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the token file ({exc})") from None
    if not lines:
        raise InputError(f"{path}: the token file is empty")
    if len(lines) > 1:
        raise InputError(f"{path}: {len(lines)} lines; a token file holds the token alone, on one line")
    return lines[0]


def credentials(target: Context, env: Mapping[str, str]) -> tuple[str | None, tuple[str, str] | None]:
    """(token, basic auth): the token file, else the context's token variable, else user/password."""
    if target.token_file is not None:
        return read_token_file(target.token_file), None
    if env.get(target.token_env, "").strip():
        return env[target.token_env].strip(), None
    if target.name and target.token_env != "GRAFANA_TOKEN":
        raise InputError(f"context {target.name}: the token variable {target.token_env} is not set")
    if env.get("GRAFANA_USER"):
        return None, (env["GRAFANA_USER"], env.get("GRAFANA_PASSWORD", ""))
    raise InputError(
        "no Grafana credentials: set GRAFANA_TOKEN (or the context's token_env), use --token-file, "
        "or GRAFANA_USER/GRAFANA_PASSWORD"
    )


def grafana_client(
    target: Context, params: Mapping[str, Any], jobs: int = 1, env: Mapping[str, str] | None = None
) -> GrafanaClient:
    """The client of a resolved target with the connection options' timeout and retries (``params``: the command's
    parameters); one pooled connection per parallel job."""
    token, basic = credentials(target, os.environ if env is None else env)
    if target.insecure:
        insecure_warned_once()
    return GrafanaClient(
        target.url,
        token=token,
        basic_auth=basic,
        org_id=target.org_id,
        ca_bundle=target.ca_bundle,
        insecure=target.insecure,
        read_timeout=params["timeout"],
        retry=retry_policy(params.get("retries"), params.get("retry_backoff")),
        pool_size=max(10, jobs),
    )


def make_client(
    grafana_url: str | None,
    token_file: Path | None,
    org_id: int | None,
    ca_bundle: str | None,
    insecure: bool,
    timeout: float,
    retries: int | None = None,
    retry_backoff: float | None = None,
) -> GrafanaClient:
    """The client of the plain connection options, without a context (``diff --live`` and ``import --live``)."""
    url = grafana_url or os.environ.get("GRAFANA_URL", "")
    if not url:
        raise InputError("no Grafana URL: give --grafana-url or set GRAFANA_URL")
    target = Context("", url, org_id, token_file=token_file, ca_bundle=ca_bundle, insecure=insecure)
    return grafana_client(target, {"timeout": timeout, "retries": retries, "retry_backoff": retry_backoff})
