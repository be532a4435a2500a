"""Rules of video-generation pools (S25, SGLang Diffusion): the job SLO's recording rules (error ratio of
non-warm-up jobs against ``slo.job_latency_seconds`` at 5m / 30m / 1h / 6h / 3d), its multiwindow
multi-burn-rate alerts (the same windows and burn rates as the text SLO: ``queries.sglang_slo``), and the
stuck alerts: an instance with jobs queued or running and none finished for twice the bound
(VideoInstanceStuck), and the deployment's video pools with jobs queued and none finished
(VideoPoolStuck). No TTFT / TPOT / token rule is written for a video pool.

The expressions are ``queries.diffusion``'s, the same the Job SLO panels evaluate.
"""

from __future__ import annotations

from dashgen_queries import diffusion as df
from dashgen_queries.sglang_slo import FAST_BURN, RECORDED_WINDOWS, SLOW_BURN, burn_condition

from dashgen.deployment.profile import Profile
from dashgen.rules.model import AlertRule, RecordingRule

SLO_KEY = "job"


def job_slo_records(profile: Profile) -> tuple[RecordingRule, ...]:
    return tuple(
        RecordingRule(
            df.job_slo_error_ratio_name(profile, window), df.job_error_ratio(profile, window), (("slo", SLO_KEY),)
        )
        for window in RECORDED_WINDOWS
    )


def _burn(profile: Profile, name: str, spec: tuple[str, str, float], for_: str, severity: str) -> AlertRule:
    burn = burn_condition(profile, spec, lambda window: df.job_slo_error_ratio_name(profile, window))
    bound = df.job_bound(profile)
    return AlertRule(
        alert=name,
        expr=burn.expr,
        for_=for_,
        severity=severity,
        summary=f"Video job SLO of {profile.deployment or profile.name} burns its error budget {burn.burn:g}x too fast",
        description=(
            f"Cluster-wide (every video pool of the deployment; the engine has no model label): the share of "
            f"non-warm-up video jobs that fail or take longer than {bound:g} s "
            f"(slo.job_latency_seconds, SGLang Diffusion's request-latency bucket) is above {burn.burn:g} x "
            f"the budget {burn.budget:g} (objective {profile.slo.objective:g}) over both {burn.long_window} "
            f"and {burn.short_window}; at this rate {burn.spent:.0%} of the {profile.slo.window_days}-day "
            f"budget goes in {burn.long_window}. Jobs still queued or running are not counted until they "
            "finish (see "
            "VideoInstanceStuck). Open the Jobs group: outcomes per instance, latency per instance, host "
            "latency per stage."
        ),
    )


def job_slo_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    return (
        _burn(profile, "VideoJobSloFastBurn", FAST_BURN, "2m", "critical"),
        _burn(profile, "VideoJobSloSlowBurn", SLOW_BURN, "15m", "warning"),
    )


def stuck_alerts(profile: Profile) -> tuple[AlertRule, ...]:
    node = profile.label("node")
    window = df.stuck_window(profile)
    return (
        AlertRule(
            alert="VideoInstanceStuck",
            expr=df.stuck_instances(profile),
            for_="5m",
            severity="critical",
            summary=f"Video engine instance {{{{ $labels.replica }}}} stuck on {{{{ $labels.{node} }}}}",
            description=(
                f"Node {{{{ $labels.{node} }}}}, instance {{{{ $labels.replica }}}}: {{{{ $value }}}} jobs "
                f"queued or running (sglang:diffusion_num_queue_reqs + _num_running_reqs) and no "
                f"non-warm-up job finished over {window} ({df.STUCK_FACTOR} x the job-latency bound), for 5m. "
                "The engine keeps serving /metrics, so EngineMetricsScrapeFailing stays silent; its "
                "throughput panel reads 0 jobs/hour. Check the engine log and its GPUs (Xid, memory)."
            ),
        ),
        AlertRule(
            alert="VideoPoolStuck",
            expr=df.stuck_pool(profile),
            for_="5m",
            severity="critical",
            summary=f"Video generation pools of {profile.deployment or profile.name} stuck: jobs queued, none "
            "finishing",
            description=(
                f"Cluster-wide: {{{{ $value }}}} jobs are queued in the deployment's video pools and no "
                f"non-warm-up job finished anywhere over {window}, for 5m: no instance makes progress. Every "
                "video pool of the deployment together (the engine has no pool or model label)."
            ),
        ),
    )
