"""Issue 16 point 8: approval semantics. A legend rename is not a query change; ``--adopt-live`` is now
``--overwrite-live`` (what it does), the old flag a deprecated alias that says so; approval keys take a
``<uid>/`` prefix and globs, and a glob never approves overwriting a person's work."""

from __future__ import annotations

import json

import pytest
from publishing import (
    MODES,
    UID,
    change_gpu_label,
    ledger,
    required_approvals,
    run,
    saves,
    standin_in_mode,
    work_folder,
)

import dashgen.cli.publish as publish_command
from dashgen.publish.approvals import Approvals, remedy

grafana = pytest.fixture(params=MODES)(standin_in_mode)
work = pytest.fixture(work_folder)


def with_first_target(monkeypatch, change) -> None:
    """Build as usual, then apply ``change`` to the first target of the first panel with queries."""
    original = publish_command.build_all

    def build(profiles):
        built = original(profiles)
        panel = next(p for p in built[0].document["panels"] if p.get("targets") and p["targets"][0].get("expr"))
        change(panel["targets"][0])
        return built

    monkeypatch.setattr(publish_command, "build_all", build)


def test_a_legend_rename_is_not_a_query_change(work, grafana, monkeypatch):
    assert run(work, grafana).exit_code == 0
    with_first_target(monkeypatch, lambda t: t.update(legendFormat="{{node}} renamed"))
    result = run(work, grafana)
    assert result.exit_code == 0, result.output
    assert ledger(work)[-1]["outcome"] == "published" and ledger(work)[-1]["approvals_used"] == []


def test_an_expression_change_still_needs_its_approval(work, grafana, monkeypatch):
    assert run(work, grafana).exit_code == 0
    with_first_target(monkeypatch, lambda t: t.update(expr=t["expr"] + " * 2", legendFormat="x"))
    result = run(work, grafana)
    assert result.exit_code == 1 and "queries of existing panel" in result.output and len(saves(grafana)) == 1
    assert ledger(work)[-1]["outcome"] == "refused"


def test_adopt_live_is_a_deprecated_alias_of_overwrite_live_and_says_so(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.simulate_ui_save(UID, lambda d: d.update(title="Edited by a person"))
    result = run(work, grafana, "--adopt-live", UID)
    assert result.exit_code == 0, result.output
    assert "--adopt-live is deprecated: it never adopted the live edit, it overwrites it" in result.output
    assert "use --overwrite-live UID" in result.output
    assert grafana.stored(UID)["title"] != "Edited by a person"
    assert ledger(work)[-1]["approvals_used"] == [f"overwrite-live:{UID}"]


def test_approval_keys_take_a_uid_prefix_and_globs(work, grafana):
    assert run(work, grafana).exit_code == 0
    change_gpu_label(work)
    keys = required_approvals(work, grafana)
    groups = [k.split(".")[0] for k in keys if "." in k]
    group = max(sorted(set(groups)), key=groups.count)  # the panel group with the most changed queries
    assert "var:gpu" in keys and sum(k.startswith(f"{group}.") for k in keys) >= 2
    other = [k for k in keys if not k.startswith((f"{group}.", "var:"))]
    wrong_uid = run(
        work,
        grafana,
        "--approve",
        f"{group}.*",
        "--approve",
        "dg-pd-*/var:*",
        *[a for k in other for a in ("--approve", k)],
    )
    assert wrong_uid.exit_code == 1 and "--approve var:gpu" in wrong_uid.output
    assert "--approve dg-pd-*/var:* matched nothing in this plan" in wrong_uid.output
    result = run(
        work,
        grafana,
        "--approve",
        f"{group}.*",
        "--approve",
        "dg-h20-*/var:*",
        *[a for k in other for a in ("--approve", k)],
    )
    assert result.exit_code == 0, result.output
    assert set(ledger(work)[-1]["approvals_used"]) == set(keys)


def test_a_glob_never_approves_overwriting_a_persons_edit(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.simulate_ui_save(UID, lambda d: d.update(title="Edited by a person"))
    refused = run(work, grafana, "--approve", "*", "--approve", "*/*")
    assert refused.exit_code == 1 and f"--overwrite-live {UID}" in refused.output
    assert grafana.stored(UID)["title"] == "Edited by a person"
    by_glob = run(work, grafana, "--overwrite-live", "dg-h20-*")
    assert by_glob.exit_code == 0, by_glob.output
    assert grafana.stored(UID)["title"] != "Edited by a person"


def test_approvals_grant_exact_scoped_and_globbed_keys_only():
    approvals = Approvals(("a.b", "u1/var:x", "c.*", "u2/*"), ("dg-*",), ())
    assert approvals.grants("a.b", "any") and approvals.grants("var:x", "u1") and not approvals.grants("var:x", "u3")
    assert approvals.grants("c.d", "u3") and approvals.grants("remove:var:y", "u2")
    assert not approvals.grants("overwrite-live:u2", "u2")  # "u2/*" does not overwrite a person's edit
    assert approvals.grants("overwrite-live:dg-x", "dg-x") and not approvals.grants("overwrite-v2:dg-x", "dg-x")
    assert Approvals(("overwrite-v2:u",)).grants("overwrite-v2:u", "u")  # exact is explicit enough
    assert remedy("overwrite-v2:u") == "--overwrite-v2 u" and remedy("var:x") == "--approve var:x"
    assert json.dumps(Approvals().unmatched([("u", "k")])) == "[]"
