"""What several commands share: the profiles a command selects (``--profiles-dir`` of the group), and (from
``dashgen.cli.paramtypes``) the click types that validate arguments before a command runs."""

from __future__ import annotations

from collections.abc import Iterable

import click

from dashgen.cli.paramtypes import HOURS, HTTP_URL, NON_EMPTY, SECONDS, HttpUrl, NonEmpty, PositiveSeconds
from dashgen.deployment.profile import Profile, load_profiles, profiles_dir


def selected_profiles(ctx: click.Context, names: Iterable[str]) -> list[Profile]:
    """The named profiles (all when none is named) from the group's ``--profiles-dir`` or ./profiles.

    A folder without any ``*.toml`` is an input error naming the folder (never a silent no-op)."""
    return load_profiles(list(names), (ctx.find_root().obj or {}).get("profiles_dir") or profiles_dir())


__all__ = ["HOURS", "HTTP_URL", "NON_EMPTY", "SECONDS", "HttpUrl", "NonEmpty", "PositiveSeconds", "selected_profiles"]
