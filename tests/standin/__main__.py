"""``python -m tests.standin`` (from the repository root): the Grafana stand-in on 127.0.0.1, for trying
``dashgen publish`` / ``diff --live`` / ``drift`` by hand. It prints the URL and token to export and serves until
Ctrl-C; everything it stores is in memory. A contributor's tool: the stand-in is test code and does not ship in
the package (a team tries publishing against a throw-away real Grafana instead, docs/publishing.md)."""

from __future__ import annotations

import argparse
import secrets
import sys
import time

from .server import GrafanaStandin
from .store import GRAFANA12, GRAFANA13


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.standin", description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=(GRAFANA12, GRAFANA13), default=GRAFANA12)
    args = parser.parse_args(argv)
    token = secrets.token_hex(16)
    with GrafanaStandin(mode=args.mode, token=token) as standin:
        print(f"Grafana stand-in ({args.mode}) on {standin.url}; in another shell:")
        print(f"  export GRAFANA_URL={standin.url} GRAFANA_TOKEN={token}")
        print("  dashgen publish --profile <name>   # then dashgen diff --live / dashgen drift")
        print("Ctrl-C stops it (nothing is kept).", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
