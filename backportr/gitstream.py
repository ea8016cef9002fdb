"""Streaming passes over history: `git log` records for the index (a million commits) and
`git log -p | git patch-id` for the patch-ids of a branch or of given commits.

Part of the git layer: a mixin of `Repo`, each pass one streaming process (or pipeline),
read ahead by a thread so git never waits while Python parses.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

from backportr.errors import BackportrError
from backportr.gitlog import LOG_FORMAT, LogRecord, log_record
from backportr.gitproc import git_env, patch_id_pipeline, read_ahead
from backportr.model import Oid


class Streams:
    """What `Repo` offers to stream history."""

    path: Path

    def log(self, include: Oid, exclude: list[Oid] | tuple[Oid, ...] = ()) -> Iterator[LogRecord]:
        """One streaming `git log` pass (for volume: a million commits), newest first.

        Default (date) order: --topo-order would make git walk everything before the first
        record; ordering that matters is done on the dependency graph itself."""
        for raw in self.log_raw(include, exclude):
            yield log_record(raw)

    def log_raw(self, include: Oid, exclude: list[Oid] | tuple[Oid, ...] = ()) -> Iterator[bytes]:
        """`log`'s records unsplit (`gitlog.log_record` splits one): for a bulk reader that
        splits them in another process."""
        args = ["log", "-z", f"--format={LOG_FORMAT}", include, *[f"^{e}" for e in exclude], "--"]
        with subprocess.Popen(
            ["git", "--git-dir", str(self.path), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_env(),
            pipesize=1 << 20,
        ) as proc:
            assert proc.stdout is not None
            pending = b""
            with contextlib.closing(read_ahead(proc.stdout)) as chunks:
                for chunk in chunks:
                    pending += chunk
                    records = pending.split(b"\0")
                    pending = records.pop()
                    yield from records
            if pending.strip():
                yield pending
            if proc.wait() != 0:
                raise BackportrError(f"git log failed in {self.path}")

    def patch_ids(
        self, include: Oid | Sequence[Oid], exclude: Sequence[Oid] = ()
    ) -> Iterator[tuple[Oid, str]]:
        """(commit, patch-id) for the non-merge commits reachable from `include` (one tip or
        several) and not from `exclude`: one streaming `git log -p | git patch-id --stable`
        pass, far faster than a diff per commit."""
        tips = [include] if isinstance(include, str) else list(include)
        log_args = [*self._patch_log(), *tips, *[f"^{e}" for e in exclude], "--"]
        yield from patch_id_pipeline(log_args, None, self.path)

    def patch_ids_of(self, commits: list[Oid]) -> Iterator[tuple[Oid, str]]:
        """(commit, patch-id) for the given commits: one `git log -p --no-walk --stdin |
        git patch-id --stable` pipeline for all of them, the ids fed from a thread."""
        if not commits:
            return
        log_args = [*self._patch_log(), "--no-walk=unsorted", "--stdin"]
        yield from patch_id_pipeline(
            log_args, "".join(c + "\n" for c in commits).encode(), self.path
        )

    def _patch_log(self) -> list[str]:
        """`git log -p` as git patch-id reads it: one `commit <id>` line, then the diff."""
        return [
            "git",
            "--git-dir",
            str(self.path),
            "log",
            "-p",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            "--format=commit %H",
        ]
