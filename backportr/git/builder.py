"""Build small, deterministic git repositories in-process (pygit2), commit by commit.

Used by `backportr demo`, the fixture scripts and the tests, so that messages can cite the
real id of an earlier commit in `Fixes:`. Dates are fixed and increase by one minute per
commit, so the same script always produces the same ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from backportr.model import Oid

_EPOCH = 1_600_000_000


@dataclass(frozen=True)
class Person:
    name: str
    email: str


DEFAULT_AUTHOR = Person("A U Thor", "author@example.org")
DEFAULT_COMMITTER = Person("Stable Maintainer", "stable@example.org")


class RepoBuilder:
    """A repository written commit by commit; branches are plain refs/heads."""

    def __init__(self, path: str | Path, *, bare: bool = False, start: int = _EPOCH) -> None:
        self.path = Path(path)
        self.repo = pygit2.init_repository(str(self.path), bare=bare, initial_head="master")
        self._clock = start
        self.ids: dict[str, Oid] = {}

    @classmethod
    def open(cls, path: str | Path) -> RepoBuilder:
        """A builder on an existing repository (to read it, or add to it)."""
        builder = cls.__new__(cls)
        builder.path = Path(path)
        builder.repo = pygit2.Repository(str(path))
        builder._clock = max(
            _EPOCH, builder.repo.revparse_single("HEAD").peel(pygit2.Commit).commit_time
        )
        builder.ids = {}
        return builder

    def check_out(self) -> None:
        """Make the work tree and index match HEAD (the builder writes objects and refs only),
        so `git status` in a saved repository is clean."""
        if not self.repo.is_bare:
            self.repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)  # type: ignore[no-untyped-call]

    # -- reading ---------------------------------------------------------------------------

    def files(self, rev: str) -> dict[str, str]:
        """Every file of a commit (or branch) as text."""
        commit = self._commit(rev)
        out: dict[str, str] = {}
        self._collect(commit.tree, "", out)
        return out

    def _collect(self, tree: pygit2.Tree, prefix: str, out: dict[str, str]) -> None:
        for entry in tree:
            path = prefix + (entry.name or "")
            obj = self.repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                self._collect(obj, path + "/", out)
            elif isinstance(obj, pygit2.Blob):
                out[path] = obj.data.decode()

    def _commit(self, rev: str) -> pygit2.Commit:
        if rev in self.ids:
            rev = self.ids[rev]
        ref = f"refs/heads/{rev}"
        if ref in self.repo.references:
            return self.repo[self.repo.references[ref].target].peel(pygit2.Commit)
        return self.repo.revparse_single(rev).peel(pygit2.Commit)

    def tip(self, branch: str) -> Oid:
        return Oid(str(self.repo.references[f"refs/heads/{branch}"].target))

    # -- writing ---------------------------------------------------------------------------

    def commit(
        self,
        message: str,
        files: Mapping[str, str | None] | None = None,
        *,
        branch: str = "master",
        name: str | None = None,
        author: Person = DEFAULT_AUTHOR,
        committer: Person = DEFAULT_COMMITTER,
        parents: list[str] | None = None,
        replace: bool = False,
        authored: int | None = None,
        gap: int = 60,
    ) -> Oid:
        """Commit `files` (path -> text, None deletes) on top of `branch` (or `parents`).

        With replace=True the tree is exactly `files`; otherwise they change the parent's tree.
        `authored`: the author date (a cherry-pick keeps its original's); else the clock's.
        `gap`: seconds after the previous commit (1: the next patch of one `git am` run).
        """
        ref = f"refs/heads/{branch}"
        if parents is None:
            parent_ids = [self.repo.references[ref].target] if ref in self.repo.references else []
        else:
            parent_ids = [self._commit(p).id for p in parents]
        state: dict[str, str] = {} if replace or not parent_ids else self.files(str(parent_ids[0]))
        for path, text in (files or {}).items():
            if text is None:
                state.pop(path, None)
            else:
                state[path] = text
        tree = self._write_tree(state)
        self._clock += gap
        sig_a = pygit2.Signature(
            author.name, author.email, self._clock if authored is None else authored, 0
        )
        sig_c = pygit2.Signature(committer.name, committer.email, self._clock, 0)
        if not message.endswith("\n"):
            message += "\n"
        oid = self.repo.create_commit(None, sig_a, sig_c, message, tree, parent_ids)
        self.repo.references.create(ref, oid, force=True)
        if ref == "refs/heads/master" and self.repo.head_is_unborn:
            self.repo.set_head(ref)
        if name:
            self.ids[name] = Oid(str(oid))
        return Oid(str(oid))

    def merge(self, branch: str, other: str, message: str, *, name: str | None = None) -> Oid:
        """A merge commit of `other` into `branch` (trees must merge cleanly)."""
        ours = self._commit(branch)
        theirs = self._commit(other)
        base = self.repo.merge_base(ours.id, theirs.id)
        index = self.repo.merge_trees(self.repo[base].tree, ours.tree, theirs.tree)
        if index.conflicts is not None:
            raise ValueError(f"merge of {other} into {branch} conflicts")
        tree = index.write_tree(self.repo)
        self._clock += 60
        sig = pygit2.Signature(DEFAULT_COMMITTER.name, DEFAULT_COMMITTER.email, self._clock, 0)
        oid = self.repo.create_commit(
            f"refs/heads/{branch}", sig, sig, message + "\n", tree, [ours.id, theirs.id]
        )
        if name:
            self.ids[name] = Oid(str(oid))
        return Oid(str(oid))

    def branch(self, name: str, at: str) -> None:
        self.repo.references.create(f"refs/heads/{name}", self._commit(at).id, force=True)

    def tag(self, name: str, at: str) -> None:
        self.repo.references.create(f"refs/tags/{name}", self._commit(at).id, force=True)

    def cherry_pick(
        self,
        commit: str,
        branch: str,
        *,
        message: str | None = None,
        annotation: str | None = "upstream",
        name: str | None = None,
        files: dict[str, str | None] | None = None,
    ) -> Oid:
        """Apply `commit` onto `branch` as a stable backport would.

        annotation: "upstream" (`commit X upstream.`), "sasha" (`[ Upstream commit X ]`),
        "cherry-pick" (`(cherry picked from commit X)`), or None (no reference).
        `files` overrides the result (a hand-adapted backport); otherwise a 3-way merge with
        the commit's parent as ancestor, which must be clean.
        """
        picked = self._commit(commit)
        full = str(picked.id)
        if message is None:
            subject, _, rest = picked.message.partition("\n")
            rest = rest.strip("\n")
            if annotation == "upstream":
                message = f"{subject}\n\ncommit {full} upstream.\n\n{rest}\n"
            elif annotation == "sasha":
                message = f"{subject}\n\n[ Upstream commit {full} ]\n\n{rest}\n"
            elif annotation == "cherry-pick":
                message = f"{picked.message.rstrip()}\n\n(cherry picked from commit {full})\n"
            else:
                message = picked.message
        if files is not None:
            return self.commit(message, files, branch=branch, name=name, author=_person(picked))
        ours = self._commit(branch)
        index = self.repo.merge_trees(picked.parents[0].tree, ours.tree, picked.tree)
        if index.conflicts is not None:
            raise ValueError(f"cherry-pick of {commit} onto {branch} conflicts")
        tree = index.write_tree(self.repo)
        self._clock += 60
        author = pygit2.Signature(picked.author.name, picked.author.email, self._clock, 0)
        sig = pygit2.Signature(DEFAULT_COMMITTER.name, DEFAULT_COMMITTER.email, self._clock, 0)
        if not message.endswith("\n"):
            message += "\n"
        oid = self.repo.create_commit(f"refs/heads/{branch}", author, sig, message, tree, [ours.id])
        if name:
            self.ids[name] = Oid(str(oid))
        return Oid(str(oid))

    def revert(self, commit: str, branch: str, *, name: str | None = None, body: str = "") -> Oid:
        """`git revert` of `commit` on `branch` (must be clean)."""
        reverted = self._commit(commit)
        ours = self._commit(branch)
        index = self.repo.merge_trees(reverted.tree, ours.tree, reverted.parents[0].tree)
        if index.conflicts is not None:
            raise ValueError(f"revert of {commit} on {branch} conflicts")
        tree = index.write_tree(self.repo)
        subject = reverted.message.split("\n", 1)[0]
        message = f'Revert "{subject}"\n\nThis reverts commit {reverted.id}.\n'
        if body:
            message += f"\n{body.strip()}\n"
        self._clock += 60
        sig = pygit2.Signature(DEFAULT_COMMITTER.name, DEFAULT_COMMITTER.email, self._clock, 0)
        oid = self.repo.create_commit(f"refs/heads/{branch}", sig, sig, message, tree, [ours.id])
        if name:
            self.ids[name] = Oid(str(oid))
        return Oid(str(oid))

    def merge_text(self, base: str, ours: str, theirs: str) -> str:
        """A clean 3-way merge of three texts (raises ValueError on conflict)."""
        entry = pygit2.IndexEntry
        blobs = [self.repo.create_blob(t.encode()) for t in (base, ours, theirs)]
        base_entry, ours_entry, theirs_entry = (
            entry("f", blob, pygit2.enums.FileMode.BLOB) for blob in blobs
        )
        result = self.repo.merge_file_from_index(base_entry, ours_entry, theirs_entry)
        if not result.automergeable:
            raise ValueError("texts do not merge cleanly")
        return str(result.contents)

    def _write_tree(self, files: dict[str, str]) -> pygit2.Oid:
        nested: dict[str, object] = {}
        for path, text in files.items():
            parts = path.split("/")
            node = nested
            for part in parts[:-1]:
                node = node.setdefault(part, {})  # type: ignore[assignment]
            node[parts[-1]] = text
        return self._build(nested)

    def _build(self, node: dict[str, object]) -> pygit2.Oid:
        builder = self.repo.TreeBuilder()
        for name in sorted(node):
            value = node[name]
            if isinstance(value, dict):
                builder.insert(name, self._build(value), pygit2.enums.FileMode.TREE)
            else:
                blob = self.repo.create_blob(str(value).encode())
                builder.insert(name, blob, pygit2.enums.FileMode.BLOB)
        return builder.write()


def _person(commit: pygit2.Commit) -> Person:
    return Person(commit.author.name, commit.author.email)
