"""The persistent commit index (SQLite under the repository's git directory).

For the upstream ref and each indexed stable branch it keeps every commit's id, subject,
author and dates, its parsed relations (Fixes:, reverts, upstream references,
Stable-dep-of:, Cc: stable tags, posting Message-IDs), patch-ids of branch commits, and the
reverse maps "who fixes X", "who reverts X", "which branch commit carries upstream X".
Updates are incremental (only commits new since the stored tips are read) and a rewritten
branch is re-read from its fork point. Writers hold a file lock; readers see a consistent
database thanks to WAL.

schema.py holds the tables and values, reader.py the questions, writer.py the updates; this
module opens, checks and closes. It does not decide presence or dependencies: presence.py and
resolve/finders/ ask it questions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backportr.lazyload import lazy_names

if TYPE_CHECKING:
    from backportr.index.commitindex import CommitIndex, default_index_path
    from backportr.index.schema import SCHEMA_VERSION, IndexedRef, Relation, UpdateStats

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
    "CommitIndex": "backportr.index.commitindex",
    "default_index_path": "backportr.index.commitindex",
    "SCHEMA_VERSION": "backportr.index.schema",
    "IndexedRef": "backportr.index.schema",
    "Relation": "backportr.index.schema",
    "UpdateStats": "backportr.index.schema",
}


__getattr__ = lazy_names(__name__, _HOMES)
