"""Approval keys and what grants them (pure).

Every refusal of a plan carries a key; the key names the one thing it approves, and ``remedy`` gives
the exact flag that approves it:

  ``<panel key>``              an existing panel whose queries change (``cache_evidence.tier_occupancy``)
  ``var:<name>``               an existing variable whose definition changes
  ``remove:panel:<id>``        a panel present live but not in the build (the clean-up list)
  ``remove:var:<name>``        a variable present live but not in the build
  ``move:<folder uid|root>``   moving an existing dashboard into another folder
  ``create-folder:<uid>``      creating a target folder that does not exist
  ``overwrite-live:<uid>``     overwriting edits made in Grafana since the last release (``--overwrite-live``)
  ``overwrite-v2:<uid>``       overwriting a dashboard Grafana stores in the v2 schema (``--overwrite-v2``)
  ``provisioned:<uid>``        never granted: Grafana refuses API saves of a provisioned dashboard
  ``plan:<uid>``               never granted: with ``--approved-plan``, a write the reviewed plan does not hold
                               (not in it, another build, or Grafana changed since; ``dashgen.publish.approved_plan``)
  ``remove:library-panel:<uid>`` deleting a library panel the build no longer has
  ``connected:<uid>``          never granted: a library panel still used by a dashboard dashgen does not manage
  ``alert:<title>`` / ``remove:rule:<title>`` / ``remove:rule-group:<uid>``  Grafana-managed rules
  ``provenance:<uid>``         never granted: a rule group another tool owns (Grafana refuses the change)
  ``remove-access:<folder>/<principal>``  removing or lowering folder access dashgen did not grant
  ``principal:<principal>``    never granted: dashgen.toml names a team / user / service account Grafana lacks

``--approve`` patterns may be scoped to dashboards with a ``<uid>/`` prefix, and both parts may be shell
globs (``gpu_window_stats.*``, ``dg-*-cluster/var:*``). Overwrites are granted only by their own flags
(which take uid globs) or an exact ``--approve overwrite-live:<uid>``, never by a glob of ``--approve``:
``--approve '*'`` cannot discard a person's work.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

OVERWRITE_PREFIXES = ("overwrite-live:", "overwrite-v2:")
PROVISIONED_PREFIX = "provisioned:"
PROVISIONED_REMEDY = (
    "no flag approves it: remove it from Grafana's provisioning (or let the provider allow UI updates), then publish"
)
PLAN_PREFIX = "plan:"
PLAN_REMEDY = (
    "no flag approves it: plan again in a pull request (dashgen publish --dry-run --approvals-out FILE), "
    "review and commit the approved plan, then publish"
)
CONNECTED_PREFIX = "connected:"
PROVENANCE_PREFIX = "provenance:"
PRINCIPAL_PREFIX = "principal:"
LIBRARY_PREFIX = "library-panel:"  # a dashboard held because its library panel could not be written
NEVER_GRANTED = (
    PROVISIONED_PREFIX,
    PLAN_PREFIX,
    CONNECTED_PREFIX,
    PROVENANCE_PREFIX,
    PRINCIPAL_PREFIX,
    LIBRARY_PREFIX,
)
PROVENANCE_REMEDY = (
    "no flag approves it: Grafana refuses to change a rule's provenance; delete the group in Grafana (or through "
    "the tool that wrote it), then publish"
)
CONNECTED_REMEDY = (
    "no flag approves it: remove the library panel from the dashboards that use it (or keep it in the build)"
)
FLAG_OF_PREFIX = {"overwrite-live:": "--overwrite-live", "overwrite-v2:": "--overwrite-v2"}


@dataclass(frozen=True)
class Approvals:
    """What the operator approved: ``--approve`` patterns and the uid patterns of the overwrite flags."""

    patterns: tuple[str, ...] = ()
    overwrite_live: tuple[str, ...] = ()
    overwrite_v2: tuple[str, ...] = ()

    def grants(self, key: str, uid: str) -> bool:
        """Whether ``key`` of dashboard ``uid`` is approved (a key of ``NEVER_GRANTED``, e.g. ``plan:``, never is)."""
        if key.startswith(NEVER_GRANTED):
            return False
        for prefix, uids in (("overwrite-live:", self.overwrite_live), ("overwrite-v2:", self.overwrite_v2)):
            if key.startswith(prefix):
                subject = key[len(prefix) :]
                exact = {key, f"{uid}/{key}"}
                return any(fnmatchcase(subject, p) for p in uids) or bool(exact & set(self.patterns))
        return any(_matches(pattern, key, uid) for pattern in self.patterns)

    def unmatched(self, keys: list[tuple[str, str]]) -> list[str]:
        """The ``--approve`` patterns that match none of ``(uid, key)`` (a typo approves nothing: say so)."""
        return [p for p in self.patterns if not any(_matches(p, key, uid) for uid, key in keys)]


def _matches(pattern: str, key: str, uid: str) -> bool:
    if key.startswith(NEVER_GRANTED):
        return False
    if pattern in (key, f"{uid}/{key}"):
        return True
    if key.startswith(OVERWRITE_PREFIXES):
        return False
    if "/" in pattern:
        uid_pattern, key_pattern = pattern.split("/", 1)
        return fnmatchcase(uid, uid_pattern) and fnmatchcase(key, key_pattern)
    return fnmatchcase(key, pattern)


def remedy(key: str) -> str:
    """The flag that approves ``key``, as a user types it (for a key no flag approves: what to do instead)."""
    if key.startswith(PROVISIONED_PREFIX):
        return PROVISIONED_REMEDY
    if key.startswith(PLAN_PREFIX):
        return PLAN_REMEDY
    if key.startswith(CONNECTED_PREFIX):
        return CONNECTED_REMEDY
    if key.startswith(PROVENANCE_PREFIX):
        return PROVENANCE_REMEDY
    if key.startswith(LIBRARY_PREFIX):
        return "no flag approves it: publish again once its library panel can be written"
    if key.startswith(PRINCIPAL_PREFIX):
        return "no flag approves it: create it in Grafana, or correct its name in dashgen.toml"
    for prefix, flag in FLAG_OF_PREFIX.items():
        if key.startswith(prefix):
            return f"{flag} {key[len(prefix) :]}"
    return f"--approve {key}"
