"""Read-only looks at an index another process may be writing: they never wait for its
lock, and answer nothing where the index cannot be read (the caller computes the answer)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from backportr.git.names import Ref
from backportr.model import Oid


def stored_forks(index: Path, upstream: Ref, branches: list[Ref]) -> dict[str, Oid]:
    """The forks the index stored for these branches, by refname, where they still hold:
    the index's upstream is `upstream` at the same tip, and the branch's stored tip is its
    tip now. Read-only and without waiting: nothing where the index cannot be read (a
    first run, another process writing it), and the caller computes the forks."""
    try:
        with contextlib.closing(
            sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True, timeout=0)
        ) as db:
            rows = db.execute("SELECT refname, kind, tip, fork FROM refs").fetchall()
    except sqlite3.Error:
        return {}
    stored = {(refname, kind, tip): fork for refname, kind, tip, fork in rows}
    if (upstream.refname, "upstream", upstream.tip) not in stored:
        return {}
    found = {b.refname: stored.get((b.refname, "branch", b.tip)) for b in branches}
    return {refname: Oid(fork) for refname, fork in found.items() if fork}
