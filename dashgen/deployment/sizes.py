"""Byte sizes: parse the human forms profiles use ("256 GiB", "3.84 TB") and print them back."""

from __future__ import annotations

import re

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}
_SIZE_RE = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*\Z")

MAX_SIZE = 2**62
GiB = 2**30
TiB = 2**40


def parse_size(value: int | str) -> int:
    """Return a byte count from an int or a string such as ``"256 GiB"`` or ``"3.84TB"``.

    Raises ValueError with a readable message for anything else (negative, unknown unit,
    fractional bytes).
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a size, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"size must not be negative, got {value}")
        if value > MAX_SIZE:
            raise ValueError(f"size must be at most 2^62 bytes (4 EiB), got about 2^{value.bit_length() - 1}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a size (integer bytes or a string like '256 GiB'), got {value!r}")
    if len(value) > 64:
        raise ValueError(f"cannot read size {value[:40]!r}...: over 64 characters")
    match = _SIZE_RE.match(value)
    if not match:
        raise ValueError(f"cannot read size {value!r}; write it like '256 GiB', '240 GB' or 274877906944")
    number, unit = match.group(1).replace("_", ""), match.group(2).lower()
    if unit not in _UNITS:
        raise ValueError(f"unknown size unit {match.group(2)!r} in {value!r}; use B, KB..PB or KiB..PiB")
    scaled = float(number) * _UNITS[unit] if "." in number else int(number) * _UNITS[unit]
    if isinstance(scaled, float):
        if abs(scaled - round(scaled)) > 1e-6:
            raise ValueError(f"size {value!r} is not a whole number of bytes")
        scaled = int(round(scaled))
    if scaled > MAX_SIZE:
        raise ValueError(f"size {value!r} is over the limit of 2^62 bytes (4 EiB)")
    return scaled


def format_binary(num_bytes: int) -> str:
    """Format bytes with binary units, exact where possible: ``format_binary(8*GiB) == '8 GiB'``."""
    for unit, factor in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if num_bytes >= factor:
            value = num_bytes / factor
            text = f"{value:.0f}" if value == int(value) else f"{value:.2f}".rstrip("0").rstrip(".")
            return f"{text} {unit}"
    return f"{num_bytes} B"


def format_decimal(num_bytes: int) -> str:
    """Format bytes with decimal units as disks are sold: ``format_decimal(1_920_000_000_000) == '1.92 TB'``."""
    for unit, factor in (("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if num_bytes >= factor:
            value = num_bytes / factor
            text = f"{value:.0f}" if value == int(value) else f"{value:.3f}".rstrip("0").rstrip(".")
            return f"{text} {unit}"
    return f"{num_bytes} B"
