"""The profile's ``[alerts]`` section (``dashgen.deployment.alerts``): absent it gives the defaults, each key reaches
the incident alerts' and health states' conditions (``queries.health``), and each bad value is an error naming the
file and the field. Also: the incident alerts are written only where the profile exports their source."""

from __future__ import annotations

import copy
import dataclasses
import tomllib
from pathlib import Path

import pytest
from dashgen_queries import health

from dashgen.deployment.alerts import DEFAULTS
from dashgen.deployment.profile import load_profiles, profile_from_dict
from dashgen.errors import ProfileError
from dashgen.rules.incident import incident_alerts
from dashgen.rules.recording import health_conditions

PROFILES = Path(__file__).resolve().parent.parent / "profiles"
PATH = "profiles/long-context-64.toml"


def raw() -> dict:
    return tomllib.loads((PROFILES / "long-context-64.toml").read_text())


def with_alerts(**fields: object) -> dict:
    data = copy.deepcopy(raw())
    data["alerts"] = fields
    return data


def expr(data: dict, alert: str) -> str:
    profile = profile_from_dict(data, PATH)
    (found,) = [rule for rule in incident_alerts(profile) if rule.alert == alert]
    return found.expr


def test_a_profile_without_the_section_gets_the_defaults() -> None:
    profiles = load_profiles(directory=PROFILES)
    assert len(profiles) == len(list(PROFILES.glob("*.toml"))) >= 4
    for profile in profiles:
        assert profile.alerts == DEFAULTS


@pytest.mark.parametrize(
    ("key", "value", "alert", "fragment"),
    [
        ("disk_busy_share", 0.8, "CacheDiskSaturated", "[5m])) > 0.8)"),
        ("disk_queue_depth", 32, "CacheDiskSaturated", "[5m])) > 32)"),
        ("disk_await_factor", 10, "CacheDiskSaturated", "> 10 * ("),
        ("baseline_window", "12h", "CacheDiskSaturated", "[12h] offset 1h"),
        ("baseline_offset", "30m", "HostTierHitCollapsed", "[6h] offset 30m"),
        ("host_hit_drop_factor", 10, "HostTierHitCollapsed", "/ 10)"),
        ("host_hit_min_share", 0.2, "HostTierHitCollapsed", ">= 0.2)"),
        ("gateway_shed_share", 0.01, "GatewayShedding", "> 0.01"),
        ("gateway_error_share", 0.2, "GatewayErrors", "> 0.2"),
        ("store_reset_share", 0.05, "StoreMetadataReset", "< 0.05 * max"),
        ("store_min_keys", 50000, "StoreMetadataReset", ">= 50000)"),
        ("clock_offset_seconds", 2, "ClockSkew", "> 2)"),
    ],
)
def test_s31_each_threshold_reaches_its_alert(key: str, value: object, alert: str, fragment: str) -> None:
    assert fragment not in expr(raw(), alert)
    assert fragment in expr(with_alerts(**{key: value}), alert)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("disk_busy_share", 1.5, "a share between 0 and 1"),
        ("disk_busy_share", "90%", "expected a number"),
        ("gateway_shed_share", 0, "positive, finite"),
        ("disk_await_factor", 1, "a factor above 1"),
        ("host_hit_drop_factor", 0.5, "a factor above 1"),
        ("store_min_keys", 1.5, "expected an integer"),
        ("clock_offset_seconds", -1, "positive, finite"),
        ("baseline_window", "6 hours", "duration"),
        ("baseline_window", "30m", "at least 1h"),
        ("baseline_offset", 3600, "expected a string"),
        ("disk_bussy_share", 0.9, "unknown field"),
    ],
)
def test_a_bad_threshold_names_the_file_and_the_field(key: str, value: object, message: str) -> None:
    with pytest.raises(ProfileError) as caught:
        profile_from_dict(with_alerts(**{key: value}), PATH)
    assert caught.value.path == PATH and caught.value.field == f"alerts.{key}"
    assert message in str(caught.value)


def test_incident_alerts_and_health_states_only_where_their_source_is_exported() -> None:
    profiles = {p.name: p for p in load_profiles(directory=PROFILES)}

    def names(profile: object) -> set[str]:
        return {rule.alert for rule in incident_alerts(profile)}  # type: ignore[arg-type]

    gateway = {"GatewayShedding", "GatewayErrors", "GatewayNoHealthyBackend", "GatewayCircuitBreakerOpen"}
    assert (
        names(profiles["long-context-64"])
        == {"CacheDiskSaturated", "HostTierHitCollapsed", "StoreMetadataReset", "ClockSkew"} | gateway
    )
    assert names(profiles["pd-128"]) == {"HostTierHitCollapsed", "ClockSkew"} | gateway  # no cache disk, no Store
    assert names(profiles["h20-16"]) == {"HostTierHitCollapsed", "ClockSkew"}
    assert names(profiles["video-200"]) == {"CacheDiskSaturated", "ClockSkew"}  # no HiCache, no gateway (S25)
    base = profiles["long-context-64"]
    gone = {
        name: dataclasses.replace(base.source(name), status="not-exported")
        for name in ("node_exporter", "gateway", "mooncake_master", "hicache")
    }
    assert names(dataclasses.replace(base, sources={**base.sources, **gone})) == set()
    layers = health_conditions(profiles["video-200"])
    assert set(layers) == {"gpm", "dcgm", "engine", "disk", "collector", "clock"}
    # a diffusion engine's column reads "stuck" (its jobs wait, none finish), never a token-stall state (S25)
    assert [state for state, _ in layers["engine"]] == [health.VIDEO_STUCK]
    for profile in profiles.values():  # no Grafana variable in anything a rule reads
        for chain in health_conditions(profile).values():
            assert all("$" not in condition.replace("$1", "") for _, condition in chain), profile.name
        assert all("$" not in alert.expr.replace("$1", "") for alert in incident_alerts(profile)), profile.name
