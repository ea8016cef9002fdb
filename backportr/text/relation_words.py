"""The words a commit message names whenever it may name a relation (Fixes, stable, upstream,
revert): a cheap test that lets the bulk indexer skip the trailer parse (`text/trailers.py`) of
most commits. Pure, and imports nothing: the index's reader process uses it.
"""

from __future__ import annotations

RELATION_WORDS = (
    b"fixes",
    b"stable",
    b"upstream",
    b"cherry",
    b"backport",  # `backported from`, and `backport ... wherever <id>`
    b"reverts",
    b"mainline",
    b"master commit",
    b"main commit",
    # The words of relation_forms.FORMS (a test holds the two together).
    b"follow",
    b"fixup",
    b"fix-up",
    b"fix up",
    b"regress",
    b"introduced",
    b"broke",
    b"caused",
    b"regressed",
    b"part of",
)
"""Lowercase words one of which a message names whenever `trailers.parse_message` can find a
relation in it (or its subject starts with `revert`)."""


def lowered_mentions_relations(low: bytes) -> bool:
    """`trailers.mentions_relations` of a message already lowercased (the indexer lowercases
    once)."""
    return low.startswith(b"revert") or any(word in low for word in RELATION_WORDS)
