"""The ``[dashboard]`` section of a profile: the target Grafana, time range and refresh as Grafana reads them,
the ``dashgen cost`` budgets, and the team's own panel modules (``extra_modules``)."""

from __future__ import annotations

import re
from typing import get_args

from dashgen.deployment.model import DashboardSettings, Schema
from dashgen.deployment.reader import TableReader, parse_duration
from dashgen.escape import safe_href


def _budget_default(key: str) -> int:
    """The DashboardSettings default of the cost budget ``key``."""
    default = DashboardSettings.__dataclass_fields__[key].default
    if not isinstance(default, int):
        raise TypeError(f"DashboardSettings.{key} has no integer default")
    return default


# ``[dashboard]`` cost budgets of ``dashgen cost`` and their defaults (the DashboardSettings defaults)
COST_BUDGETS = {
    key: _budget_default(key)
    for key in ("cost_panel_series", "cost_panel_samples", "cost_dashboard_series", "cost_dashboard_samples")
}


SCHEMAS: tuple[Schema, ...] = get_args(Schema)
RULERS = ("prometheus", "grafana", "both")  # dashgen.rules.grafana: who evaluates the alerts
V2_MIN_GRAFANA = (12, 2)


def v2_refusal(settings: DashboardSettings) -> str | None:
    """Why the profile's Grafana cannot take a v2 dashboard (the field to change is named), or None."""
    if settings.grafana >= V2_MIN_GRAFANA:
        return None
    return (
        f'"v2" needs [dashboard] grafana_version 12.2 or newer (Grafana stores v2 dashboards from 12.2, by default '
        f'from 13.0); this profile targets {settings.grafana_version}: keep schema = "v1" or raise grafana_version'
    )


def parse_dashboard(reader: TableReader) -> DashboardSettings:
    version = reader.string("grafana_version", "12.3")
    if not re.match(r"^[0-9]+\.[0-9]+(\.[0-9]+)?\Z", version):
        raise reader.fail("grafana_version", f"expected a version like '12.3', got {version!r}")
    major = int(version.split(".")[0])
    if major < 11:
        raise reader.fail("grafana_version", f"dashgen targets Grafana 11.6 and newer, got {version}")
    stated_schema = reader.string("schema", "v1")
    schema = next((known for known in SCHEMAS if known == stated_schema), None)
    if schema is None:
        raise reader.fail("schema", f'expected "v1" or "v2", got {stated_schema!r}')
    settings = DashboardSettings(
        grafana_version=version,
        time_from=reader.string("time_from", "now-1h"),
        refresh=reader.string("refresh", "1m"),
        min_refresh_interval=reader.string("min_refresh_interval", "5s"),
        **{key: reader.integer(key, default, maximum=10**12) for key, default in COST_BUDGETS.items()},
        extra_modules=_module_names(reader, "extra_modules"),
        schema=schema,
        runbook_base=reader.string("runbook_base", DashboardSettings.runbook_base),
        grafana_url=reader.string("grafana_url", ""),
        library_panels=_panel_keys(reader, "library_panels"),
        ruler=reader.string("ruler", "prometheus"),
    )
    for key in ("runbook_base", "grafana_url"):
        value = getattr(settings, key)
        # both land in alert annotations a pager, Alertmanager and Grafana show as links: no other scheme
        # (javascript:, data:) and no control character (safe_href), and no anchor, query or template of their own
        if (
            not _LINK.match(value)
            or (value and safe_href(value) is None)
            or (key == "grafana_url" and value and not value.startswith(("http://", "https://")))
        ):
            raise reader.fail(
                key,
                f"expected {'an http(s) URL' if key == 'grafana_url' else 'an http(s) URL or a path'} without "
                f"spaces, quotes, control characters, '#', '?' or template braces, got {value!r}",
            )
    if settings.ruler not in RULERS:
        raise reader.fail("ruler", f'expected "prometheus", "grafana" or "both", got {settings.ruler!r}')
    if settings.schema == "v2" and (problem := v2_refusal(settings)) is not None:
        raise reader.fail("schema", problem)
    if not _TIME_FROM.match(settings.time_from):
        raise reader.fail(
            "time_from",
            f"expected Grafana's relative time like 'now-1h' or 'now-7d/d', or an ISO date, got {settings.time_from!r}",
        )
    if settings.refresh and not _REFRESH.match(settings.refresh):
        raise reader.fail(
            "refresh", f"expected an interval like '30s', '1m' or '1h', or '' for off, got {settings.refresh!r}"
        )
    _check_refresh(reader, settings.refresh, settings.min_refresh_interval)
    reader.reject_unknown()
    return settings


_LINK = re.compile(r"^[^\s\"'<>#?{}]*\Z")
_PANEL_KEY = re.compile(r"^[^\s.]+\.\S+\Z")


def _panel_keys(reader: TableReader, key: str) -> tuple[str, ...]:
    """A list of panel keys (``group.panel``), each once; whether each exists is checked by the build."""
    names = reader.value(key, [])
    if not isinstance(names, list) or not all(isinstance(n, str) and _PANEL_KEY.match(n) for n in names):
        raise reader.fail(key, f"expected a list of panel keys like 'gpu_health.util', got {names!r}")
    if len(set(names)) != len(names):
        raise reader.fail(key, "a panel key is listed twice")
    return tuple(names)


_MODULE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,63}\Z")


def _module_names(reader: TableReader, key: str) -> tuple[str, ...]:
    """A list of Python module names (lower case identifiers), each once."""
    names = reader.value(key, [])
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise reader.fail(key, 'expected a list of module names, like ["our_gpu_costs"]')
    for name in names:
        if not _MODULE_NAME.match(name):
            raise reader.fail(
                key,
                f"{name!r} is not a module name (lower case letters, digits and _; the file <panels_dir>/<name>.py)",
            )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise reader.fail(key, f"{repeated[0]!r} is listed twice")
    return tuple(names)


# Grafana's time range "from": now, now-<n><unit>, optionally rounded (/d), or an absolute ISO date / date-time.
_TIME_FROM = re.compile(
    r"^(now(-[1-9][0-9]{0,8}[smhdwMy])?(/[smhdwMy])?"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+Z?)?)\Z"
)
# Grafana's dashboard refresh: a positive count of one unit ('' is off).
_REFRESH = re.compile(r"^[1-9][0-9]{0,8}(s|m|h|d)\Z")


def _check_refresh(reader: TableReader, refresh: str, minimum: str) -> None:
    """Grafana raises a refresh below its ``min_refresh_interval`` on save: refuse it here, or no release verifies."""
    try:
        floor = parse_duration(minimum)
    except ValueError as exc:
        raise reader.fail("min_refresh_interval", str(exc)) from None
    try:
        seconds = parse_duration(refresh)
    except ValueError:
        return  # "" (off) or a form only Grafana reads; the dashboard schema checks it
    if seconds < floor:
        raise reader.fail(
            "refresh",
            f"{refresh!r} is below the Grafana server's min_refresh_interval {minimum!r}: "
            f"Grafana would store {minimum!r} instead and no release would verify; use "
            f"{minimum!r} or more (or set [dashboard] min_refresh_interval to the server's)",
        )
