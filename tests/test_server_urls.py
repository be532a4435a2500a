"""A malformed server URL is an input error naming where it came from (exit 2), before any request: a broken
IPv6 literal, a port out of range, a space in the host — in ``dashgen.toml``, ``--grafana-url`` or a data-source
URL — never an internal error, never retried."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from dashgen.cli import main
from dashgen.net.urls import url_problem

BAD = ["http://[::1", "https://grafana.example:99999", "https://graf ana.example", "http://x:abc", "https://"]
GOOD = ["https://grafana.example", "http://127.0.0.1:3000/sub/", "http://[::1]:3000", "https://grafana.example:443"]


@pytest.mark.parametrize("url", BAD)
def test_a_malformed_url_has_a_problem(url):
    assert url_problem(url)


@pytest.mark.parametrize("url", GOOD)
def test_a_base_url_has_none(url):
    assert url_problem(url) is None


@pytest.mark.parametrize("url", BAD)
def test_a_malformed_context_url_in_dashgen_toml_names_the_field(tmp_path, url):
    path = tmp_path / "dashgen.toml"
    path.write_text(f'[contexts.staging]\nurl = "{url}"\n')
    began = time.monotonic()
    result = CliRunner().invoke(
        main, ["publish", "--config", str(path), "--context", "staging", "--dry-run"], env={"GRAFANA_TOKEN": "t"}
    )
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and "contexts.staging.url" in result.output, result.output
    assert "internal error" not in result.output and time.monotonic() - began < 20


@pytest.mark.parametrize("url", BAD[:3])
def test_a_malformed_grafana_url_flag_or_datasource_url_is_an_input_error(url):
    flag = CliRunner().invoke(main, ["drift", "--grafana-url", url], env={"GRAFANA_TOKEN": "t", "GRAFANA_URL": ""})
    assert flag.exit_code == 2 and "internal error" not in flag.output, flag.output
    source = CliRunner().invoke(main, ["validate-queries", "--datasource-url", url, "--profile", "h20-16"])
    assert source.exit_code == 2 and "--datasource-url" in source.output, source.output
    assert "internal error" not in source.output
