"""Repository access: the only module that imports pygit2 or runs git.

Opens work trees and bare repositories, resolves ids, prefixes, refs and tags, finds the
upstream ref and stable branches, walks history and answers ancestry. It never writes refs,
HEAD, the index or the work tree; objects written by callers to the object database are fine.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pygit2
from pygit2.enums import SortMode

from backportr.errors import (
    AmbiguousCommitError,
    BackportrError,
    NotARepositoryError,
    ShallowCloneError,
    UnknownBranchError,
    UnknownCommitError,
)
from backportr.gitlog import LOG_FORMAT, LogRecord, log_record
from backportr.model import Oid

DEFAULT_UPSTREAM_CANDIDATES = ("origin/master", "master", "origin/main", "main")
DEFAULT_BRANCH_PATTERN = "linux-*.y"
_GREP_PATTERNS = 200
_WORD = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{2,}")
_HEX_PREFIX = re.compile(r"^[0-9a-fA-F]{4,40}$")


@dataclass(frozen=True, slots=True)
class Ref:
    """A resolved branch or upstream: the name the user knows and the full ref name."""

    name: str
    refname: str
    tip: Oid


def _looks_like_a_date(text: str) -> bool:
    """git reads nearly anything as a date ("garbage" is now): ask for digits or a date word."""
    words = ("ago", "yesterday", "today", "now", "noon", "midnight", "last", "week", "month")
    return any(c.isdigit() for c in text) or any(w in text.lower() for w in words)


_PATCH_CACHE = 256  # commits whose per-file patches are kept (Repo.patches)


class Repo:
    """A read-mostly view of one git repository."""

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
                f"{location}: not a git repository; pass --repo with the path of a kernel tree"
            )
        self.git = pygit2.Repository(found)
        if self.git.is_shallow and not allow_shallow:
            raise ShallowCloneError(
                f"{self.git.path.rstrip('/')} is a shallow clone; run git fetch --unshallow"
            )
        self.path = Path(self.git.path)
        self._scratch: Path | None = None  # where objects written by trials go
        self._patch_cache: OrderedDict[Oid, list[pygit2.Patch]] = OrderedDict()
        self._files: dict[Oid, tuple[str, ...]] = {}

    # -- names -----------------------------------------------------------------------------

    def resolve_commit(self, spec: str) -> Oid:
        """A full id, an abbreviated id, a ref, a tag or any revision -> the commit's id."""
        spec = spec.strip()
        if not spec:
            raise UnknownCommitError("empty commit name")
        try:
            obj = self.git.revparse_single(spec)
        except pygit2.AmbiguousError:
            raise AmbiguousCommitError(spec, self._candidates(spec)) from None
        except (KeyError, ValueError, pygit2.GitError):
            raise UnknownCommitError(
                f"unknown commit '{spec}': not in this repository; fetch it or check the id"
            ) from None
        try:
            commit = obj.peel(pygit2.Commit)
        except (pygit2.GitError, ValueError, TypeError):
            raise UnknownCommitError(f"'{spec}' names a {obj.type_str}, not a commit") from None
        return str(commit.id)

    def try_resolve_commit(self, spec: str) -> Oid | None:
        """Like resolve_commit, but None for unknown or ambiguous names."""
        try:
            return self.resolve_commit(spec)
        except UnknownCommitError:
            return None

    def _candidates(self, prefix: str) -> list[str]:
        if not _HEX_PREFIX.match(prefix):
            return []
        out = self.run_git("rev-parse", f"--disambiguate={prefix.lower()}", check=False)
        found: list[str] = []
        for line in out.splitlines():
            oid = line.strip()
            try:
                obj = self.git[oid]
            except (KeyError, ValueError):
                continue
            if isinstance(obj, pygit2.Commit):
                found.append(f"{oid[:12]} ({obj.message.splitlines()[0] if obj.message else ''})")
        return found

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
                    oid = self.resolve_commit(name)
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
        """Short names of local and remote-tracking branches matching the pattern, deduplicated."""
        names: set[str] = set()
        for refname in self.git.references:
            if refname.startswith("refs/heads/"):
                short = refname[len("refs/heads/") :]
            elif refname.startswith("refs/remotes/"):
                short = refname[len("refs/remotes/") :].split("/", 1)[-1]
            else:
                continue
            if fnmatch.fnmatchcase(short, pattern):
                names.add(short)
        return sorted(names, key=_branch_sort_key)

    def _peel_ref(self, refname: str) -> Oid:
        """The commit a ref names; a dangling ref, or one naming a blob or a tree, is bad
        input said in one line."""
        try:
            ref = self.git.references[refname].resolve()
            return str(self.git[ref.target].peel(pygit2.Commit).id)
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
        base = self.git.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
        return str(base) if base is not None else None

    def walk(self, include: Oid, exclude: list[Oid] | tuple[Oid, ...] = ()) -> Iterator[Oid]:
        """Ids reachable from `include` but not from `exclude`, newest first (topological)."""
        walker = self.git.walk(pygit2.Oid(hex=include), SortMode.TOPOLOGICAL)
        for hidden in exclude:
            walker.hide(pygit2.Oid(hex=hidden))
        for commit in walker:
            yield str(commit.id)

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
            env=_git_env(),
            pipesize=1 << 20,
        ) as proc:
            assert proc.stdout is not None
            pending = b""
            with contextlib.closing(_read_ahead(proc.stdout)) as chunks:
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
        yield from self._patch_id_pipeline(log_args, None)

    def patch_ids_of(self, commits: list[Oid]) -> Iterator[tuple[Oid, str]]:
        """(commit, patch-id) for the given commits: one `git log -p --no-walk --stdin |
        git patch-id --stable` pipeline for all of them, the ids fed from a thread."""
        if not commits:
            return
        log_args = [*self._patch_log(), "--no-walk=unsorted", "--stdin"]
        yield from self._patch_id_pipeline(log_args, "".join(c + "\n" for c in commits).encode())

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

    def _patch_id_pipeline(
        self, log_args: list[str], feed: bytes | None
    ) -> Iterator[tuple[Oid, str]]:
        """`git log -p ... | git patch-id --stable`, streamed; `feed` (the commits for
        `--stdin`) is written from a thread so neither process can block the other."""
        with (
            subprocess.Popen(
                log_args,
                stdin=subprocess.PIPE if feed is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_git_env(),
            ) as log,
            subprocess.Popen(
                ["git", "patch-id", "--stable"],
                stdin=log.stdout,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_git_env(),
            ) as patch_id,
        ):
            assert log.stdout is not None and patch_id.stdout is not None
            log.stdout.close()
            writer = None
            if feed is not None:
                stdin = log.stdin
                assert stdin is not None

                def write() -> None:
                    with contextlib.suppress(BrokenPipeError):
                        stdin.write(feed)
                    with contextlib.suppress(BrokenPipeError):
                        stdin.close()

                writer = threading.Thread(target=write, name="patch-id feed", daemon=True)
                writer.start()
            for line in patch_id.stdout:
                value, commit = line.decode("ascii").split()
                yield commit, value
            if writer is not None:
                writer.join()
        if log.returncode not in (0, None) or patch_id.returncode not in (0, None):
            raise BackportrError(f"git log -p | git patch-id failed in {self.path}")

    def blame(
        self, path: str, newest: Oid, ranges: list[tuple[int, int]], oldest: Oid | None = None
    ) -> dict[Oid, int]:
        """Which commits last changed the given line ranges (1-based, inclusive) of `path` at
        `newest`, looking no further back than `oldest`: commit -> number of lines.

        One `git blame` process per file with every range at once: libgit2's blame walks the
        whole history past the boundary and is an order of magnitude slower on big trees.
        Lines older than `oldest` are attributed to the boundary and left out."""
        if not ranges:
            return {}
        args = ["blame", "--porcelain"]
        for first, last in ranges:
            args += ["-L", f"{first},{last}"]
        args.append(f"{oldest}..{newest}" if oldest else newest)
        out = self.run_git(*args, "--", path, check=False)
        counts: dict[Oid, int] = {}
        boundary: set[Oid] = set()
        current: Oid | None = None
        for line in out.splitlines():
            head = line.split(" ", 3)
            if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit():
                current = head[0]
                counts[current] = counts.get(current, 0) + 1
            elif line == "boundary" and current is not None:
                boundary.add(current)
        return {c: n for c, n in counts.items() if c not in boundary}

    def grep_words(self, tree: Oid, words: list[str], suffixes: tuple[str, ...]) -> set[str]:
        """Which of `words` occur as whole words in the tree's files with those suffixes:
        one `git grep` per 200 of them (never thousands of patterns in one process)."""
        if len(words) > _GREP_PATTERNS:
            found: set[str] = set()
            for start in range(0, len(words), _GREP_PATTERNS):
                found |= self.grep_words(tree, words[start : start + _GREP_PATTERNS], suffixes)
            return found
        if not words:
            return set()
        out = self.run_git(
            "grep",
            "-o",
            "-h",
            "-w",
            "-F",
            "-I",
            "-f",
            "-",
            tree,
            "--",
            *[f"*{s}" for s in suffixes],
            check=False,
            input="\n".join(words).encode(),
        )
        return {line.rsplit(":", 1)[-1].strip() for line in out.splitlines()} & set(words)

    def grep_files(self, commit: Oid, word: str, suffixes: tuple[str, ...]) -> dict[str, list[str]]:
        """Files of the commit's tree mentioning `word`, with the matching lines."""
        out = self.run_git(
            "grep",
            "-w",
            "-F",
            "-I",
            "-e",
            word,
            commit,
            "--",
            *[f"*{s}" for s in suffixes],
            check=False,
        )
        files: dict[str, list[str]] = {}
        prefix = f"{commit}:"
        for line in out.splitlines():
            if line.startswith(prefix):
                line = line[len(prefix) :]
            path, _, text = line.partition(":")
            files.setdefault(path, []).append(text)
        return files

    def pickaxe(
        self, text: str, newest: Oid, oldest: Oid | None, paths: list[str]
    ) -> tuple[Oid, str] | None:
        """The oldest commit in oldest..newest that changed how often `text` occurs in
        `paths` (`git log -S`, path-limited so it reads only those files' history)."""
        revision = f"{oldest}..{newest}" if oldest else newest
        out = self.run_git(
            "log",
            f"-S{text}",
            "--format=commit %H",
            "--name-only",
            "--reverse",
            "--no-renames",
            revision,
            "--",
            *paths,
            check=False,
        )
        commit = None
        for line in out.splitlines():
            if line.startswith("commit "):
                if commit is not None:
                    break
                commit = line.split()[1]
            elif line.strip() and commit is not None and line.strip() in paths:
                return commit, line.strip()
        return (commit, paths[0]) if commit else None

    def file_history(
        self, paths: list[str], newest: Oid, oldest: Oid | None, limit: int
    ) -> list[Oid]:
        """The newest `limit` commits in oldest..newest that changed `paths`, newest first
        (one path-limited `git log`, bounded by the range and the count)."""
        revision = f"{oldest}..{newest}" if oldest else newest
        out = self.run_git(
            "log",
            "--format=%H",
            f"-n{limit}",
            "--no-merges",
            revision,
            "--",
            *paths,
            check=False,
        )
        return out.split()

    def tree_words(self, commit: Oid, patterns: tuple[str, ...]) -> set[str]:
        """Every identifier (`[A-Za-z_][A-Za-z0-9_]*`, three characters or more) in the files
        of the commit's tree whose names match `patterns` (`.c` is a suffix, `Kconfig*` a
        glob): one in-process pass over the object database, no git process."""
        suffixes = tuple(p for p in patterns if not p.endswith("*"))
        prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))
        words: set[bytes] = set()
        stack: list[pygit2.Tree] = [self.commit(commit).tree]
        while stack:
            tree = stack.pop()
            for entry in tree:
                name = entry.name or ""
                if isinstance(entry, pygit2.Tree):
                    stack.append(entry)
                elif isinstance(entry, pygit2.Blob) and (
                    name.endswith(suffixes) or name.startswith(prefixes)
                ):
                    words.update(_WORD.findall(entry.data))
        return {w.decode("ascii") for w in words}

    def tree_id(self, commit: Oid) -> Oid:
        return str(self.commit(commit).tree_id)

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
        merges = self.run_git(
            "rev-list", "--first-parent", "--merges", f"--ancestry-path={commit}",
            f"{commit}..{tip}", check=False,
        ).split()  # fmt: skip
        if not merges:
            return None
        merge = merges[-1]
        parents = self.parents(merge)
        if len(parents) < 2 or self.is_ancestor(commit, parents[0]):
            return None
        brought = self.run_git(
            "rev-list", "--no-merges", f"--max-count={limit + 1}", parents[1], f"^{parents[0]}",
            check=False,
        ).split()  # fmt: skip
        if not brought or len(brought) > limit or commit not in brought:
            return None
        return merge, brought[::-1]

    def commits_since(self, tip: Oid, date: str) -> list[Oid]:
        """The commits of `tip`'s history committed after `date` (as git's --since reads
        it: `2024-01-31`, `2 weeks ago`, `yesterday`); a date git cannot read is an error."""
        parsed = self.run_git("rev-parse", f"--since={date}", check=False).strip()
        if not parsed.startswith("--max-age=") or not _looks_like_a_date(date):
            raise BackportrError(f"--since {date!r} is neither a revision nor a date")
        return self.run_git("rev-list", parsed, tip).split()

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

    def parents(self, oid: Oid) -> list[Oid]:
        return [str(p) for p in self.commit(oid).parent_ids]

    def diff_to_parent(self, oid: Oid) -> pygit2.Diff:
        """The commit's change against its first parent (the empty tree for a root)."""
        commit = self.commit(oid)
        if commit.parents:
            return commit.parents[0].tree.diff_to_tree(commit.tree, context_lines=3)
        return commit.tree.diff_to_tree(swap=True, context_lines=3)

    def diff_trees(self, old: Oid, new: Oid) -> pygit2.Diff:
        """The change from one tree to another (three lines of context, as git diff)."""
        before = self.git[old].peel(pygit2.Tree)
        return before.diff_to_tree(self.git[new].peel(pygit2.Tree), context_lines=3)

    def patches(self, oid: Oid) -> list[pygit2.Patch]:
        """The commit's change against its first parent, one patch per file (the most recent
        `_PATCH_CACHE` commits' kept: trial, blame and symbol finders ask for the same ones,
        and a diff of a 20,000-line file costs tens of milliseconds)."""
        cached = self._patch_cache.get(oid)
        if cached is not None:
            self._patch_cache.move_to_end(oid)
            return cached
        patches = [patch for patch in self.diff_to_parent(oid) if patch is not None]
        self._patch_cache[oid] = patches
        if len(self._patch_cache) > _PATCH_CACHE:
            self._patch_cache.popitem(last=False)
        return patches

    def files_touched(self, oid: Oid) -> tuple[str, ...]:
        if oid not in self._files:
            patches = self.patches(oid)
            paths = {p.delta.new_file.path for p in patches}
            paths |= {p.delta.old_file.path for p in patches}
            self._files[oid] = tuple(sorted(paths))
        return self._files[oid]

    def patch_id(self, oid: Oid) -> str | None:
        """The patch-id of the commit, as `git patch-id --stable` computes it (None for merges
        and empty commits)."""
        commit = self.commit(oid)
        if len(commit.parents) > 1:
            return None
        diff = self.diff_to_parent(oid)
        if len(diff) == 0:
            return None
        return str(diff.patchid)

    # -- scratch objects -------------------------------------------------------------------

    def keep_writes_apart(self) -> None:
        """From now on, objects this process writes (the blobs and trees of trial merges, the
        commits of mailed patches) go to a private object directory, removed by `close`:
        a scan of thousands of targets must not leave thousands of loose objects in the
        repository. git processes read it as an alternate."""
        if self._scratch is not None:
            return
        self._scratch = Path(tempfile.mkdtemp(prefix="backportr-objects-"))
        self.git.odb.add_backend(pygit2.OdbBackendLoose(str(self._scratch), 1, 0o700), 999)

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

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
        objects = self.run_git("rev-parse", "--git-path", "objects").strip()
        return {
            "GIT_OBJECT_DIRECTORY": str(self._scratch),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str((self.path / objects).resolve()),
        }

    # -- processes -------------------------------------------------------------------------

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
                raise BackportrError(f"the patch does not apply to {base[:12]}: {error}") from None
            tree = self.run_git("write-tree", env=index).strip()
            return self.run_git(
                "commit-tree", tree, "-p", base, input=message.encode(), env=index
            ).strip()

    def patch_id_of_diff(self, diff: str) -> str | None:
        """`git patch-id --stable` of a diff given as text (a mail's), None when it has none."""
        found = self.run_git("patch-id", "--stable", input=diff.encode(), check=False).split()
        return found[0] if found else None

    def run_git(
        self,
        *args: str,
        check: bool = True,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        """One git process for work libgit2 lacks (never per commit or per hunk)."""
        proc = subprocess.run(
            ["git", "--git-dir", str(self.path), *args],
            capture_output=True,
            input=input,
            env={**_git_env(), **self._scratch_env(), **(env or {})},
            check=False,
        )
        if check and proc.returncode != 0:
            detail = proc.stderr.decode(errors="replace").strip().splitlines()
            raise BackportrError(
                f"git {args[0]} failed: {detail[-1] if detail else proc.returncode}"
            )
        return proc.stdout.decode(errors="replace")


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    env["LC_ALL"] = "C"
    return env


def _read_ahead(
    stream: IO[bytes], chunk: int = 1 << 20, depth: int = 16
) -> Generator[bytes, None, None]:
    """The stream's chunks, read by a thread that keeps up to `depth` of them ahead: the
    writer (git) never waits while the caller parses, and memory stays bounded."""
    chunks: queue.Queue[bytes | BaseException] = queue.Queue(maxsize=depth)
    done = threading.Event()

    def pump() -> None:
        try:
            while not done.is_set():
                data = stream.read(chunk)
                chunks.put(data)
                if not data:
                    return
        except BaseException as error:  # handed to the reader, which raises it
            chunks.put(error)

    thread = threading.Thread(target=pump, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = chunks.get()
            if isinstance(item, BaseException):
                raise item
            if not item:
                return
            yield item
    finally:
        done.set()
        while thread.is_alive():  # a reader that stopped early: let the pump finish
            with contextlib.suppress(queue.Empty):
                chunks.get_nowait()
            thread.join(0.01)


def _branch_sort_key(name: str) -> tuple[tuple[int, ...], str]:
    numbers = tuple(int(n) for n in re.findall(r"\d+", name))
    return numbers, name


def config_entries(path: Path) -> dict[str, tuple[str, str]]:
    """git config as seen from `path` (a repository's, else the user's and the system's):
    key (lowercased) -> (value, the file defining it), the last definition winning."""
    proc = subprocess.run(
        ["git", "-C", str(path), "config", "--list", "--show-origin", "-z"],
        capture_output=True,
        check=False,
        env=_git_env(),
    )
    out: dict[str, tuple[str, str]] = {}
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    for origin, entry in zip(fields[::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        out[key.lower()] = (value, origin.removeprefix("file:"))
    return out


def git_dir_of(path: Path) -> Path | None:
    """The git directory of the repository at `path`, or None outside one."""
    proc = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--absolute-git-dir"],
        capture_output=True,
        text=True,
        check=False,
        env=_git_env(),
    )
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None
