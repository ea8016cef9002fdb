"""C-family source read without its comments (`text.comments`): what decides that a change
is a typo fixed in a comment."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backportr.text.comments import same_code, without_comments


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        # the two typo fixes of systemd the maintainers did not take (`2503c377faac`,
        # `49d6e3c8a880`), as their lines read
        (
            "\t/* In this case we already reqeusted what we need above. */\n\tname = NULL;\n",
            "\t/* In this case we already requested what we need above. */\n\tname = NULL;\n",
            True,
        ),
        (
            "  /* start it. All the following operations are asyncronous\n   * and will not */\n",
            "  /* start it. All the following operations are asynchronous\n   * and will not */\n",
            True,
        ),
        ("x = 1; // old words\n", "x = 1; // new words, more of them\n", True),
        ("x = 1;\n", "x  =  1;   \n\n", True),  # runs of whitespace fold
        ("x=1;\n", "x = 1;\n", False),  # but space between tokens is a change
        ("if (a)\n\tb();\n", "if (a)\n        b();\n", True),  # re-indented
        ('s = "/* not a comment */";\n', 's = "/* not a comment, changed */";\n', False),
        ("c = '/'; /* a */ d = 2;\n", "c = '/'; /* b */ d = 2;\n", True),
        ("x = 1; /* a */\n", "x = 2; /* a */\n", False),
        ("/* unterminated", "/* unterminated, and more", True),
        ('s = "no end\nx = 1; /* a */', 's = "no end\nx = 1; /* b */', True),  # to its line end
        ("a = 1; // goes on \\\n b = 2;\n", "a = 1; // goes on \\\n b = 3;\n", True),  # `\`
    ],
)
def test_a_change_in_comments_alone_reads_the_same(old: str, new: str, same: bool) -> None:
    assert same_code("src/file.c", old, new) is same


def test_only_c_family_files_are_read_so() -> None:
    assert same_code("lib/x.h", "/* a */", "/* b */")
    assert not same_code("script.py", "# a\n", "# b\n")  # another language: a change
    assert not same_code("Makefile", "# a\n", "# b\n")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("/*\"'\\\n ax;")), max_size=300))
def test_stripping_any_text_ends_and_is_idempotent(text: str) -> None:
    stripped = without_comments(text)
    assert "\n" not in stripped and "  " not in stripped
    assert len(stripped) <= len(text) + 1
