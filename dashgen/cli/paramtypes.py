"""The click types that validate arguments before a command runs (a bad value is a usage error, exit 2). Imports
click only, so the connection options of every Grafana command can use them cheaply."""

from __future__ import annotations

import math
import re
from typing import Any

import click


class PositiveSeconds(click.ParamType):
    """A positive, finite number of seconds (``0``, ``-1``, ``nan`` and ``inf`` are refused), at most ``maximum``;
    with ``zero=True`` ``0`` is taken as well."""

    name = "seconds"

    def __init__(self, maximum: float = 7 * 86400.0, unit: str = "seconds", *, zero: bool = False) -> None:
        self.maximum = maximum
        self.unit = unit
        self.name = unit
        self.zero = zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of {self.unit}", param, ctx)
        if not math.isfinite(number) or number < 0 or (number == 0 and not self.zero):
            kind = "a finite number of at least 0" if self.zero else "a positive, finite number of"
            self.fail(f"{value!r} must be {kind} {self.unit}", param, ctx)
        if number > self.maximum:
            self.fail(f"{value!r} is over the maximum of {self.maximum:g} {self.unit}", param, ctx)
        return number


class NonEmpty(click.ParamType):
    """A string with at least one non-blank character (``--to ""`` is refused, not read as "the newest")."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text.strip():
            self.fail("must not be empty", param, ctx)
        if any(ord(c) < 32 for c in text):
            self.fail(f"{text!r} contains control characters", param, ctx)
        return text


class HttpUrl(click.ParamType):
    """An ``http://`` or ``https://`` URL with a host; shown without its credentials in any error."""

    name = "url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from urllib.parse import urlsplit

        from dashgen.errors import redact

        text = str(value).strip()
        try:
            parts = urlsplit(text)
            host = parts.hostname
            _ = parts.port
        except ValueError as exc:
            self.fail(f"{redact(text)!r} is not a URL: {exc}", param, ctx)
        if parts.scheme not in ("http", "https") or not host:
            self.fail(f"{redact(text)!r} must be an http:// or https:// URL with a host", param, ctx)
        from dashgen.net.urls import url_problem

        if (problem := url_problem(text)) is not None:  # a space in the host, port 0, a name no host can have
            self.fail(f"{redact(text)!r} {problem}", param, ctx)
        return text


# Kubernetes' own syntax (apimachinery validation): a namespace is a DNS-1123 label; a label key an optional
# DNS-1123 subdomain prefix and "/" before a name of at most 63 characters; a label value empty or such a name
K8S_NAMESPACE_RE = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
K8S_NAME_RE = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
K8S_PREFIX_RE = re.compile(r"(?=.{1,253}\Z)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")


class KubernetesNamespace(click.ParamType):
    """A namespace Kubernetes accepts (lower-case letters, digits and '-', at most 63 characters), or ``""``: no
    namespace, as when the option is not given (the resources are written without ``metadata.namespace``, so
    ``kubectl apply`` puts them in the current context's namespace)."""

    name = "namespace"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text and not K8S_NAMESPACE_RE.fullmatch(text):
            self.fail(
                f"{text!r} is no Kubernetes namespace (lower-case letters, digits and '-', at most 63)", param, ctx
            )
        return text


class KubernetesLabel(click.ParamType):
    """``KEY=VALUE``, a label Kubernetes accepts: ``[prefix/]name`` = a value of at most 63 characters (letters,
    digits, ``-_.``, starting and ending with a letter or digit; may be empty). Kept as typed."""

    name = "KEY=VALUE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        key, sep, item = text.partition("=")
        prefix, slash, name = key.rpartition("/")
        if not sep or not K8S_NAME_RE.fullmatch(name) or (slash and not K8S_PREFIX_RE.fullmatch(prefix)):
            self.fail(f"{text!r}: the key is no Kubernetes label key ([prefix/]name of at most 63)", param, ctx)
        if item and not K8S_NAME_RE.fullmatch(item):
            self.fail(f"{text!r}: the value is no Kubernetes label value (at most 63 of A-Z a-z 0-9 - _ .)", param, ctx)
        return text


SECONDS = PositiveSeconds()
HOURS = PositiveSeconds(maximum=24 * 366.0, unit="hours")
TIMEOUT = PositiveSeconds(maximum=3600.0)
NON_EMPTY = NonEmpty()
HTTP_URL = HttpUrl()
KUBERNETES_NAMESPACE = KubernetesNamespace()
KUBERNETES_LABEL = KubernetesLabel()
