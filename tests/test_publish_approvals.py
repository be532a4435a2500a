"""Issue 16 point 8: approval semantics. ``--adopt-live`` is now ``--overwrite-live`` (what it does), the old flag a
deprecated alias that says so; approval keys take a ``<uid>/`` prefix and globs, and a glob never approves
overwriting a person's work. What the plan refuses and approves (a legend rename is not a query change, scoped and
globbed keys, overwrite flags taking uid globs) is tested without HTTP in ``test_plan_release.py``."""

from __future__ import annotations

import json

import pytest
from publishing import (
    MODES,
    UID,
    ledger,
    run,
    standin_in_mode,
    work_folder,
)

from dashgen.publish.approvals import Approvals, remedy

grafana = pytest.fixture(params=MODES)(standin_in_mode)
work = pytest.fixture(work_folder)


@pytest.mark.parametrize("grafana", ["grafana12"], indirect=True)  # a flag alias: version-independent
def test_adopt_live_is_a_deprecated_alias_of_overwrite_live_and_says_so(work, grafana):
    assert run(work, grafana).exit_code == 0
    grafana.simulate_ui_save(UID, lambda d: d.update(title="Edited by a person"))
    result = run(work, grafana, "--adopt-live", UID)
    assert result.exit_code == 0, result.output
    assert "--adopt-live is deprecated: it never adopted the live edit, it overwrites it" in result.output
    assert "use --overwrite-live UID" in result.output
    assert grafana.stored(UID)["title"] != "Edited by a person"
    assert ledger(work)[-1]["approvals_used"] == [f"overwrite-live:{UID}"]


def test_approvals_grant_exact_scoped_and_globbed_keys_only():
    approvals = Approvals(("a.b", "u1/var:x", "c.*", "u2/*"), ("dg-*",), ())
    assert approvals.grants("a.b", "any") and approvals.grants("var:x", "u1") and not approvals.grants("var:x", "u3")
    assert approvals.grants("c.d", "u3") and approvals.grants("remove:var:y", "u2")
    assert not approvals.grants("overwrite-live:u2", "u2")  # "u2/*" does not overwrite a person's edit
    assert approvals.grants("overwrite-live:dg-x", "dg-x") and not approvals.grants("overwrite-v2:dg-x", "dg-x")
    assert Approvals(("overwrite-v2:u",)).grants("overwrite-v2:u", "u")  # exact is explicit enough
    assert remedy("overwrite-v2:u") == "--overwrite-v2 u" and remedy("var:x") == "--approve var:x"
    assert json.dumps(Approvals().unmatched([("u", "k")])) == "[]"
