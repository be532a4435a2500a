"""Recording rules evaluated over imported demo data by the real evaluator: ``vmalert -replay`` over a past
window (the Debian package ``victoria-metrics`` ships vmalert), writing what it records back into the same
store, as a vmalert running beside the store would have written it live.

The demo writes the inventory rules itself (each is ``vector(1)``: there is nothing to evaluate). Rules that
compute from the data, such as the Now row's reason codes (group ``dashgen-<profile>-layer-health``), need the
evaluator: only those groups are replayed, so the demo's alerts stay the ones the scenario states.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from dashgen_queries.nodata import RULE_INTERVAL_SECONDS

from dashgen.demo.vmlauncher import find_program
from dashgen.deployment.profile import Profile
from dashgen.render.yamlemit import dump
from dashgen.rules.render import rule_groups_data

LAYER_HEALTH = "layer-health"
# How much of a window's end to replay: the matrix reads a recorded code at most a few evaluation intervals old
# (``queries.nodata.recorded_lookback_seconds``), so the last minutes are enough.
REPLAY_SECONDS = 300.0
VMALERT_CANDIDATES = ("vmalert", "/usr/bin/vmalert")


class ReplayError(RuntimeError):
    """vmalert is missing, failed or did not finish; the message says which, with the tail of its output."""


def find_vmalert(explicit: str | None = None) -> str | None:
    """The vmalert binary: ``explicit``, ``$VMALERT_BIN``, or vmalert on PATH / in /usr/bin."""
    return find_program("VMALERT_BIN", VMALERT_CANDIDATES, explicit)


def rule_text(profiles: Iterable[Profile], suffix: str = LAYER_HEALTH) -> str:
    """A vmalert rule file with each profile's group ``dashgen-<profile>-<suffix>`` (as ``dashgen rules`` writes it)."""
    groups = [group for profile in profiles for group in rule_groups_data(profile)
              if group["name"] == f"dashgen-{profile.name}-{suffix}"]
    return dump({"groups": groups}, ["Replayed by dashgen.demo.recorder over demo data."])


def _rfc3339(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def replay(store_url: str, profiles: Iterable[Profile], start: float, end: float, *, write_url: str | None = None,
           binary: str | None = None, interval: float = RULE_INTERVAL_SECONDS, timeout: float = 300.0) -> None:
    """Evaluate the profiles' layer-health rules every ``interval`` from ``start`` to ``end`` (epoch seconds)
    against ``store_url`` and write the results into it (or into ``write_url``, a VictoriaMetrics cluster's
    ``http://vminsert:8480/insert/0/prometheus``); returns when vmalert has finished."""
    found = find_vmalert(binary)
    if found is None:
        raise ReplayError("vmalert not found (install the Debian package 'victoria-metrics': `make debian-deps`, "
                          "or set VMALERT_BIN)")
    text = rule_text(profiles)
    with tempfile.TemporaryDirectory(prefix="dashgen-replay-") as work:
        rules = Path(work) / "rules.yml"
        rules.write_text(text, encoding="utf-8")
        args = [found, f"-rule={rules}", f"-datasource.url={store_url}", f"-remoteWrite.url={write_url or store_url}",
                # replay steps by -datasource.queryStep (default 5m), not by the evaluation interval
                f"-evaluationInterval={interval:g}s", f"-datasource.queryStep={interval:g}s",
                f"-replay.timeFrom={_rfc3339(start)}",
                f"-replay.timeTo={_rfc3339(end)}", "-replay.disableProgressBar", "-replay.rulesDelay=0s",
                "-loggerLevel=ERROR"]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise ReplayError(f"vmalert -replay did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        raise ReplayError(f"vmalert -replay exited {done.returncode}: {(done.stderr or done.stdout)[-2000:]}")
