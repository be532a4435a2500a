"""docs/alerts.md, generated from the failure-mode catalogue (``dashgen.catalogue``) and the rule groups of every
profile: the catalogue table, one runbook section per row (test and hold with their reasons, entity, series read,
likely cause, where to look, first steps, the demo fault, the profiles it is written for and each profile's
description, and for every other profile what it lacks), the health states the rows paint, and the series no row
reads with why. The prose that is not per row (loading the rules, the SLO arithmetic, the thresholds) is
``dashgen/data/alerts.md.in``. Pure:
:func:`render_alert_docs` returns the bytes; ``dashgen rules`` writes them and ``dashgen check`` compares them."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from dashgen_queries import dcgm

from dashgen.catalogue import ROWS, FailureMode, entity_labels, rows_for
from dashgen.catalogue.signals import NOT_SIGNALS
from dashgen.deployment.profile import Profile
from dashgen.rules.model import AlertRule
from dashgen.rules.render import rule_groups

ALERT_DOCS = Path("docs") / "alerts.md"
TABLE_MARK, RUNBOOK_MARK = "<!-- catalogue table -->", "<!-- catalogue runbooks -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _written(profiles: list[Profile]) -> dict[str, list[tuple[Profile, AlertRule]]]:
    """Alert name -> (profile, its first rule of that alert) for every profile that writes it."""
    found: dict[str, list[tuple[Profile, AlertRule]]] = {}
    for profile in profiles:
        seen: set[str] = set()
        for group in rule_groups(profile):
            for rule in group.alerts():
                if rule.alert not in seen:
                    seen.add(rule.alert)
                    found.setdefault(rule.alert, []).append((profile, rule))
    return found


def _table(written: dict[str, list[tuple[Profile, AlertRule]]]) -> str:
    lines = [
        "## Failure-mode catalogue",
        "",
        f"{len(ROWS)} failure modes (`dashgen/catalogue/`), one alert each. Every alert carries the labels "
        "`severity`, `component`, `layer` (the node × layer column it paints, `none` if it paints none), `failure` "
        "(the row id), `cause` and `look` (the row or panel to open), plus the labels of its entity; its "
        "annotations are `summary`, `description` and `runbook` (the first steps and the section below).",
        "",
        "| Failure | Alert | Component | Layer | Entity | Test | For | Severity | Profiles |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        profiles = ", ".join(p.name for p, _ in written.get(row.alert, [])) or "none of the shipped profiles"
        entity = ", ".join(f"`{role}`" for role in row.entity) or "the deployment"
        lines.append(
            f"| [`{row.id}`](#{row.anchor}) | `{row.alert}` | {row.component} | {row.layer or 'none'} | {entity} | "
            f"{_cell(row.test)} | {row.hold} | {row.severity} | {profiles} |"
        )
    return "\n".join(lines) + "\n"


def _why_not(profile: Profile, row: FailureMode) -> str:
    """What ``profile`` lacks for ``row``'s alert: the sources it reads that the profile does not export and the DCGM
    fields its exporter does not collect, by name; else why its series are not enough."""
    watched = (row.watches,) if row.watches else tuple(read.source for read in row.reads)
    sources = dict.fromkeys(source for source in watched if source in profile.sources)
    lacking = [f"{source} {profile.source(source).status}" for source in sources if not profile.exported(source)]
    fields = [r.name for r in row.reads if r.source == "dcgm" and not dcgm.collects(profile, r.name)]
    if fields and profile.exported("dcgm"):
        lacking.append(f"{', '.join(fields)} not in {dcgm.field_list(profile)}")
    if lacking:
        return ", ".join(lacking)
    if row in rows_for(profile):
        return "its stated exporter versions or flags never write what the test reads (S35)"
    return "its sources are exported, but not the pool kind, PD pools or role mount its test watches"


def _runbook(row: FailureMode, written: list[tuple[Profile, AlertRule]], profiles: list[Profile]) -> str:
    reads = ", ".join(f"`{read.name}` ({read.source})" for read in row.reads)
    paints = "; ".join(f"*{paint.state.text}* (code {paint.state.code})" for paint in row.paints)
    lines = [
        f'<a id="{row.anchor}"></a>',
        "",
        f"### {row.alert}",
        "",
        f"`{row.id}` · {row.component} · {row.severity} · for {row.hold} · "
        + (f"paints the *{row.layer}* column: {paints}" if row.paints else "paints no matrix column"),
        "",
        f"- **Test:** {row.test}. *Why:* {row.test_reason}.",
        f"- **Hold:** {row.hold}. *Why:* {row.hold_reason}.",
        f"- **Names:** {', '.join(f'`{role}`' for role in row.entity) or 'the deployment (cluster-wide)'}.",
        f"- **Reads:** {reads}.",
        f"- **Likely cause:** {row.cause}. **Open:** {row.look}.",
        f"- **First steps:** {row.runbook}",
        f"- **Demo fault:** `{row.demo.scenario}`: {row.demo.shows}.",
    ]
    if row.also:
        lines.append(f"- **May fire beside it:** {', '.join(f'[`{other}`](#{other})' for other in row.also)}.")
    if written:
        profile, rule = written[0]
        labels = ", ".join(f"`{name}`" for name in entity_labels(profile, row))
        lines += [
            f"- **Written for:** {', '.join(p.name for p, _ in written)}"
            + (f" (entity labels on {profile.name}: {labels})." if labels else "."),
            "",
            f"Description as written for {profile.name}:",
            "",
            f"> {_cell(rule.description)}",
        ]
    else:
        lines.append("- **Written for:** none of the shipped profiles.")
    written_for = {profile.name for profile, _ in written}
    reasons: dict[str, list[str]] = {}
    for profile in profiles:
        if profile.name not in written_for:
            reasons.setdefault(_why_not(profile, row), []).append(profile.name)
    others = [f"{', '.join(names)} ({why})" for why, names in reasons.items()]
    if others:
        after = next(i for i, line in enumerate(lines) if line.startswith("- **Written for:**")) + 1
        lines.insert(after, f"- **Not written for:** {'; '.join(others)}.")
    return "\n".join(lines) + "\n"


def _states() -> str:
    lines = [
        "## Health states the catalogue paints",
        "",
        "`node:dashgen_layer_health:code{node, layer}` (group `dashgen-<profile>-layer-health`): one rule per layer "
        "the Now row's matrix asks for, whose value is the code of the first state (lowest code) that applied on the "
        "node within the last 15 minutes; no series where the node is healthy.",
        "",
        "`deployment:dashgen_rule_evaluator:heartbeat` (same group): `vector(1)`, one series per deployment; the "
        'first screen reads only it to say "rule evaluator silent" when it is older than the Now row\'s bound.',
        "",
        "| Code | State | Layer | Painted by |",
        "|---|---|---|---|",
    ]
    painted = sorted(((paint.state, row) for row in ROWS for paint in row.paints), key=lambda pair: pair[0].code)
    for state, row in painted:
        lines.append(f"| {state.code} | {state.text} | {row.layer} | [`{row.alert}`](#{row.anchor}) |")
    return "\n".join(lines) + "\n"


def _not_signals() -> str:
    lines = [
        "## Series no row reads",
        "",
        "Every series of the exporter table (`dashgen/exporters/table.py`) is read by a row above or listed here with "
        "why it signals no failure on its own (`dashgen/catalogue/signals.py`; `tests/test_catalogue.py`).",
        "",
        "| Source | Series | Why no row reads it |",
        "|---|---|---|",
    ]
    lines += [f"| {s.source} | `{s.name}` | {_cell(s.reason)} |" for s in NOT_SIGNALS]
    return "\n".join(lines) + "\n"


def render_alert_docs(profiles: list[Profile]) -> bytes:
    """The bytes of docs/alerts.md for these profiles (deterministic)."""
    template = resources.files("dashgen").joinpath("data", "alerts.md.in").read_text(encoding="utf-8")
    written = _written(profiles)
    runbooks = "## Runbooks\n\n" + "\n".join(_runbook(row, written.get(row.alert, []), profiles) for row in ROWS)
    text = template.replace(TABLE_MARK, _table(written)).replace(
        RUNBOOK_MARK, "\n".join((runbooks, _states(), _not_signals()))
    )
    return text.encode("utf-8")
