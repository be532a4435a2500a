"""Two exporters claiming one port (``dashgen doctor``): Mooncake's transfer-engine metrics server (TENT) listens on
``TENT_METRICS_HTTP_PORT``, default 9100, which is node_exporter's default. On a host running both, one of them
cannot bind, and the scrape job pointed at ``host:9100`` reads whichever won. Pure: (job, instance, what the target
wrote) rows in, one sentence per clash out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dashgen.exporters.table import TENT_PORT


@dataclass(frozen=True)
class ScrapeTarget:
    """One scrape target as the store shows it: its job, its instance (host:port), and whether the series it
    delivered include TENT's (``tent_*``) or node_exporter's (``node_*``)."""

    job: str
    instance: str
    tent: bool = False
    node: bool = False

    @property
    def port(self) -> str:
        return self.instance.rsplit(":", 1)[1] if ":" in self.instance else ""


ADVICE = (
    f"TENT's metrics server (TENT_METRICS_HTTP_PORT, default {TENT_PORT}) and node_exporter (--web.listen-address, "
    f"default :{TENT_PORT}) cannot both listen there: move TENT (TENT_METRICS_HTTP_PORT or metrics.http_port in "
    "transfer-engine.json) and scrape it on its own port"
)


def port_clashes(targets: Iterable[ScrapeTarget]) -> list[str]:
    """One sentence per port-9100 target that shows a clash: scraped by two jobs, or delivering both TENT's and
    node_exporter's series, or delivering TENT's series to a job that also scrapes node_exporter elsewhere."""
    on_port = [t for t in targets if t.port == TENT_PORT]
    by_instance: dict[str, list[ScrapeTarget]] = {}
    for target in on_port:
        by_instance.setdefault(target.instance, []).append(target)
    node_jobs = {t.job for t in on_port if t.node and not t.tent}
    found = []
    for instance, seen in sorted(by_instance.items()):
        jobs = sorted({t.job for t in seen})
        if len(jobs) > 1:
            found.append(f"{instance} is scraped by jobs {', '.join(jobs)}: one listener answers both; {ADVICE}")
        elif any(t.tent and t.node for t in seen):
            found.append(f"{instance} (job {jobs[0]}) delivers both tent_* and node_* series; {ADVICE}")
        elif any(t.tent for t in seen) and jobs[0] in node_jobs:
            found.append(
                f"{instance} answers job {jobs[0]} with TENT's series where that job reads node_exporter on other "
                f"hosts: TENT holds port {TENT_PORT} there; {ADVICE}"
            )
    return found
