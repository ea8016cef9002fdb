"""The git layer: the only code that imports pygit2 or runs git.

It may import `backportr.errors`, `backportr.model`, `backportr.infra.filecache` and the pure text
parsers (`backportr.text`), never the index, the resolver, the scan, mail, output or the
command line (tests/test_lint.py holds it to that).
"""
