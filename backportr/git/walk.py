"""A long history read by bounded `git log` processes: each prints at most so many records,
the next starts from the walk's frontier.

Part of the git layer (`Streams` reads through it). It imports little, for the index's
reader process (`index/worker.py`), which starts while the indexing process reads: its
imports are on the path of a full build.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from backportr.errors import BackportrError
from backportr.git.proc import (
    feed_in_background,
    git_env,
    missing_object,
    read_ahead,
    stderr_tail,
)
from backportr.infra.process import started

LOG_FORMAT = "%H%x1f%P%x1f%at%x1f%ct%x1f%an%n%ae%n%B"
"""The format of a raw record (`git.log_records.log_record` splits one), the records separated
by NUL (`git log -z`): the fields git writes (ids, times) separated by 0x1f, then the author's
name and address each on a line of its own (a commit header is one line: neither can hold a
newline, while either may hold a 0x1f), then the message."""


class Walk:
    """A history walk read by bounded git processes: where the next one starts (the
    frontier: parents seen and not yet printed; everything left is reachable from them),
    what was printed (a commit printed twice, possible only where commit dates go
    backwards, is given once), and whether anything is left."""

    def __init__(self, starts: list[str], exclude: Sequence[str] = (), *, done: bool = False):
        self.starts = starts
        self.exclude = exclude
        self.seen: set[bytes] = set()
        # A starting point the first process does not reach before its limit stays to be
        # read by the next one.
        self.frontier: set[bytes] = {s.encode("ascii") for s in starts}
        self.done = done


def walk_all(
    git_dir: Path, walk: Walk, per_process: int, args: list[str] | None = None
) -> Iterator[bytes]:
    """The records of the rest of the walk, by bounded processes (`walk_step` each)."""
    while not walk.done:
        yield from walk_step(git_dir, walk, per_process, args)


def walk_step(
    git_dir: Path, walk: Walk, limit: int, args: list[str] | None = None
) -> Iterator[bytes]:
    """The records of the walk's next git process (at most `limit`), `LOG_FORMAT` unless
    told; the walk then knows where the process after it starts, or that it is done."""
    printed = 0
    how = args if args is not None else ["-z", f"--format={LOG_FORMAT}"]
    seen = walk.seen  # what earlier processes printed: git prints a commit once
    oids: list[bytes] = []
    parents: list[bytes] = []
    for raw in log_process(git_dir, walk.starts, walk.exclude, limit, how):
        head = raw.lstrip(b"\n")
        if not head:
            continue
        printed += 1
        oid = head[:40]
        if oid in seen:
            continue
        oids.append(oid)
        parents.append(head[41 : head.index(b"\x1f", 41)])
        yield raw
    # The frontier in bulk, once the process ended: the parents printed and the starting
    # points not yet printed, less everything printed.
    seen.update(oids)
    walk.frontier.update(b" ".join(parents).split())
    walk.frontier -= seen
    walk.starts = sorted(p.decode("ascii") for p in walk.frontier)
    walk.done = printed < limit or not walk.starts


def log_process(
    git_dir: Path, starts: Sequence[str], exclude: Sequence[str], limit: int | None, how: list[str]
) -> Iterator[bytes]:
    """One `git log` process's NUL-separated records (the start points fed on stdin)."""
    args = ["log", *how, "--stdin"]
    if limit is not None:
        args.append(f"--max-count={limit}")
    feed = "".join(f"{s}\n" for s in starts) + "".join(f"^{e}\n" for e in exclude)
    with (
        tempfile.TemporaryFile() as errors,
        started(
            ["git", "--git-dir", str(git_dir), *args, "--"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=git_env(),
            pipesize=1 << 20,
        ) as proc,
    ):
        assert proc.stdin is not None and proc.stdout is not None
        writer = feed_in_background(proc.stdin, feed.encode("ascii"))
        pending = b""
        with contextlib.closing(read_ahead(proc.stdout)) as chunks:
            for chunk in chunks:
                pending += chunk
                records = pending.split(b"\0")
                pending = records.pop()
                yield from records
        if pending.strip():
            yield pending
        writer.join()
        if proc.wait() != 0:
            said = [line for line in stderr_tail(errors) if line.strip()]
            if (missing := missing_object(f"git log in {git_dir}", said)) is not None:
                raise missing
            cause = said[-1].strip() if said else f"exit {proc.returncode}"
            raise BackportrError(f"git log failed in {git_dir}: {cause}")
