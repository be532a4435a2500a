"""Build: profiles -> rendered, validated dashboards in memory -> files under ``dashboards/``.

Everything is rendered and validated before anything is written, so a bad profile or a broken
panel writes nothing. Files are ``<out>/<profile>/<uid>.json`` in canonical encoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import Profile
from dashgen.errors import BuildValidationError
from dashgen.files import write_if_changed
from dashgen.render.canonical import content_sha, encode
from dashgen.render.document import render_dashboard
from dashgen.render.spec import DashboardSpec
from dashgen.render.validate import validate_dashboard


@dataclass(frozen=True)
class BuiltDashboard:
    """One rendered dashboard: where it goes, its document, its bytes and its content SHA."""

    profile: str
    spec: DashboardSpec
    document: dict[str, Any]
    data: bytes
    sha256: str

    @property
    def uid(self) -> str:
        return self.spec.uid

    def relative_path(self) -> Path:
        return Path(self.profile) / f"{self.uid}.json"


def build_profile(profile: Profile, groups: tuple | None = None) -> list[BuiltDashboard]:
    """Render and validate every dashboard of one profile; raises BuildValidationError."""
    built = []
    problems: list[str] = []
    for spec in dashboard_specs(profile, groups):
        document = render_dashboard(spec)
        problems += validate_dashboard(document, f"{profile.name}/{spec.uid}")
        built.append(BuiltDashboard(profile.name, spec, document, encode(document), content_sha(document)))
    if problems:
        raise BuildValidationError(problems)
    return built


def build_all(profiles: list[Profile]) -> list[BuiltDashboard]:
    """Render every profile; all problems of all profiles are reported together."""
    built: list[BuiltDashboard] = []
    problems: list[str] = []
    uids: dict[str, str] = {}
    for profile in profiles:
        try:
            dashboards = build_profile(profile)
        except BuildValidationError as exc:
            problems += exc.problems
            continue
        for dashboard in dashboards:
            if dashboard.uid in uids:
                problems.append(f"{profile.name}/{dashboard.uid}: uid also produced by profile {uids[dashboard.uid]}")
            uids[dashboard.uid] = profile.name
        built += dashboards
    if problems:
        raise BuildValidationError(problems)
    return built


def write_dashboards(built: list[BuiltDashboard], out_dir: Path, prune: bool = True) -> list[Path]:
    """Write files whose bytes changed; with ``prune``, remove stale ``*.json`` of the built profiles."""
    written = []
    wanted = {out_dir / dashboard.relative_path() for dashboard in built}
    for dashboard in built:
        path = out_dir / dashboard.relative_path()
        if write_if_changed(path, dashboard.data):
            written.append(path)
    if prune:
        for profile in {dashboard.profile for dashboard in built}:
            for stale in sorted((out_dir / profile).glob("*.json")):
                if stale not in wanted:
                    stale.unlink()
                    written.append(stale)
    return written
