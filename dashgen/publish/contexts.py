"""Contexts: the Grafanas a repository publishes to, by name (``dashgen.toml``, or ``--config FILE``).

```toml
default_context = "staging"          # optional: used when --context is not given

[contexts.staging]
url = "https://grafana-staging.example"
org_id = 1                           # optional; default: the organisation of the credentials
folder_uid = "llm-clusters"          # optional; default: where each dashboard is (new ones: root)
folder_title = "LLM clusters"        # optional; the title when the folder is created (approved)
token_env = "GRAFANA_STAGING_TOKEN"  # optional; the variable holding the token (default GRAFANA_TOKEN)
token_file = "secrets/staging.token" # optional, instead of token_env
ca_bundle = "certs/staging-ca.pem"   # optional; relative paths are relative to this file
insecure = false                     # optional
datasource_url = "http://vm-staging:8428"  # optional; a staged release validates the published queries there
datasource_uid = "prometheus"        # optional; the data source Grafana-managed alert rules query (uid)
alert_folder_uid = "llm-alerts"      # optional; the folder of Grafana-managed rules (default: folder_uid)

[contexts.staging.permissions.llm-clusters]   # optional; who may view / edit / admin a managed folder
view = ["role:Viewer"]
edit = ["team:sre"]
admin = ["serviceaccount:dashgen-ci"]

[stages]                             # optional: publish --stages canary,fleet releases stage by stage
canary = ["staging"]
fleet = ["prod-eu", "prod-us"]
```

A command's own flags win over the context, and the context over ``GRAFANA_URL``; ``default_context`` is
used when neither ``--context`` nor ``--grafana-url`` is given. Without a file,
``GRAFANA_URL`` / ``GRAFANA_TOKEN`` work as before. A file never holds a token, only where to find one.
Loading is an edge (it reads the file); ``resolve`` is pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashgen.errors import InputError
from dashgen.files import read_regular_text
from dashgen.files.parsers import parse_toml
from dashgen.net.urls import url_problem
from dashgen.project import CONFIG_FILE, ProjectSettings, parse_settings
from dashgen.publish.permissions_plan import FolderAccess, parse_access

# The variables a context may take its token from: names ending in _TOKEN, nothing else of the environment.
MAX_ORG_ID = 2**63 - 1  # Grafana stores an organisation's id as a signed 64-bit integer
TOKEN_ENV = re.compile(r"^[A-Z][A-Z0-9_]{0,62}_TOKEN\Z|^GRAFANA_TOKEN\Z")
_FIELDS = {
    "url": str,
    "org_id": int,
    "folder_uid": str,
    "folder_title": str,
    "token_env": str,
    "token_file": str,
    "ca_bundle": str,
    "insecure": bool,
    "datasource_url": str,
    "datasource_uid": str,
    "alert_folder_uid": str,
    "permissions": dict,
}
_SECRET_WORDS = ("token", "password", "secret")


@dataclass(frozen=True)
class Context:
    """A named Grafana of the contexts file, or (``name`` "") where a command talks to without one: the resolved
    URL, org, folder and where the credentials are."""

    name: str
    url: str
    org_id: int | None = None
    folder_uid: str | None = None
    folder_title: str = ""
    token_env: str = "GRAFANA_TOKEN"
    token_file: Path | None = None
    ca_bundle: str | None = None
    insecure: bool = False
    datasource_url: str | None = None  # where a staged release validates what it published
    datasource_uid: str | None = None  # what Grafana-managed alert rules query (``dashgen.rules.grafana``)
    alert_folder_uid: str | None = None  # where they go (default: folder_uid)
    # Who may view / edit / admin each managed folder (``[contexts.<name>.permissions.<folder uid>]``)
    permissions: tuple[FolderAccess, ...] = ()


@dataclass(frozen=True)
class Config:
    path: Path
    contexts: dict[str, Context]
    default_context: str | None = None
    project: ProjectSettings | None = None  # the repository's own keys (panels_dir, ledger)
    stages: dict[str, tuple[str, ...]] = field(default_factory=dict)  # stage name -> its contexts, in order


def load_config(path: Path | None, cwd: Path | None = None) -> Config | None:
    """``path`` (required to exist), else ``./dashgen.toml`` when there is one, else None."""
    if path is None:
        candidate = (cwd or Path.cwd()) / CONFIG_FILE
        if not candidate.is_file():
            return None
        path = candidate
    try:
        text = read_regular_text(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the config file ({exc.strerror or exc})") from None
    try:
        data = parse_toml(text)
    except ValueError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(path, data)


def org_id_problem(org_id: int) -> str | None:
    """Why ``org_id`` can be no Grafana organisation (Grafana's ids are positive 64-bit integers), or None."""
    if not 1 <= org_id <= MAX_ORG_ID:
        return f"expected a positive organisation id of at most {MAX_ORG_ID} (64 bits), got {org_id}"
    return None


def parse_config(path: Path, data: dict[str, Any]) -> Config:
    project = parse_settings(path, data)  # the repository's own keys (dashgen.project); refuses unknown ones
    tables = data.get("contexts", {})
    if not isinstance(tables, dict):
        raise InputError(f"{path}: contexts: expected tables [contexts.<name>]")
    contexts = {name: _context(path, name, table) for name, table in tables.items()}
    default = data.get("default_context")
    if default is not None and (not isinstance(default, str) or default not in contexts):
        raise InputError(
            f"{path}: default_context: {default!r} is not one of the contexts ({', '.join(sorted(contexts)) or 'none'})"
        )
    return Config(path, contexts, default, project, _stages(path, data.get("stages", {}), contexts))


def _stages(path: Path, table: Any, contexts: dict[str, Context]) -> dict[str, tuple[str, ...]]:
    """``[stages]``: each stage a non-empty list of context names, a context in at most one stage."""
    if not isinstance(table, dict):
        raise InputError(f"{path}: stages: expected a table of stage = [context names]")
    stages: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for name, members in table.items():
        where = f"{path}: stages.{name}"
        if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members):
            raise InputError(f"{where}: expected a non-empty list of context names")
        for member in members:
            if member not in contexts:
                raise InputError(f"{where}: {member!r} is not one of the contexts ({', '.join(sorted(contexts))})")
            if member in owner:
                raise InputError(f"{where}: context {member!r} is already in stage {owner[member]!r}")
            owner[member] = name
        stages[name] = tuple(members)
    return stages


def _context(path: Path, name: str, table: Any) -> Context:
    where = f"{path}: contexts.{name}"
    if not isinstance(table, dict):
        raise InputError(f"{where}: expected a table")
    for key, value in table.items():
        if key not in _FIELDS:
            secret = any(word in key.lower() for word in _SECRET_WORDS) and key not in ("token_env", "token_file")
            hint = " (a config file never holds a secret: name its variable with token_env)" if secret else ""
            raise InputError(f"{where}.{key}: unknown field{hint}; expected one of {', '.join(_FIELDS)}")
        expected = _FIELDS[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise InputError(f"{where}.{key}: expected {expected.__name__}, got {type(value).__name__}")
    if not isinstance(table.get("url"), str) or not table["url"].strip():
        raise InputError(f"{where}.url: required (the Grafana base URL)")
    if (problem := url_problem(table["url"])) is not None:
        raise InputError(f"{where}.url: {table['url']!r} {problem}")
    if "token_env" in table and not TOKEN_ENV.match(table["token_env"]):
        raise InputError(
            f"{where}.token_env: {table['token_env']!r} is not a token variable: the name must end in "
            "_TOKEN (e.g. GRAFANA_STAGING_TOKEN), so a config file can never send another variable "
            "(PATH, a cloud key) as a Grafana token"
        )
    if "org_id" in table and (problem := org_id_problem(table["org_id"])) is not None:
        raise InputError(f"{where}.org_id: {problem}")
    base = path.parent
    token_file = Path(table["token_file"]) if "token_file" in table else None
    ca_bundle = table.get("ca_bundle")
    return Context(
        name=name,
        url=table["url"].strip(),
        org_id=table.get("org_id"),
        folder_uid=table.get("folder_uid"),
        folder_title=table.get("folder_title", ""),
        token_env=table.get("token_env", "GRAFANA_TOKEN"),
        token_file=(token_file if token_file is None or token_file.is_absolute() else base / token_file),
        ca_bundle=(ca_bundle if ca_bundle is None or Path(ca_bundle).is_absolute() else str(base / ca_bundle)),
        insecure=bool(table.get("insecure", False)),
        datasource_url=table.get("datasource_url"),
        datasource_uid=table.get("datasource_uid"),
        alert_folder_uid=table.get("alert_folder_uid"),
        permissions=tuple(parse_access(where, f, t) for f, t in sorted(table.get("permissions", {}).items())),
    )


def _same_url(url: str) -> str:
    return url.strip().rstrip("/").lower()


def resolve(
    config: Config | None, context_name: str | None, flags: Mapping[str, Any], env: Mapping[str, str]
) -> Context:
    """The target of a command. ``flags`` holds the command's own options (None = not given). Pure."""
    # the default context stands in for a missing --context, not for an explicit --grafana-url
    name = context_name or (config.default_context if config and not flags.get("url") else None)
    context: Context | None = None
    if name:
        if config is None:
            raise InputError(f"--context {name}: no {CONFIG_FILE} here (or give --config FILE)")
        if name not in config.contexts:
            raise InputError(f"{config.path}: no context {name!r} (contexts: {', '.join(sorted(config.contexts))})")
        context = config.contexts[name]

    def pick(key: str, default: Any = None) -> Any:
        if flags.get(key) is not None:
            return flags[key]
        if context is not None and getattr(context, key) not in (None, ""):
            return getattr(context, key)
        return default

    if (
        context is not None
        and flags.get("url")
        and _same_url(flags["url"]) != _same_url(context.url)
        and (flags.get("token_file") is None)
    ):
        raise InputError(
            f"--grafana-url {flags['url']} is not context {context.name}'s Grafana ({context.url}): "
            "a context's credentials go only to its own URL; drop --context, or give --token-file "
            "for that Grafana"
        )
    url = pick("url") or env.get("GRAFANA_URL", "").strip()
    if not url:
        raise InputError(
            f"no Grafana URL: give --grafana-url, set GRAFANA_URL, or use --context NAME with a {CONFIG_FILE}"
        )
    if (problem := url_problem(url)) is not None:
        given = "--grafana-url" if flags.get("url") else f"context {context.name}: url" if context else "GRAFANA_URL"
        raise InputError(f"{given}: {url!r} {problem}")
    token_file = flags.get("token_file")
    return Context(
        name=context.name if context else "",
        url=url,
        org_id=pick("org_id"),
        folder_uid=pick("folder_uid"),
        folder_title=pick("folder_title", ""),
        token_env=context.token_env if context else "GRAFANA_TOKEN",
        token_file=token_file if token_file is not None else (context.token_file if context else None),
        ca_bundle=pick("ca_bundle"),
        insecure=bool(flags.get("insecure") or (context.insecure if context else False)),
        datasource_url=context.datasource_url if context else None,
        datasource_uid=pick("datasource_uid"),
        alert_folder_uid=pick("alert_folder_uid"),
        permissions=context.permissions if context else (),
    )
