"""The shipped profiles grown to a large cluster (4,096 GPUs by default), for tests of what changes with size
(narrowed graphs, the bands recorded for them) without a store of that size."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from dashgen.deployment.profile import Profile, profile_from_dict

ROOT = Path(__file__).resolve().parent.parent
GPUS = 4096


@cache
def at_size(name: str, gpus: int = GPUS) -> Profile:
    """A shipped profile grown to ``gpus`` GPUs: the same nodes and replicas, proportionally more of each."""
    path = ROOT / "profiles" / f"{name}.toml"
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    cluster = raw["cluster"]
    nodes = gpus // cluster["gpus_per_node"]
    factor = nodes / cluster["nodes"]
    cluster["nodes"] = nodes
    cluster.pop("node_addresses", None)
    for pool in raw["pools"]:
        pool["replicas"] = round(pool["replicas"] * factor)
    names = [f"{pool['name']}-{i}" for pool in raw["pools"] for i in range(pool["replicas"])]
    for master in raw.get("mooncake", {}).get("masters", []):
        master["replicas"] = [n for n in names if n.startswith(raw["pools"][0]["name"] + "-")]
    raw["name"] = f"{name}-at-{gpus}"
    return profile_from_dict(raw, str(path))
