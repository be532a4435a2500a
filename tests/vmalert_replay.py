"""Alert rules under the real ``vmalert -replay`` over a real VictoriaMetrics: one group evaluated every minute
over a window (:func:`replay_group`), and the alerts that fire at an instant (:func:`firing`)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from victoriametrics import program_or_skip

from dashgen.demo import recorder
from dashgen.deployment.profile import Profile
from dashgen.live.datasource import Datasource

STAMP = "%Y-%m-%dT%H:%M:%SZ"


def replay_group(store_url: str, profile: Profile, suffix: str, start: float, end: float, work: Path) -> None:
    """Evaluate the rule file's group ``dashgen-<profile>-<suffix>`` every minute from ``start`` to ``end`` with
    vmalert -replay, writing recorded series and ALERTS back into the store."""
    vmalert = program_or_skip(recorder.find_vmalert(), "vmalert not found (Debian package 'victoria-metrics')")
    rules = work / f"{suffix}.yml"
    rules.write_text(recorder.rule_text([profile], suffix), encoding="utf-8")
    done = subprocess.run(
        [
            vmalert,
            f"-rule={rules}",
            f"-datasource.url={store_url}",
            f"-remoteWrite.url={store_url}",
            "-evaluationInterval=60s",
            "-datasource.queryStep=60s",
            f"-replay.timeFrom={time.strftime(STAMP, time.gmtime(start))}",
            f"-replay.timeTo={time.strftime(STAMP, time.gmtime(end))}",
            "-replay.disableProgressBar",
            "-replay.rulesDelay=0s",
            "-loggerLevel=ERROR",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    Datasource(store_url).flush()


def firing(store_url: str, profile: Profile, names: tuple[str, ...], at: float) -> set[tuple[str, ...]]:
    """(alert name, node, gpu, job, value) of every firing alert of ``names`` at ``at``."""
    result = (
        Datasource(store_url)
        .query(
            f'ALERTS{{alertname=~"{"|".join(names)}", alertstate="firing", '
            f'{profile.label("deployment")}="{profile.deployment}"}}',
            at,
        )
        .result
    )
    return {
        (
            m["alertname"],
            m.get(profile.label("node"), ""),
            m.get(profile.label("gpu"), ""),
            m.get(profile.label("job"), ""),
        )
        for m in (item["metric"] for item in result)
    }
