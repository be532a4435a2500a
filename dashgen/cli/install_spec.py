"""Where a team's CI installs dashgen from: only this project's distribution, pinned.

On PyPI ``dashgen`` is another project (HTML/CSS dashboards drawn with Playwright); ours is ``dashgen-grafana``
(the import package and the command stay ``dashgen``). A CI job that holds a Grafana token must never install a
stranger's package, so an install spec is accepted only when it names our distribution and pins what it gets:
an exact version (``dashgen-grafana==0.1.0``) or a commit of a git repository
(``dashgen-grafana @ git+https://host/org/repo.git@<40-hex sha>``). Until the distribution is published, the
second form is what ``dashgen init`` writes: from the commit this dashgen was installed from when pip recorded
it (PEP 610 ``direct_url.json``), from ``--dashgen-repo`` / ``--dashgen-commit``, or else a placeholder that
the workflow's first step refuses (in bash; tests hold that step and :func:`problem` to the same verdicts).
"""

from __future__ import annotations

import json
import re
from importlib import metadata

from dashgen.errors import redact

DISTRIBUTION = "dashgen-grafana"
FILL_IN = "FILL-IN"
PLACEHOLDER = f"{DISTRIBUTION} @ git+https://{FILL_IN}-the-dashgen-repository-URL@{FILL_IN}-a-40-hex-commit-sha"

VERSION_PIN = r"==[0-9][0-9A-Za-z.+!-]*"
# the repository URL in characters a git URL needs only: the spec is written into the workflow as a YAML
# double-quoted value GitHub reads, so no quote, backslash (a YAML escape), $ { } (a ${{ }} expression GitHub
# expands, a secret's value sent to the URL's host), space, # or @
GIT_PIN = r" @ git\+https://[-A-Za-z0-9._~:/%+=,]+@[0-9a-f]{40}"
# POSIX ERE, as the workflow's bash step writes it ([[ =~ ]]: no \d, no (?:)); Python reads it alike
PATTERN = rf"^{DISTRIBUTION}({VERSION_PIN}|{GIT_PIN})$"
_COMPILED = re.compile(PATTERN)


def problem(spec: str) -> str | None:
    """Why ``spec`` is not a pinned install of our distribution, or None when it is."""
    shown = redact(spec)  # a URL's user-info is never shown
    if FILL_IN in spec:
        return f"{shown!r} is the placeholder init writes: fill in the repository URL and commit of dashgen"
    if not _COMPILED.match(spec):
        return (
            f"{shown!r} does not install {DISTRIBUTION} pinned: write {DISTRIBUTION}==VERSION or "
            f"'{DISTRIBUTION} @ git+https://HOST/REPO@COMMIT' (40 hex digits); 'dashgen' on PyPI is another project"
        )
    return None


def from_repository(url: str, commit: str) -> str:
    """The spec of our distribution at ``commit`` of the git repository at ``url`` (checked by :func:`problem`)."""
    url = url.removeprefix("git+")
    return f"{DISTRIBUTION} @ git+{url}@{commit}"


def installed_from() -> str | None:
    """The pinned spec of the commit this dashgen was installed from, when pip recorded a git origin (PEP 610)."""
    try:
        raw = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        origin = json.loads(raw or "null")
    except ValueError:
        return None
    if not isinstance(origin, dict):
        return None
    vcs = origin.get("vcs_info")
    url = origin.get("url")
    if not isinstance(vcs, dict) or vcs.get("vcs") != "git" or not isinstance(url, str):
        return None
    spec = from_repository(url, str(vcs.get("commit_id", "")))
    return spec if problem(spec) is None else None
