"""Prometheus / vmalert rule files per profile: SLO burn-rate alerts, GPU alerts, collection alerts,
and the recording rules behind them. Pure: ``render_rule_files(profiles)`` returns paths and bytes."""

from dashgen.rules.render import render_rule_file, render_rule_files, rule_groups

__all__ = ["render_rule_file", "render_rule_files", "rule_groups"]
