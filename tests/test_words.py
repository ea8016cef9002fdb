"""The symbol finder's tree lookups: bounded greps for a few names, the cached identifier
set for many, the same answers either way."""

from __future__ import annotations

from pathlib import Path

from backportr.builder import RepoBuilder
from backportr.deps import words as words_module
from backportr.deps.symbols import SEARCHED
from backportr.deps.words import WordLookup
from backportr.repo import Repo


def _repo(path: Path) -> tuple[Repo, str]:
    b = RepoBuilder(path)
    files = {
        f"drivers/f{i}.c": f"int helper_{i}(int x) {{ return x + CONST_{i}; }}\n"
        for i in range(300)
    }
    files["drivers/Kconfig"] = 'config DRV_TURBO\n\tbool "turbo"\n'
    files["README"] = "not_code_word\n"
    tip = b.commit("init", files)
    return Repo(path), tip


def test_grep_and_set_agree_and_the_set_is_cached(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    repo, tip = _repo(tmp_path / "r")
    names = [f"helper_{i}" for i in range(300)] + ["DRV_TURBO", "absent_name", "not_code_word"]
    expected = {f"helper_{i}" for i in range(300)} | {"DRV_TURBO"}
    few = WordLookup(repo, tip, SEARCHED, tmp_path / "cache")
    assert few.present([*names[:5], "absent_name"]) == set(names[:5])  # one bounded grep
    assert not (tmp_path / "cache").exists()
    many = WordLookup(repo, tip, SEARCHED, tmp_path / "cache")
    assert many.present(names) == expected  # past GREP_CHUNK: the set, saved by tree id
    saved = list((tmp_path / "cache").glob("*.words.gz"))
    assert [p.name for p in saved] == [f"{repo.tree_id(tip)}.words.gz"]

    def no_grep(*args: object) -> set[str]:
        raise AssertionError("a cached set must answer without git grep")

    monkeypatch.setattr(repo, "grep_words", no_grep)
    again = WordLookup(repo, tip, SEARCHED, tmp_path / "cache")
    assert again.present(["helper_7", "absent_name"]) == {"helper_7"}


def test_no_grep_takes_more_than_the_chunk(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    repo, tip = _repo(tmp_path / "r")
    sizes: list[int] = []
    real = repo.grep_words

    def counting(tree: str, words: list[str], patterns: tuple[str, ...]) -> set[str]:
        sizes.append(len(words))
        return real(tree, words, patterns)

    monkeypatch.setattr(repo, "grep_words", counting)
    lookup = WordLookup(repo, tip, SEARCHED, None)
    for start in range(0, 300, 50):
        lookup.present([f"helper_{i}" for i in range(start, start + 50)])
    lookup.present([f"other_{i}" for i in range(1000)])
    assert sizes and max(sizes) <= words_module.GREP_CHUNK


def test_many_names_share_one_grep_of_the_files_mentioning_them(tmp_path: Path) -> None:
    """The symbol finder asks where each missing name occurs: one git grep for all of
    them, the same files and lines as a grep per name (whole words only)."""
    b = RepoBuilder(tmp_path / "r")
    tip = b.commit(
        "init",
        {
            "a.c": "int foo = bar;\nint foobar;\nint foo_bar = foo + bar;\n",
            "b.h": "#define BAR_MAX 3 /* bar */\nextern int xfoo;\n",
            "c.txt": "foo bar\n",
        },
    )
    repo = Repo(b.path)
    names = ["foo", "bar", "BAR_MAX", "foobar", "absent", "xfoo"]
    together = repo.grep_files(tip, names, (".c", ".h"))
    for name in names:
        alone = repo.grep_files(tip, [name], (".c", ".h"))[name]
        assert together[name] == alone
    assert together["foo"] == {"a.c": ["int foo = bar;", "int foo_bar = foo + bar;"]}
    assert together["bar"] == {
        "a.c": ["int foo = bar;", "int foo_bar = foo + bar;"],
        "b.h": ["#define BAR_MAX 3 /* bar */"],
    }
    assert together["absent"] == {}
