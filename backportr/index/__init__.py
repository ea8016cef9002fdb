"""The persistent commit index (SQLite under the repository's git directory).

For the upstream ref and each indexed stable branch it keeps every commit's id, subject,
author and dates, its parsed relations (Fixes:, reverts, upstream references,
Stable-dep-of:, Cc: stable tags, posting Message-IDs), patch-ids of branch commits, and the
reverse maps "who fixes X", "who reverts X", "which branch commit carries upstream X".
Updates are incremental (only commits new since the stored tips are read) and a rewritten
branch is re-read from its fork point. Writers hold a file lock; readers see a consistent
database thanks to WAL.

`store.py` opens, checks and closes it; each question goes to one of the store's parts
(`reader`, `cache`, `facts`, `patch_ids`, `after_fork`, `writer`), and schema.py holds the
tables and values; `presence.py` answers whether an upstream commit is in a branch, and how
it is known, from what the store keeps. It does not decide dependencies: resolve/finders/ ask
it questions. It may import the git layer, text/, model, errors and infra/, never what asks
it (`tests/test_lint.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backportr.infra.lazyload import lazy_names

if TYPE_CHECKING:
    from backportr.index.schema import SCHEMA_VERSION, IndexedRef, Relation, UpdateStats
    from backportr.index.store import CommitIndex, default_index_path

__all__ = [
    "SCHEMA_VERSION",
    "CommitIndex",
    "IndexedRef",
    "Relation",
    "UpdateStats",
    "default_index_path",
]

# The names are loaded when first asked for (PEP 562): the index's reader process imports
# this package for its parsing modules only, and so needs neither pygit2 nor SQLite's side.
_HOMES = {
    "CommitIndex": "backportr.index.store",
    "default_index_path": "backportr.index.store",
    "SCHEMA_VERSION": "backportr.index.schema",
    "IndexedRef": "backportr.index.schema",
    "Relation": "backportr.index.schema",
    "UpdateStats": "backportr.index.schema",
}


__getattr__ = lazy_names(__name__, _HOMES)
