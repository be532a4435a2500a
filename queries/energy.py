"""Energy and cost per token: GPU energy from DCGM's total-energy counter, tokens from the engines, both
per pool, and dollars from the profile's ``[cost]``.

Energy is ``increase`` (window) or ``rate`` (graphs) of ``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION``, a
counter in mJ since boot, never power samples multiplied by time: power is a 30 s-collected gauge and
its samples miss what happens between them, the counter does not. A GPU's series split by pod labels
adds up (as the health counters do). GPUs are attached to a pool by node from the engines' own
``engine_type`` label (``queries.pd``): in a PD profile prefill GPUs are charged to input tokens
(``prefill_compute`` + ``prefill_cache``) and decode GPUs to output tokens (``decode``); otherwise every
GPU is charged to every token. GPUs on nodes without an engine are in no pool and in no figure.

Every figure is one expression over all pools, one series per pool (``engine_type``): the GPUs are attached
to whichever pool their node serves, and only the tokens select each pool's charged modes (a PD profile's
prefill input modes and decode output mode, joined with ``or``; one selector otherwise).

Idle energy: the energy a pool's GPUs drew in the steps in which the pool processed no token, from the
same counter's rate integrated over a fixed step (``IDLE_STEP``), so it is apart from, and part of, the
window's energy; 0 for a pool that never idled.
"""

from __future__ import annotations

from collections.abc import Callable

from dashgen_queries import dcgm, pd
from dashgen_queries import sglang as sg
from dashgen_queries.promql import agg, divide, increase, job, matcher, node_var, rate, scale, selector

from dashgen.deployment.profile import Profile
from dashgen.exporters.table import DCGM, SGLANG

ENERGY = DCGM.name("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")  # mJ, counter since boot (metric catalogue §4)
TOKENS = SGLANG.name("sglang:realtime_tokens_total")
MJ_PER_J = 1000.0
J_PER_KWH = 3.6e6
TOKENS_PER_PRICE = 1e6  # dollars are shown per 1M tokens
IDLE_STEP = "60s"  # the step the idle-energy subquery integrates the counter's rate over
INPUT_MODES = "prefill_compute|prefill_cache"
OUTPUT_MODES = "decode"
ALL_MODES = f"{INPUT_MODES}|{OUTPUT_MODES}"


def modes(profile: Profile, pool: str) -> str:
    """The token modes a pool's energy is charged to: input on prefill, output on decode, all otherwise."""
    if sg.is_pd(profile):
        return {"prefill": INPUT_MODES, "decode": OUTPUT_MODES}[pool]
    return ALL_MODES


def pools(profile: Profile) -> tuple[str, ...]:
    """The engine_type values energy is shown for: the PD pools, else the engines' one value."""
    return ("prefill", "decode") if sg.is_pd(profile) else ("",)


def collected(profile: Profile) -> bool:
    """Whether the deployment's dcgm-exporter is exported and collects the energy counter."""
    return profile.source("dcgm").exported and dcgm.collects(profile, ENERGY)


def _energy(profile: Profile) -> str:
    return selector(ENERGY, job(profile, "dcgm"), node_var(profile))


def _per_gpu(profile: Profile, expr: str) -> str:
    return agg("sum", [profile.label("node"), profile.label("gpu")], expr)


def _pooled(profile: Profile, per_gpu: str) -> str:
    """Per-GPU values attached to their node's pool and summed per pool (engine_type)."""
    attached = f"{per_gpu} * on({profile.label('node')}) group_left({sg.ENGINE_TYPE}) {pd.pool_of_node(profile)}"
    return agg("sum", [sg.ENGINE_TYPE], attached)


def energy_joules(profile: Profile) -> str:
    """Each pool's GPU energy over the dashboard's window, J."""
    return scale(_pooled(profile, _per_gpu(profile, increase(_energy(profile)))), 1 / MJ_PER_J)


def power_watts(profile: Profile) -> str:
    """Each pool's GPU power from the energy counter's rate, W (J/s)."""
    return scale(_pooled(profile, _per_gpu(profile, rate(_energy(profile)))), 1 / MJ_PER_J)


def gpus(profile: Profile) -> str:
    """GPUs of each pool with an energy series at the window end."""
    present = _per_gpu(profile, f"last_over_time({_energy(profile)}[$__range])")
    attached = f"{present} * on({profile.label('node')}) group_left({sg.ENGINE_TYPE}) {pd.pool_of_node(profile)}"
    return agg("count", [sg.ENGINE_TYPE], attached)


def _per_pool(profile: Profile, build: Callable[[str], str]) -> str:
    """``build(pool)`` of each pool joined with ``or`` (the pools' engine_type values differ, nothing is added), in
    parentheses: an operator applied to the result applies to every pool (``or`` binds looser than ``==``)."""
    exprs = [build(pool) for pool in pools(profile)]
    return exprs[0] if len(exprs) == 1 else "(" + " or ".join(f"({expr})" for expr in exprs) + ")"


def _token_matchers(profile: Profile, pool: str) -> list[str]:
    return [pd.first_stage(profile), matcher("mode", "=~", modes(profile, pool))] + ([pd.role(pool)] if pool else [])


def tokens(profile: Profile) -> str:
    """Tokens each pool processed over the window in its charged modes: first PP stage, TP copies removed with
    max, instances and DP groups added."""

    def increases(pool: str) -> str:
        return increase(sg.engine(profile, TOKENS, *_token_matchers(profile, pool)))

    per_scheduler = agg("max", sg.stage_labels(profile, "mode"), _per_pool(profile, increases))
    return agg("sum", [sg.ENGINE_TYPE], per_scheduler)


def token_rate(profile: Profile) -> str:
    """Tokens per second each pool processed in its charged modes."""
    return _per_pool(profile, lambda pool: pd.pool_tokens(profile, modes(profile, pool), pool or None))


def joules_per_token(profile: Profile) -> str:
    """The window's energy over the window's tokens per pool, J per (input / output) token."""
    return divide(energy_joules(profile), tokens(profile))


def idle_power(profile: Profile) -> str:
    """Each pool's GPU power in the steps in which it processed no token (W); 0 W while it works (so a pool that
    never idles reads 0, not nothing)."""
    idle = f"({token_rate(profile)} == bool 0)"
    return f"{power_watts(profile)} * on({sg.ENGINE_TYPE}) {idle}"


def idle_joules(profile: Profile) -> str:
    """Energy each pool's GPUs drew while the pool processed no token over the window, J (the rate integrated
    over ``IDLE_STEP`` steps)."""
    seconds = float(IDLE_STEP.removesuffix("s"))
    return scale(f"sum_over_time(({idle_power(profile)})[$__range:{IDLE_STEP}])", seconds)


def usd_per_million_tokens(profile: Profile) -> str | None:
    """Dollars per 1M tokens per pool: energy at ``usd_per_kwh`` plus, where set, GPU time at ``usd_per_gpu_hour``
    (the pool's GPUs x the window). None without a price."""
    cost = profile.cost
    if cost.usd_per_kwh is None:
        return None
    energy_usd = scale(energy_joules(profile), cost.usd_per_kwh / J_PER_KWH)
    if cost.usd_per_gpu_hour is not None:
        gpu_usd = f"{gpus(profile)} * $__range_s / 3600 * {cost.usd_per_gpu_hour:g}"
        energy_usd = f"({energy_usd} + {gpu_usd})"
    return scale(divide(energy_usd, tokens(profile)), TOKENS_PER_PRICE)
