"""Issue 16 point 2: contexts (``dashgen.toml``: several Grafanas, orgs and folders) and a ledger keyed by
instance URL + org + uid everywhere — last release, history and rollback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from publishing import UID, ledger, plan_json, run, work_folder
from standin import GrafanaStandin

from dashgen.cli.app import main
from dashgen.errors import InputError
from dashgen.publish.contexts import load_config, resolve
from dashgen.publish.ledger import Instance, LedgerRecord, last_stored

work = pytest.fixture(work_folder)
STAGING_TOKEN = "glsa_staging_token_0123456789abcdef"
PROD_TOKEN = "glsa_prod_token_0123456789abcdef0"
TOKENS = {"STAGING_TOKEN": STAGING_TOKEN, "PROD_TOKEN": PROD_TOKEN}


def write_config(work: Path, staging: GrafanaStandin, prod: GrafanaStandin, **extra: str) -> Path:
    text = (
        f'default_context = "staging"\n[contexts.staging]\nurl = "{staging.url}"\ntoken_env = "STAGING_TOKEN"\n'
        f'[contexts.prod]\nurl = "{prod.url}"\ntoken_env = "PROD_TOKEN"\norg_id = 1\n'
    )
    text += "".join(f'{key} = "{value}"\n' for key, value in extra.items())
    path = work / "dashgen.toml"
    path.write_text(text)
    return path


def publish(work: Path, *args: str, env: dict[str, str] | None = None):
    argv = [
        "--profiles-dir",
        str(work / "profiles"),
        "publish",
        "--config",
        str(work / "dashgen.toml"),
        "--ledger",
        str(work / "ledger.jsonl"),
        "--backup-dir",
        str(work / "backups"),
        "--timeout",
        "2",
        "--profile",
        "h20-16",
        *args,
    ]
    return CliRunner().invoke(main, argv, env={"GRAFANA_TOKEN": "", "GRAFANA_URL": "", **TOKENS, **(env or {})})


def retitle(work: Path, title: str) -> None:
    path = work / "profiles" / "h20-16.toml"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(f'title = "{title}"' if line.startswith("title = ") else line for line in lines) + "\n")


def test_staging_then_prod_gives_no_false_edited_in_grafana_refusal(work):
    with GrafanaStandin(token=STAGING_TOKEN) as staging, GrafanaStandin(mode="grafana13", token=PROD_TOKEN) as prod:
        write_config(work, staging, prod)
        assert publish(work, "--context", "prod").exit_code == 0
        assert publish(work).exit_code == 0  # the default context: staging
        retitle(work, "H20 pair, next build")
        assert publish(work, "--context", "staging").exit_code == 0  # staging moves on, prod stays untouched
        dry = publish(work, "--context", "prod", "--dry-run", "--format", "json")
        assert dry.exit_code == 0, dry.output
        (item,) = plan_json(dry)["dashboards"]
        assert item["action"] == "update" and item["refusals"] == [] and item["live_edited"] is False
        records = ledger(work)
        assert {(r["grafana_url"], r["org_id"]) for r in records} == {(staging.url, 1), (prod.url, 1)}
        assert staging.stored_version(UID) == 2 and prod.stored_version(UID) == 1


def test_the_same_uid_in_two_orgs_has_two_histories(work):
    with GrafanaStandin(basic_auth=("admin", "pw"), user_org_ids=(1, 2)) as grafana:
        env = {"GRAFANA_USER": "admin", "GRAFANA_PASSWORD": "pw", "GRAFANA_TOKEN": ""}
        for org in ("1", "2"):
            assert run(work, grafana, "--org-id", org, env=env).exit_code == 0
        grafana.simulate_ui_save(UID, lambda d: d.update(title="edited in org 2"), org_id=2)
        assert run(work, grafana, "--org-id", "1", env=env).exit_code == 0
        refused = run(work, grafana, "--org-id", "2", env=env)
        assert refused.exit_code == 1 and f"--overwrite-live {UID}" in refused.output
        assert [(r["org_id"], r["outcome"]) for r in ledger(work)] == [
            (1, "published"),
            (2, "published"),
            (1, "unchanged"),
            (2, "refused"),
        ]
        history = CliRunner().invoke(
            main,
            [
                "history",
                UID,
                "--grafana-url",
                grafana.url,
                "--org-id",
                "2",
                "--ledger",
                str(work / "ledger.jsonl"),
                "--format",
                "json",
            ],
            env=env,
        )
        assert history.exit_code == 0, history.output
        assert {r["org_id"] for r in json.loads(history.stdout)["results"]["ledger"]} == {2}


def test_a_context_supplies_url_folder_and_token_variable(work):
    with GrafanaStandin(token=STAGING_TOKEN) as staging, GrafanaStandin(token=PROD_TOKEN) as prod:
        prod.add_folder("llm", "LLM clusters")
        write_config(work, staging, prod, folder_uid="llm")  # appended to [contexts.prod]
        result = publish(work, "--context", "prod")
        assert result.exit_code == 0, result.output
        assert prod.org().dashboards[UID].folder_uid == "llm" and staging.stored(UID) is None
        assert PROD_TOKEN not in result.output
        missing = publish(work, "--context", "prod", env={"PROD_TOKEN": ""})
        assert missing.exit_code == 2 and "the token variable PROD_TOKEN is not set" in missing.output


def test_rollback_reads_only_the_records_of_its_instance(work):
    with GrafanaStandin(token=STAGING_TOKEN) as staging, GrafanaStandin(token=PROD_TOKEN) as prod:
        write_config(work, staging, prod)
        assert publish(work).exit_code == 0
        retitle(work, "H20 pair, next build")
        assert publish(work).exit_code == 0
        staged = ledger(work)[-1]["build_sha"]
        assert publish(work, "--context", "prod").exit_code == 0  # prod: v1 is already the next build
        argv = [
            "rollback",
            UID,
            "--to",
            "1",
            "--context",
            "prod",
            "--config",
            str(work / "dashgen.toml"),
            "--ledger",
            str(work / "ledger.jsonl"),
            "--backup-dir",
            str(work / "backups"),
        ]
        result = CliRunner().invoke(main, argv, env=TOKENS)
        assert result.exit_code == 0, result.output  # prod's v1 is its own release, not staging's v1
        assert ledger(work)[-1]["outcome"] == "unchanged" and ledger(work)[-1]["build_sha"] == staged


def test_flags_win_over_the_context_and_the_context_over_grafana_url(tmp_path):
    path = tmp_path / "dashgen.toml"
    path.write_text('[contexts.a]\nurl = "https://a.example"\norg_id = 3\nfolder_uid = "f"\nca_bundle = "ca.pem"\n')
    config = load_config(path)
    env = {"GRAFANA_URL": "https://env.example"}
    assert resolve(None, None, {}, env).url == "https://env.example"
    chosen = resolve(config, "a", {}, env)
    assert (chosen.url, chosen.org_id, chosen.folder_uid) == ("https://a.example", 3, "f")
    assert chosen.ca_bundle == str(tmp_path / "ca.pem")  # relative to the file
    flagged = resolve(config, "a", {"org_id": 4, "folder_uid": ""}, env)
    assert (flagged.url, flagged.org_id, flagged.folder_uid) == ("https://a.example", 4, "")
    # another URL gets the context's credentials only with credentials of its own (issue 32: secrets go only
    # where they belong)
    with pytest.raises(InputError, match="a context's credentials go only to its own URL"):
        resolve(config, "a", {"url": "https://flag.example"}, env)
    own = resolve(config, "a", {"url": "https://flag.example", "token_file": tmp_path / "t"}, env)
    assert (own.url, own.token_file) == ("https://flag.example", tmp_path / "t")
    assert resolve(config, "a", {"url": "https://a.example/"}, env).url == "https://a.example/"
    with pytest.raises(InputError, match="no context 'b'"):
        resolve(config, "b", {}, env)
    path.write_text('default_context = "a"\n' + path.read_text())
    defaulted = load_config(path)
    assert resolve(defaulted, None, {}, env).name == "a"
    explicit = resolve(defaulted, None, {"url": "https://flag.example"}, env)  # --grafana-url: no default context
    assert (explicit.name, explicit.url, explicit.org_id) == ("", "https://flag.example", None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[contexts.a]\nurl = "https://a"\ntoken = "glsa_x"\n', "contexts.a.token: unknown field (a config file never"),
        ("[contexts.a]\norg_id = 1\n", "contexts.a.url: required"),
        ('[contexts.a]\nurl = "https://a"\norg_id = "1"\n', "contexts.a.org_id: expected int, got str"),
        ('default_context = "z"\n[contexts.a]\nurl = "https://a"\n', "default_context: 'z' is not one of"),
        ("[contexts.a\n", "not valid TOML"),
    ],
)
def test_a_bad_config_file_is_one_line_naming_file_and_field(tmp_path, text, message):
    path = tmp_path / "dashgen.toml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["publish", "--config", str(path), "--dry-run"], env={"GRAFANA_TOKEN": "t"})
    assert result.exit_code == 2 and message in result.output and str(path) in result.output
    assert "Traceback" not in result.output and "glsa_x" not in result.output


def test_records_written_before_org_ids_belong_to_org_1():
    old = LedgerRecord.from_json(
        {"uid": UID, "outcome": "published", "stored_sha": "s", "grafana_url": "https://G.example:443/"}
    )
    assert old is not None and old.org_id == 1
    assert last_stored([old], UID, Instance("https://g.example", 1)) == old
    assert last_stored([old], UID, Instance("https://g.example", 2)) is None
    assert last_stored([old], UID, Instance("https://other.example", 1)) is None


@pytest.mark.parametrize("name", ["PATH", "AWS_SECRET_ACCESS_KEY", "HOME", "grafana_token", "TOKEN"])
def test_token_env_names_only_token_variables(tmp_path, name):
    path = tmp_path / "dashgen.toml"
    path.write_text(f'[contexts.a]\nurl = "https://a.example"\ntoken_env = "{name}"\n')
    with pytest.raises(InputError, match=r"contexts.a.token_env: .* must end in _TOKEN"):
        load_config(path)


@pytest.mark.parametrize("target", ["/proc/self/environ", "/dev/null", "/sys/kernel/mm"])
def test_a_token_file_under_proc_sys_or_dev_is_refused(target, tmp_path):
    from dashgen.cli.grafana_opts import read_token_file

    link = tmp_path / "token"
    link.symlink_to(target)
    for path in (Path(target), link):
        with pytest.raises(InputError, match="not a token file"):
            read_token_file(path)


def test_a_token_file_holds_one_line_of_bounded_size(tmp_path):
    from dashgen.cli.grafana_opts import read_token_file

    good = tmp_path / "good"
    good.write_text("glsa_abc\n")
    assert read_token_file(good) == "glsa_abc"
    two = tmp_path / "two"
    two.write_text("a\nb\n")
    with pytest.raises(InputError, match="2 lines"):
        read_token_file(two)
    big = tmp_path / "big"
    big.write_text("x" * 5000)
    with pytest.raises(InputError, match="over the 4,096"):
        read_token_file(big)
