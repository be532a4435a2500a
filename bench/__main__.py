"""``python -m bench [--only NAME ...]``: run the benchmarks, print the table, write bench/results.json."""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from bench.harness import RESULTS, machine, markdown_from_results, table, write_results

# Order matters: memory reuses the publish releases measured just before it.
BENCHMARKS = ("build", "diff", "publish", "dashboard_load", "memory", "lint_scale", "open_queries", "tsdb")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--only",
        action="append",
        choices=BENCHMARKS,
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print bench/results.json as a Markdown table; run nothing"
    )
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown_from_results())
        return 0
    chosen = [name for name in BENCHMARKS if not args.only or name in args.only]
    facts = machine()
    print(
        f"dashgen benchmarks on {facts['cpu']} x{facts['cores']}, {facts['platform']}, Python {facts['python']}, "
        f"load {facts['loadavg_at_start']}",
        flush=True,
    )
    results = []
    for name in chosen:
        began = time.perf_counter()
        print(f"-- {name} ...", flush=True)
        result = importlib.import_module(f"bench.{name}").run()
        result.seconds = time.perf_counter() - began
        print(f"   {result.seconds:.0f} s", flush=True)
        results.append(result)
    print()
    print(table(results))
    write_results(results)
    print(f"\nwrote {RESULTS.relative_to(RESULTS.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
