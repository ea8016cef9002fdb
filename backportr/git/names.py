"""What a user or a message calls a commit, resolved: a full or abbreviated id, a ref, a tag, any
revision git understands.

Part of the git layer: `Repo.names`, a collaborator of `Repo`. An abbreviated id libgit2 finds
ambiguous is asked of git (`rev-parse --disambiguate`): in a large repository a short id often
matches blobs and trees as well as the one commit meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pygit2

from backportr.errors import AmbiguousCommitError, UnknownCommitError
from backportr.git.proc import GitAccess
from backportr.model import Oid, short

_HEX_PREFIX = re.compile(r"^[0-9a-fA-F]{4,40}$")
_TOO_SHORT = re.compile(r"^[0-9a-fA-F]{1,3}$")


@dataclass(frozen=True, slots=True)
class Ref:
    """A resolved branch or upstream: the name the user knows and the full ref name."""

    name: str
    refname: str
    tip: Oid


class Names(GitAccess):
    """What a user or a message calls a commit, as its id (`repo.names`)."""

    def resolve_commit(self, spec: str) -> Oid:
        """A full id, an abbreviated id, a ref, a tag or any revision -> the commit's id."""
        spec = spec.strip()
        if not spec:
            raise UnknownCommitError("empty commit name")
        try:
            obj = self.git.revparse_single(spec)
        except pygit2.AmbiguousError:
            return self._disambiguate(spec)
        except (KeyError, ValueError, pygit2.GitError):
            raise UnknownCommitError(
                f"unknown commit '{spec}': not in this repository; fetch it or check the id"
            ) from None
        try:
            commit = obj.peel(pygit2.Commit)
        except (pygit2.GitError, ValueError, TypeError):
            raise UnknownCommitError(f"'{spec}' names a {obj.type_str}, not a commit") from None
        return Oid(str(commit.id))

    def resolve_target(self, spec: str) -> Oid:
        """A commit to backport: `resolve_commit`, and it must be one change (one parent).
        A merge or a root commit is refused with what to give instead."""
        oid = self.resolve_commit(spec)
        parents = len(self.git[oid].parent_ids)  # type: ignore[attr-defined]
        if parents > 1:
            raise UnknownCommitError(
                f"'{spec}' is a merge commit ({parents} parents), not a change to backport; "
                f"name the commits it merges (git log {short(oid)}^1..{short(oid)})"
            )
        if parents == 0:
            raise UnknownCommitError(
                f"'{spec}' is a root commit (no parent): it has no change to backport"
            )
        return oid

    def try_resolve_commit(self, spec: str) -> Oid | None:
        """Like resolve_commit, but None for unknown or ambiguous names."""
        try:
            return self.resolve_commit(spec)
        except UnknownCommitError:
            return None

    def _disambiguate(self, spec: str) -> Oid:
        """An abbreviated id libgit2 finds ambiguous: the one commit it names where other
        objects share the prefix (git's choice where a commit is wanted, `X^{commit}`: in a
        large repository a short id often matches blobs and trees too), else an error that
        lists the commits it could mean."""
        if _TOO_SHORT.match(spec):
            raise UnknownCommitError(
                f"commit prefix '{spec}' is too short: give at least 4 hex digits"
            )
        if not _HEX_PREFIX.match(spec):
            raise AmbiguousCommitError(spec, [])
        out = self.repo.run_git("rev-parse", f"--disambiguate={spec.lower()}", check=False)
        commits: list[pygit2.Commit] = []
        for line in out.splitlines():
            try:
                obj = self.git[line.strip()]
            except (KeyError, ValueError):
                continue
            if isinstance(obj, pygit2.Commit):
                commits.append(obj)
        if len(commits) == 1:
            return Oid(str(commits[0].id))
        described = [
            f"{short(str(c.id))} ({c.message.splitlines()[0] if c.message else ''})"
            for c in commits
        ]
        raise AmbiguousCommitError(spec, sorted(described))

    def tree_name(self, upstream: Ref) -> str:
        """How a reader finds this repository: the URL of the remote the upstream ref
        tracks (else of `origin`), or its path."""
        remote = (
            upstream.refname.split("/")[2] if upstream.refname.startswith("refs/remotes/") else ""
        )
        for name in dict.fromkeys(n for n in (remote, "origin") if n):
            try:
                url = self.git.config[f"remote.{name}.url"]
            except (KeyError, pygit2.GitError):
                continue
            if url:
                return str(url)
        workdir = self.git.workdir
        return str(Path(workdir or self.git.path).resolve())
