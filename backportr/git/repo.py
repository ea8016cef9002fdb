"""Repository access, the centre of the git layer (`backportr/git/`, the only package that
imports pygit2 or runs git).

Opens work trees and bare repositories, resolves ids, prefixes, refs and tags, finds the
upstream ref and stable branches, walks history and answers ancestry. It never writes refs,
HEAD, the index or the work tree; objects written by callers to the object database are fine.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2
from pygit2.enums import SortMode

from backportr.errors import (
    BackportrError,
    MissingObjectError,
    NotARepositoryError,
    ShallowCloneError,
    UnknownBranchError,
    UnknownCommitError,
)
from backportr.git.diffs import Diffs
from backportr.git.merge import Sides, TreeMerge, cherry_pick_tree, merge_file, merge_files
from backportr.git.names import Names, Ref
from backportr.git.proc import config_list, git_env, missing_object, neutralise_programs
from backportr.git.search import Searches
from backportr.git.streams import Streams
from backportr.infra import process
from backportr.infra.scratch import owned_scratch_dir, release
from backportr.model import Author, Oid, oids, short

_log = logging.getLogger("backportr")

GitError = pygit2.GitError  # libgit2's failures (a damaged object, an unreadable pack)


def git_error_text(error: pygit2.GitError) -> str:
    """One line for libgit2's failure: an object it could not find is named as the
    repository's lack (libgit2 says only the id), others as libgit2 says them."""
    if isinstance(error, pygit2.NotFoundError) and error.args:
        return str(MissingObjectError.lacking(str(error.args[0]), "read by libgit2"))
    return str(error)


def library_versions() -> tuple[str, str]:
    """pygit2's version and the libgit2 it runs on."""
    from importlib.metadata import version

    return version("pygit2"), pygit2.LIBGIT2_VERSION


DEFAULT_UPSTREAM_CANDIDATES = ("origin/master", "master", "origin/main", "main")
DEFAULT_BRANCH_PATTERN = "linux-*.y"
SCRATCH_PREFIX = "backportr-objects-"  # a process's private object directory (`serialize_writes`)


_ANNOTATED_LOOKED_AT = 100
_ANNOTATED_LEAST = 5
_BRANCHES_LOOKED_AT = 400


def branch_template(pattern: str) -> str:
    """The branch a version names, as a template (`{v}` the version: `5.10`, `23.11`), from
    the branch pattern: `linux-{v}.y` as it is; a glob's first `*` becomes `{v}`
    (`linux-*.y` -> `linux-{v}.y`, `stable-*` -> `stable-{v}`)."""
    if "{v}" in pattern:
        return pattern
    return pattern.replace("*", "{v}", 1) if "*" in pattern else "{v}"


def naming_of(names: list[str]) -> str | None:
    """The template the names share (`{v}` for their version: DPDK's `23.11` -> `{v}`, Xen's
    `stable-4.19` -> `stable-{v}`), or None where they do not share one."""
    templates = {re.sub(r"\d+\.\d+", "{v}", name, count=1) for name in names}
    if len(templates) != 1:
        return None
    template = templates.pop()
    return template if "{v}" in template else None


def _looks_like_a_date(text: str) -> bool:
    """git reads nearly anything as a date ("garbage" is now): ask for digits or a date word."""
    words = ("ago", "yesterday", "today", "now", "noon", "midnight", "last", "week", "month")
    return any(c.isdigit() for c in text) or any(w in text.lower() for w in words)


_BLOB_CACHE_LIMIT = 8 << 20
"""Blobs up to this size stay in libgit2's object cache (by default it keeps none): a trial
merge reads its three versions of a file, and a 2 MB test file deep in a pack's delta chains
took 30 ms a read. The fewest-prerequisites search merges the same versions again and
again."""
_TREE_CACHE_LIMIT = 1 << 20
"""Trees up to this size stay in the cache too (by default none over 4 KiB, which a kernel
directory of a few hundred files is): a path's lookup in a commit's tree reads every
directory on the way, and the trials, blame and diffs look up the paths of the same few
trees (the branch tip, a backport's parent) thousands of times. A kernel-scale scan, one
process, side by side with the default: 139 -> 125 s, the same findings."""
_CACHE_SIZE = 64 << 20
"""libgit2's object cache, in all. DPDK 23.11's cold scan (`benchmarks/scan_key.py`), one
process of two: 512 MiB peaked at 1716 MiB resident, 128 MiB at 1294 MiB and 32 MiB at 1200
MiB, in the same time (213-219 s) and with the same findings. The branch as fetched, its
scan's larger process: 128 MiB peaked at 1,023 MiB, 64 at 967 (135 and 125 s, the same 587
entries); 64 still holds a tree's directories beside the blobs a trial merges."""


def _cache_objects() -> None:
    pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.BLOB, _BLOB_CACHE_LIMIT)
    pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.TREE, _TREE_CACHE_LIMIT)
    pygit2.settings.cache_max_size(_CACHE_SIZE)


class Repo:
    """A read-mostly view of one git repository: refs, ancestry and objects here, and
    collaborators that each own their state: `names` (what a user or a message calls a
    commit), `streams` (log and patch-id passes), `search` (blame, greps, path-limited
    logs) and `diffs` (a commit's change)."""

    def __init__(self, path: str | os.PathLike[str] = ".", *, allow_shallow: bool = False) -> None:
        location = Path(path)
        if not location.exists():
            raise NotARepositoryError(f"{location}: no such directory")
        try:
            found = pygit2.discover_repository(str(location))
        except pygit2.GitError as error:
            raise NotARepositoryError(f"{location}: not a git repository ({error})") from None
        if found is None:
            raise NotARepositoryError(
                f"{location}: not a git repository; pass --repo with the path of the repository"
            )
        _cache_objects()
        self.git = pygit2.Repository(found)
        if self.git.is_shallow and not allow_shallow:
            raise ShallowCloneError(
                f"{self.git.path.rstrip('/')} is a shallow clone; run git fetch --unshallow"
            )
        self.path = Path(self.git.path)
        neutralise_programs(config_list(self.path))  # its merge drivers: never run
        self._say_what_git_would_replace()
        self._scratch: Path | None = None  # where objects written by trials go
        self._objects: str | None = None  # the object directory, as git names it
        self.names = Names(self)
        self._annotated: list[str] | None = None  # `annotated_branches`, found once
        self.streams = Streams(self)
        self.search = Searches(self, self.streams)
        self.diffs = Diffs(self, self.search)
        self._merges_on: dict[Oid, bool] = {}  # tip -> its first-parent line has a merge

    def find_ref(self, name: str) -> Ref | None:
        """A branch given as `linux-5.10.y`, `origin/linux-5.10.y`, a full ref or a tag."""
        candidates = [
            name,
            f"refs/heads/{name}",
            f"refs/remotes/{name}",
            f"refs/tags/{name}",
        ]
        for refname in candidates:
            if not refname.startswith("refs/"):
                continue
            if refname in self.git.references:
                return Ref(name, refname, self._peel_ref(refname))
        remote_matches = sorted(
            r
            for r in self.git.references
            if r.startswith("refs/remotes/") and r.endswith("/" + name)
        )
        if remote_matches:
            return Ref(name, remote_matches[0], self._peel_ref(remote_matches[0]))
        return None

    def has_ref(self, refname: str) -> bool:
        """Does the repository hold this full ref (`refs/heads/...`)?"""
        return refname in self.git.references

    def branch(self, name: str) -> Ref:
        """A stable branch that must exist."""
        found = self.find_ref(name)
        if found is None:
            raise UnknownBranchError(
                f"unknown branch '{name}': no local, remote-tracking or tag ref of that name"
            )
        return found

    def upstream(self, name: str | None = None) -> Ref:
        """The upstream ref: the one named, or the first of origin/master, master,
        origin/main, main that exists."""
        if name is not None:
            found = self.find_ref(name)
            if found is None:
                try:
                    oid = self.names.resolve_commit(name)
                except UnknownCommitError:
                    raise UnknownBranchError(f"unknown upstream ref '{name}'") from None
                return Ref(name, name, oid)
            return found
        for candidate in DEFAULT_UPSTREAM_CANDIDATES:
            for refname in (f"refs/remotes/{candidate}", f"refs/heads/{candidate}"):
                if refname in self.git.references:
                    return Ref(candidate, refname, self._peel_ref(refname))
        raise UnknownBranchError(
            "no upstream ref: none of origin/master, master, origin/main, main exists; "
            "pass --upstream"
        )

    def stable_branches(self, pattern: str = DEFAULT_BRANCH_PATTERN) -> list[str]:
        """Short names of local and remote-tracking branches matching the pattern (a glob,
        or a template whose `{v}` is a version: `branch_template`), deduplicated. With the
        default pattern and no branch named so, the branches that are stable branches by
        what they hold (`annotated_branches`): DPDK's `23.11`, Xen's `stable-4.19`."""
        names = [
            n for n in self._branch_names() if fnmatch.fnmatchcase(n, pattern.replace("{v}", "*"))
        ]
        if not names and pattern == DEFAULT_BRANCH_PATTERN:
            names = self.annotated_branches()
        return sorted(names, key=_branch_sort_key)

    def ref_names(self) -> list[str]:
        """Every branch (local, and remote-tracking as `origin/x`) and tag, short names:
        what shell completion offers."""
        names: set[str] = set()
        for refname in self.git.references:
            for prefix in ("refs/heads/", "refs/tags/", "refs/remotes/"):
                if refname.startswith(prefix) and not refname.endswith("/HEAD"):
                    names.add(refname[len(prefix) :])
        return sorted(names)

    def changed_paths(self, oid: Oid) -> frozenset[str]:
        """The paths a commit changes against its first parent (none for a root commit), as
        libgit2's tree diff has them (no rename detection): as git listed them for many
        commits at once (`Diffs.learn_paths`), else from a walk of the two trees that enters
        only the directories whose ids differ (libgit2's diff read the whole trees: 4 ms a
        commit on glibc's, against 2 ms, and git's listing a tenth of that)."""
        commit = self.commit(oid)
        if not commit.parents:
            return frozenset()
        listed = self.diffs.known_paths(oid)  # listed by git in bulk (`learn_paths`)
        if listed is not None:
            return frozenset(listed)
        out: set[str] = set()
        _differing_paths(commit.parents[0].tree, commit.tree, "", out)
        return frozenset(out)

    def _branch_names(self) -> set[str]:
        names: set[str] = set()
        for refname in self.git.references:
            if refname.startswith("refs/heads/"):
                names.add(refname[len("refs/heads/") :])
            elif refname.startswith("refs/remotes/") and not refname.endswith("/HEAD"):
                names.add(refname[len("refs/remotes/") :].split("/", 1)[-1])
        return names

    def annotated_branches(self) -> list[str]:
        """The branches whose newest commits carry annotations naming upstream commits (a
        stable branch is where backports land): at least `_ANNOTATED_LEAST` of the newest
        `_ANNOTATED_LOOKED_AT`, and a tenth of them. Upstream's own names are never one; at
        most `_BRANCHES_LOOKED_AT` branches are read (a repository of thousands of topic
        branches names its stable ones by a pattern)."""
        if self._annotated is None:
            from backportr.text.trailers import names_upstream

            found = []
            for name in sorted(self._branch_names() - {"master", "main", "HEAD"})[
                :_BRANCHES_LOOKED_AT
            ]:
                try:
                    ref = self.find_ref(name)
                except BackportrError:
                    continue  # a broken ref: no branch to judge
                if ref is None:
                    continue
                # unsorted: a time-sorted walk reads the whole history before its first
                # commit (0.1 s a branch on DPDK), this one only what it returns
                walker = self.git.walk(pygit2.Oid(hex=ref.tip), SortMode.NONE)
                looked = annotated = 0
                for commit in walker:
                    if looked >= _ANNOTATED_LOOKED_AT:
                        break
                    looked += 1
                    annotated += names_upstream(commit.message)
                if annotated >= _ANNOTATED_LEAST and annotated * 10 >= looked:
                    found.append(name)
            self._annotated = found
        return list(self._annotated)

    def _peel_ref(self, refname: str) -> Oid:
        """The commit a ref names; a dangling ref, or one naming a blob or a tree, is bad
        input said in one line."""
        try:
            ref = self.git.references[refname].resolve()
            return Oid(str(self.git[ref.target].peel(pygit2.Commit).id))
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as error:
            raise UnknownBranchError(
                f"{refname} does not name a commit (a dangling or non-commit ref: {error})"
            ) from None

    # -- history ---------------------------------------------------------------------------

    def is_ancestor(self, ancestor: Oid, descendant: Oid) -> bool:
        """True when `ancestor` is in the history of `descendant` (a commit is its own ancestor)."""
        if ancestor == descendant:
            return True
        return self.git.descendant_of(pygit2.Oid(hex=descendant), pygit2.Oid(hex=ancestor))

    def has_ancestor(self, descendant: Oid, ancestor: Oid) -> bool:
        """`is_ancestor`, False when either commit is unknown here (not an error: a commit
        this repository has never seen is in none of its branches)."""
        try:
            return self.is_ancestor(ancestor, descendant)
        except (pygit2.GitError, KeyError, ValueError):
            return False

    def merge_base(self, a: Oid, b: Oid) -> Oid | None:
        try:
            base = self.git.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
        except pygit2.GitError as error:  # a commit of either history cannot be read
            if "not found" not in str(error):
                raise
            raise MissingObjectError(
                f"the merge base of {short(a)} and {short(b)} cannot read an object the answer "
                f"needs ({error}); fetch the repository's missing objects (a damaged or "
                "partial copy)"
            ) from None
        return Oid(str(base)) if base is not None else None

    def newest_committed(self, bases: list[Oid]) -> Oid | None:
        """Which of several merge bases libgit2's `merge_base` answers, without its walk of
        both histories (0.4 s for one FRR branch that merged upstream again): the newest by
        commit date, as libgit2 sorts them (`git_merge__bases_many`). None when two share
        that date: then libgit2's own order decides, and only it can say."""
        dated = sorted((self.commit(b).commit_time, b) for b in bases)
        if len(dated) > 1 and dated[-1][0] == dated[-2][0]:
            return None
        return dated[-1][1] if dated else None

    def reached_first(self, tip: Oid, known: Callable[[list[Oid]], set[Oid]]) -> list[Oid]:
        """The commits of a set (`known` says which of a list are in it) that `tip` reaches
        without passing through another of them, sorted: a walk of the commits it reaches
        outside the set, a generation of parents at a time, each generation asked at once.
        Where the set is a history closed under ancestry (upstream's), these are the merge
        bases' candidates: a single one is the merge base."""
        found: set[Oid] = set()
        seen = {tip}
        generation = [tip]
        while generation:
            inside = known(generation)
            found.update(inside)
            following: list[Oid] = []
            for oid in generation:
                if oid in inside:
                    continue
                for parent in self.parents(oid):
                    if parent not in seen:
                        seen.add(parent)
                        following.append(parent)
            generation = following
        return sorted(found)

    def walk(self, include: Oid, exclude: list[Oid] | tuple[Oid, ...] = ()) -> Iterator[Oid]:
        """Ids reachable from `include` but not from `exclude`, newest first (topological)."""
        walker = self.git.walk(pygit2.Oid(hex=include), SortMode.TOPOLOGICAL)
        for hidden in exclude:
            walker.hide(pygit2.Oid(hex=hidden))
        for commit in walker:
            yield Oid(str(commit.id))

    def tree_id(self, commit: Oid) -> Oid:
        return Oid(str(self.commit(commit).tree_id))

    def has_commit_graph(self) -> bool:
        """Does git keep a commit-graph for this repository (one file or a split chain)?
        Path-limited walks (blame, `git log -- path`) are several times faster with one."""
        out = self.run_git(
            "rev-parse",
            "--git-path",
            "objects/info/commit-graph",
            "--git-path",
            "objects/info/commit-graphs/commit-graph-chain",
            check=False,
        )
        base = Path(self.path)
        return any((base / line).exists() for line in out.splitlines() if line.strip())

    def count(self, include: Oid, exclude: list[Oid] | tuple[Oid, ...] = ()) -> int:
        out = self.run_git("rev-list", "--count", include, *[f"^{e}" for e in exclude])
        return int(out.strip() or 0)

    # -- objects ---------------------------------------------------------------------------

    def merge_bringing(self, commit: Oid, tip: Oid, limit: int) -> tuple[Oid, list[Oid]] | None:
        """The first-parent merge of `tip`'s history that brought `commit` in, and the
        commits it brought (oldest first): a merge or pull request. None when `commit` is on
        the first-parent line itself, or the merge brought more than `limit` commits (a
        subsystem pull, not one posting)."""
        if not self._first_parent_merges(tip):
            return None  # a linear first-parent line (a rebasing project): no merge brought it
        merges = oids(self.run_git(
            "rev-list", "--first-parent", "--merges", f"--ancestry-path={commit}",
            f"{commit}..{tip}", check=False,
        ))  # fmt: skip
        if not merges:
            return None
        merge = merges[-1]
        parents = self.parents(merge)
        if len(parents) < 2 or self.is_ancestor(commit, parents[0]):
            return None
        brought = oids(self.run_git(
            "rev-list", "--no-merges", f"--max-count={limit + 1}", parents[1], f"^{parents[0]}",
            check=False,
        ))  # fmt: skip
        if not brought or len(brought) > limit or commit not in brought:
            return None
        return merge, brought[::-1]

    def _first_parent_merges(self, tip: Oid) -> bool:
        """Whether `tip`'s first-parent line holds a merge at all (asked once per tip)."""
        if tip not in self._merges_on:
            found = self.run_git(
                "rev-list", "--first-parent", "--merges", "--max-count=1", tip, check=False
            )
            self._merges_on[tip] = bool(found.strip())
        return self._merges_on[tip]

    def commits_since(self, tip: Oid, date: str) -> list[Oid]:
        """The commits of `tip`'s history committed after `date` (as git's --since reads
        it: `2024-01-31`, `2 weeks ago`, `yesterday`); a date git cannot read is an error."""
        parsed = self.run_git("rev-parse", f"--since={date}", check=False).strip()
        if not parsed.startswith("--max-age=") or not _looks_like_a_date(date):
            raise BackportrError(f"--since {date!r} is neither a revision nor a date")
        return oids(self.run_git("rev-list", parsed, tip))

    def has_commit(self, oid: Oid) -> bool:
        """Is there a commit with this full id (a rewritten ref's old tip may be gone)?"""
        try:
            return isinstance(self.git.get(pygit2.Oid(hex=oid)), pygit2.Commit)
        except (ValueError, pygit2.GitError):
            return False

    def commit(self, oid: Oid) -> pygit2.Commit:
        try:
            obj = self.git[oid]
        except (KeyError, ValueError):
            raise UnknownCommitError(f"unknown commit '{oid}'") from None
        return obj.peel(pygit2.Commit)

    def message(self, oid: Oid) -> str:
        return self.commit(oid).message

    def subject(self, oid: Oid) -> str:
        """The first line of the commit's message."""
        return self.message(oid).split("\n", 1)[0].strip()

    def parents(self, oid: Oid) -> list[Oid]:
        return [Oid(str(p)) for p in self.commit(oid).parent_ids]

    def author(self, oid: Oid) -> Author:
        signature = self.commit(oid).author
        return Author(signature.name, signature.email, signature.time, signature.offset)

    def serialize_writes(self) -> None:
        """From now on, objects this process writes (the blobs and trees of trial merges, the
        commits of mailed patches) go to a private object directory, removed by `close`:
        a scan of thousands of targets must not leave thousands of loose objects in the
        repository. git processes read it as an alternate. A process killed where it
        cannot remove it (SIGKILL) leaves it to the next one (`infra/scratch.py`)."""
        if self._scratch is not None:
            return
        self._scratch = owned_scratch_dir(SCRATCH_PREFIX)  # killed runs' leftovers removed
        # Compression level 1 and no fsync: these objects live as long as the process.
        loose = pygit2.OdbBackendLoose(str(self._scratch), 1, False, 0o700)
        self.git.odb.add_backend(loose, 999)

    def close(self) -> None:
        self.streams.diff_server.close()
        if self._scratch is not None:
            release(self._scratch)
            self._scratch = None

    def patch_id(self, oid: Oid) -> str | None:
        """The commit's patch-id (None for merges and empty changes), computed by `git
        patch-id --stable` as every other patch-id here is: libgit2's diff places some hunks
        differently (git slides an inserted block to where its indentation reads best), and
        a patch-id of a different diff would not match the branch commits' ids."""
        if len(self.commit(oid).parents) > 1:
            return None
        return dict(self.streams.patch_ids_of([oid], env=self._scratch_env())).get(oid)

    def _scratch_env(self, *, writes: bool = False) -> dict[str, str]:
        """The environment that lets a git process see (and, with `writes`, write to) the
        scratch objects; the repository's own objects stay readable as an alternate."""
        if self._scratch is None:
            return {}
        if not writes:
            known = os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES")
            return {
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(
                    [str(self._scratch), *([known] if known else [])]
                )
            }
        if self._objects is None:
            self._objects = self.run_git("rev-parse", "--git-path", "objects").strip()
        objects = self._objects
        return {
            "GIT_OBJECT_DIRECTORY": str(self._scratch),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str((self.path / objects).resolve()),
        }

    # -- processes -------------------------------------------------------------------------

    def cherry_pick_tree(self, commit: Oid, onto_tree: Oid) -> TreeMerge:
        """git's cherry-pick of `commit` onto the tree `onto_tree` (merge-ort: renames and
        directory renames followed), in memory: `git.merge.cherry_pick_tree`."""
        return cherry_pick_tree(
            self.git, self.commit(commit), pygit2.Oid(hex=onto_tree), self._scratch_env(writes=True)
        )

    def merge_file(self, path: str, sides: Sides) -> pygit2.Oid | None:
        """git's three-way merge of one file's blobs (base, ours, theirs), as a cherry-pick
        makes it: the merged blob, or None on conflict (`git.merge.merge_file`)."""
        return merge_file(self.git, path, sides, self._scratch_env(writes=True))

    def merge_files(self, files: list[tuple[str, Sides]]) -> list[pygit2.Oid | None]:
        """`merge_file` of files at distinct paths, by one git process (`git.merge.merge_files`)."""
        return merge_files(self.git, files, self._scratch_env(writes=True))

    def commit_of_diff(self, base: Oid, diff: str, message: str) -> Oid:
        """A commit of `diff` applied onto `base`, written to the object database through a
        private index file (no ref, index or work tree is touched); BackportrError when the
        diff does not apply there."""
        with tempfile.TemporaryDirectory(prefix="backportr-patch-") as scratch:
            index = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
            index.update(self._scratch_env(writes=True))
            self.run_git("read-tree", base, env=index)
            try:
                self.run_git("apply", "--cached", "-", input=diff.encode(), env=index)
            except BackportrError as error:
                raise BackportrError(
                    f"the patch does not apply to {short(base)}: {error}"
                ) from None
            tree = self.run_git("write-tree", env=index).strip()
            return Oid(
                self.run_git(
                    "commit-tree", tree, "-p", base, input=message.encode(), env=index
                ).strip()
            )

    def patch_id_of_diff(self, diff: str) -> str | None:
        """`git patch-id --stable` of a diff given as text (a mail's), None when it has none."""
        found = self.run_git("patch-id", "--stable", input=diff.encode(), check=False).split()
        return found[0] if found else None

    def _say_what_git_would_replace(self) -> None:
        """Replace refs and grafts make a history other than the one the commits record.
        backportr reads replaced objects as they are (libgit2 does; its git processes get
        `GIT_NO_REPLACE_OBJECTS`) and follows grafts (libgit2 and git both do): either way
        the answer is not the one a clone without them gives, so it says so."""
        replaced = sum(1 for r in self.git.references if r.startswith("refs/replace/"))
        if replaced:
            _log.warning(
                "%s has %d replace refs: backportr reads the objects as they are, without "
                "them (git log shows another history)",
                self.path,
                replaced,
            )
        if (self.path / "info" / "grafts").is_file():
            _log.warning(
                "%s has a graft file (info/grafts): answers follow the grafted history, "
                "not the one its commits record",
                self.path,
            )

    def run_git(
        self,
        *args: str,
        check: bool = True,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        """One git process for work libgit2 lacks (never per commit or per hunk)."""
        return self.run_git_bytes(*args, check=check, input=input, env=env).decode(errors="replace")

    def run_git_bytes(
        self,
        *args: str,
        check: bool = True,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> bytes:
        """`run_git`'s output as git wrote it (paths need not be UTF-8). An object git
        cannot read is an error even with `check=False`: a blame or a log that stopped at a
        damaged object answers nothing, and nothing is no answer (MissingObjectError)."""
        proc = process.run(
            ["git", "--git-dir", str(self.path), *args],
            capture_output=True,
            input=input,
            env={**git_env(), **self._scratch_env(), **(env or {})},
        )
        if proc.returncode != 0:
            said = proc.stderr.decode(errors="replace").splitlines()
            if (missing := missing_object(f"git {args[0]}", said)) is not None:
                raise missing
        if check and proc.returncode != 0:
            detail = proc.stderr.decode(errors="replace").strip().splitlines()
            raise BackportrError(
                f"git {args[0]} failed: {detail[-1] if detail else proc.returncode}"
            )
        return proc.stdout


def _branch_sort_key(name: str) -> tuple[tuple[int, ...], str]:
    numbers = tuple(int(n) for n in re.findall(r"\d+", name))
    return numbers, name


def _differing_paths(
    before: pygit2.Tree | None, after: pygit2.Tree | None, prefix: str, out: set[str]
) -> None:
    """Add to `out` the paths of the files that differ between two trees (either may be
    absent), a file's mode counting, as a tree diff lists them: a directory replaced by a
    file is each of its files and the file."""
    old = {e.name: e for e in before} if before is not None else {}
    new = {e.name: e for e in after} if after is not None else {}
    for name in old.keys() | new.keys():
        was, now = old.get(name), new.get(name)
        if was is not None and now is not None and (was.id, was.filemode) == (now.id, now.filemode):
            continue
        was_dir = was if isinstance(was, pygit2.Tree) else None
        now_dir = now if isinstance(now, pygit2.Tree) else None
        if was_dir is not None or now_dir is not None:
            _differing_paths(was_dir, now_dir, f"{prefix}{name}/", out)
        if (was is not None and was_dir is None) or (now is not None and now_dir is None):
            out.add(f"{prefix}{name}")
