"""``make demo`` / ``python -m dashgen.demo.server``: a local VictoriaMetrics filled with demo data.

Starts VictoriaMetrics on 127.0.0.1 (``dashgen.demo.vmlauncher``), imports the ``healthy`` scenario of a
profile, optionally ``five-reasons`` over the window before it, prints the URL to add as a Prometheus data
source in Grafana, and keeps running until Ctrl-C.

Generating takes minutes, so data stamped to end when generation starts would be minutes old when served (every
target drawn missing at "now"). The healthy window therefore runs ``--ahead`` minutes past the start: the store
answers a query at "now" from the samples up to now, so the data reads as live from the moment it is served until
the printed end. Then the rule groups are replayed over the last minutes (``dashgen.demo.recorder``) and a real
vmalert keeps evaluating them beside the store (``dashgen.demo.evaluator``): the first screen shows the rules
evaluated, not "rule evaluator silent".
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dashgen.demo import evaluator, vmlauncher
from dashgen.demo.recorder import REPLAY_SECONDS, ReplayError, replay
from dashgen.demo.run import import_demo
from dashgen.demo.scenarios import assignments
from dashgen.deployment.profile import load_profiles
from dashgen.errors import DashgenError
from dashgen.live.datasource import Datasource
from dashgen.live.expand import parse_duration

LINE_EVERY = 5.0  # seconds between progress lines when stderr is not a terminal


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int], None]]:
    """A series counter on stderr: a bar on a terminal, else a line every ``LINE_EVERY`` seconds (``make demo``
    piped to a log, or in CI, is not silent for minutes either)."""
    if not sys.stderr.isatty():
        done = [0, time.monotonic()]

        def line(n: int = 1) -> None:
            done[0] += n
            if time.monotonic() - done[1] >= LINE_EVERY:
                done[1] = time.monotonic()
                print(f"  {label}: {done[0]} so far", file=sys.stderr, flush=True)

        yield line
        print(f"  {label}: {done[0]} done", file=sys.stderr, flush=True)
        return
    from rich.console import Console
    from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True, no_color="NO_COLOR" in os.environ)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def advance(n: int = 1) -> None:
            bar.advance(task, n)

        yield advance


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dashgen.demo.server", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="long-context-64")
    parser.add_argument("--hours", type=float, default=2.0, help="length of each scenario's window")
    parser.add_argument("--step", default="0s", help="coarsest sample spacing, e.g. 5s (0s: real scrape intervals)")
    parser.add_argument(
        "--five-reasons",
        action="store_true",
        help="also import five-reasons, in the window just before the healthy one",
    )
    parser.add_argument("--port", type=int, default=8428)
    parser.add_argument(
        "--ahead", type=float, default=20.0, help="minutes the healthy data runs past the start (generation time)"
    )
    parser.add_argument("--no-rules", action="store_true", help="neither replay nor evaluate the rules (no vmalert)")
    args = parser.parse_args(argv)
    try:
        (profile,) = load_profiles([args.profile])
        step = 0.0 if args.step in ("0", "0s") else parse_duration(args.step)
        print(f"starting VictoriaMetrics on 127.0.0.1:{args.port} ...", file=sys.stderr, flush=True)
        server = vmlauncher.start(port=args.port)
    except (DashgenError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    live: evaluator.Evaluator | None = None
    try:
        datasource = Datasource(server.url, timeout=120)
        now = time.time() + max(args.ahead, 0.0) * 60
        plans = [("healthy", now)]
        if args.five_reasons:
            plans.append(("five-reasons", now - args.hours * 3600))
        for scenario, end in plans:
            print(
                f"generating and importing {profile.name} {scenario} ({args.hours:g} h) ...",
                file=sys.stderr,
                flush=True,
            )
            with _progress(f"{scenario}: series") as advance:
                summary = import_demo(
                    datasource,
                    profile,
                    scenario,
                    end,
                    args.hours,
                    step,
                    warn=lambda message: print(f"warning: {message}", file=sys.stderr),
                    progress=advance,
                )
            print(
                f"imported {profile.name} {scenario}: {summary.series} series, {summary.samples} samples "
                f"ending {time.strftime('%H:%M:%S', time.localtime(end))} ({summary.seconds:.1f}s)"
            )
            for row in assignments(profile, scenario):
                print(f"  {row.node}: {row.reason_name} - {row.detail}")
        served = time.time()
        if now > served:
            print(
                f"the healthy data runs until {time.strftime('%H:%M', time.localtime(now))} "
                f"({(now - served) / 60:.0f} min from now; restart to refresh)"
            )
        else:
            print(
                f"warning: the data ended {(served - now) / 60:.0f} min ago "
                f"(generation outlasted --ahead {args.ahead:g} min)"
            )
        if not args.no_rules:
            datasource.flush()
            print("replaying the rules over the last minutes (vmalert -replay) ...", file=sys.stderr, flush=True)
            replay(server.url, [profile], served - REPLAY_SECONDS, served, every_group=True)
            datasource.flush()  # the replayed records searchable before the URL is printed
            live = evaluator.start(server.url, profile)
            print("vmalert evaluates the profile's rules beside it (alerts go nowhere)")
        print(f"\nVictoriaMetrics with demo data: {server.url}")
        print(
            "Add it to Grafana as a Prometheus data source, import dashboards/"
            f"{profile.name}/*.json, and pick a window inside the imported hours."
        )
        print("Ctrl-C stops it and removes its data.")
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while server.process is not None and server.process.poll() is None:
            time.sleep(1)
        print("victoria-metrics exited", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except (DashgenError, ReplayError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if live is not None:
            live.stop()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
