"""Grafana's value display, for the units dashgen's panels use: a number and a fieldConfig ``unit`` /
``decimals`` in, the text Grafana shows out; the nice axis ticks of a value range; threshold and
mapping colours. Pure functions, no I/O.

Units: ``percentunit`` (0.5 -> 50%), ``percent``, ``short`` / ``none`` / unset (SI-style K, Mil, Bil),
``s`` / ``ms`` (time, scaled to the best unit), ``bytes`` / ``decbytes`` / ``Bps`` (IEC or SI), rates
(``reqps``, ``cps``, ``iops``, ``hertz``), ``watt``, ``celsius``, ``dateTimeFromNow`` and
``suffix:<text>``. An unknown unit shows the number with the unit's name after it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from dashgen.escape import css_colour

# Grafana's named colours (the dark theme's shades of the classic names).
NAMED_COLOURS = {
    "green": "#73bf69",
    "red": "#f2495c",
    "orange": "#ff9830",
    "yellow": "#fade2a",
    "blue": "#5794f2",
    "purple": "#b877d9",
    "transparent": "transparent",
    "text": "#ccccdc",
    "dark-green": "#37872d",
    "dark-red": "#c4162a",
    "dark-orange": "#fa6400",
    "dark-yellow": "#e0b400",
    "semi-dark-green": "#56a64b",
    "semi-dark-red": "#e02f44",
    "semi-dark-orange": "#ff780a",
    "semi-dark-yellow": "#f2cc0c",
    "light-green": "#96d98d",
    "light-red": "#ff7383",
    "light-orange": "#ffb357",
    "light-yellow": "#ffee52",
}
# Grafana's classic palette, the colours of series 1, 2, 3, ... in a time series panel.
CLASSIC_PALETTE = (
    "#7eb26d",
    "#eab839",
    "#6ed0e0",
    "#ef843c",
    "#e24d42",
    "#1f78c1",
    "#ba43a9",
    "#705da0",
    "#508642",
    "#cca300",
    "#447ebc",
    "#c15c17",
    "#890f02",
    "#0a437c",
    "#6d1f62",
    "#584477",
)
_SI = ((1e12, " T"), (1e9, " B"), (1e6, " M"), (1e3, " K"))
_SHORT = ((1e12, " Tri"), (1e9, " Bil"), (1e6, " Mil"), (1e3, " K"))
_IEC = ((1 << 50, " PiB"), (1 << 40, " TiB"), (1 << 30, " GiB"), (1 << 20, " MiB"), (1 << 10, " KiB"))
_DEC_BYTES = ((1e15, " PB"), (1e12, " TB"), (1e9, " GB"), (1e6, " MB"), (1e3, " kB"))
_RATES = {"reqps": " req/s", "cps": " c/s", "iops": " io/s", "ops": " ops/s", "rps": " rd/s", "wps": " wr/s"}
_SI_UNITS = {"hertz": "Hz", "watt": "W", "volt": "V", "amp": "A"}


def colour(name: object) -> str:
    """A CSS colour from a Grafana colour name or a ``#rrggbb`` / ``rgb()`` value; anything outside the colour
    grammar (:func:`dashgen.escape.css_colour`) is the neutral grey, so nothing else reaches a style."""
    if not name:
        return NAMED_COLOURS["green"]
    if isinstance(name, str) and name in NAMED_COLOURS:
        return NAMED_COLOURS[name]
    return css_colour(name)


def _number(value: float, decimals: int | None) -> str:
    if decimals is not None:
        return f"{value:.{max(0, min(decimals, 10))}f}"
    if value == 0:
        return "0"
    # Grafana's automatic decimals: enough to show about three significant digits, trailing zeros dropped.
    magnitude = math.floor(math.log10(abs(value)))
    places = max(0, min(2 - magnitude, 10))
    text = f"{value:.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scaled(value: float, steps: Sequence[tuple[float, str]], decimals: int | None, base: str = "") -> str:
    for size, suffix in steps:
        if abs(value) >= size:
            return _number(value / size, decimals) + suffix
    return _number(value, decimals) + base


def _duration(value: float, decimals: int | None, unit: str) -> str:
    seconds = value / 1000 if unit == "ms" else value
    for size, suffix in ((86400 * 365, " year"), (86400 * 7, " week"), (86400, " day"), (3600, " hour")):
        if abs(seconds) >= size:
            return _number(seconds / size, decimals) + suffix
    if abs(seconds) >= 60:
        return _number(seconds / 60, decimals) + " min"
    if abs(seconds) >= 1 or seconds == 0:
        return _number(seconds, decimals) + " s"
    if abs(seconds) >= 0.001:
        return _number(seconds * 1000, decimals) + " ms"
    return _number(seconds * 1e6, decimals) + " µs"


def format_value(value: float | None, unit: str | None = None, decimals: int | None = None, now: float = 0.0) -> str:
    """The text Grafana shows for ``value`` in ``unit`` with ``decimals`` (None: automatic)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    unit = (unit or "").strip()
    if unit == "percentunit":
        return _number(value * 100, decimals) + "%"
    if unit == "percent":
        return _number(value, decimals) + "%"
    if unit in ("", "short"):
        return _scaled(value, _SHORT, decimals)
    if unit == "none":
        return _number(value, decimals)
    if unit in ("s", "ms"):
        return _duration(value, decimals, unit)
    if unit == "bytes":
        return _scaled(value, _IEC, decimals, " B")
    if unit == "decbytes":
        return _scaled(value, _DEC_BYTES, decimals, " B")
    if unit == "Bps":
        return _scaled(value, _IEC, decimals, " B") + "/s"
    if unit in _RATES:
        return _scaled(value, _SI, decimals) + _RATES[unit]
    if unit in _SI_UNITS:
        text = _scaled(value, _SI, decimals, " ")
        return text + _SI_UNITS[unit]
    if unit == "celsius":
        return _number(value, decimals) + "°C"
    if unit == "dateTimeFromNow":
        return _from_now(value, now or time.time())
    if unit.startswith("suffix:"):
        return _number(value, decimals) + unit[len("suffix:") :]
    return f"{_number(value, decimals)} {unit}"


def _from_now(value: float, now: float) -> str:
    seconds = now - (value / 1000 if value > 1e11 else value)
    ago = seconds >= 0
    seconds = abs(seconds)
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            count = int(seconds // size)
            text = f"{count} {name}{'s' if count != 1 else ''}"
            return f"{text} ago" if ago else f"in {text}"
    return "a few seconds ago" if ago else "in a few seconds"


# -- thresholds and mappings ----------------------------------------------------------------------


def threshold_colour(value: float | None, thresholds: Mapping[str, Any] | None) -> str | None:
    """The colour of the highest threshold step at or below ``value`` (absolute mode); None without steps."""
    steps = (thresholds or {}).get("steps") or []
    if not steps:
        return None
    found = steps[0].get("color")
    if value is not None:
        for step in steps[1:]:
            bound = step.get("value")
            if bound is not None and value >= bound:
                found = step.get("color")
    return colour(found)


def map_value(value: float | None, mappings: Sequence[Mapping[str, Any]] | None) -> tuple[str | None, str | None]:
    """``(text, colour)`` of the first value or range mapping that matches ``value`` ((None, None): none)."""
    if value is None:
        return None, None
    for mapping in mappings or []:
        options = mapping.get("options") or {}
        if mapping.get("type") == "value":
            for key, result in options.items():
                try:
                    matched = float(key) == value
                except ValueError:
                    matched = False
                if matched:
                    return result.get("text"), colour(result["color"]) if result.get("color") else None
        elif mapping.get("type") == "range":
            low, high = options.get("from"), options.get("to")
            if (low is None or value >= low) and (high is None or value <= high):
                result = options.get("result") or {}
                return result.get("text"), colour(result["color"]) if result.get("color") else None
    return None, None


# -- axis -----------------------------------------------------------------------------------------


def _nice_step(span: float, target_ticks: int) -> float:
    raw = span / max(target_ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def axis_range(
    data_min: float | None, data_max: float | None, fixed_min: float | None, fixed_max: float | None
) -> tuple[float, float]:
    """The y axis as Grafana draws it: a fieldConfig ``min`` / ``max`` is kept exactly, an open side is
    the data's extreme rounded out to a nice step (0-1 when there is no data at all)."""
    low = fixed_min if fixed_min is not None else data_min
    high = fixed_max if fixed_max is not None else data_max
    if low is None and high is None:
        return 0.0, 1.0
    low = high if low is None else low
    high = low if high is None else high
    assert low is not None and high is not None
    if high < low:
        low, high = (high, high) if fixed_max is not None else (low, low)
    if high == low:
        pad = abs(high) * 0.1 or 1.0
        low = low if fixed_min is not None else low - pad
        high = high if fixed_max is not None else high + pad
    step = _nice_step(high - low, 4)
    if fixed_min is None:
        low = math.floor(low / step) * step
    if fixed_max is None:
        high = math.ceil(high / step) * step
    return low, high


def axis_ticks(low: float, high: float, target_ticks: int = 4) -> list[float]:
    """Nice tick values within [low, high], both ends included when they are on the step."""
    if high <= low:
        return [low]
    step = _nice_step(high - low, target_ticks)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks
