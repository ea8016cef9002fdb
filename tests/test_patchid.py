"""Patch-ids computed in-process from a long-running `git diff-tree --stdin -p` equal
`git log -p | git patch-id --stable`'s, and the cases git's versions read differently are
left to git."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from backportr.git import proc as gitproc
from backportr.git import streams as gitstream
from backportr.git.builder import RepoBuilder
from backportr.git.repo import Repo
from backportr.model import Oid, oids
from backportr.text.patch_id import UNSURE, patch_id
from tests.conftest import git


def _gits(repo: Path, commits: list[Oid]) -> dict[str, str]:
    """git's own answer, with its default options."""
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "-p", "--format=commit %H", "--no-walk=unsorted",
         "--no-renames", "--stdin"],
        input="".join(f"{c}\n" for c in commits).encode(),
        capture_output=True,
        check=True,
    ).stdout  # fmt: skip
    ids = subprocess.run(
        ["git", "patch-id", "--stable"], input=log, capture_output=True, check=True
    ).stdout.decode()
    return {commit: value for value, commit in (line.split() for line in ids.splitlines())}


def _history(path: Path) -> tuple[RepoBuilder, list[Oid]]:
    """Commits of every shape a patch-id meets: several files, whitespace-only changes,
    form feeds and vertical tabs (which git does not count as white space), carriage
    returns, no final newline, a file of one line (a hunk header without counts), new and
    deleted files, an empty file, a mode change alone and with an edit, a rename, a binary
    file, a path with spaces, an empty commit, a merge, and random edits."""
    rnd = random.Random(7)
    b = RepoBuilder(path, bare=False)
    files = {f"src/f{n}.c": [f"line {n}.{i}" for i in range(40)] for n in range(3)}
    root = b.commit("root", {p: "\n".join(t) + "\n" for p, t in files.items()})
    commits = [root]

    def edit(message: str, change: dict[str, str | None]) -> None:
        commits.append(b.commit(message, change))

    text = "\n".join(files["src/f0.c"]) + "\n"
    edit("whitespace only", {"src/f0.c": text.replace("line 0.3", "line  0.3\t")})
    edit("form feed and vertical tab", {"src/f1.c": "a\f\nb\v c\n\f\n" + text})
    edit("carriage returns", {"src/f2.c": text.replace("\n", "\r\n", 5)})
    edit("no final newline", {"src/f0.c": text.rstrip("\n")})
    edit("one line", {"one.c": "only\n"})
    edit("one line changed", {"one.c": "changed\n"})
    edit("an empty file", {"empty.c": ""})
    edit("deleted", {"empty.c": None, "one.c": None})
    edit("binary", {"blob.bin": "\0\1\2binary\n"})
    edit("a path with spaces", {"dir name/file name.c": "x\ny\n"})
    edit("renamed", {"src/f2.c": None, "src/moved.c": text.replace("\n", "\r\n", 5)})
    for n in range(25):
        name = rnd.choice(sorted(files))
        lines = files[name]
        for _ in range(rnd.randint(1, 4)):
            at = rnd.randrange(len(lines))
            if rnd.random() < 0.3:
                del lines[at]
            else:
                lines.insert(at, f"edit {n} {rnd.random():.3f}")
        other = rnd.choice(sorted(set(files) - {name}))
        files[other][rnd.randrange(len(files[other]))] = f"also {n}"
        edit(f"random {n}", {p: "\n".join(files[p]) + "\n" for p in (name, other)})
    b.check_out()
    work = Path(b.path)
    (work / "run.sh").write_text("#!/bin/sh\n")
    git(work, "add", "run.sh")
    git(work, "commit", "-qm", "script")
    git(work, "update-index", "--chmod=+x", "run.sh")
    git(work, "commit", "-qm", "mode only")
    (work / "run.sh").write_text("#!/bin/sh\nexit 0\n")
    git(work, "add", "run.sh")
    git(work, "update-index", "--chmod=-x", "run.sh")
    git(work, "commit", "-qm", "mode and edit")
    git(work, "commit", "-q", "--allow-empty", "-m", "empty")
    git(work, "checkout", "-qb", "side", "HEAD~2")
    (work / "side.c").write_text("side\n")
    git(work, "add", "side.c")
    git(work, "commit", "-qm", "side")
    git(work, "checkout", "-q", "master")
    git(work, "merge", "-q", "--no-edit", "side")
    commits += oids(git(work, "rev-list", "--reverse", f"{commits[-1]}..HEAD"))
    return b, commits


def test_served_patch_ids_equal_gits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b, commits = _history(tmp_path / "r")
    expected = _gits(Path(b.path), commits)
    piped: list[list[str]] = []
    real = gitstream.patch_id_pipeline  # type: ignore[attr-defined]

    def pipeline(args: Any, feed: bytes | None, *more: Any) -> Any:
        piped.append((feed or b"").decode().split())
        return real(args, feed, *more)

    monkeypatch.setattr(gitstream, "patch_id_pipeline", pipeline)
    repo = Repo(b.path)
    served: dict[str, str] = {}
    for start in range(0, len(commits), 5):  # a few at a time, as the conflict search asks
        served.update(repo.streams.patch_ids_of(commits[start : start + 5]))
    assert served == expected
    # Left to git: exactly the commits with a binary diff or a hunk header without counts.
    left = {c for part in piped for c in part}
    shown = {c: git(Path(b.path), "show", "--format=", c) for c in commits}
    assert left == {
        c
        for c, text in shown.items()
        if "Binary files" in text
        or any(h.count(",") < 2 for h in re.findall(r"^@@ [^@]* @@", text, re.MULTILINE))
    }
    assert len(left) < len(commits) // 4
    # The answers of a large question (one pipeline) are the same.
    assert dict(repo.streams.patch_ids_of(commits * 30)) == expected
    repo.close()


def test_the_diff_process_started_again_after_a_failure(tmp_path: Path) -> None:
    """A commit git cannot diff is left to the pipeline, which says why; a process that
    ended answers nothing, and the next question starts a new one."""
    b, commits = _history(tmp_path / "r")
    repo = Repo(b.path)
    server = repo.streams.diff_server
    assert server.patch_ids([Oid("f" * 40), commits[1]]) == {
        "f" * 40: UNSURE,
        commits[1]: _gits(Path(b.path), commits[1:2])[commits[1]],
    }
    process = server._process
    assert process is not None
    process.kill()
    process.wait()
    assert server.patch_ids(commits[1:3]) == {
        c: v for c, v in _gits(Path(b.path), commits[1:3]).items()
    }
    repo.close()


def test_patch_id_of_lines() -> None:
    """git's state machine: files summed (their order does not matter), white space (not
    form feeds) and hunk positions left out; a binary diff or a count-less hunk header is
    `UNSURE`; no diff, no patch-id."""
    one = [b"diff --git a/x b/x\n", b"index 1..2 100644\n", b"--- a/x\n", b"+++ b/x\n",
           b"@@ -1,2 +1,2 @@\n", b" a\n", b"-b\n", b"+c\n"]  # fmt: skip
    two = [b"diff --git a/y b/y\n", b"--- a/y\n", b"+++ b/y\n", b"@@ -5,1 +5,1 @@ f\n",
           b"-\t y\n", b"+z\n"]  # fmt: skip
    assert patch_id(one + two) == patch_id(two + one) != patch_id(one)
    moved = [line.replace(b"-1,2 +1,2", b"-9,2 +9,2") for line in one]
    assert patch_id(moved) == patch_id(one)
    assert patch_id([*one[:-1], b"+  c \n"]) == patch_id(one)
    assert patch_id([*one[:-1], b"+c\f\n"]) != patch_id(one)
    assert patch_id([*one[:4], b"@@ -1 +1 @@\n", b"-b\n", b"+c\n"]) == UNSURE
    assert patch_id([*one[:2], b"Binary files a/x and b/x differ\n"]) == UNSURE
    assert patch_id([b"\n"]) is None


def test_questions_from_two_threads(tmp_path: Path) -> None:
    """The index asks for a branch's patch-ids from two threads at once: each question
    gets its own answer (one process, one question at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    b, commits = _history(tmp_path / "r")
    expected = _gits(Path(b.path), commits)
    repo = Repo(b.path)
    parts = [commits[n:] + commits[:n] for n in range(len(commits))] * 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = [
            pool.submit(lambda part: dict(repo.streams.patch_ids_of(part)), p) for p in parts
        ]
        for part, answer in zip(parts, answers, strict=True):
            assert answer.result(timeout=60) == {c: expected[c] for c in part if c in expected}
    repo.close()


def test_a_bulk_pass_runs_its_parts_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A branch's patch-ids in bulk (the index) go to pipelines that run at once, never to
    the diff process, which would take the parts one at a time."""
    b, commits = _history(tmp_path / "r")
    asked: list[list[str]] = []
    monkeypatch.setattr(gitstream.DiffServer, "patch_ids", lambda self, c: asked.append(c))
    repo = Repo(b.path)
    found = dict(repo.streams.patch_ids(commits[-1], [commits[0]], per_process=5000, pipelines=2))
    assert found == {c: v for c, v in _gits(Path(b.path), commits[1:]).items()}
    assert asked == []
    repo.close()


def test_a_diff_process_is_retired_when_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git process runs for long: an idle diff process is retired by a timer, a busy
    one after its question, and the next question starts a new one."""
    import time

    monkeypatch.setattr(gitstream, "_SERVED_SECONDS", 0.2)
    b, commits = _history(tmp_path / "r")
    expected = _gits(Path(b.path), commits[1:4])
    repo = Repo(b.path)
    server = repo.streams.diff_server
    assert server.patch_ids(commits[1:4]) == expected
    first = server._process
    assert first is not None
    time.sleep(1.0)
    assert server._process is None and first.poll() is not None  # retired while idle
    assert server.patch_ids(commits[1:4]) == expected
    assert server._process is not None and server._process is not first
    repo.close()


def test_git_is_told_when_to_flush_and_how_to_allocate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process read to its end is told not to flush per commit, one asked a question at a
    time is told to flush, whatever the user set; the user's allocator settings win over
    backportr's. The served answers stay git's with the user's GIT_FLUSH=0."""
    monkeypatch.setenv("GIT_FLUSH", "1")
    monkeypatch.setenv("MALLOC_TOP_PAD_", "4096")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    env = gitproc.git_env()
    assert env["GIT_FLUSH"] == "0"
    assert env["MALLOC_TOP_PAD_"] == "4096"
    assert env["MALLOC_MMAP_THRESHOLD_"] == str(64 << 20)
    monkeypatch.setenv("GIT_FLUSH", "0")
    assert gitproc.git_env(answers_each_line=True)["GIT_FLUSH"] == "1"
    b, commits = _history(tmp_path / "r")
    repo = Repo(b.path)
    assert dict(repo.streams.patch_ids_of(commits[:5])) == _gits(Path(b.path), commits[:5])
    repo.close()
