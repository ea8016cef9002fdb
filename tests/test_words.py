"""The symbol finder's tree lookups: bounded greps for a few names, the cached identifier
set for many, the same answers either way."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backportr.errors import MissingObjectError
from backportr.git import tree_grep as gittreegrep
from backportr.git.builder import RepoBuilder
from backportr.git.repo import Repo, git_error_text
from backportr.git.search import Searches
from backportr.git.tree_grep import TreeGrep
from backportr.index.peeking import stored_forks
from backportr.model import Oid
from backportr.resolve.finders import symbols
from backportr.resolve.finders import words as words_module
from backportr.resolve.finders.symbols import SEARCHED
from backportr.resolve.finders.words import FileIdentifiers, WordLookup


def _repo(path: Path) -> tuple[Repo, Oid]:
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
    assert many.present(names) == expected  # more greps than the budget: the set, kept
    saved = list((tmp_path / "cache").glob("*.words.gz"))
    assert [p.name for p in saved] == [f"{repo.tree_id(tip)}.words.gz"]

    def no_grep(*args: object) -> set[str]:
        raise AssertionError("a cached set must answer without git grep")

    monkeypatch.setattr(repo.search, "grep_words", no_grep)
    again = WordLookup(repo, tip, SEARCHED, tmp_path / "cache")
    assert again.present(["helper_7", "absent_name"]) == {"helper_7"}


def test_no_grep_takes_more_than_the_chunk(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Up to the budget, many names are several small greps (git's -w -F slows sharply
    past a few dozen patterns); past it, the set."""
    repo, tip = _repo(tmp_path / "r")
    sizes: list[int] = []
    real = repo.search.grep_words

    def counting(tree: Oid, words: list[str], patterns: tuple[str, ...]) -> set[str]:
        sizes.append(len(words))
        return real(tree, words, patterns)

    monkeypatch.setattr(repo.search, "grep_words", counting)
    lookup = WordLookup(repo, tip, SEARCHED, None)
    names = [f"helper_{i}" for i in range(50)]
    assert lookup.present(names) == set(names)
    assert sizes == [20, 20, 10]
    more = [f"helper_{i}" for i in range(50, 200)]
    assert lookup.present(more) == set(more)  # 8 more greps would pass the budget of 6
    lookup.present([f"other_{i}" for i in range(1000)])
    assert sizes == [20, 20, 10] and max(sizes) <= words_module.GREP_CHUNK


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
    together = repo.search.grep_files(tip, names, (".c", ".h"))
    for name in names:
        alone = repo.search.grep_files(tip, [name], (".c", ".h"))[name]
        assert together[name] == alone
    assert together["foo"] == {"a.c": ["int foo = bar;", "int foo_bar = foo + bar;"]}
    assert together["bar"] == {
        "a.c": ["int foo = bar;", "int foo_bar = foo + bar;"],
        "b.h": ["#define BAR_MAX 3 /* bar */"],
    }
    assert together["absent"] == {}


def test_many_questions_build_the_set_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A scan asks about a few names per member, hundreds of times: after a few greps the
    tip's identifier set answers the rest (and is kept for the next run), the same answers."""
    repo, tip = _repo(tmp_path / "r")
    greps: list[list[str]] = []
    real = repo.search.grep_words

    def counting(tree: Oid, words: list[str], patterns: tuple[str, ...]) -> set[str]:
        greps.append(words)
        return real(tree, words, patterns)

    monkeypatch.setattr(repo.search, "grep_words", counting)
    lookup = WordLookup(repo, tip, SEARCHED, tmp_path / "cache")
    answers = [lookup.present([f"helper_{i}", f"gone_{i}"]) for i in range(40)]
    assert answers == [{f"helper_{i}"} for i in range(40)]
    assert len(greps) == words_module.GREPS_BEFORE_THE_SET
    assert [p.name for p in (tmp_path / "cache").glob("*.words.gz")] == [
        f"{repo.tree_id(tip)}.words.gz"
    ]


def test_in_process_grep_answers_as_git_grep(tmp_path: Path) -> None:
    """Past a dozen questions the files mentioning names come from the object database: the
    same files, lines and order as git grep's, whatever the file holds."""
    b = RepoBuilder(tmp_path / "r")
    files = {
        "a.c": "int foo = bar;\nint foobar;\nint foo_bar = foo + bar;\n",
        "b.h": "#define BAR_MAX 3 /* bar */\nextern int xfoo;\n",
        "crlf.c": "int foo;\r\nint bar;\r\n",
        "bin.c": "foo\0bar\n",
        "word.c": "x = 3foo + é_foo + (foo);\n",
        "drv/sub/deep.h": "struct foo { int bar; };\n",
        "drv/Kconfig.net": "config FOO\n\tdepends on BAR_MAX\n",
        "docs/foo.txt": "foo bar\n",
    }
    tip = b.commit("init", files)
    repo = Repo(b.path)
    names = ["foo", "bar", "BAR_MAX", "foobar", "absent", "xfoo", "FOO"]
    for patterns in ((".c", ".h"), ("Kconfig*",), (".c", ".h", "Kconfig*", ".txt")):
        by_git = repo.search._git_grep_files(tip, names, patterns)
        in_process = TreeGrep(repo.git).grep(repo.commit(tip).tree, names, patterns)
        assert in_process == by_git
        assert [list(v) for v in in_process.values()] == [list(v) for v in by_git.values()]
    assert repo.search._git_grep_files(tip, ["foo"], (".c",))["foo"]["word.c"] == [
        "x = 3foo + é_foo + (foo);"
    ]


def _recorded(grep: TreeGrep, method: str) -> list[str]:
    """The object ids one of `grep`'s methods is called with, from now on, in order."""
    calls: list[str] = []
    real = getattr(grep, method)

    def recording(oid):  # type: ignore[no-untyped-def]
        calls.append(str(oid))
        return real(oid)

    setattr(grep, method, recording)
    return calls


def test_in_process_grep_of_close_trees_reads_only_changed_directories(tmp_path: Path) -> None:
    """A scan asks about one upstream tree after another. The files matching a question's
    patterns are kept by directory: the next tree's walk lists again only the directories
    that changed (a file added, one deleted, one changed), and its answers stay git grep's."""
    b = RepoBuilder(tmp_path / "r")
    files: dict[str, str | None] = {
        f"drv/d{d}/f{i}.c": f"int helper_{d}_{i} = CONST;\n" for d in range(5) for i in range(4)
    }
    files["lib/core.h"] = "#define CONST 1\n"
    first = b.commit("init", files)
    second = b.commit(
        "change two directories",
        {
            "drv/d1/new.c": "int CONST_USER = CONST;\n",
            "drv/d1/f0.c": None,
            "lib/core.h": "#define CONST 2\nint helper_3_3;\n",
        },
    )
    repo = Repo(b.path)
    grep = TreeGrep(repo.git)
    names = ["CONST", "helper_3_3", "helper_1_0", "CONST_USER"]
    listed = _recorded(grep, "_entries")
    for tip in (first, second):
        tree = repo.commit(tip).tree
        assert grep.grep(tree, names, (".c", ".h")) == repo.search._git_grep_files(
            tip, names, (".c", ".h")
        )
    second_tree = repo.commit(second).tree
    changed = {
        str(second_tree.id),
        str(second_tree["drv"].id),
        str(second_tree["drv/d1"].id),
        str(second_tree["lib"].id),
    }
    # the first tree's walk lists its 8 directories; the second only the 4 that changed
    assert len(listed) == 8 + 4 and set(listed[8:]) == changed
    assert grep.grep(second_tree, ["helper_1_0"], (".c",)) == {"helper_1_0": {}}


def test_kept_file_lists_are_bounded(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past `_MAX_LISTED` kept names every kept list is dropped; the walk lists again and the
    answers stay git grep's."""
    monkeypatch.setattr(gittreegrep, "_MAX_LISTED", 6)
    repo, tip = _repo(tmp_path / "r")
    grep = TreeGrep(repo.git)
    for _ in range(2):
        found = grep.grep(repo.commit(tip).tree, ["helper_7", "CONST_9"], (".c",))
        assert found == repo.search._git_grep_files(tip, ["helper_7", "CONST_9"], (".c",))
        assert grep._listed_names <= 6


def test_postings_dropped_within_a_question_leave_the_answer_git_greps(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch
) -> None:
    """Past `_MAX_POSTINGS` word and file pairs every posting is dropped, also in the middle
    of a question's walk: the files read before it still answer, and every answer, asked
    again, is git grep's."""
    monkeypatch.setattr(gittreegrep, "_MAX_POSTINGS", 7)
    repo, tip = _repo(tmp_path / "r")
    grep = TreeGrep(repo.git)
    names = ["helper_7", "CONST_9", "CONST", "helper_1_0"]
    for _ in range(3):
        found = grep.grep(repo.commit(tip).tree, names, (".c", ".h"))
        assert found == repo.search._git_grep_files(tip, names, (".c", ".h"))
        assert grep._held <= 7 or len(grep._read_blobs) == 1


def test_past_the_bound_the_postings_of_the_asked_tree_are_retained(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch
) -> None:
    """Past `_MAX_POSTINGS` pairs only the files the question's tree does not hold are
    dropped: the next tree of a scan reads the words of just the files that changed (every
    posting dropped, it read f1.c again), and answers as git grep."""
    monkeypatch.setattr(gittreegrep, "_MAX_POSTINGS", 20)  # one tree's 18 pairs and a little
    b = RepoBuilder(tmp_path / "r")
    first = b.commit("init", {f"f{i}.c": f"int helper_{i} = CONST;\n" for i in range(6)})
    second = b.commit(
        "change one, add one, remove four",
        {
            "f0.c": "int other = CONST;\n",
            "f6.c": "int x6;\n",
            **{f"f{i}.c": None for i in range(2, 6)},
        },
    )
    repo = Repo(b.path)
    grep = TreeGrep(repo.git)
    posted = _recorded(grep, "_post")
    names = ["CONST", "helper_3", "other", "x6"]
    for tip in (first, second):
        found = grep.grep(repo.commit(tip).tree, names, (".c",))
        assert found == repo.search._git_grep_files(tip, names, (".c",))
        assert grep._held <= 20
    tree = repo.commit(second).tree
    assert posted[6:] == [str(tree["f0.c"].id), str(tree["f6.c"].id)]


def test_in_process_grep_of_a_tree_lacking_a_blob_is_a_missing_object(tmp_path: Path) -> None:
    """A damaged clone: a blob the tree names is gone. The in-process grep says so as the
    git layer does everywhere, `MissingObjectError` naming the blob, which a scan records as
    that target's error."""
    b = RepoBuilder(tmp_path / "r")
    tip = b.commit("init", {"a.c": "int foo;\n", "b.c": "int bar;\n"})
    repo = Repo(b.path)
    blob = repo.commit(tip).tree["b.c"].id
    loose = b.path / ".git" / "objects" / str(blob)[:2] / str(blob)[2:]
    loose.unlink()
    with pytest.raises(MissingObjectError, match=str(blob)) as raised:
        TreeGrep(repo.git).grep(repo.commit(tip).tree, ["bar"], (".c",))
    assert raised.value.oid == str(blob)


def test_the_identifiers_of_a_tree_lacking_a_blob_name_the_blob_and_its_file(
    tmp_path: Path,
) -> None:
    """The identifier set of a branch tip (what a symbol check reads) in a partial copy whose
    largest file is absent (a snapshot without its large blobs): `MissingObjectError` naming
    the blob and its path, never libgit2's bare id as the whole message."""
    b = RepoBuilder(tmp_path / "r")
    tip = b.commit("init", {"src/a.c": "int foo;\n", "test/glass.h": "int glass_bits;\n"})
    repo = Repo(b.path)
    blob = str(repo.commit(tip).tree["test/glass.h"].id)
    (b.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(MissingObjectError) as raised:
        repo.search.tree_words(tip, (".c", ".h"))
    assert raised.value.oid == blob and "test/glass.h" in raised.value.needed_by
    assert repo.search.tree_words(tip, (".c",)) == {b"int", b"foo"}  # what it does not read


def test_an_object_libgit2_cannot_find_is_told_as_the_repository_lacking_it(
    tmp_path: Path,
) -> None:
    """Where libgit2's own error reaches a message (a scan's error for one target), it says
    which object the repository lacks and what to do, not only the id."""
    b = RepoBuilder(tmp_path / "r")
    tip = b.commit("init", {"a.c": "int foo;\n"})
    repo = Repo(b.path)
    blob = repo.commit(tip).tree["a.c"].id
    (b.path / ".git" / "objects" / str(blob)[:2] / str(blob)[2:]).unlink()
    entry = repo.commit(tip).tree["a.c"]
    assert isinstance(entry, pygit2.Blob)
    with pytest.raises(pygit2.GitError) as raised:
        entry.data  # noqa: B018 (read, as a tree walk reads it)
    said = git_error_text(raised.value)
    assert said.startswith(f"the repository lacks the object {blob}") and "git fsck" in said
    assert git_error_text(pygit2.GitError("a pack cannot be read")) == "a pack cannot be read"


def test_grep_files_moves_in_process_after_a_dozen_questions(tmp_path: Path) -> None:
    repo, tip = _repo(tmp_path / "r")
    answers = [repo.search.grep_files(tip, [f"helper_{i}", "CONST_3"], (".c",)) for i in range(20)]
    assert repo.search._tree_grep is not None  # the later answers came from the object database
    for i, answer in enumerate(answers):
        assert answer == repo.search._git_grep_files(tip, [f"helper_{i}", "CONST_3"], (".c",))
        assert answer[f"helper_{i}"] == {
            f"drivers/f{i}.c": [f"int helper_{i}(int x) {{ return x + CONST_{i}; }}"]
        }


def test_grep_files_answers_in_process_at_once_when_many_questions_are_coming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan says many questions are coming: no git grep at all, the same answers."""
    repo, tip = _repo(tmp_path / "r")
    expected = [
        repo.search._git_grep_files(tip, [f"helper_{i}", "CONST_3"], (".c",)) for i in range(3)
    ]

    def no_git(*args: object) -> None:
        raise AssertionError("answered in-process from the first question")

    monkeypatch.setattr(repo.search, "_git_grep_files", no_git)
    repo.search.expect_many_greps()
    assert [
        repo.search.grep_files(tip, [f"helper_{i}", "CONST_3"], (".c",)) for i in range(3)
    ] == expected


def test_grep_files_stays_with_git_where_the_tree_would_not_fit(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch
) -> None:
    """A tree whose searched files exceed `FITS_BYTES` (a kernel tree's C files) would have
    its word sets dropped and read again at every question: past the dozen greps the
    answers still come from git grep, for that kind of file only."""
    repo, tip = _repo(tmp_path / "r")
    size_of_c_files = sum(
        len(f"int helper_{i}(int x) {{ return x + CONST_{i}; }}\n") for i in range(300)
    )
    monkeypatch.setattr(gittreegrep, "FITS_BYTES", size_of_c_files - 1)
    in_process: list[tuple[str, ...]] = []
    real = TreeGrep.grep

    def grep(self, tree, words, patterns):  # type: ignore[no-untyped-def]
        in_process.append(patterns)
        return real(self, tree, words, patterns)

    monkeypatch.setattr(TreeGrep, "grep", grep)
    answers = [repo.search.grep_files(tip, [f"helper_{i}"], (".c",)) for i in range(20)]
    kconfig = [repo.search.grep_files(tip, ["DRV_TURBO"], ("Kconfig*",)) for _ in range(2)]
    assert answers == [
        repo.search._git_grep_files(tip, [f"helper_{i}"], (".c",)) for i in range(20)
    ]
    assert kconfig[1] == {"DRV_TURBO": {"drivers/Kconfig": ["config DRV_TURBO"]}}
    assert in_process == [("Kconfig*",), ("Kconfig*",)]  # the C files stayed with git grep
    assert repo.search._tree_grep_fits == {(".c",): False, ("Kconfig*",): True}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab_Z09 \t\n;(é°—\x1c\u2028\xa0日")), max_size=60))
def test_identifiers_split_as_the_regex_finds_them(text: str) -> None:
    assert symbols._identifiers(text) == set(symbols._IDENTIFIER.findall(text))


def test_a_file_read_whole_is_split_into_identifiers_once() -> None:
    """The symbol finder's files by blob id: asked again, the kept set answers; past the
    bound the least recently asked is dropped and read again."""
    reads: list[str] = []

    def reader(blob: str) -> Callable[[], set[str]]:
        def read() -> set[str]:
            reads.append(blob)
            return {f"name_{blob}"}

        return read

    kept = FileIdentifiers(limit=2)
    assert kept.of("a", reader("a")) == {"name_a"}
    assert kept.of("b", reader("b")) == {"name_b"}
    assert kept.of("a", reader("a")) == {"name_a"}  # kept; now the most recent
    assert kept.of("c", reader("c")) == {"name_c"}  # drops b, the least recent
    assert kept.of("a", reader("a")) == {"name_a"}
    assert kept.of("b", reader("b")) == {"name_b"}
    assert reads == ["a", "b", "c", "b"]


def test_a_scan_reads_the_set_at_its_first_question(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Many questions are coming: no grep at all, the same answers, the set kept."""
    repo, tip = _repo(tmp_path / "r")

    def no_grep(*args: object) -> set[str]:
        raise AssertionError("an eager lookup reads the set instead")

    monkeypatch.setattr(repo.search, "grep_words", no_grep)
    lookup = WordLookup(repo, tip, SEARCHED, tmp_path / "cache", eager=True)
    assert lookup.present(["helper_3", "gone", "DRV_TURBO"]) == {"helper_3", "DRV_TURBO"}
    assert [p.name for p in (tmp_path / "cache").glob("*.words.gz")] == [
        f"{repo.tree_id(tip)}.words.gz"
    ]


def test_one_process_reads_a_set_while_another_waits_and_loads_it(tmp_path: Path) -> None:
    """A question asked while another process reads the tip's set (the lock beside the
    kept file is held) waits, then loads what that process kept instead of reading the
    tree again."""
    import threading

    from backportr.index.transaction import held
    from backportr.infra.filecache import store

    repo, tip = _repo(tmp_path / "r")
    cache = tmp_path / "cache"
    cache.mkdir()
    kept = cache / f"{repo.tree_id(tip)}.words.gz"
    answers: list[set[str]] = []
    with held(kept.with_name(kept.name + ".lock")):
        asking = threading.Thread(
            target=lambda: answers.append(
                WordLookup(repo, tip, SEARCHED, cache, eager=True).present(["helper_1", "marker"])
            )
        )
        asking.start()
        asking.join(0.5)
        assert asking.is_alive() and not answers  # it waits for the reading process
        store(kept, words_module.dump_words({b"marker"}))  # what it keeps (a marker only)
    asking.join(30)
    assert answers == [{"marker"}]  # loaded, not read again from the tree


def test_a_set_stopped_while_written_leaves_no_file(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The scan stops a read-ahead still reading at its end (SIGTERM, raised as
    SystemExit): the temporary file goes, and no kept file is half-written."""

    from backportr.infra import filecache as filecache

    real = os.fdopen

    class Stopped:  # the file the writer opened, stopped at its first write
        def __init__(self, fd: int, mode: str) -> None:
            self.file = real(fd, mode)

        def __enter__(self) -> Stopped:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, data: bytes) -> int:
            self.file.write(data[:10])
            raise SystemExit(1)

    monkeypatch.setattr(os, "fdopen", Stopped)  # filecache writes through os.fdopen
    with pytest.raises(SystemExit):
        filecache.store(tmp_path / "t.words.gz", words_module.dump_words({b"a", b"b"}))
    assert list(tmp_path.iterdir()) == []


def test_a_scans_read_ahead_keeps_the_tips_set_and_the_history_since_the_fork(
    tmp_path: Path,
) -> None:
    """The read-ahead process reads and keeps each branch tip's set and the history since
    its fork under the index directory, where the scan's first questions find them."""
    import time

    from backportr.git.search import _load_range
    from backportr.scan.prefetch import ReadAhead
    from backportr.settings import Settings

    b = RepoBuilder(tmp_path / "r")
    b.commit("init", {"a.c": "int first_name;\n"})
    b.branch("stable-1", "master")
    b.commit("more", {"a.c": "int first_name;\nint second_name;\n"}, branch="stable-1")
    b.commit("upstream", {"b.c": "int third_name;\n"})
    repo = Repo(b.path)
    tip, upstream = repo.branch("stable-1").tip, repo.upstream().tip
    fork = repo.merge_base(tip, upstream)
    index = tmp_path / "ix" / "index.sqlite"
    cached_set = index.parent / "words" / f"{repo.tree_id(tip)}.words.gz"
    cached_range = index.parent / "ranges" / f"{fork}-{upstream}.range"
    settings = Settings(repo=b.path, branches=("stable-1",), index_path=index)
    with ReadAhead(settings):
        for _ in range(600):  # the process's own start and reads; not a measure of speed
            if cached_set.exists() and cached_range.exists():
                break
            time.sleep(0.05)
    assert words_module.load_words(cached_set.read_bytes()) == {
        b"first_name",
        b"second_name",
        b"int",
    }
    assert fork is not None and _load_range(cached_range.read_bytes()) == list(
        repo.streams.range_changes(fork, upstream)
    )
    assert [p.name for p in index.parent.rglob("*.tmp")] == []


def test_the_read_ahead_of_a_rescan_reads_nothing_kept_and_computes_no_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the set and the history are kept and the index stored the fork for the tips
    as they are, the read-ahead (here called in this process) neither loads them nor asks
    libgit2 for the merge base again: seconds at kernel scale, in which the process cannot
    be stopped, and a rescan waited for it at its end. A moved tip is not trusted."""
    from backportr.scan import prefetch as readahead
    from backportr.scan.findings import Policy
    from backportr.scan.run import run_scan
    from backportr.settings import Settings

    b = RepoBuilder(tmp_path / "r")
    b.commit("init", {"a.c": "int first_name;\n"})
    b.branch("stable-1", "master")
    b.commit("more", {"a.c": "int first_name;\nint second_name;\n"}, branch="stable-1")
    b.commit("upstream", {"b.c": "int third_name;\n"})
    index = tmp_path / "ix" / "index.sqlite"
    settings = Settings(repo=b.path, branches=("stable-1",), index_path=index)
    run_scan(settings, Policy(), read_ahead=False)  # stores the fork
    assert readahead.main([str(b.path), str(index), "", "stable-1"]) == 0  # keeps both
    repo = Repo(b.path)
    upstream, branch = repo.upstream(), repo.branch("stable-1")
    fork = repo.merge_base(branch.tip, upstream.tip)
    assert stored_forks(index, upstream, [branch]) == {branch.refname: fork}

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("read again")

    monkeypatch.setattr(Repo, "merge_base", refused)
    monkeypatch.setattr(words_module, "load_words", refused)
    monkeypatch.setattr(Searches, "range_history", refused)
    assert readahead.main([str(b.path), str(index), "", "stable-1"]) == 0

    b.commit("a release", {"a.c": "int first_name;\nint fourth_name;\n"}, branch="stable-1")
    moved = Repo(b.path).branch("stable-1")
    assert stored_forks(index, upstream, [moved]) == {}
    assert stored_forks(tmp_path / "none.sqlite", upstream, [branch]) == {}
    b.commit("upstream moved", {"b.c": "int fifth_name;\n"})
    assert stored_forks(index, Repo(b.path).upstream(), [branch]) == {}


def test_a_damaged_kept_file_is_read_again(tmp_path: Path) -> None:
    """A kept set or history that cannot be decompressed (a disk fault, a file cut short)
    is made again, never an error."""
    from backportr.git.search import _dump_range, _load_range
    from backportr.infra.filecache import read_once

    kinds: list[tuple[str, Callable[[Any], bytes], Callable[[bytes], Any], object]] = [
        ("t.words.gz", words_module.dump_words, words_module.load_words, {b"abc", b"xyz"}),
        ("f-t.range", _dump_range, _load_range, [("a" * 40, ("b" * 40,), 7, {"p.c": "M"})]),
    ]
    for name, dump, load, value in kinds:
        path = tmp_path / name
        good = dump(value)
        for damaged in (good[: len(good) // 2], b"\x1f\x8b\x08\x00" + b"garbage" * 9, b"junk"):
            path.write_bytes(damaged)
            assert read_once(path, functools.partial(_same, value), dump, load) == value
            assert load(path.read_bytes()) == value


def test_prune_removes_what_is_not_wanted_and_spares_held_locks(tmp_path: Path) -> None:
    """Unwanted kept files go with their free locks; a lock another holder has stays, so
    does a fresh temporary file; a temporary file a killed writer left long ago goes."""
    import fcntl
    import time

    from backportr.infra.filecache import STALE_TEMPORARY, prune

    kept = tmp_path / "words"
    kept.mkdir()
    for name in ("new.words.gz", "new.words.gz.lock", "old.words.gz", "old.words.gz.lock",
                 "busy.words.gz", "busy.words.gz.lock", ".old.words.gz.ab.tmp",
                 ".new.words.gz.cd.tmp"):  # fmt: skip
        (kept / name).write_bytes(b"x")
    long_ago = time.time() - STALE_TEMPORARY - 60
    os.utime(kept / ".old.words.gz.ab.tmp", (long_ago, long_ago))
    with open(kept / "busy.words.gz.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another writer making it now
        removed = prune(kept, lambda name: name.startswith("new."))
    assert sorted(p.name for p in kept.iterdir()) == [
        ".new.words.gz.cd.tmp", "busy.words.gz.lock", "new.words.gz", "new.words.gz.lock",
    ]  # fmt: skip
    assert removed == 4
    assert prune(tmp_path / "absent", lambda name: False) == 0


def test_a_scan_forgets_the_sets_and_histories_no_branch_asks_for(tmp_path: Path) -> None:
    """A nightly scan of a moving branch does not leave a set a night behind it: what is
    kept for trees no indexed tip has, or for an earlier upstream tip, goes; what the
    current tips use stays."""
    from backportr.scan.findings import Policy
    from backportr.scan.run import run_scan
    from backportr.settings import Settings

    b = RepoBuilder(tmp_path / "r")
    b.commit("init", {"a.c": "int first_name;\n"})
    b.branch("stable-1", "master")
    b.branch("stable-2", "master")
    b.commit("more", {"a.c": "int first_name;\nint second_name;\n"}, branch="stable-1")
    b.commit("upstream", {"b.c": "int third_name;\n"})
    repo = Repo(b.path)
    upstream = repo.upstream().tip
    fork = repo.merge_base(repo.branch("stable-1").tip, upstream)
    current = {repo.tree_id(repo.branch(n).tip) for n in ("stable-1", "stable-2")}
    index = tmp_path / "ix" / "index.sqlite"
    words, ranges = index.parent / "words", index.parent / "ranges"
    words.mkdir(parents=True)
    ranges.mkdir()
    stale = "0" * 40
    for name in [f"{tree}.words.gz" for tree in current] + [f"{stale}.words.gz"]:
        (words / name).write_bytes(b"kept")
    for name in (f"{fork}-{upstream}.range", f"{fork}-{stale}.range"):
        (ranges / name).write_bytes(b"kept")
    settings = Settings(
        repo=b.path, branches=("stable-1",), index_path=index, branch_pattern="stable-*"
    )
    run_scan(settings, Policy(), read_ahead=False)
    assert sorted(p.name for p in words.iterdir()) == sorted(f"{t}.words.gz" for t in current)
    assert [p.name for p in ranges.iterdir()] == [f"{fork}-{upstream}.range"]


def _same(value: object) -> object:
    return value
