"""Profiles as data before they are loaded: a shipped profile's TOML (:func:`raw`) and a mixed text and video
profile made from h20-16 (:func:`mixed`)."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

PROFILES = Path(__file__).resolve().parent.parent / "profiles"


def raw(name: str) -> dict:
    return tomllib.loads((PROFILES / f"{name}.toml").read_text())


def mixed() -> dict:
    """2 text nodes (one TP8 replica each) and 2 video nodes (one instance each)."""
    data = copy.deepcopy(raw("h20-16"))
    data["name"], data["title"] = "mixed-4", "Mixed text and video"
    data["cluster"].update(nodes=4, node_name_format="mx-node-{index:02d}")
    data["pools"] = [
        {"name": "text", "role": "unified", "replicas": 2, "tp": 8, "pp": 1},
        {"name": "video", "kind": "video-generation", "role": "unified", "replicas": 2, "tp": 8},
    ]
    data["slo"]["job_latency_seconds"] = 600.0
    return data
