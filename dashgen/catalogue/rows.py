"""The rows of the failure-mode catalogue, in reading order: one ``FailureMode`` per way a component fails
(``dashgen.catalogue``). Rows whose ``expr`` is None have their PromQL and description built in ``dashgen.rules``
(named by ``alert``); the others are written from the row alone (``dashgen.catalogue.conditions``)."""

from __future__ import annotations

from dashgen.catalogue.hardware import DISK_ROWS, GPU_ROWS, HOST_ROWS
from dashgen.catalogue.model import FailureMode
from dashgen.catalogue.platform import CLOCK_ROWS, COLLECTOR_ROWS, SLO_ROWS, TARGET_ROWS
from dashgen.catalogue.serving import CACHE_ROWS, ENGINE_ROWS, GATEWAY_ROWS

ROWS: tuple[FailureMode, ...] = (
    GPU_ROWS
    + HOST_ROWS
    + DISK_ROWS
    + ENGINE_ROWS
    + CACHE_ROWS
    + GATEWAY_ROWS
    + CLOCK_ROWS
    + COLLECTOR_ROWS
    + TARGET_ROWS
    + SLO_ROWS
)
