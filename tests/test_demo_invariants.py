"""The healthy demo tells the truth, on every shipped profile's own demo store: imported as ``make demo`` does, its
rule groups replayed by the real vmalert, no panel drawn on a ratio axis (``percent`` / ``percentunit``) reads
outside 0-100 % at the window's end, and no alert fires."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from victoriametrics import program_or_skip, start_or_skip

from dashgen.build import build_profile
from dashgen.demo import recorder
from dashgen.demo.run import import_demo
from dashgen.deployment.profile import load_profiles
from dashgen.document import iter_panels
from dashgen.live.datasource import Datasource
from dashgen.live.expand import Window, expand_text, globals_for, variable_values
from dashgen.render.spec import RATIO_UNITS

ROOT = Path(__file__).resolve().parent.parent
HOURS = 0.5
STEP = 30.0
SLACK = 1e-9  # float sums of parts


def _profiles() -> list:
    return list(load_profiles(directory=ROOT / "profiles"))


@pytest.mark.slow  # imports a demo per profile and replays its rules with vmalert
@pytest.mark.parametrize("profile", _profiles(), ids=lambda p: p.name)
def test_the_healthy_demo_has_possible_ratios_and_fires_no_alert(profile):
    program_or_skip(recorder.find_vmalert(), "vmalert not found (Debian package 'victoria-metrics')")
    server = start_or_skip()
    try:
        datasource = Datasource(server.url, timeout=120)
        end = (time.time() // 60) * 60 - 60  # a whole minute in the past: every sample is accepted and readable
        import_demo(datasource, profile, "healthy", end, HOURS, STEP)
        datasource.flush()
        recorder.replay(server.url, [profile], end - recorder.REPLAY_SECONDS, end, every_group=True)
        datasource.flush()
        firing = datasource.query('ALERTS{alertstate="firing"}', end).result
        assert not firing, [item["metric"] for item in firing]
        wrong, read = [], 0
        for built in build_profile(profile):
            values = {
                **variable_values(built.document["templating"]["list"]),
                **globals_for(Window(end, HOURS * 3600), 60, 120),
            }
            for site in iter_panels(built.document):
                panel = site.raw
                unit = ((panel.get("fieldConfig") or {}).get("defaults") or {}).get("unit")
                if unit not in RATIO_UNITS:
                    continue
                low, high = RATIO_UNITS[unit]
                for target in panel.get("targets", []):
                    for item in datasource.query(expand_text(target["expr"], values), end).result:
                        value = float(item["value"][1])
                        read += 1
                        if not low - SLACK <= value <= high * (1 + SLACK):
                            wrong.append((panel["title"], target.get("refId"), item["metric"], value))
        assert read > 0, "no ratio panel returned data: the test would prove nothing"
        assert not wrong, wrong[:20]
    finally:
        server.stop()
