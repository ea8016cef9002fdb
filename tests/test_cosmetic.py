"""Which changed lines are comments: the classifier of cosmetic follow-ups."""

from __future__ import annotations

import pytest

from backportr.resolve.cosmetic import Practice, comment_or_blank


@pytest.mark.parametrize(
    ("path", "line", "comment"),
    [
        ("src/a.c", "\t/* we already reqeusted it */\n", True),
        ("src/a.c", "\t * in the near future\n", True),
        ("src/a.c", "\t */\n", True),
        ("src/a.c", "\t// a line comment\n", True),
        ("src/a.c", "   \n", True),
        ("src/a.c", "\t*ret = aux;\n", False),  # a pointer, not a comment
        ("src/a.c", "#define X 1\n", False),  # the preprocessor
        ("src/a.c", "\tint y = x; /* trailing */\n", False),
        ("meson.build", "# a comment\n", True),
        ("tools/run.sh", "  # a comment\n", True),
        ("tools/run.sh", "echo # not only\n", False),
        ("data/table.csv", "# whatever\n", False),  # a language not known here
    ],
)
def test_comment_or_blank(path: str, line: str, comment: bool) -> None:
    assert comment_or_blank(path, line) is comment


def test_practice_needs_enough_seen() -> None:
    assert Practice(seen=6, taken=2).leaves_them
    assert not Practice(seen=4, taken=0).leaves_them  # too few to say
    assert not Practice(seen=6, taken=3).leaves_them  # half taken
