"""Shipped profiles restated (S35): a copy of a profile under another name whose ``[sources.<name>]`` tables gain
``version`` / ``features`` / ``metric_prefix`` lines, written to a folder the tests pass as ``--profiles-dir``."""

from __future__ import annotations

from pathlib import Path

from dashgen.deployment.edit import set_source_fields
from dashgen.deployment.profile import Profile, load_profile

ROOT = Path(__file__).resolve().parent.parent

# name -> (shipped profile, {source: fields}): the shapes issue 28 names
DEFAULT_GATEWAY = {"gateway": {"features": []}}  # no --engine-metrics, no admission limit (the gateway's defaults)
RESTATED = {
    "lc-router": ("long-context-64", {"sglang": {"metric_prefix": "sglang_"}, **DEFAULT_GATEWAY}),
    "pd-old": ("pd-128", {"sglang": {"version": "0.5.10"}, **DEFAULT_GATEWAY}),
}


def restate(folder: Path, name: str, shipped: str, fields: dict[str, dict[str, object]]) -> Profile:
    """Write ``folder/<name>.toml``: ``profiles/<shipped>.toml`` renamed, with ``fields`` set per source."""
    text = (ROOT / "profiles" / f"{shipped}.toml").read_text(encoding="utf-8")
    text = text.replace(f'name = "{shipped}"', f'name = "{name}"', 1)
    for source, values in fields.items():
        text = set_source_fields(text, f"{name}.toml", source, values)
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return load_profile(path)


def restated(folder: Path) -> dict[str, Profile]:
    folder.mkdir(parents=True, exist_ok=True)
    return {name: restate(folder, name, shipped, fields) for name, (shipped, fields) in RESTATED.items()}
