"""What an index update forgets: everything (`--rebuild`, a replaced upstream), or the
branches the repository no longer has; each step inside the update's transaction."""

from __future__ import annotations

import sqlite3

from backportr.git.names import Ref
from backportr.git.repo import Repo
from backportr.index.schema import _COMMIT_INDEXES, _SCHEMA


def execute_script(db: sqlite3.Connection, script: str) -> None:
    """Each statement of `script` inside the open transaction (executescript would
    COMMIT it)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def drop_all(db: sqlite3.Connection, schema_mark: str) -> None:
    for table in (
        "commits",
        "fixes",
        "reverts",
        "upstream_refs",
        "stable_deps",
        "refs",
        "branch_commits",
        "after_fork",
        "after_fork_pending",
        "patch_ids_pending",
        "commit_paths",
        "postings",
        "posting_covers",
        "adapted_checks",
        "results",
        "scan_findings",
        "meta",
    ):
        db.execute(f"DROP TABLE IF EXISTS {table}")
    execute_script(db, _SCHEMA + _COMMIT_INDEXES)
    db.execute("INSERT INTO meta VALUES('schema', ?)", (schema_mark,))


def drop_deleted_branches(db: sqlite3.Connection, repo: Repo) -> tuple[str, ...]:
    """Forget the indexed branches the repository no longer has (deleted, renamed): their
    backports and `Stable-dep-of:` lines are no evidence of what its stable branches
    take. A branch merely left out of this command stays (another command indexed it)."""
    rows = db.execute("SELECT refname, name FROM refs WHERE kind='branch'").fetchall()
    gone = [(refname, name) for refname, name in rows if not repo.has_ref(refname)]
    for refname, _ in gone:
        for table in (
            "branch_commits",
            "after_fork",
            "after_fork_pending",
            "patch_ids_pending",
        ):
            db.execute(f"DELETE FROM {table} WHERE refname=?", (refname,))
        db.execute("DELETE FROM refs WHERE refname=?", (refname,))
    return tuple(sorted(name for _, name in gone))


def replaced_upstream(db: sqlite3.Connection, repo: Repo, upstream: Ref) -> str | None:
    """The stored upstream's name when `upstream` replaces it: another ref, or the same
    one rewritten (neither tip an ancestor of the other). The index is then built
    afresh, in the same transaction: every resolved id, every branch's fork and rows
    were answers about the old history, and most commits are in both (they cannot be
    appended again as new)."""
    row = db.execute("SELECT refname, name, tip FROM refs WHERE kind='upstream'").fetchone()
    if row is None:
        return None
    refname, name, tip = row
    if refname != upstream.refname:
        return str(name)
    if tip == upstream.tip:
        return None
    if repo.is_ancestor(upstream.tip, tip) or repo.is_ancestor(tip, upstream.tip):
        return None
    return str(name)
