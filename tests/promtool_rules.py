"""The alert families under ``promtool test rules``: the profiles, the rule files as ``dashgen rules`` writes
them, the alert a test expects (labels and annotations as the evaluator expands them), input series, and one run
of promtool over test cases."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest
import yaml

from dashgen.deployment.profile import Profile, load_profiles
from dashgen.rules import render_rule_files, rule_groups
from dashgen.rules.links import LinkBase, alert_links, link_base
from dashgen.rules.model import AlertRule

# A bound, not a budget: with only the rule groups its cases observe, a run takes seconds (the longest, those reading
# the node x layer matrix's subqueries over 3 h of steps, about 10 s on a loaded 2-core machine); it is there to stop
# a hung promtool, and the suite's own limit is what keeps the runs honest.
PROMTOOL_TIMEOUT_S = 600

ROOT = Path(__file__).resolve().parent.parent

PROFILES = {profile.name: profile for profile in load_profiles(directory=ROOT / "profiles")}


def written_rule_files(tmp_path_factory: pytest.TempPathFactory, profiles: list[Profile]) -> Path:
    """A fresh folder holding the rule files of ``profiles``, as ``dashgen rules`` writes them."""
    out = tmp_path_factory.mktemp("rules")
    for path, data in render_rule_files(profiles, out).items():
        path.write_bytes(data)
    return out


def alert(profile: str, name: str, variant: Profile | None = None) -> AlertRule:
    for group in rule_groups(variant or PROFILES[profile]):
        for rule in group.alerts():
            if rule.alert == name:
                return rule
    raise KeyError(name)


_LINKS: dict[int, tuple[Profile, LinkBase]] = {}


def links_of(profile: Profile) -> LinkBase:
    """The profile's link base as the rule file is written with it (its panels read once per profile object)."""
    if id(profile) not in _LINKS:
        _LINKS[id(profile)] = (profile, link_base(profile, rule_groups(profile)))
    return _LINKS[id(profile)][1]


def render(template: str, labels: dict[str, str], value: str) -> str:
    """Expand the two template forms the rules use: ``$labels.x`` and ``$value`` (optionally piped)."""
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], template)
    return re.sub(r"\{\{ \$value( \| \w+)? \}\}", value, text)


def expand_links(template: str, labels: dict[str, str]) -> str:
    """The dashboard link as the evaluator expands it: each ``{{ with $labels.x }}…{{ . | urlquery }}{{ end }}``
    kept (its value URL-quoted) when the alert carries the label, left out when it does not."""
    return re.sub(
        r"\{\{ with \$labels\.(\w+) \}\}(.*?)\{\{ \. \| urlquery \}\}\{\{ end \}\}",
        lambda m: m.group(2) + quote_plus(labels[m.group(1)]) if m.group(1) in labels else "",
        template,
    )


def expected(profile: str, name: str, labels: dict[str, str], value: str = "", variant: Profile | None = None) -> dict:
    rule = alert(profile, name, variant)
    deployment = PROFILES[profile]
    final = {
        **labels,
        **dict(rule.labels),  # the catalogue's labels (component, layer, failure, cause, look)
        deployment.label("deployment"): deployment.deployment,
        "severity": rule.severity,
    }
    record = {"alert": rule.alert, "for": rule.for_, "expr": rule.expr, "labels": dict(rule.labels)}
    links = alert_links(record, links_of(variant or deployment), rule.anchor)
    return {
        "exp_labels": final,
        "exp_annotations": {
            "summary": render(rule.summary, labels, value),
            "description": render(rule.description, labels, value),
            **({"first_steps": rule.first_steps} if rule.first_steps else {}),
            "runbook_url": links["runbook_url"],
            "dashboard_url": expand_links(links["dashboard_url"], final),
        },
    }


def in_deployment(profile: str, tests: list[dict]) -> list[dict]:
    """The test cases with every input series labelled with the profile's deployment (as vmagent labels them),
    unless a case gives a series its own deployment label."""
    deployment = PROFILES[profile]
    label = f'{deployment.label("deployment")}="{deployment.deployment}"'
    scoped = []
    for case in tests:
        inputs = []
        for item in case.get("input_series", []):
            name, _, rest = item["series"].partition("{")
            if f"{deployment.label('deployment')}=" not in rest:
                rest = f"{label}, {rest}" if rest != "}" else f"{label}}}"
            inputs.append({**item, "series": f"{name}{{{rest}"})
        scoped.append({**case, "input_series": inputs})
    return scoped


# What an expression reads, by name: metric and recording-rule names (and anything spelt like one, which only ever
# adds a group); a read through __name__ matchers cannot be told apart and keeps every group.
NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
ALERT_NAME = re.compile(r'alertname\s*=\s*"([^"]*)"')


@functools.cache
def _parsed(text: str) -> tuple[dict[str, Any], ...]:
    return tuple(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["groups"])


def load_groups(rule_file: Path) -> tuple[dict[str, Any], ...]:
    """The rule groups of a Prometheus rule file (parsed once per distinct text)."""
    return _parsed(rule_file.read_text(encoding="utf-8"))


def _reads(expr: str, alert_groups: dict[str, set[int]], every_alert: set[int]) -> tuple[set[str], set[int]]:
    """The names ``expr`` reads, and the groups whose alerts it reads through ``ALERTS`` / ``ALERTS_FOR_STATE``
    (by ``alertname="..."``, or every group holding an alert when it names none)."""
    names = set(NAME.findall(expr))
    groups: set[int] = set()
    if names & {"ALERTS", "ALERTS_FOR_STATE"}:
        named = ALERT_NAME.findall(expr)
        groups = set().union(*(alert_groups.get(name, set()) for name in named)) if named else set(every_alert)
    return names, groups


def needed_groups(groups: tuple[dict[str, Any], ...], tests: list[dict]) -> list[int]:
    """The indexes (in file order) of the rule groups ``tests`` can observe: those holding an alert a case asserts
    on (``alert_rule_test``) or a series a ``promql_expr_test`` reads, and, transitively, every group recording a
    series one of those groups reads. Groups are kept whole and in their order, so each kept rule is evaluated
    exactly as in the whole file (same group, same rules before it); what is left out is only rules no assertion
    can see. Every group when an expression reads by ``__name__``."""
    records: dict[str, set[int]] = {}
    alert_groups: dict[str, set[int]] = {}
    for index, group in enumerate(groups):
        for rule in group["rules"]:
            if "record" in rule:
                records.setdefault(rule["record"], set()).add(index)
            else:
                alert_groups.setdefault(rule["alert"], set()).add(index)
    every_alert = set().union(*alert_groups.values()) if alert_groups else set()

    wanted: set[int] = set()
    pending: list[str] = []  # expressions whose reads are still to be followed
    for case in tests:
        for check in case.get("alert_rule_test", []):
            wanted |= alert_groups.get(check["alertname"], set())
        pending += [check["expr"] for check in case.get("promql_expr_test", [])]
    pending += [rule["expr"] for index in wanted for rule in groups[index]["rules"]]
    while pending:
        expr = pending.pop()
        if "__name__" in expr:
            return list(range(len(groups)))
        names, via_alerts = _reads(expr, alert_groups, every_alert)
        more = set().union(via_alerts, *(records.get(name, set()) for name in names)) - wanted
        wanted |= more
        pending += [rule["expr"] for index in more for rule in groups[index]["rules"]]
    return sorted(wanted)


# An equality matcher inside a selector's braces, and the whole of a selector's matchers (a name followed by braces
# that do not parse as plain matchers is read as matching every series of that name).
MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|\})')


def _selectors(expr: str) -> list[tuple[str, dict[str, str]]]:
    """Each name ``expr`` reads with the equality matchers of its selector (``{}`` when it has none or they do not
    parse): a recording rule whose static labels contradict one of them cannot write a series that selector reads."""
    found = []
    for match in NAME.finditer(expr):
        equal: dict[str, str] = {}
        position = match.end()
        if expr.startswith("{", position):
            position += 1
            while (matcher := MATCHER.match(expr, position)) is not None:
                if matcher.group(2) == "=":
                    equal[matcher.group(1)] = matcher.group(3)
                position = matcher.end()
                if matcher.group(4) == "}":
                    break
            else:
                equal = {}  # not plain matchers: read as every series of the name
        found.append((match.group(0), equal))
    return found


def _can_write(rule: dict[str, Any], equal: dict[str, str]) -> bool:
    labels = rule.get("labels") or {}
    return all(labels.get(label, value) == value for label, value in equal.items())


def needed_rules(groups: tuple[dict[str, Any], ...], tests: list[dict]) -> dict[int, list[int]]:
    """Per group index (in file order), the indexes of its rules ``tests`` can observe: every rule of an alert a case
    asserts on (``alert_rule_test``), every recording rule that can write a series a ``promql_expr_test`` reads
    (its name, and no static label of the rule contradicting an equality matcher of the selector: the per-layer
    health records share one name), and, transitively, the same for what those rules read (``ALERTS`` by
    ``alertname`` as in ``needed_groups``). A rule only ever reads series, so one whose output no kept rule and no
    assertion can read changes nothing that is observed; the kept rules stay in their groups, in their order.
    Every rule when an expression reads by ``__name__``."""
    records: dict[str, list[tuple[int, int]]] = {}
    alerts: dict[str, list[tuple[int, int]]] = {}
    for index, group in enumerate(groups):
        for position, rule in enumerate(group["rules"]):
            if "record" in rule:
                records.setdefault(rule["record"], []).append((index, position))
            else:
                alerts.setdefault(rule["alert"], []).append((index, position))
    every_alert = [place for places in alerts.values() for place in places]
    everything = {index: list(range(len(group["rules"]))) for index, group in enumerate(groups)}

    wanted: set[tuple[int, int]] = set()
    for case in tests:
        for check in case.get("alert_rule_test", []):
            wanted.update(alerts.get(check["alertname"], []))
    pending = [check["expr"] for case in tests for check in case.get("promql_expr_test", [])]
    pending += [groups[index]["rules"][position]["expr"] for index, position in wanted]
    while pending:
        expr = pending.pop()
        if "__name__" in expr:
            return everything
        more: set[tuple[int, int]] = set()
        for name, equal in _selectors(expr):
            more.update(
                (index, position)
                for index, position in records.get(name, [])
                if _can_write(groups[index]["rules"][position], equal)
            )
            if name in ("ALERTS", "ALERTS_FOR_STATE"):
                named = ALERT_NAME.findall(expr)
                more.update(every_alert if not named else [place for n in named for place in alerts.get(n, [])])
        more -= wanted
        wanted |= more
        pending += [groups[index]["rules"][position]["expr"] for index, position in more]
    kept: dict[int, list[int]] = {}
    for index, position in sorted(wanted):
        kept.setdefault(index, []).append(position)
    return kept


def restricted_rule_files(tmp_path: Path, rule_file: Path, tests: list[dict]) -> list[tuple[Path, list[dict]]]:
    """The cases of ``tests``, each named ``case <n>`` (its place in ``tests``) unless it has a name, grouped by the
    rules they need (``needed_rules``): per group of cases, ``rule_file`` cut down to those rules, in their groups and
    order (under the same file name: the deployment is read from it). promtool evaluates every rule of the file at
    every step of every case, and most of a case's time went to rules it never asserts on (the node x layer matrix's
    subqueries, every layer's when a case reads one layer's health; absence alerts firing for every expected
    target, their annotations expanded at each step); test_whole_rule_files_evaluate_in_promtool runs each whole
    file."""
    groups = load_groups(rule_file)
    by_need: dict[tuple[tuple[int, tuple[int, ...]], ...], list[dict]] = {}
    for number, case in enumerate(tests, 1):
        named = {"name": f"case {number}", **case}
        need = tuple((index, tuple(rules)) for index, rules in needed_rules(groups, [case]).items())
        by_need.setdefault(need, []).append(named)
    files = []
    for number, (kept, cases) in enumerate(by_need.items()):
        out = tmp_path / "restricted" / str(number)
        out.mkdir(parents=True, exist_ok=True)
        path = out / rule_file.name
        document = {
            "groups": [
                {**groups[index], "rules": [groups[index]["rules"][position] for position in rules]}
                for index, rules in kept
            ]
        }
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        files.append((path, cases))
    return files


def run_tests(promtool: str, tmp_path: Path, rule_file: Path, tests: list[dict], whole_file: bool = False) -> None:
    """``tests`` (promtool test cases) run by one promtool against ``rule_file``, each case with only the rules
    it can observe unless ``whole_file``. A failure names the case (``case <n>``, its place in ``tests``)."""
    runs = (
        [(rule_file, [{"name": f"case {n}", **case} for n, case in enumerate(tests, 1)])]
        if whole_file
        else restricted_rule_files(tmp_path, rule_file, tests)
    )
    test_files = []
    for number, (loaded, cases) in enumerate(runs):
        document = {
            "rule_files": [str(loaded)],
            "evaluation_interval": "1m",
            "tests": in_deployment(rule_file.stem, cases),
        }
        test_file = tmp_path / f"test-{number}.yml"
        test_file.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
        test_files.append(str(test_file))
    result = subprocess.run(
        [promtool, "test", "rules", *test_files], capture_output=True, text=True, timeout=PROMTOOL_TIMEOUT_S
    )
    assert result.returncode == 0, result.stdout + result.stderr


def series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ", ".join(f'{key}="{value}"' for key, value in labels.items())
    return {"series": f"{name}{{{inner}}}", "values": values}
