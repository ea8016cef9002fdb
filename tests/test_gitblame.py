"""In-process blame (`git.blame`) against git's: the same commits and line counts on
histories made to tempt a diff into choices (repeated lines, blank runs, braces), with
carriage returns, files without a final newline, and merges that take one side, mix both or
change lines of their own."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from backportr.git import blame as gitblame
from backportr.git.blame import _split
from backportr.git.builder import RepoBuilder
from backportr.git.repo import Repo
from backportr.model import Oid

_COMMON = ["{", "}", "", "", "\treturn 0;", "\tint x;", "if (a) {", "\t\tbreak;", "#endif"]


def _new_lines(rnd: random.Random, tag: str, count: int) -> list[str]:
    return [rnd.choice(_COMMON) if rnd.random() < 0.6 else f"{tag} {n}" for n in range(count)]


def _edited(rnd: random.Random, lines: list[str], tag: str) -> list[str]:
    out = list(lines)
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randrange(len(out) + 1)
        kind = rnd.random()
        if kind < 0.35 and len(out) > 4:
            del out[at : at + rnd.randint(1, 3)]
        elif kind < 0.7:
            out[at:at] = _new_lines(rnd, tag, rnd.randint(1, 4))
        else:
            out[at : at + rnd.randint(1, 2)] = _new_lines(rnd, tag, rnd.randint(1, 3))
    return out


def _text(path: str, lines: list[str]) -> str:
    if path == "crlf.c":
        return "".join(f"{line}\r\n" for line in lines)
    text = "".join(f"{line}\n" for line in lines)
    return text[:-1] if path == "nonl.c" else text


_PATHS = ("plain.c", "crlf.c", "nonl.c")


def _history(path: Path, seed: int) -> tuple[RepoBuilder, Oid]:
    rnd = random.Random(seed)
    b = RepoBuilder(path)
    state = {p: _new_lines(rnd, f"base {p}", 30) for p in _PATHS}
    b.commit("base", {p: _text(p, lines) for p, lines in state.items()})
    fork = b.tip("master")
    b.branch("stable", "master")
    snapshots = [(fork, {p: list(lines) for p, lines in state.items()})]
    for step in range(24):
        if step % 6 == 5:  # a topic from an earlier commit, merged back
            start, topic_state = rnd.choice(snapshots)
            b.branch("topic", start)
            for n in range(2):
                p = rnd.choice(_PATHS)
                topic_state = {**topic_state, p: _edited(rnd, topic_state[p], f"t{step}.{n}")}
                b.commit(f"topic {step}.{n}", {p: _text(p, topic_state[p])}, branch="topic")
            merged = {}
            for p in _PATHS:
                choice = rnd.random()
                if choice < 0.4:
                    merged[p] = state[p]
                elif choice < 0.7:
                    merged[p] = topic_state[p]
                else:  # a merge with lines of its own
                    merged[p] = _edited(rnd, rnd.choice([state[p], topic_state[p]]), f"m{step}")
            b.commit(
                f"merge {step}",
                {p: _text(p, lines) for p, lines in merged.items()},
                parents=[b.tip("master"), b.tip("topic")],
            )
            state = merged
        else:
            p = rnd.choice(_PATHS)
            state = {**state, p: _edited(rnd, state[p], f"s{step}")}
            b.commit(f"step {step}", {p: _text(p, state[p])})
        snapshots.append((b.tip("master"), {p: list(lines) for p, lines in state.items()}))
    return b, fork


def test_in_process_blame_equals_gits(tmp_path: Path) -> None:
    for seed in range(4):
        b, fork = _history(tmp_path / f"r{seed}", seed)
        plain = Repo(b.path)  # no remembered range: git walks it
        tip = plain.upstream("master").tip
        read = Repo(b.path)
        read.search.remember_history(tip)
        git_blames: list[tuple[str, ...]] = []

        def counting(*args: str, _run=read.run_git, _seen=git_blames, **kw):  # type: ignore[no-untyped-def]
            if args[0] == "blame":
                _seen.append(args)
            return _run(*args, **kw)

        read.run_git = counting  # type: ignore[method-assign]
        rnd = random.Random(seed)
        compared = 0
        for commit in plain.walk(tip, [fork]):
            files = b.files(commit)
            for path in _PATHS:
                count = len(files[path].splitlines())
                first = rnd.randint(1, count)
                last = rnd.randint(first, count)
                for ranges in ([(1, count)], [(first, last)], [(1, 2), (first, last)]):
                    assert plain.search.blame(path, commit, ranges, fork) == read.search.blame(
                        path, commit, ranges, fork
                    ), (seed, commit, path, ranges)
                    compared += 1
        assert compared > 200
        assert git_blames == []  # every answer was the in-process one


def test_a_diff_cuts_lines_into_passed_and_kept() -> None:
    # old: a b c d e ; new: a X c d Y Z e (b replaced by X, Y Z inserted after d)
    hunks = ((2, 1, 2, 1), (4, 0, 5, 2))
    passed, cache_dir = _split([(1, 7)], hunks)
    assert passed == [(1, 1), (3, 4), (5, 5)]
    assert cache_dir == [(2, 2), (5, 6)]
    # a deletion: new a c (b gone) -> c is old line 3
    assert _split([(1, 2)], ((2, 1, 1, 0),)) == ([(1, 1), (3, 3)], [])
    # an insertion at the top
    assert _split([(1, 3)], ((0, 0, 1, 2),)) == ([(1, 1)], [(1, 2)])


def test_the_history_since_a_fork_is_kept_for_a_scans_other_processes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a directory to keep it in, the pass over fork..tip is read once and loaded by
    the next process (the blame the same as git's, its progress line not told of a read);
    a pass from a later tip replaces it."""
    b, fork = _history(tmp_path / "r", 0)
    cache_dir = tmp_path / "ranges"
    tip = Repo(b.path).upstream("master").tip
    count = len(b.files(tip)["plain.c"].splitlines())
    expected = Repo(b.path).search.blame("plain.c", tip, [(1, count)], fork)
    told: list[str] = []  # what the progress line is told: reading, only when git reads
    first = Repo(b.path)
    first.search.remember_history(tip, cache_dir=cache_dir, reading=lambda: told.append("first"))
    assert first.search.blame("plain.c", tip, [(1, count)], fork) == expected
    assert [p.name for p in cache_dir.glob("*.range")] == [f"{fork}-{tip}.range"]

    second = Repo(b.path)
    second.search.remember_history(tip, cache_dir=cache_dir, reading=lambda: told.append("second"))

    def unread(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kept pass is loaded, not read again")

    monkeypatch.setattr(second.streams, "range_changes", unread)
    assert second.search.blame("plain.c", tip, [(1, count)], fork) == expected
    assert told == ["first"]

    later = b.commit("later", {"plain.c": b.files(tip)["plain.c"] + "more\n"})
    third = Repo(b.path)
    third.search.remember_history(later, cache_dir=cache_dir)
    assert third.search.blame("plain.c", later, [(1, count)], fork) == expected
    assert [p.name for p in cache_dir.glob("*.range")] == [f"{fork}-{later}.range"]


def test_the_diffs_a_blame_made_are_kept_where_a_scan_keeps_them(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the index to keep them in, a blame's diffs of blob pairs are kept there: a
    second process (a scan's other worker, a sibling branch's scan, the next night's) gives
    git's answer without diffing again, and a kept value that cannot be read is diffed."""
    import pygit2

    from backportr.index import CommitIndex

    b, fork = _history(tmp_path / "r", 3)
    tip = Repo(b.path).upstream("master").tip
    expected = {
        p: Repo(b.path).search.blame(p, tip, [(1, len(b.files(tip)[p].splitlines()))], fork)
        for p in _PATHS
    }

    def blamed(repo: Repo) -> dict[str, dict[Oid, int]]:
        index = CommitIndex(repo, tmp_path / "ix.sqlite")
        repo.search.remember_history(tip)
        repo.search.cache_blame_diffs((index.cache.blame_hunks, index.cache.cache_blame_hunks))
        return {
            p: repo.search.blame(p, tip, [(1, len(b.files(tip)[p].splitlines()))], fork)
            for p in _PATHS
        }

    assert blamed(Repo(b.path)) == expected
    real = gitblame._diff
    diffed: list[object] = []

    def counting(old: pygit2.Blob, new: pygit2.Blob) -> tuple[tuple[int, int, int, int], ...]:
        diffed.append((old.id, new.id))
        return real(old, new)

    monkeypatch.setattr(gitblame, "_diff", counting)
    assert blamed(Repo(b.path)) == expected
    assert diffed == []  # every pair came from the index
    index = CommitIndex(Repo(b.path), tmp_path / "ix.sqlite")
    index.db.execute("UPDATE results SET value = 'not numbers'")
    index.db.commit()
    assert blamed(Repo(b.path)) == expected
    assert diffed  # what could not be read was diffed again


def test_a_resolve_after_a_scan_blames_from_what_the_scan_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a scan keeps under the index directory (the history since the fork, the
    blames' diffs) serves a later `resolve` of a conflicting commit: its blames need no
    `git blame` process (up to a second each on a large file's history), and it answers as
    a resolve without them does. Nothing is read there that no scan kept."""
    from backportr.scan import prefetch as readahead
    from tests.conftest import backportr
    from tests.resolve_scenarios import BRANCH, conflict_resolved_by_one

    s = conflict_resolved_by_one(tmp_path / "repo")
    asked: list[str] = []
    run_git_bytes = Repo.run_git_bytes

    def recorded(self: Repo, *args: str, **kwargs: object) -> bytes:
        asked.append(args[0])
        return run_git_bytes(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Repo, "run_git_bytes", recorded)

    def resolve(index: Path) -> str:
        args = ["resolve", s.ids["target"], "-b", BRANCH, "--repo", str(s.path)]
        proc = backportr(*args, "--index", str(index), "--format", "json")
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    fresh = resolve(tmp_path / "fresh" / "index.sqlite")
    assert "blame" in asked  # the conflict search blames the target's lines
    assert not (tmp_path / "fresh" / "ranges").exists()  # nothing kept without a scan
    cache_dir = tmp_path / "kept" / "index.sqlite"
    assert backportr("index", "--repo", str(s.path), "--index", str(cache_dir)).returncode == 0
    assert readahead.main([str(s.path), str(cache_dir), "", BRANCH]) == 0  # as a scan keeps it
    asked.clear()
    assert resolve(cache_dir) == fresh
    assert "blame" not in asked
    # a mail bot checks mail after mail in one workspace: asking again keeps what was loaded
    repo = Repo(s.path)
    upstream = repo.upstream().tip
    fork = repo.merge_base(repo.branch(BRANCH).tip, upstream)
    repo.search.use_cached_history(upstream, cache_dir.parent / "ranges")
    loaded = repo.search.range_history(fork, upstream)
    assert loaded is not None
    repo.search.use_cached_history(upstream, cache_dir.parent / "ranges")
    assert repo.search.range_history(fork, upstream) is loaded
