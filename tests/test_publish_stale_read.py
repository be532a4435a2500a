"""A read-back is trusted only when it moved: after a v2 save, a read whose ``metadata.generation`` is older than
the write's (a cache, a lagging replica: the stand-in serves one) is read again, bounded; a read that never moves
is verify-failed, never a second ``published`` line for a version the ledger holds with another SHA."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from publishing import TOKEN, ledger, run
from publishing import work_folder as work_folder
from standin import GrafanaStandin
from v2_work import PROFILE, UID, as_v2, retitle

work = pytest.fixture(work_folder)


@pytest.fixture
def grafana13():
    with GrafanaStandin(mode="grafana13", token=TOKEN) as standin:
        yield standin


def _published_versions(work) -> Counter:
    return Counter(r["grafana_version"] for r in ledger(work) if r["uid"] == UID and r["outcome"] == "published")


@pytest.mark.parametrize("whole", [False, True], ids=["metadata-lags", "whole-object-lags"])
def test_a_read_back_that_never_moves_is_verify_failed_not_a_second_version(work, grafana13, whole, monkeypatch):
    import dashgen.publish.execute as execute

    # the stand-in's read lags however long the release waits: the reads' number and the verdict are what is
    # tested, not the waits between them (0.25 + 0.5 + 1 s by default)
    monkeypatch.setattr(execute, "READ_BACK_PAUSE", 0.01)
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    first = ledger(work)[-1]
    assert first["outcome"] == "published" and first["grafana_version"] == 1
    retitle(work, "Long-context replica group, retitled")
    grafana13.inject_stale_read(UID, times=None, whole=whole)  # every read from now on lags
    result = run(work, grafana13, profile=PROFILE)
    assert result.exit_code == 1, result.output
    last = ledger(work)[-1]
    assert last["outcome"] == "verify-failed" and "stale read" in last["message"], last
    assert last["grafana_version"] == 2  # the version the write stored, not the one the lagging read said
    assert max(_published_versions(work).values()) == 1  # no version recorded as published twice
    assert grafana13.stored_version(UID) == 2  # the save itself landed
    reads = [r for r in grafana13.requests_to("*") if r.method == "GET" and r.path.endswith(f"/dashboards/{UID}")]
    assert 2 <= len(reads) <= 12  # read again, a bounded number of times


def test_a_read_back_that_lags_once_is_read_again_and_verified(work, grafana13):
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    retitle(work, "Long-context replica group, retitled")
    grafana13.inject_stale_read(UID, times=1)
    result = run(work, grafana13, profile=PROFILE)
    assert result.exit_code == 0, result.output
    last = ledger(work)[-1]
    assert last["outcome"] == "published" and last["grafana_version"] == 2
    assert _published_versions(work) == Counter({1: 1, 2: 1})


def test_a_published_version_the_ledger_holds_with_another_sha_is_not_recorded_twice(work, grafana13):
    """The ledger's own guard, whatever the read said: its newest stored record of the dashboard names the version
    the read-back answered, with another SHA (here written by hand: as a read that lied before would have)."""
    as_v2(work)
    assert run(work, grafana13, profile=PROFILE).exit_code == 0
    first = ledger(work)[-1]
    forged = {**first, "grafana_version": 2, "stored_sha": "0" * 64, "build_sha": "0" * 64}
    with (work / "ledger.jsonl").open("a") as out:
        out.write(json.dumps(forged, sort_keys=True) + "\n")
    retitle(work, "Long-context replica group, retitled")
    # the plan sees the live dashboard is not what the ledger says it published, and asks for an approval
    result = run(work, grafana13, "--approve", f"overwrite-live:{UID}", profile=PROFILE)
    last = [r for r in ledger(work) if r["uid"] == UID][-1]
    assert result.exit_code == 1 and last["outcome"] == "verify-failed", (last, result.output[-2000:])
    assert "ledger records version 2" in last["message"] and last["grafana_version"] == 2, last
    assert _published_versions(work)[2] == 1  # the hand-written line only
