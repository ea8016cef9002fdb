"""Open a repository with its index, up to date for the refs a run needs.

The I/O edge every front-end starts from: resolves the upstream ref and the branches named
in the Settings (plus every stable-looking branch, so one branch's Stable-dep-of: trailers
and backports inform the others), then updates the index incrementally.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from backportr.errors import BackportrError
from backportr.git.names import Ref
from backportr.git.repo import DEFAULT_BRANCH_PATTERN, Repo, naming_of
from backportr.index import CommitIndex, UpdateStats
from backportr.index.presence import PresenceChecker
from backportr.index.store import default_index_path
from backportr.index.vocabulary import learned_vocabulary
from backportr.model import CulpritPolicy, Oid, ProgressCallback, no_progress
from backportr.settings import DEFAULT_MAX_COMMITS, Settings
from backportr.text.relation_forms import Vocabulary

_log = logging.getLogger("backportr")


@dataclass
class Workspace:
    repo: Repo
    index: CommitIndex
    upstream: Ref
    branches: list[Ref]
    indexed: list[Ref]
    presence: PresenceChecker
    stats: UpdateStats
    culprits: CulpritPolicy = "auto"  # the settings' policy: every resolver's default
    max_commits: int = DEFAULT_MAX_COMMITS  # the settings' cap on a closure: the same
    branch_pattern: str = DEFAULT_BRANCH_PATTERN  # how the project names its branches

    def use_what_scans_cached(self) -> None:
        """Answer blame and file-history questions from what a scan cached under the index
        directory, where it did: the history since a fork (for the current upstream tip)
        and the diffs of a blame. Nothing is read here that was not cached
        (`Searches.use_cached_history`): for a single resolve, after a nightly scan, its
        blames without a git process each."""
        self.repo.search.use_cached_history(self.upstream.tip, self._ranges)
        self._blame_diffs_in_the_index()

    def search_for_a_scan(self, reading: Callable[[], None]) -> None:
        """A scan's conflict searches blame and log one range (fork..upstream) thousands of
        times: the range read once (one `git log --name-status` pass, cached under the index
        directory; `reading` is told when it starts), greps expected in numbers (the symbol
        finder's "which files mention it"), and the diffs of blames cached."""
        self.repo.search.remember_history(
            self.upstream.tip, reading=reading, cache_dir=self._ranges
        )
        self.repo.search.expect_many_greps()
        self._blame_diffs_in_the_index()

    @property
    def _ranges(self) -> Path:
        """Where the histories since a fork are cached, beside the index."""
        return self.index.path.parent / "ranges"

    def _blame_diffs_in_the_index(self) -> None:
        self.repo.search.cache_blame_diffs(
            (self.index.cache.blame_hunks, self.index.cache.cache_blame_hunks)
        )

    def close(self) -> None:
        self.index.close()
        self.repo.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_workspace(
    settings: Settings,
    *,
    progress: ProgressCallback = no_progress,
    all_stable: bool = True,
    rebuild: bool = False,
    named_patch_ids: bool = False,
) -> Workspace:
    """Open, resolve refs and update the index (`named_patch_ids`: `IndexWriter.update`'s).
    Raises BackportrError subclasses."""
    repo = Repo(settings.repo)
    repo.serialize_writes()
    try:
        return _open(
            repo,
            settings,
            progress,
            all_stable=all_stable,
            rebuild=rebuild,
            named_patch_ids=named_patch_ids,
        )
    except BaseException:
        repo.close()
        raise


def _open(
    repo: Repo,
    settings: Settings,
    progress: ProgressCallback,
    *,
    all_stable: bool,
    rebuild: bool,
    named_patch_ids: bool,
) -> Workspace:
    upstream = repo.upstream(settings.upstream)
    branches = [repo.branch(name) for name in settings.branches]
    indexed = list(branches)
    if all_stable:
        seen = {b.refname for b in indexed}
        for ref in _stable_refs(repo, settings.branch_pattern):
            if ref.refname not in seen and ref.refname != upstream.refname:
                seen.add(ref.refname)
                indexed.append(ref)

    def stable_tips() -> list[Oid]:
        """Every stable branch's tip, read only where the phrases are learned: they are
        learned from what all of them took, whichever branch a run works on."""
        tips = {b.tip for b in indexed} | {
            r.tip for r in _stable_refs(repo, settings.branch_pattern)
        }
        return sorted(tips - {upstream.tip})

    index_path = settings.index_path or default_index_path(repo)
    learned = learned_vocabulary(
        repo, index_path, upstream.tip, stable_tips, progress, relearn=rebuild
    )
    vocabulary = Vocabulary(settings.fixes_patterns, learned.accepted(settings.ignored_forms))
    index = CommitIndex(repo, index_path, recover=rebuild, vocabulary=vocabulary)
    try:
        # The branches worked on get their patch-ids now (a scan's, every commit's; the
        # others', those of the commits that name no upstream commit); the rest when asked.
        stats = index.writer.update(
            upstream,
            indexed,
            progress=progress,
            rebuild=rebuild,
            worked_on=[b.refname for b in branches] if branches else None,
            named_patch_ids=named_patch_ids,
        )
    except BaseException:
        index.close()
        raise
    new = ", ".join(f"{name} +{count}" for name, count in stats.new_commits.items() if count)
    _log.info("index %s: %s", index.path, new or "up to date")
    return Workspace(
        repo=repo,
        index=index,
        upstream=upstream,
        branches=branches,
        indexed=indexed,
        presence=PresenceChecker(repo, index),
        stats=stats,
        culprits=settings.culprits,
        max_commits=settings.max_commits,
        branch_pattern=_naming(repo, settings.branch_pattern),
    )


def _stable_refs(repo: Repo, pattern: str) -> list[Ref]:
    """The stable branches the pattern (or what they hold) finds; a broken ref is skipped
    with a warning: one must not break every command."""
    refs = []
    for name in repo.stable_branches(pattern):
        try:
            ref = repo.find_ref(name)
        except BackportrError as stray:
            _log.warning("skipped a branch: %s", stray)
            continue
        if ref is not None:
            refs.append(ref)
    return refs


def _naming(repo: Repo, pattern: str) -> str:
    """How the project names its stable branches: the pattern, or where the default names
    none and the branches were found by what they hold, the template their names share."""
    if pattern != DEFAULT_BRANCH_PATTERN:
        return pattern
    names = repo.stable_branches(pattern)
    if not names or any(fnmatch.fnmatchcase(n, pattern) for n in names):
        return pattern
    return naming_of(names) or pattern
