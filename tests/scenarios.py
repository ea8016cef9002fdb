"""Small kernel-shaped repositories built by name for the tests."""

from __future__ import annotations

from pathlib import Path

from backportr.git.builder import RepoBuilder
from backportr.model import Oid


def c_file(*functions: str) -> str:
    """A small C file: one function per name, ten lines each, so hunks stay apart."""
    parts = ["#include <linux/kernel.h>\n"]
    for fn in functions:
        parts.append(
            f"\nint {fn}(int x)\n{{\n\tint y = x;\n\n\ty += 1;\n\ty *= 2;\n\ty -= 3;\n\n"
            f"\treturn y;\n}}\n"
        )
    return "".join(parts)


def presence_repo(path: Path) -> RepoBuilder:
    """master with a fork at v5.10 and linux-5.10.y carrying backports in every form."""
    b = RepoBuilder(path)
    b.commit(
        "init: add files",
        {
            "drivers/foo.c": c_file("foo_a", "foo_b", "foo_c", "foo_d"),
            "drivers/bar.c": c_file("bar_a", "bar_b", "bar_c", "bar_d"),
            "fs/baz.c": c_file("baz_a", "baz_b", "baz_c"),
        },
        name="init",
    )
    b.commit(
        "foo: add helper",
        {
            "drivers/foo.c": b.files("master")["drivers/foo.c"].replace(
                "y += 1;\n\ty *= 2;\n\ty -= 3;\n\n\treturn y;\n}\n\nint foo_b",
                "y += 10;\n\ty *= 2;\n\ty -= 3;\n\n\treturn y;\n}\n\nint foo_b",
            )
        },
        name="culprit",
    )
    b.tag("v5.10", "master")
    b.branch("linux-5.10.y", "master")

    def edit(path: str, old: str, new: str) -> dict[str, str]:
        text = b.files("master")[path]
        assert old in text, (path, old)
        return {path: text.replace(old, new, 1)}

    culprit = b.ids["culprit"]
    b.commit(
        f'foo: fix the helper\n\nFixes: {culprit[:12]} ("foo: add helper")\n'
        "Signed-off-by: Dev <dev@example.org>",
        edit("drivers/foo.c", "y += 10;", "y += 11;"),
        name="fix",
    )
    b.commit(
        "bar: tweak b\n\nSigned-off-by: Dev <dev@example.org>",
        edit(
            "drivers/bar.c",
            "int bar_b(int x)\n{\n\tint y = x;",
            "int bar_b(int x)\n{\n\tint y = x + 1;",
        ),
        name="sasha",
    )
    b.commit(
        "bar: tweak c",
        edit(
            "drivers/bar.c",
            "int bar_c(int x)\n{\n\tint y = x;",
            "int bar_c(int x)\n{\n\tint y = x + 2;",
        ),
        name="nolabel",
    )
    b.commit(
        "baz: tweak a",
        edit(
            "fs/baz.c", "int baz_a(int x)\n{\n\tint y = x;", "int baz_a(int x)\n{\n\tint y = x + 3;"
        ),
        name="bysubject",
    )
    b.commit(
        "baz: tweak b",
        edit(
            "fs/baz.c", "int baz_b(int x)\n{\n\tint y = x;", "int baz_b(int x)\n{\n\tint y = x + 4;"
        ),
        name="reverted",
    )
    b.commit(
        "bar: tweak d",
        edit(
            "drivers/bar.c",
            "int bar_d(int x)\n{\n\tint y = x;",
            "int bar_d(int x)\n{\n\tint y = x + 5;",
        ),
        name="cherry",
    )
    b.commit(
        'foo: wrong id fix\n\nFixes: 0123456789ab ("foo: add helper")\n',
        edit(
            "drivers/foo.c",
            "int foo_c(int x)\n{\n\tint y = x;",
            "int foo_c(int x)\n{\n\tint y = x + 6;",
        ),
        name="wrongid",
    )
    b.commit(
        "foo: never backported",
        edit(
            "drivers/foo.c",
            "int foo_d(int x)\n{\n\tint y = x;",
            "int foo_d(int x)\n{\n\tint y = x + 7;",
        ),
        name="absent",
    )

    b.cherry_pick("fix", "linux-5.10.y", annotation="upstream", name="fix-bp")
    b.cherry_pick("sasha", "linux-5.10.y", annotation="sasha", name="sasha-bp")
    b.cherry_pick("nolabel", "linux-5.10.y", annotation=None, name="nolabel-bp")
    text = b.files("linux-5.10.y")["fs/baz.c"].replace(
        "int baz_a(int x)\n{\n\tint y = x;", "int baz_a(int x)\n{\n\tint y = x + 33;"
    )
    b.commit(
        "baz: tweak a\n\nAdapted by hand, no reference.\n",
        {"fs/baz.c": text},
        branch="linux-5.10.y",
        name="bysubject-bp",
    )
    b.cherry_pick("reverted", "linux-5.10.y", annotation="upstream", name="reverted-bp")
    b.revert("reverted-bp", "linux-5.10.y", name="reverted-revert")
    b.cherry_pick("cherry", "linux-5.10.y", annotation="cherry-pick", name="cherry-bp")
    return b


def ambiguous_repo(path: Path) -> tuple[RepoBuilder, Oid]:
    """Commits until two share a 4-hex prefix; returns the builder and that prefix."""
    b = RepoBuilder(path)
    seen: dict[str, str] = {}
    i = 0
    while True:
        oid = b.commit(f"churn {i}", {"f": str(i)})
        if oid[:4] in seen:
            return b, Oid(oid[:4])
        seen[oid[:4]] = oid
        i += 1
