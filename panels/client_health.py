"""The Now row's client-visible health (S33): what the gateway answered its clients over the last minutes, per
gateway instance. Part of the first-screen group (``first_screen.build`` places it after the SLO)."""

from __future__ import annotations

from dashgen_queries import client_slo as cs

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import topology_of
from dashgen.render.kit import Column, Sort, ratio_axis, table
from dashgen.render.spec import Evidence, PanelSpec


def client_now_panel(profile: Profile, group_key: str, height: int) -> PanelSpec | None:
    """S33 on the first screen: at the worst gateway instance, the share of its responses shed (429), failed (5xx)
    and timed out (408 / 504) over the last ``client_slo.NOW_WINDOW``, and its healthy backends against the
    profile's replicas; red when shedding. None when the profile does not export the gateway."""
    if not profile.exported("gateway"):
        return None
    expected = cs.expected_backends(topology_of(profile))
    window = cs.NOW_WINDOW
    # every line a bad share (one unit, one threshold): the classes, then unhealthy backends of the expected ones;
    # one line per class (the long side), its value the worst gateway instance's, so two columns fit the slot
    # whatever the number of gateway instances
    down = f"Backends down (of {expected})"
    unhealthy = f"clamp_min(1 - ({cs.healthy_backends(profile)}) / {expected}, 0)"
    query = (
        f"{cs.non_2xx_share_by_class(profile, window)} or "
        f'label_replace({unhealthy}, "{cs.CLASS_LABEL}", "{down}", "", "")'
    )
    for bad in cs.BAD_CLASSES:
        query = f'label_replace({query}, "{cs.CLASS_LABEL}", "{bad.text}", "{cs.CLASS_LABEL}", "{bad.key}")'
    query = f"max by ({cs.CLASS_LABEL}) ({query})"

    return table(
        key=f"{group_key}.client_health",
        title="Gateway: what the client sees (worst instance: non-2xx by class, backends down)",
        evidence=Evidence(
            source=(
                f"the model gateway (job {profile.source('gateway').job}): {cs.RESPONSES}{{status_code}} and "
                f"{cs.WORKER_HEALTH}{{worker}}; expected backends = the profile's {expected} engine replicas"
            ),
            quantity=(
                f"per bad class, at the worst gateway instance over the last {window}: the share of its responses "
                "(all but the clients' own 4xx) that were 429 shed, 5xx failed and timed out (408 / 504), as the "
                f"client sees them; and the share of the {expected} expected backends it does not see healthy "
                f"(smg_worker_health == 1); red above {cs.SHED_RED_SHARE:.0%} "
                "(queries.client_slo.SHED_RED_SHARE)"
            ),
            limit=(
                f"a fixed {window} window at the dashboard's end time, not the range: the client-side SLO burn "
                "alerts (ClientSloErrorBudgetFastBurn / SlowBurn) hold the longer view. 503 is both a backend "
                "failure and the admission queue's timeout shed: it is in the 5xx line. An instance that "
                "answered nothing in the window has no share (blank), not 0 %"
            ),
        ),
        labels={cs.CLASS_LABEL: "What the client sees"},
        columns=[Column("Worst gateway", query, aliases=("Value",))],
        **ratio_axis("percentunit"),
        decimals=1,
        width=4,
        height=height,
        no_value="no gateway response in window",
        thresholds=(("green", None), ("red", cs.SHED_RED_SHARE)),
        cells="color-background",
        min_width=120,
        sort=(Sort("Worst gateway", descending=True),),
    )
