"""What an index update does to each branch, decided before the upstream pass starts, and
the background `git log -p | git patch-id` pass that gives a branch's patch-ids."""

from __future__ import annotations

import os
import threading

from backportr.index.schema import IndexedRef
from backportr.model import Oid
from backportr.repo import Ref, Repo

_PATCH_SLICE = 5_000  # branch commits per `git log -p | git patch-id` pipeline
_PIPELINES = max(1, min(2, os.cpu_count() or 1))  # pipelines at once


class PatchIdPass:
    """The `git log -p | git patch-id` pipelines of a branch's new commits, in the
    background (git does the work on the other cores while this one reads the upstream
    history). The commits are listed first and shared among up to `_PIPELINES` pipelines at
    once, none given more than `_PATCH_SLICE`: the diffs are git's work, and a branch whose
    backports touch 40,000-line files keeps one core busy for seconds."""

    def __init__(self, repo: Repo, tips: list[Oid], exclude: list[Oid]) -> None:
        self._patch_ids: list[tuple[Oid, str]] = []
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._patch_ids = list(
                    repo.patch_ids(tips, exclude, per_process=_PATCH_SLICE, pipelines=_PIPELINES)
                )
            except BaseException as error:
                self._error = error

        self._thread = threading.Thread(target=run, name="patch-ids", daemon=True)
        self._thread.start()

    def result(self) -> list[tuple[Oid, str]]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._patch_ids


class BranchPlan:
    """What an update does to one branch, decided before the upstream pass starts."""

    def __init__(
        self,
        branch: Ref,
        stored: IndexedRef | None,
        fork: Oid | None,
        mode: str,
        exclude: list[Oid],
    ) -> None:
        self.branch = branch
        self.stored = stored
        self.fork = fork
        self.mode = mode  # noop | upstream-only | incremental | rewind | full
        self.exclude = exclude
        self.pass_: PatchIdPass | None = None  # may be shared with other branches

    def patch_ids(self) -> list[tuple[Oid, str]]:
        """The patch-ids of (at least) this branch's new commits."""
        return self.pass_.result() if self.pass_ is not None else []
