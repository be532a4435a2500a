"""What git says of the working tree a release is built from: the commit, and whether it is dirty, the release
ledger's own new lines left out whatever its path holds."""

from __future__ import annotations

from gitrepo import commit_all, git


def test_the_ledger_s_own_lines_leave_the_tree_clean_whatever_its_name_holds(tmp_path):
    """git quotes a path with a space or a non-ASCII character in its plain porcelain status (``"release log/…"``):
    read that way, the ledger's own new line counted as a change of the tree and every publish was refused."""
    from dashgen.publish.gitinfo import current_commit

    ledger = tmp_path / "release log" / "ledger é.jsonl"
    ledger.parent.mkdir()
    ledger.write_text("{}\n", encoding="utf-8")
    (tmp_path / "dashgen.toml").write_text("x = 1\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    commit_all(tmp_path, "a release")
    ledger.write_text("{}\n{}\n", encoding="utf-8")
    assert not current_commit(tmp_path, [ledger]).endswith("-dirty")
    git(tmp_path, "mv", "dashgen.toml", "renamed me.toml")  # a rename: two paths in one entry
    assert current_commit(tmp_path, [ledger]).endswith("-dirty")
