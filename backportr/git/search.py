"""Searches of history and trees that the conflict, symbol and context finders ask the repository:
blame, pickaxe, path-limited logs, whole-word greps and a tree's identifiers.

Part of the git layer: `Repo.search`, a collaborator of `Repo` (it runs git through
`Repo.run_git`), each search one bounded git process or one in-process pass, never one per
commit or per hunk.
"""

from __future__ import annotations

import functools
import marshal
import zlib
from collections.abc import Callable
from pathlib import Path

import pygit2

from backportr.errors import BackportrError, MissingObjectError
from backportr.git.blame import DiffCache, LineBlame
from backportr.git.proc import GitAccess, GitHandle
from backportr.git.range_history import Changes, RangeHistory
from backportr.git.streams import Streams
from backportr.git.tree_grep import WORD_SPACES, TreeGrep, whole_word
from backportr.infra.filecache import prune, read_once
from backportr.model import Oid, oids

_GREP_PATTERNS = 200
_GREPS_IN_GIT = 12
"""`grep_files` asks git this many times, then answers in-process (`git.tree_grep`): the
first in-process answer reads every matching file of a tree (about a dozen greps' worth),
the next ones only the files that changed. A single resolve asks a few times; a scan
hundreds."""


class Searches(GitAccess):
    """Searches of history and trees (`repo.search`): blame, greps, pickaxe, path-limited
    logs, and the fork's range read once for them."""

    def __init__(self, repo: GitHandle, streams: Streams) -> None:
        """`streams`: the repository's (a range's history is one of its passes)."""
        super().__init__(repo)
        self.streams = streams
        self._history_tip: Oid | None = None  # see remember_history
        self._history_reading: Callable[[], None] | None = None
        self._history_cached: Path | None = None
        self._history_only_cached = False
        self._ranges: dict[Oid, RangeHistory] = {}
        self._tree_grep: TreeGrep | None = None
        self._tree_grep_fits: dict[tuple[str, ...], bool] = {}
        self._line_blame: LineBlame | None = None
        self._blame_cached: DiffCache | None = None
        self._file_greps = 0

    def range_holding(self, oid: Oid) -> RangeHistory | None:
        """The remembered range that holds the commit, if any."""
        return next((h for h in self._ranges.values() if oid in h), None)

    def remember_history(
        self,
        tip: Oid,
        *,
        reading: Callable[[], None] | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        """From now on, blame and path-limited logs bounded by a fork are answered from one
        pass over fork..tip, read at the first such question (`git.range_history`): for a scan,
        which asks them thousands of times over one range. `reading` is told when a range
        is about to be read from git (seconds at kernel scale: the caller's progress line
        says so), not when it is loaded from where another process cached it.
        With `cached` (a directory), the pass is cached there for the other processes of a scan
        and read by one of them at a time (`filecache`)."""
        self._history_tip = tip
        self._history_reading = reading
        self._history_cached = cache_dir
        self._history_only_cached = False
        self._ranges.clear()

    def use_cached_history(self, tip: Oid, cache_dir: Path) -> None:
        """From now on, blame and path-limited logs bounded by a fork are answered from the
        pass over fork..tip that a scan cached in the directory `cached`, where there is one
        (`remember_history`); none is read here. A single resolve asks a few dozen such
        questions: each is a `git blame` or `git log` process of up to a second on a large
        file's history, and reading the pass would cost more than they do."""
        if not (
            self._history_only_cached
            and (self._history_tip, self._history_cached) == (tip, cache_dir)
        ):
            self.remember_history(tip, cache_dir=cache_dir)  # a second call keeps what was loaded
            self._history_only_cached = True

    def range_history(self, oldest: Oid | None, newest: Oid) -> RangeHistory | None:
        """The remembered history of oldest..tip when `newest` is in it. A range git cannot
        read in one pass (an unreadable object, a git older than 2.31) is not remembered:
        each question then walks it as before, and meets the fault where it lies."""
        if self._history_tip is None or oldest is None:
            return None
        history = self._ranges.get(oldest)
        if history is None:
            cache_dir = self._history_cached
            if self._history_only_cached and not (
                cache_dir and range_file(cache_dir, oldest, self._history_tip).exists()
            ):
                return None  # not cached: each question walks it, as without a pass
            try:
                history = RangeHistory(self.git, oldest, self._range_records(oldest))
            except BackportrError:
                self._history_tip = None
                return None
            if len(self._ranges) >= 2:
                self._ranges.pop(next(iter(self._ranges)))
            self._ranges[oldest] = history
        return history if newest in history else None

    def _range_records(self, oldest: Oid) -> list[tuple[Oid, tuple[Oid, ...], int, Changes]]:
        """The pass over oldest..tip; cached, where a directory is given, as
        `<oldest>-<tip>.range` (FRR's 7,700 commits since stable/10.2's fork: 0.6 s to read,
        0.05 s to load). Each new one replaces the files of earlier tips from that fork."""
        tip = self._history_tip
        assert tip is not None
        cache_dir = self._history_cached

        def read() -> list[tuple[Oid, tuple[Oid, ...], int, Changes]]:
            if self._history_reading is not None:  # not when another process cached it
                self._history_reading()
            records = list(self.streams.range_changes(oldest, tip))
            if cache_dir is not None:  # earlier tips' passes from this fork, their free locks
                this, fork = f"{oldest}-{tip}.", f"{oldest}-"
                prune(cache_dir, lambda name: name.startswith(this) or not name.startswith(fork))
            return records

        if cache_dir is None:
            return read()
        return read_once(range_file(cache_dir, oldest, tip), read, _dump_range, _load_range)

    def blame(
        self, path: str, newest: Oid, ranges: list[tuple[int, int]], oldest: Oid | None = None
    ) -> dict[Oid, int]:
        """Which commits last changed the given line ranges (1-based, inclusive) of `path` at
        `newest`, looking no further back than `oldest`: commit -> number of lines.

        One `git blame` process per file with every range at once: libgit2's blame walks the
        whole history past the boundary and is an order of magnitude slower on big trees.
        Lines older than `oldest` are attributed to the boundary and left out. Where the
        range's history was read once (`repo.search.remember_history`), blame walks only the commits
        that changed the file (`git.range_history`), in-process (`git.blame`): the same answer
        without a git process, each step's diff cached for the next question."""
        if not ranges:
            return {}
        args = ["blame", "--porcelain", "--no-textconv"]
        for first, last in ranges:
            args += ["-L", f"{first},{last}"]
        history = self.range_history(oldest, newest)
        if history is not None and (grafts := history.blame_grafts(path, newest)) is not None:
            top, lines = grafts
            if not lines:
                return {}  # nothing in the range changed the file: every line is older
            if self._line_blame is None:
                self._line_blame = LineBlame(self.git, self._blame_cached)
            try:
                answer = self._line_blame.blame(
                    top, lines, functools.partial(history.blob_id, path=path), ranges
                )
            finally:
                self._line_blame.cache_diffs()
            if answer is not None:
                return answer
            out = self.repo.run_git(
                *args[:1],
                "-S",
                "/dev/stdin",
                *args[1:],
                f"{oldest}..{top}",
                "--",
                path,
                check=False,
                input="".join(f"{line}\n" for line in lines).encode("ascii"),
            )
        else:
            args.append(f"{oldest}..{newest}" if oldest else newest)
            out = self.repo.run_git(*args, "--", path, check=False)
        counts: dict[Oid, int] = {}
        boundary: set[Oid] = set()
        current: Oid | None = None
        for line in out.splitlines():
            head = line.split(" ", 3)
            if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit():
                current = Oid(head[0])
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
        out = self.repo.run_git(
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

    def cache_blame_diffs(self, cache: DiffCache) -> None:
        """From now on, the in-process blame's diffs of blob pairs are looked up in and cached
        to `cached` (the index), for the other processes of a scan and the next runs."""
        if self._blame_cached != cache:  # the same again keeps the blame's own cache
            self._blame_cached = cache
            self._line_blame = None

    def expect_many_greps(self) -> None:
        """Many `grep_files` questions are coming (a scan asks dozens to hundreds): answer
        in-process from the first, where the files fit, not after `_GREPS_IN_GIT` git greps.
        The first in-process answer reads the tree either way; the dozen greps before it
        were FRR's scan's 0.9 s in every process."""
        self._file_greps = max(self._file_greps, _GREPS_IN_GIT)

    def grep_files(
        self, commit: Oid, words: list[str], suffixes: tuple[str, ...]
    ) -> dict[str, dict[str, list[str]]]:
        """For each of `words`: the files of the commit's tree with those suffixes that
        mention it as a whole word, with the lines that do. One `git grep` per 200 words
        (each process reads the whole tree; the words share it), or, past the first
        `_GREPS_IN_GIT` questions, the same answer from the object database, where the
        files searched fit in its cached word sets (`TreeGrep.fits`, decided once for each
        kind of file: a kernel tree's C files do not, and stay with git grep)."""
        if self._file_greps < _GREPS_IN_GIT:
            self._file_greps += 1
            return self._git_grep_files(commit, words, suffixes)
        if self._tree_grep is None:
            self._tree_grep = TreeGrep(self.git)
        tree = self.repo.commit(commit).tree
        if suffixes not in self._tree_grep_fits:
            self._tree_grep_fits[suffixes] = self._tree_grep.fits(tree, suffixes)
        if self._tree_grep_fits[suffixes]:
            return self._tree_grep.grep(tree, words, suffixes)
        return self._git_grep_files(commit, words, suffixes)

    def _git_grep_files(
        self, commit: Oid, words: list[str], suffixes: tuple[str, ...]
    ) -> dict[str, dict[str, list[str]]]:
        found: dict[str, dict[str, list[str]]] = {word: {} for word in words}
        for start in range(0, len(words), _GREP_PATTERNS):
            chunk = words[start : start + _GREP_PATTERNS]
            patterns = [a for word in chunk for a in ("-e", word)]
            out = self.repo.run_git(
                "grep",
                "-w",
                "-F",
                "-I",
                *patterns,
                commit,
                "--",
                *[f"*{s}" for s in suffixes],
                check=False,
            )
            regexes = [(w, whole_word(w)) for w in chunk]
            prefix = f"{commit}:"
            for line in out.splitlines():
                if line.startswith(prefix):
                    line = line[len(prefix) :]
                path, _, text = line.partition(":")
                for word, regex in regexes:
                    if word in text and regex.search(text):
                        found[word].setdefault(path, []).append(text)
        return found

    def pickaxe(
        self, text: str, newest: Oid, oldest: Oid | None, paths: list[str]
    ) -> tuple[Oid, str] | None:
        """The oldest commit in oldest..newest that changed how often `text` occurs in
        `paths` (`git log -S`, path-limited so it reads only those files' history; from
        memory where the range's history was read once)."""
        history = self.range_history(oldest, newest)
        if history is not None and text:
            return history.pickaxe(text.encode("utf-8", "surrogateescape"), paths, newest)
        revision = f"{oldest}..{newest}" if oldest else newest
        out = self.repo.run_git(
            "log",
            "--no-textconv",
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
                commit = Oid(line.split()[1])
            elif line.strip() and commit is not None and line.strip() in paths:
                return commit, line.strip()
        return (commit, paths[0]) if commit else None

    def file_history(
        self, paths: list[str], newest: Oid, oldest: Oid | None, limit: int
    ) -> list[Oid]:
        """The newest `limit` commits in oldest..newest that changed `paths`, newest first
        (one path-limited `git log`, bounded by the range and the count; from memory where the
        range's history was read once)."""
        history = self.range_history(oldest, newest)
        if history is not None:
            return history.log(paths, newest, limit)
        revision = f"{oldest}..{newest}" if oldest else newest
        out = self.repo.run_git(
            "log",
            "--format=%H",
            f"-n{limit}",
            "--no-merges",
            revision,
            "--",
            *paths,
            check=False,
        )
        return oids(out)

    def tree_words(self, commit: Oid, patterns: tuple[str, ...]) -> set[bytes]:
        """Every identifier (`[A-Za-z_][A-Za-z0-9_]*`, three characters or more, as ASCII
        bytes: a large tree holds millions, and a set of `str` made from the bytes doubled
        the peak) in the files of the commit's tree whose names match `patterns` (`.c` is a
        suffix, `Kconfig*` a glob): one in-process pass over the object database."""
        suffixes = tuple(p for p in patterns if not p.endswith("*"))
        prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))
        words: set[bytes] = set()
        stack: list[tuple[pygit2.Tree, str]] = [(self.repo.commit(commit).tree, "")]
        while stack:
            tree, prefix = stack.pop()
            for entry in tree:
                name = entry.name or ""
                if isinstance(entry, pygit2.Tree):
                    stack.append((entry, f"{prefix}{name}/"))
                elif isinstance(entry, pygit2.Blob) and (
                    name.endswith(suffixes) or name.startswith(prefixes)
                ):
                    try:
                        data = entry.data
                    except (KeyError, pygit2.GitError):  # NotFoundError is both
                        raise MissingObjectError.lacking(
                            str(entry.id), f"{prefix}{name}, searched for identifiers"
                        ) from None
                    words.update(data.translate(WORD_SPACES).split())
        # the files' maximal runs of letters, digits and underscores; identifiers start with
        # a letter or an underscore
        words.difference_update([w for w in words if len(w) < 3 or w[:1].isdigit()])
        return words  # filtered in place: one set of millions at a time, not two


def _dump_range(records: list[tuple[Oid, tuple[Oid, ...], int, Changes]]) -> bytes:
    return zlib.compress(marshal.dumps(records), 1)


def _load_range(data: bytes) -> list[tuple[Oid, tuple[Oid, ...], int, Changes]]:
    records = marshal.loads(zlib.decompress(data))
    if not isinstance(records, list):
        raise ValueError("not a cached range")
    return records


def range_file(cache_dir: Path, oldest: Oid, tip: Oid) -> Path:
    """Where the pass over oldest..tip is cached in the directory `cached`."""
    return cache_dir / f"{oldest}-{tip}.range"
