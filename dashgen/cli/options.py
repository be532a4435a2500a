"""What several commands share: the profiles a command selects (``--profiles-dir`` of the group), and (from
``dashgen.cli.paramtypes``) the click types that validate arguments before a command runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import click

from dashgen.cli.paramtypes import (
    HOURS,
    HTTP_URL,
    KUBERNETES_LABEL,
    NON_EMPTY,
    SECONDS,
    HttpUrl,
    NonEmpty,
    PositiveSeconds,
)
from dashgen.deployment.profile import Profile, load_profiles, profiles_dir
from dashgen.live.expand import DEFAULT_MAX_DATA_POINTS


# The query commands' shared options (validate-queries, cost).
def kubernetes_labels_option(flag: str, name: str, help: str) -> Callable[[Any], Any]:
    """A repeatable ``KEY=VALUE`` option of Kubernetes labels, each checked against Kubernetes' own syntax."""
    return click.option(flag, name, multiple=True, type=KUBERNETES_LABEL, metavar="KEY=VALUE", help=help)


datasource_url_option = click.option(
    "--datasource-url",
    required=True,
    type=HTTP_URL,
    help="Prometheus-compatible base URL: http://vm:8428, http://vmselect:8481/select/0/prometheus, "
    "or http://prom:9090.",
)
max_data_points_option = click.option(
    "--max-data-points",
    type=click.IntRange(1, 100000),
    default=DEFAULT_MAX_DATA_POINTS,
    show_default=True,
    help="Grafana's max data points, for $__interval and the range step.",
)


def selected_profiles(ctx: click.Context, names: Iterable[str]) -> list[Profile]:
    """The named profiles (all when none is named) from the group's ``--profiles-dir`` or ./profiles.

    A folder without any ``*.toml`` is an input error naming the folder (never a silent no-op)."""
    return load_profiles(list(names), (ctx.find_root().obj or {}).get("profiles_dir") or profiles_dir())


__all__ = ["HOURS", "HTTP_URL", "NON_EMPTY", "SECONDS", "HttpUrl", "NonEmpty", "PositiveSeconds", "selected_profiles"]
