"""Pure text parsing, below everything else: commit trailers and stable annotations, the ways
a message names a fixed commit (`relation_forms`, and the cheap test `relation_words`),
postings' subject stems, git's patch-id of a diff's text.

It may import `backportr.errors` and `backportr.model` and itself, nothing else: no git, no
index, no I/O (tests/test_lint.py holds it to that).
"""
