"""The build baseline, run as its own process: the same grafanalib Dashboard objects dashgen renders,
written with grafanalib's own encoder (``grafanalib._gen.write_dashboard``) and nothing else —
no normalisation, no validation, no canonical encoding, no CLI.

``python -m bench.baseline_grafanalib OUT_DIR``
"""

from __future__ import annotations

import sys
from pathlib import Path

from grafanalib._gen import write_dashboard

from dashgen.dashboard import dashboard_specs
from dashgen.deployment.profile import load_profiles, profiles_dir
from dashgen.render.document import to_grafanalib


def main(out_dir: Path) -> None:
    for profile in load_profiles([], profiles_dir()):
        for spec in dashboard_specs(profile):
            path = out_dir / profile.name / f"{spec.uid}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8") as stream:
                write_dashboard(to_grafanalib(spec), stream)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
