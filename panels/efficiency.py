"""Efficiency of a text-generation deployment: GPU energy and dollars per token over the dashboard's window
(per pool in a PD deployment: prefill energy per input token, decode energy per output token), with the
energy drawn while a pool processed nothing shown apart; and speculative decoding (acceptance length and
rate, tokens per verify forward) with the draft algorithm the profile states, or a text where the engines
run none; and SLO attainment over the window per SLI, with the bounds on joint attainment and goodput
that separate histograms allow.

Energy comes from DCGM's total-energy counter only (``queries.energy``); where dcgm-exporter is not
exported or does not collect the counter the row is one text saying so, never an empty chart.
"""

from __future__ import annotations

from dashgen_queries import attainment as att
from dashgen_queries import dcgm
from dashgen_queries import energy as en
from dashgen_queries import sglang as sg
from dashgen_queries import speculative as spec
from dashgen_queries.promql import scale
from dashgen_queries.sglang_slo import slis

from dashgen.deployment.profile import Profile
from dashgen.deployment.topology import Topology
from dashgen.render.kit import NO_DATA_TEXT, Column, source_status_panel, table, text, timeseries
from dashgen.render.spec import Evidence, GroupSpec, PanelSpec, Target

TITLE = "Efficiency: energy, cost, speculative decoding, SLO attainment"
GROUP = "efficiency"
WORKLOADS = ("text-generation",)
LAYER = "energy per token"
ENERGY_SOURCE = (
    f"dcgm-exporter {en.ENERGY} (counter, mJ since boot), each GPU attached to its node's engine_type; "
    f"SGLang scheduler {en.TOKENS}{{mode}}"
)
ENERGY_LIMIT = (
    "energy is the counter's increase (never power samples x time); a GPU is in the pool its node's engine "
    "names at the window end, GPUs on nodes without an engine are in no figure; tokens are the first PP stage's "
    "scheduler counts (TP copies removed with max), updated at the scheduler's log interval, cached prompt "
    "tokens (prefill_cache) included; GPU energy only: host, network and cooling are not measured"
)


def _price_text(profile: Profile) -> str:
    cost = profile.cost
    if cost.usd_per_kwh is None:
        return f"no price: set `[cost] usd_per_kwh` in profiles/{profile.name}.toml to show dollars per 1M tokens"
    text_ = f"${cost.usd_per_kwh:g} per kWh ([cost] usd_per_kwh)"
    if cost.usd_per_gpu_hour is not None:
        text_ += (
            f" plus ${cost.usd_per_gpu_hour:g} per GPU-hour x the pool's GPUs x the window ([cost] usd_per_gpu_hour)"
        )
    return text_


def _kwh(joules: str) -> str:
    return scale(joules, 1 / en.J_PER_KWH)


def _priced(profile: Profile) -> str:
    expr = en.usd_per_million_tokens(profile)
    if expr is None:
        raise ValueError(f"{profile.name}: no [cost] usd_per_kwh, so no dollars per token")
    return expr


def totals_table(profile: Profile) -> PanelSpec:
    """One row per pool: the window's energy, tokens, J per token, idle energy and dollars per 1M tokens."""
    per = "J / input or output token" if sg.is_pd(profile) else "J / token"
    columns = [
        Column("GPUs with an energy series", en.gpus(profile), "engine_type"),
        Column("GPU energy in the window", _kwh(en.energy_joules(profile)), "kWh"),
        Column("Tokens charged in the window", en.tokens(profile), "tokens"),
        Column("Energy per token", en.joules_per_token(profile), per),
        Column("Idle energy (no token processed)", _kwh(en.idle_joules(profile)), "kWh"),
    ]
    if profile.cost.usd_per_kwh is not None:
        columns.append(Column("Cost per 1M tokens", _priced(profile), "$"))
    charged = (
        "prefill GPUs' energy per input token (prefill_compute + prefill_cache) and decode GPUs' energy per "
        "output token (decode)"
        if sg.is_pd(profile)
        else "all GPUs' energy per token processed (prefill and decode)"
    )
    return table(
        key=f"{GROUP}.totals",
        title="Energy and cost per token over the window",
        evidence=Evidence(
            source=ENERGY_SOURCE,
            quantity=f"one row per pool over the dashboard's window: {charged}; the energy drawn in the "
            f"{en.IDLE_STEP} steps in which the pool processed no token is shown apart (it is part of the "
            f"total, and of the energy per token); cost: {_price_text(profile)}",
            limit=ENERGY_LIMIT + "; idle energy integrates the counter's rate over fixed steps, so a step with "
            "one token counts as busy",
            layer=LAYER,
        ),
        labels={sg.ENGINE_TYPE: "Pool"},
        columns=columns,
        unit="none",
        decimals=3,
        width=24,
        height=5,
        no_value=NO_DATA_TEXT,
    )


def power_panel(profile: Profile) -> PanelSpec:
    """Each pool's GPU power from the energy counter, and the part drawn while the pool processed nothing."""
    targets = (
        Target(en.power_watts(profile), "{{engine_type}} GPU power"),
        Target(en.idle_power(profile), "{{engine_type}} idle (no token processed)"),
    )
    return timeseries(
        f"{GROUP}.power",
        "GPU power per pool from the energy counter, idle apart (W)",
        Evidence(
            ENERGY_SOURCE,
            "watts each pool's GPUs draw (the energy counter's rate), and the same where the pool processed no "
            "token in the rate interval (the idle series reads 0 W while the pool works)",
            ENERGY_LIMIT,
            layer=LAYER,
        ),
        targets,
        unit="watt",
        min=0,
        width=24,
        height=7,
    )


def energy_panels(profile: Profile) -> list[PanelSpec]:
    """The energy row, or the text saying why it cannot exist on this deployment."""
    if not profile.exported("dcgm"):
        return [
            source_status_panel(
                f"{GROUP}.energy_unavailable", profile, ["dcgm"], "Energy and cost per token: not available"
            )
        ]
    if not en.collected(profile):
        return [
            text(
                f"{GROUP}.energy_not_collected",
                "Energy and cost per token: not collected",
                dcgm.not_collected(profile, [en.ENERGY]),
                width=24,
                height=4,
            )
        ]
    return [totals_table(profile), power_panel(profile)]


SPEC_SOURCE = "SGLang scheduler (sglang:spec_accept_length, sglang:spec_accept_rate gauges)"
SPEC_LIMIT = (
    "gauges over the scheduler's last log interval, of the stats-logging TP rank (max over TP ranks, never "
    "added); a mean over the interval's verify steps, not a per-request distribution; written only while the "
    "engine runs a draft algorithm (--speculative-algorithm)"
)


def _draft(profile: Profile) -> str:
    stated = profile.speculative
    tokens = f", {stated.draft_tokens} draft tokens per step" if stated.draft_tokens else ""
    return f"draft algorithm {stated.algorithm}{tokens} (profiles/{profile.name}.toml [speculative])"


def speculative_panels(profile: Profile) -> list[PanelSpec]:
    """Acceptance length, acceptance rate and tokens per verify forward; a text where no draft runs."""
    if not profile.speculative.algorithm:
        return [
            text(
                f"{GROUP}.speculative_none",
                "Speculative decoding: not running",
                f"The engines of {profile.name} run no speculative decoding: the profile states no "
                "`[speculative] algorithm`, so SGLang is started without `--speculative-algorithm` and writes no "
                "`sglang:spec_*` series (absent, not zero). A deployment that runs a draft model or head states "
                f'it in profiles/{profile.name}.toml, e.g. `[speculative] algorithm = "EAGLE3"`.',
                width=24,
                height=3,
            )
        ]
    legend = sg.stage_legend(profile)
    where = "the decode pool's instances" if sg.is_pd(profile) else "each engine instance"
    return [
        timeseries(
            f"{GROUP}.spec_accept_length",
            f"Speculative decoding: accepted tokens per verify step ({profile.speculative.algorithm})",
            Evidence(
                SPEC_SOURCE,
                f"mean tokens a request gains per target-model verify step on {where}, the bonus token "
                f"included (1 = no draft token accepted); {_draft(profile)}",
                SPEC_LIMIT,
                layer="speculative decoding",
            ),
            (Target(spec.accept_length(profile), legend),),
            unit="none",
            min=1,
            width=8,
            height=7,
        ),
        timeseries(
            f"{GROUP}.spec_accept_rate",
            f"Speculative decoding: draft acceptance rate ({profile.speculative.algorithm})",
            Evidence(
                SPEC_SOURCE,
                f"accepted share of the proposed draft tokens on {where}, 0-1 fixed axis; {_draft(profile)}",
                SPEC_LIMIT,
                layer="speculative decoding",
            ),
            (Target(spec.accept_rate(profile), legend),),
            unit="percentunit",
            min=0,
            max=1,
            width=8,
            height=7,
        ),
        timeseries(
            f"{GROUP}.spec_tokens_per_forward",
            "Speculative decoding: decode tokens per verify forward (batch)",
            Evidence(
                "SGLang scheduler (sglang:realtime_tokens_total{mode=decode}, sglang:spec_verify_calls_total)",
                f"decode tokens processed per target-model verify forward on {where}: what speculative "
                "decoding buys; without it each forward yields one token per running request",
                "a batch figure (tokens of all running requests per forward), so it moves with the batch size "
                "too; compare with the running requests, or read the acceptance length for the per-request gain; "
                "rates over the rate interval at the scheduler's log interval; spec_verify_calls_total is written "
                "only while the engine runs a draft algorithm (--speculative-algorithm)",
                layer="speculative decoding",
            ),
            (Target(spec.tokens_per_forward(profile), legend),),
            unit="none",
            min=0,
            width=8,
            height=7,
        ),
    ]


def attainment_panel(profile: Profile) -> PanelSpec:
    """Per model: each SLI's share within its bound over the window, the joint bounds and goodput."""
    columns = [
        Column(f"{sli.name} within {sli.bound:g} s", att.sli_share(profile, sli), "share") for sli in slis(profile)
    ]
    notes = "; ".join(sli.evaluation_note() for sli in slis(profile))
    columns += [
        Column("All SLIs, at most", att.joint_upper(profile), "share"),
        Column("All SLIs, at least", att.joint_lower(profile), "share"),
        Column("Goodput, at least", att.goodput_lower(profile), "req/s"),
    ]
    return table(
        key=f"{GROUP}.attainment",
        title="SLO attainment over the window per model: per SLI, and the bounds on all at once",
        evidence=Evidence(
            source="SGLang tokenizer request histograms (TTFT, TPOT, E2E) and sglang:num_aborted_requests_total, "
            "prefill servers of a PD pair excluded so a request counts once",
            quantity="over the dashboard's window, per model: the share of requests within each SLI's bound "
            "(aborted requests count as outside every bound); the share within every bound at once, at most "
            "(the lowest SLI) and at least (1 - the SLIs' outside shares added, floored at 0); goodput, at "
            f"least, in requests per second (that lower bound x the window's requests per second). {notes}",
            limit="a bound is a bucket edge: a threshold between edges is evaluated at the next edge above (an "
            "upper bound of the exact share); separate histograms do not say which request missed which SLI, so "
            "joint attainment is a range, exact only with a per-request record (a request log or a per-request "
            "'met all SLOs' counter); goodput in tokens per second is not derivable from these series (a "
            "histogram carries no request's tokens); requests still running are not counted; no requests -> No "
            "data, not 100 %",
            layer="SLO attainment",
        ),
        labels={profile.label("model_name"): "Model"},
        columns=columns,
        unit="none",
        decimals=4,
        width=24,
        height=5,
        no_value="No requests in window",
    )


def build(profile: Profile, topology: Topology) -> GroupSpec:
    """The group, for a deployment whose engines are exported (tokens come from them)."""
    if not profile.exported("sglang"):
        return GroupSpec(key=GROUP, title=TITLE, panels=())
    panels = (*energy_panels(profile), *speculative_panels(profile), attainment_panel(profile))
    return GroupSpec(key=GROUP, title=TITLE, panels=panels)
