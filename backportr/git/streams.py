"""Streaming passes over history: `git log` records for the index (a million commits) and `git log
-p | git patch-id` for the patch-ids of a branch or of given commits.

Part of the git layer: `Repo.streams`, a collaborator of `Repo`, each pass one streaming process
(or pipeline), read ahead by a thread so git never waits while Python parses.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from backportr.errors import MissingObjectError
from backportr.git.log_records import LogRecord, log_record
from backportr.git.proc import GitAccess, GitHandle, git_env, patch_id_pipeline
from backportr.git.range_history import Changes, parse_changes
from backportr.git.walk import LOG_FORMAT, Walk, log_process, walk_all, walk_step
from backportr.infra.process import started, usable_cores
from backportr.model import Oid, oids
from backportr.text.patch_id import UNSURE, patch_id

PIPELINES = min(2, usable_cores())  # git pipelines (or probes) a pass runs at once
_PART_FLOOR = 100  # commits a patch-id pipeline is given at least (each starts two processes)
_UNREADABLE_MOST = 16  # commits of one patch-id part without a readable diff before it gives up
_SERVED_MOST = 256  # commits a patch-id question may have for the long-running diff process
_SERVED_BYTES = 32 << 20  # a larger diff of one commit is left to git's own patch-id
_SERVED_SECONDS = 20.0  # a diff process is retired at this age: no git process runs for long
HEAVY_BYTES = 4 << 20
"""A commit whose diff reads more than this (its files' blobs before and after, summed) is
heavy (`Streams.heavy`): merged or updated translation catalogs, regenerated files (util-linux
`stable/v2.41`: 15 of 309 commits, whose diffs were a second of its branch's patch-id pass;
code branches hold one or two in a thousand)."""
_WEIGHED_PER_PROCESS = 5_000  # commits whose blobs one `git log --no-walk --raw` lists
_NO_BLOB = "0" * 40
# The diff options every patch-id here is computed with, stated so that no configuration
# (diff.context, diff.noprefix, diff.algorithm) makes two of them differ.
_DIFF = [
    "-p",
    "--no-renames",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "-U3",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--format=commit %H",
]
# SHA-1 ids only: text/patch_id.py hashes as git does in a SHA-1 repository; in another, every
# commit is left to git's own patch-id.
_COMMIT_LINE = re.compile(rb"commit ([0-9a-f]{40})\n")


class Streams(GitAccess):
    """History as git streams it (`repo.streams`): log passes, patch-id pipelines."""

    def __init__(self, repo: GitHandle) -> None:
        super().__init__(repo)
        self.unreadable: list[Oid] = []  # commits whose diff git could not read
        self.diff_server = DiffServer(self.path)  # a few patch-ids at a time, started when asked

    def log(self, include: Oid, exclude: list[Oid] | tuple[Oid, ...] = ()) -> Iterator[LogRecord]:
        """One streaming `git log` pass (for volume: a million commits), newest first.

        Default (date) order: --topo-order would make git walk everything before the first
        record; ordering that matters is done on the dependency graph itself."""
        for raw in self.log_raw(include, exclude):
            yield log_record(raw)

    def log_raw(
        self,
        include: Oid | Sequence[Oid],
        exclude: list[Oid] | tuple[Oid, ...] = (),
        *,
        per_process: int | None = None,
    ) -> Iterator[bytes]:
        """`log`'s records unsplit (`git.log_records.log_record` splits one), for a bulk reader;
        of one tip or of several (their histories in one walk).

        With `per_process`, no git process prints more than that many records: the next one
        starts from the walk's frontier (the parents seen and not yet printed; everything
        left is reachable from them), so a million-commit history is read by several
        bounded processes instead of one that runs for minutes. A commit printed twice
        (possible only where commit dates go backwards) is given once."""
        tips = [include] if isinstance(include, str) else list(include)
        yield from self._bounded_log(tips, exclude, per_process, ["-z", f"--format={LOG_FORMAT}"])

    def range_changes(
        self, oldest: Oid, tip: Oid, *, per_process: int = 50_000
    ) -> Iterator[tuple[Oid, tuple[Oid, ...], int, Changes]]:
        """The commits of oldest..tip with their parents, commit dates and what each changed
        against its first parent, path by path with the blob left (`git log --raw
        --no-abbrev --no-renames --diff-merges=first-parent`, bounded processes)."""
        args = ["--format=%x00%H%x1f%P%x1f%ct", "--raw", "--no-abbrev", "--no-renames"]
        args.append("--diff-merges=first-parent")
        for raw in self._bounded_log([tip], [oldest], per_process, args):
            record = parse_changes(raw)
            if record is not None:
                yield record

    def _bounded_log(
        self,
        include: list[Oid],
        exclude: Sequence[Oid],
        per_process: int | None,
        args: list[str],
    ) -> Iterator[bytes]:
        """Records (`%H%x1f%P%x1f...`, NUL-separated) of `git log` processes printing at
        most `per_process` each, the next started from the walk's frontier."""
        if per_process is None:
            yield from log_process(self.path, include, exclude, None, args)
            return
        yield from self.walk_all(Walk(list(include), exclude), per_process, args)

    def walk_all(
        self, walk: Walk, per_process: int, args: list[str] | None = None
    ) -> Iterator[bytes]:
        """The records of the rest of the walk, by bounded processes (`git.walk.walk_all`)."""
        return walk_all(self.path, walk, per_process, args)

    def walk_step(self, walk: Walk, limit: int, args: list[str] | None = None) -> Iterator[bytes]:
        """The records of the walk's next git process (`git.walk.walk_step`)."""
        return walk_step(self.path, walk, limit, args)

    def patch_ids(
        self,
        include: Oid | Sequence[Oid],
        exclude: Sequence[Oid] = (),
        *,
        per_process: int | None = None,
        pipelines: int = 1,
    ) -> Iterator[tuple[Oid, str]]:
        """(commit, patch-id) for the non-merge commits reachable from `include` (one tip or
        several) and not from `exclude`: one streaming `git log -p | git patch-id --stable`
        pass, far faster than a diff per commit; with `per_process`, the commits are listed
        first and shared among pipelines of at most that many each (none runs for minutes),
        `pipelines` of them at once (the diffs are git's work: of large files, seconds)."""
        tips = [include] if isinstance(include, str) else list(include)
        if per_process is not None:
            commits = self.commits_between(tips, exclude)
            yield from self.patch_ids_in_parts(commits, per_process, pipelines)
            return
        log_args = [*self._patch_log(), *tips, *[f"^{e}" for e in exclude], "--"]
        yield from patch_id_pipeline(log_args, None, self.path)

    def patch_ids_in_parts(
        self, commits: list[Oid], per_process: int, pipelines: int
    ) -> Iterator[tuple[Oid, str]]:
        """(commit, patch-id) of these commits, shared among pipelines of at most
        `per_process` commits each, `pipelines` of them at once."""
        # four parts a pipeline: they end together, and none runs for long where
        # every diff is of a 40,000-line file (OVN's branch patch-ids: 24 s -> about 6)
        size = min(per_process, max(_PART_FLOOR, -(-len(commits) // (4 * pipelines))))
        parts = [commits[i : i + size] for i in range(0, len(commits), size)]
        with ThreadPoolExecutor(pipelines, thread_name_prefix="patch-ids") as pool:
            for found in pool.map(self._piped_patch_ids, parts):
                yield from found

    def messages_between(
        self, tips: Sequence[Oid], exclude: Sequence[Oid]
    ) -> list[tuple[Oid, str]]:
        """(commit, message) of the non-merge commits reachable from the tips and not from
        `exclude`, newest first (`commits_between`'s commits), as `log` reads them."""
        args = ["-z", f"--format={LOG_FORMAT}", "--no-merges"]
        records = map(log_record, self._bounded_log(list(tips), exclude, None, args))
        return [(record.oid, record.message) for record in records]

    def _piped_patch_ids(self, commits: list[Oid]) -> list[tuple[Oid, str]]:
        """`readable_patch_ids` by pipelines only: a bulk pass's parts run side by side,
        where the diff process would take them one at a time."""
        return self.readable_patch_ids(commits, served=False)

    def readable_patch_ids(
        self, commits: list[Oid], *, served: bool = True
    ) -> list[tuple[Oid, str]]:
        """The patch-ids of `commits` that git can compute. A commit whose diff needs an
        object the repository lacks (a damaged copy, a partial clone offline) gets none and
        is listed in `unreadable`; the others are found by halving what was left (a few
        more pipelines each). More than `_UNREADABLE_MOST` such commits among `commits`:
        the error stands (a copy that lacks most of its blobs is not worth the pipelines)."""
        lost: list[Oid] = []
        found = self._readable(commits, lost, served)
        self.unreadable += lost
        return found

    def _readable(self, commits: list[Oid], lost: list[Oid], served: bool) -> list[tuple[Oid, str]]:
        found: list[tuple[Oid, str]] = []
        try:
            found.extend(self.patch_ids_of(commits, served=served))
            return found
        except MissingObjectError as error:
            if len(commits) == 1:
                lost.append(commits[0])
                if len(lost) > _UNREADABLE_MOST:
                    raise MissingObjectError(
                        f"{error}; more than {_UNREADABLE_MOST} commits cannot be diffed: "
                        "fetch the repository's missing objects"
                    ) from None
                return []
        # In the order given: what came out is done, and so is what came before it; except
        # the last one out, which may be the commit git died in (patch-id then hashed half
        # a diff): it is asked again.
        position = {c: n for n, c in enumerate(commits)}
        found, last = found[:-1], found[-1:]
        rest = commits[max((position[c] for c, _ in last), default=0) :]
        half = max(1, len(rest) // 2)
        for part in (rest[:half], rest[half:]):
            if part:
                found += self._readable(part, lost, served)
        return found

    def heavy(self, commits: Sequence[Oid]) -> set[Oid]:
        """Those of `commits` whose diff against their first parent reads more than
        `HEAVY_BYTES` of blobs: one `git log --no-walk --raw` listing of their blobs and one `git
        cat-file --batch-check` of their sizes, no diff (tens of milliseconds for hundreds of
        commits, where the diffs of util-linux's merged translation catalogs, 30-55 MB a
        commit, are most of two seconds of `git log -p`). A blob git cannot find (a
        submodule's commit) weighs nothing: the diff finds what it lacks."""
        blobs: dict[Oid, list[str]] = {}
        for start in range(0, len(commits), _WEIGHED_PER_PROCESS):
            part = commits[start : start + _WEIGHED_PER_PROCESS]
            out = self.repo.run_git(
                "log", "--no-walk=unsorted", "--stdin", "--format=%x00%H", "--raw",
                "--no-abbrev", "--no-renames", "--diff-merges=first-parent",
                input="".join(f"{oid}\n" for oid in part).encode("ascii"),
            )  # fmt: skip
            for record in out.split("\0"):
                head, _, body = record.lstrip("\n").partition("\n")
                if len(head) != 40:
                    continue
                listed = blobs.setdefault(Oid(head), [])
                for line in body.splitlines():
                    fields = line.partition("\t")[0].split(" ")
                    if line.startswith(":") and len(fields) == 5:
                        listed += [b for b in fields[2:4] if b != _NO_BLOB]
        wanted = sorted({b for listed in blobs.values() for b in listed})
        if not wanted:
            return set()
        sizes: dict[str, int] = {}
        query = "".join(f"{b}\n" for b in wanted).encode("ascii")
        out = self.repo.run_git(
            "cat-file", "--batch-check=%(objectname) %(objectsize)", input=query
        )
        for line in out.splitlines():
            name, _, size = line.partition(" ")
            if size.isdigit():
                sizes[name] = int(size)
        return {
            c for c, listed in blobs.items() if sum(sizes.get(b, 0) for b in listed) > HEAVY_BYTES
        }

    def commits_between(self, tips: Sequence[Oid], exclude: Sequence[Oid]) -> list[Oid]:
        """The non-merge commits reachable from the tips and not from `exclude`."""
        listed = "".join(f"{t}\n" for t in tips) + "".join(f"^{e}\n" for e in exclude)
        return oids(
            self.repo.run_git("rev-list", "--no-merges", "--stdin", input=listed.encode("ascii"))
        )

    def patch_ids_of(
        self, commits: list[Oid], *, env: dict[str, str] | None = None, served: bool = True
    ) -> Iterator[tuple[Oid, str]]:
        """(commit, patch-id) for the given commits: one `git log -p --no-walk --stdin |
        git patch-id --stable` pipeline for all of them, the ids fed from a thread (`env`:
        what lets git see objects outside the repository). A few commits are asked of the
        long-running diff process instead, unless `served` is false (two processes started
        per question cost more than the question at kernel scale); what it cannot answer
        goes to the pipeline."""
        if not commits:
            return
        if served and env is None and len(commits) <= _SERVED_MOST:
            answers = self.diff_server.patch_ids(commits)
            if answers is not None:
                yield from ((c, v) for c in commits if (v := answers.get(c)) and v != UNSURE)
                commits = [c for c in commits if answers.get(c) == UNSURE]
                if not commits:
                    return
        log_args = [*self._patch_log(), "--no-walk=unsorted", "--stdin"]
        yield from patch_id_pipeline(
            log_args, "".join(c + "\n" for c in commits).encode(), self.path, env
        )

    def _patch_log(self) -> list[str]:
        """`git log -p` as git patch-id reads it: one `commit <id>` line, then the diff."""
        return ["git", "--git-dir", str(self.path), "log", *_DIFF]


class DiffServer:
    """One long-running `git diff-tree --stdin -p` for the patch-ids of a few commits at a
    time, computed in-process (`text/patch_id.py`, git's own algorithm). Each question is the
    commits' ids and then a line that is no object name, which diff-tree echoes after
    their diffs: where the answer ends. A process that fails (an object it cannot read)
    answers None and is started again for the next question; one inherited by a forked
    process is left to its parent; none lives longer than `_SERVED_SECONDS` (or, busy,
    than the question it is answering then)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._process: subprocess.Popen[bytes] | None = None
        self._asking = threading.Lock()  # one question at a time (the index asks from threads)
        self._owner = 0
        self._born = 0.0
        self._end = b"#backportr-end-" + secrets.token_hex(8).encode("ascii") + b"\n"
        self._command = [
            "git",
            "--git-dir",
            str(path),
            "diff-tree",
            "--no-textconv",
            "--no-ext-diff",
            "--stdin",
            "--root",
            "--always",
        ]

    def patch_ids(self, commits: list[Oid]) -> dict[Oid, str | None] | None:
        """Each commit's patch-id (None: no diff, a merge; `UNSURE`: left to git, which
        says why it printed nothing), or None when the process failed."""
        with self._asking:
            answers = self._ask(commits)
            if time.monotonic() - self._born > _SERVED_SECONDS:
                self.close()  # retired after a question that outlived the timer
            return answers

    def _ask(self, commits: list[Oid]) -> dict[Oid, str | None] | None:
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        out: dict[Oid, str | None] = dict.fromkeys(commits, UNSURE)  # not printed: git's error
        try:
            process.stdin.write("".join(f"{c}\n" for c in commits).encode("ascii") + self._end)
            process.stdin.flush()
            commit: Oid | None = None
            lines: list[bytes] = []
            size = 0
            for line in iter(process.stdout.readline, b""):
                start = _COMMIT_LINE.fullmatch(line)
                if (start is not None or line == self._end) and commit is not None:
                    out[commit] = patch_id(lines) if size <= _SERVED_BYTES else UNSURE
                if line == self._end:
                    break
                if start is not None:
                    commit, lines, size = Oid(start[1].decode("ascii")), [], 0
                    out[commit] = None
                elif commit is not None and (size := size + len(line)) <= _SERVED_BYTES:
                    lines.append(line)
            else:
                raise OSError("git diff-tree ended")
        except (OSError, ValueError):
            self.close()
            return None
        return out

    def _started(self) -> subprocess.Popen[bytes]:
        process = self._process
        # No age check here: an old process was retired by its timer or after its question.
        if process is None or self._owner != os.getpid() or process.poll() is not None:
            if process is not None and self._owner == os.getpid():
                self.close()
            process = self._process = started(
                [*self._command, *_DIFF],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=git_env(answers_each_line=True),
            )
            self._owner, self._born = os.getpid(), time.monotonic()
            # An idle process is retired too, by a timer, unless a question is under way
            # (which retires it when the next one comes).
            timer = threading.Timer(_SERVED_SECONDS, self._retire, (process,))
            timer.daemon = True
            timer.start()
        return process

    def _retire(self, process: subprocess.Popen[bytes]) -> None:
        if self._asking.acquire(blocking=False):
            try:
                if self._process is process:
                    self.close()
            finally:
                self._asking.release()

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None or self._owner != os.getpid():
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(OSError):
            process.kill()
        process.wait()
