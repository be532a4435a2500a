"""Whether the deployment writes a series, as the exporter table (``dashgen.exporters``) reads the profile's
stated version and flags (S35): the query builders that can fall back to another series or leave a part out
(an SLI, an activity counter) ask here, rather than leave a panel empty."""

from __future__ import annotations

from dashgen.deployment.profile import Profile
from dashgen.exporters.availability import lookup, missing_reason


def not_written(profile: Profile, name: str) -> str:
    """Why the profile's stated version or flags never write ``name`` (a sentence naming the switch), or ""."""
    found = lookup(name)
    if found is None or found[0].source not in profile.sources:
        return ""
    table, series = found
    return missing_reason(table, series, profile.source(table.source).stated) or ""


def written(profile: Profile, name: str) -> bool:
    """False only when the table knows ``name`` and the profile's stated version or flags of its source never
    write it; a name the table does not know, or a source the profile does not state, counts as written."""
    return not not_written(profile, name)
