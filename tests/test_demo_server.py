"""``make demo`` serves data that reads as live and rules that are evaluated: the demo server's store answers at
"now" (its data runs past the moment it is served) and the first screen's evaluator check reads fresh, because a
real vmalert evaluates the profile's rules beside the store."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode
from urllib.request import urlopen

from dashgen_queries.serving import evaluator_fresh
from victoriametrics import program_or_skip

from dashgen.demo import recorder
from dashgen.demo.vmlauncher import find_binary, free_port
from dashgen.deployment.profile import load_profiles

ROOT = Path(__file__).resolve().parent.parent


def _query(url: str, expr: str) -> list:
    with urlopen(f"{url}/api/v1/query?{urlencode({'query': expr})}", timeout=30) as answer:
        return json.loads(answer.read())["data"]["result"]


def test_the_demo_reads_live_at_now_with_its_rules_evaluated(tmp_path: Path) -> None:
    program_or_skip(find_binary(), "victoria-metrics not installed")
    program_or_skip(recorder.find_vmalert(), "vmalert not installed")
    port = free_port()
    log = (tmp_path / "demo.log").open("w")
    args = ["--profile", "h20-16", "--hours", "0.25", "--ahead", "5", "--port", str(port)]
    demo = subprocess.Popen([sys.executable, "-m", "dashgen.demo.server", *args], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while "VictoriaMetrics with demo data" not in (tmp_path / "demo.log").read_text():
            assert demo.poll() is None and time.monotonic() < deadline, (tmp_path / "demo.log").read_text()[-3000:]
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port}"
        assert "the healthy data runs until" in (tmp_path / "demo.log").read_text()
        (age,) = _query(url, 'time() - max(timestamp({__name__=~"sglang:.+"}))')
        assert float(age["value"][1]) < 120, "the newest sample at now is older than two minutes"
        (profile,) = load_profiles(["h20-16"])
        assert _query(url, evaluator_fresh(profile)), "rule evaluator silent on the demo"
        assert not _query(url, 'ALERTS{alertstate="firing"}')
    finally:
        demo.terminate()
        demo.wait(timeout=30)
        log.close()
