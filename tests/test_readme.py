"""Every shell block of README.md marked ``runnable`` (```` ```sh runnable ````) runs, each in a fresh temporary
copy of the repository's profiles, dashboards, rules and panel index, with this test environment's ``dashgen``
first on PATH and the Grafana stand-in (tests/standin, 127.0.0.1) as ``GRAFANA_URL`` / ``GRAFANA_TOKEN``;
every command of a block must succeed (bash ``-e -o pipefail``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from publishing import TOKEN, grafana12_standin

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.M | re.S)
COPIED = ("profiles", "dashboards", "rules", "docs/panels.md")


def blocks(text: str) -> list[tuple[int, str]]:
    """(line number, body) of every block whose info string has the word ``runnable``."""
    return [
        (text[: m.start()].count("\n") + 1, m.group(3))
        for m in BLOCK.finditer(text)
        if m.group(1) in ("sh", "bash") and "runnable" in m.group(2).split()
    ]


RUNNABLE = blocks((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_runnable_blocks_for_the_user_sections():
    """The first screens (install, render, check, publish, deploy) are marked runnable, so they are tested."""
    assert len(RUNNABLE) >= 5
    text = "\n".join(body for _, body in RUNNABLE)
    for command in (
        "dashgen --version",
        "dashgen build",
        "dashgen check",
        "dashgen publish",
        "dashgen export",
        "dashgen rules --format",
    ):
        assert command in text, command


def test_block_finder_skips_blocks_not_marked_runnable():
    text = "```sh\nfalse\n```\n\n```sh runnable\ntrue\n```\n```yaml runnable\nx: 1\n```\n"
    assert blocks(text) == [(5, "true\n")]


grafana = pytest.fixture(scope="module")(grafana12_standin)


@pytest.mark.parametrize(("line", "body"), RUNNABLE, ids=[f"README.md:{line}" for line, _ in RUNNABLE])
def test_runnable_readme_block_succeeds(line, body, tmp_path, grafana):
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name)
        else:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tmp_path / name)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "GRAFANA_URL": grafana.url,
        "GRAFANA_TOKEN": TOKEN,
        "NO_COLOR": "1",
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (
        f"README.md:{line}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    )


USER_PART_MAX_LINES = 250  # a user reads the README in ten minutes; reference and contributor notes live elsewhere
PATH_LIKE = re.compile(r"`([A-Za-z0-9_.][A-Za-z0-9_./-]*)`")


def named_paths(text: str) -> list[str]:
    """The repository paths a Markdown page names in code spans: a span with a ``/`` (a bare ``app.py`` is named
    inside its folder's row), no placeholders, no URLs."""
    return [token.rstrip("/") for token in PATH_LIKE.findall(text) if "/" in token and not token.startswith("http")]


def test_contributing_names_only_files_that_exist():
    """The layout and the guides name files; a moved or renamed one fails here instead of misleading a newcomer."""
    paths = named_paths((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    assert len(paths) >= 40
    missing = sorted({p for p in paths if not (ROOT / p).exists()})
    assert missing == [], missing


def test_named_paths_finds_paths_and_skips_words():
    text = "`panels/gpu_health.py`, `make test`, `docs/`, `S35`, `app.py`, `dashboards/<profile>/<uid>.json`, `x/y z`"
    assert named_paths(text) == ["panels/gpu_health.py", "docs"]


def test_the_readme_is_short_enough_to_read_and_links_its_reference():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= USER_PART_MAX_LINES
    for page in ("docs/cli.md", "docs/profiles.md", "docs/reference.md", "docs/glossary.md", "CONTRIBUTING.md"):
        assert f"]({page})" in text and (ROOT / page).exists(), page


def test_the_glossary_says_every_rule_id_once():
    rows = re.findall(r"^\| (S\d+) \|", (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8"), re.M)
    assert rows == [f"S{n}" for n in range(1, 39)]


GUIDES = ("## How to add a panel", "## How to add a metric source", "## How to add a profile field")
CODE_NAME = re.compile(r"`([A-Za-z_]\w*)(?:\([^`]*\))?`")


def _guide(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def unknown_names(guide: str, root: Path) -> list[str]:
    """The code names a guide writes in code spans (``parse_sources``, ``SourceTable``, ``integer(minimum=…)``) that
    none of the Python files it names (a folder: every file under it) holds: a name renamed or removed in the code
    but still in the guide."""
    files: list[Path] = []
    for name in named_paths(guide):
        path = root / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.suffix == ".py" else []
    code = "\n".join(path.read_text(encoding="utf-8") for path in files if path.exists())
    names = dict.fromkeys(CODE_NAME.findall(guide))
    return [name for name in names if not re.search(rf"\b{re.escape(name)}\b", code)]


def test_the_three_guides_name_what_the_code_has():
    """Each guide (a panel, a metric source, a profile field) names only code its files hold, and the metric-source
    guide lists the sources a profile may state today (the exporter table's)."""
    from dashgen.deployment.model import KNOWN_SOURCES

    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    checked = 0
    for heading in GUIDES:
        guide = _guide(text, heading)
        assert unknown_names(guide, ROOT) == [], heading
        checked += len(CODE_NAME.findall(guide))
    assert checked >= 40
    listed = re.search(r"\(today: ([^)]*)\)", _guide(text, GUIDES[1]))
    assert listed is not None
    assert sorted(re.findall(r"`(\w+)`", listed.group(1))) == sorted(KNOWN_SOURCES)


def test_unknown_names_finds_a_name_the_named_files_lack(tmp_path):
    (tmp_path / "m.py").write_text("def parse_sources():\n    pass\nTABLES = []\n", encoding="utf-8")
    guide = "Edit `tmp/m.py`: `parse_sources` reads `TABLES`, `integer(minimum=…)` and `gone_function`."
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp" / "m.py").write_text((tmp_path / "m.py").read_text(encoding="utf-8"), encoding="utf-8")
    assert unknown_names(guide, tmp_path) == ["integer", "gone_function"]


def test_the_doctor_section_of_profiles_md_says_what_doctor_checks_in_lines_that_fit():
    text = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    start = text.index("First it checks that the profile describes the store at all")
    section = text[start : text.index("It also reports each panel family", start)]
    assert [line for line in section.splitlines() if len(line) > 120] == []
    # what dashgen.live.profile_fit compares: the nodes each way, and gpus_per_node with DCGM's GPUs per node
    for said in ("the nodes, both ways", "`gpus_per_node` against the GPUs DCGM reports per node", "`[labels]`"):
        assert said in section, said
