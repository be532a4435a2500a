"""What several commands share: the profiles a command selects (``--profiles-dir`` of the group)."""

from __future__ import annotations

from collections.abc import Iterable

import click

from dashgen.deployment.profile import Profile, load_profiles, profiles_dir


def selected_profiles(ctx: click.Context, names: Iterable[str]) -> list[Profile]:
    """The named profiles (all when none is named) from the group's ``--profiles-dir`` or ./profiles."""
    return load_profiles(list(names), (ctx.find_root().obj or {}).get("profiles_dir") or profiles_dir())
