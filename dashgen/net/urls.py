"""The grammar of a server's base URL (Grafana, a data source), checked before any request: an error names
what is wrong, so a typo in a config file is an input error (exit 2), never an internal error or four retries
against a host that cannot exist."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_HOST_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_-]{1,63})*\.?")


def url_problem(url: str) -> str | None:
    """What makes ``url`` no ``http(s)://host[:port][/path]`` base URL, or None when it is one."""
    text = url.strip()
    if any(ch.isspace() or ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F for ch in text):
        return "contains a space or a control character"
    try:
        parts = urlsplit(text)
        port = parts.port  # raises for a port out of 0-65535 or not a number
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    host = parts.hostname or ""
    if not host:
        return "has no host"
    if port == 0:
        return "port 0 is no server's"
    if parts.netloc.rsplit("@", 1)[-1].startswith("["):
        return None  # an IPv6 literal, which urlsplit has checked
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return f"host {host!r} is not a host name"
    return None if _HOST_RE.fullmatch(ascii_host) else f"host {host!r} is not a host name or an IP address"
