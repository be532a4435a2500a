"""``dashgen init DIR``: a team repository that works with the installed command alone.

It writes one example profile (``--from``, one of dashgen's shipped profiles), ``dashgen.toml`` (the team's panel
folder, the ledger, commented contexts), ``.dashgen-lint.toml``, ``.github/workflows/dashboards.yml`` (check and
the pull-request comment; publish from main with the ledger committed back), ``.pre-commit-config.yaml``,
``.gitignore``, ``panels/`` (a README and an example module) and a README, then builds the dashboards and the rule
files, so ``dashgen check`` passes at once. An existing file is never overwritten: init refuses a folder that
already has any of them.
"""

from __future__ import annotations

import importlib.util
import shlex
from importlib import resources
from pathlib import Path

import click

from dashgen.build import build_all, write_dashboards
from dashgen.cli import install_spec
from dashgen.cli.output import emit_json, format_option
from dashgen.deployment.profile import load_profiles
from dashgen.errors import InputError
from dashgen.escape import inline_text
from dashgen.files import atomic_write
from dashgen.publish import approved_plan
from dashgen.rules import render_rule_files
from dashgen.rules.docs import ALERT_DOCS, render_alert_docs

APPROVED_PLAN = "releases/approvals.toml"
DEFAULT_TEMPLATE = "long-context-64"  # live: a team's first repository pages on its critical alerts
# template (under dashgen/data/init) -> where it goes in the new repository
TEMPLATES = {
    "dashgen.toml": "dashgen.toml",
    "dashgen-lint.toml": ".dashgen-lint.toml",
    "workflow.yml": ".github/workflows/dashboards.yml",
    "pre-commit-config.yaml": ".pre-commit-config.yaml",
    "gitignore": ".gitignore",
    "README.md": "README.md",
    "panels/README.md": "panels/README.md",
    "panels/example_panels.py": "panels/example_panels.py",
}


def shipped_profiles() -> dict[str, bytes]:
    """dashgen's example profiles (``profiles/`` installed as the data-only package ``dashgen_profiles``):
    name -> TOML bytes."""
    spec = importlib.util.find_spec("dashgen_profiles")
    folders = [Path(p) for p in (spec.submodule_search_locations or []) if Path(p).is_dir()] if spec else []
    return {path.stem: path.read_bytes() for folder in folders for path in sorted(folder.glob("*.toml"))}


def _template(name: str, spec: str) -> bytes:
    data = resources.files("dashgen").joinpath("data", "init", *name.split("/")).read_bytes()
    return data.replace(b"__DASHGEN_SPEC__", spec.encode()).replace(b"__SPEC_PATTERN__", install_spec.PATTERN.encode())


def dashgen_spec(repo: str | None, commit: str | None, version: str | None) -> str:
    """The workflow's DASHGEN_SPEC: from the options, else where this dashgen was installed from (a git commit pip
    recorded), else the placeholder the workflow refuses until a person fills it in."""
    if version is not None and (repo or commit):
        raise click.UsageError("--dashgen-version and --dashgen-repo/--dashgen-commit are two answers: give one")
    if bool(repo) != bool(commit):
        raise click.UsageError("--dashgen-repo and --dashgen-commit go together (a repository URL and a commit sha)")
    if version is not None:
        spec = f"{install_spec.DISTRIBUTION}=={version}"
    elif repo and commit:
        spec = install_spec.from_repository(repo, commit)
    else:
        return install_spec.installed_from() or install_spec.PLACEHOLDER
    why = install_spec.problem(spec)
    if why is not None:
        raise click.UsageError(why)
    return spec


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--from",
    "example",
    default=DEFAULT_TEMPLATE,
    show_default=True,
    metavar="PROFILE",
    help="The shipped profile to start from (dashgen profiles --profiles-dir of a clone lists them); a retired "
    "one (its alerts never page) is written with a warning.",
)
@click.option(
    "--dashgen-repo",
    metavar="URL",
    help="The git repository CI installs dashgen-grafana from (https), with --dashgen-commit.",
)
@click.option("--dashgen-commit", metavar="SHA", help="The commit of --dashgen-repo CI installs (40 hex digits).")
@click.option(
    "--dashgen-version", metavar="VERSION", help="CI installs dashgen-grafana==VERSION from the package index."
)
@format_option("text", "json")
@click.pass_context
def init_command(
    ctx: click.Context,
    directory: Path,
    example: str,
    dashgen_repo: str | None,
    dashgen_commit: str | None,
    dashgen_version: str | None,
    output_format: str,
) -> None:
    """Write a team repository in DIRECTORY: a profile, dashgen.toml, CI, pre-commit, its dashboards and rules."""
    profiles = shipped_profiles()
    if example not in profiles:
        raise click.BadParameter(
            f"{example!r} is not a shipped profile (one of {', '.join(sorted(profiles))})", param_hint="--from"
        )
    spec = dashgen_spec(dashgen_repo, dashgen_commit, dashgen_version)
    files = {target: _template(source, spec) for source, target in TEMPLATES.items()}
    files[f"profiles/{example}.toml"] = profiles[example]
    # merge-to-apply: the publish on main applies only what this committed plan holds (nothing, until a pull
    # request's plan is reviewed and committed here)
    files[APPROVED_PLAN] = approved_plan.render_empty().encode("utf-8")
    existing = sorted(name for name in [*files, str(ALERT_DOCS)] if (directory / name).exists())
    if existing:
        raise InputError(
            f"{directory}: already has {', '.join(existing)}; init writes only into a new repository "
            "and never overwrites a file"
        )
    for name, data in files.items():
        try:
            atomic_write(directory / name, data)
        except OSError as exc:
            raise InputError(f"{directory / name}: cannot write ({exc.strerror})") from None
    loaded = load_profiles([], directory / "profiles")
    if any(profile.retired for profile in loaded):
        click.echo(
            f"warning: {example} is retired (retired = true): its alerts are warnings at most and never page; "
            f"start from a live profile (the default, {DEFAULT_TEMPLATE}) or remove that line",
            err=True,
        )
    written = [str(directory / name) for name in files]
    written += [str(p) for p in write_dashboards(build_all(loaded), directory / "dashboards")]
    for path, data in render_rule_files(loaded, directory / "rules").items():
        atomic_write(path, data)
        written.append(str(path))
    # the runbooks the alerts' runbook_url points to (``[dashboard] runbook_base``, default docs/alerts.md);
    # ``dashgen rules`` keeps the file current from then on
    atomic_write(directory / ALERT_DOCS, render_alert_docs(loaded))
    written.append(str(directory / ALERT_DOCS))
    if output_format == "json":
        emit_json(ctx, {"directory": str(directory), "profile": example, "dashgen_spec": spec, "written": written})
        return
    for written_path in written:
        click.echo(f"{inline_text(written_path)}  written")
    click.echo(
        # quoted: a directory named with a space, ";" or "$(...)" is one word to paste, not a command of its own
        f"\nNext: cd {inline_text(shlex.quote(str(directory)))} && git init -b main && git add -A && "
        "git commit -m 'dashboards as code' && "
        "dashgen check\nEdit profiles/ (rename the example to your cluster) and run dashgen build && dashgen "
        "rules; see README.md."
    )
    if install_spec.problem(spec) is not None:
        click.echo(
            f"\nTo do: CI installs dashgen from DASHGEN_SPEC in .github/workflows/dashboards.yml, which is a "
            f"placeholder its first step refuses: set it to {install_spec.DISTRIBUTION} @ git+https://HOST/REPO@COMMIT "
            "(or run init with --dashgen-repo and --dashgen-commit)",
            err=True,
        )
