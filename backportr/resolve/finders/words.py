"""Which identifiers occur in a branch tip's sources: the symbol finder's one question about
the whole tree, answered in bounded time.

Few questions (a single resolve): `git grep -F -w`, at most `GREP_CHUNK` names a process.
Many (a scan), or a cache already on disk: the tip's whole identifier
set, read once from the object database in-process and cached by tree id under the index
directory, so a second scan, a sibling branch at the same tree, or the next run reuse it.
Never a grep with thousands of patterns (one of those ran for more than six minutes on a
large tree).

What each costs (five real trees, `.c`/`.h` and build files): the set 0.13 s
(rdma-core) to 1.8 s (DPDK), four to six times a grep of up to 20 names; a grep of 40 names
1-8 times one of 5, of 80 names 3-90 times, of 200 names 5-240 times (OVN: 7.3 s against
its set's 0.16 s).
"""

from __future__ import annotations

import gzip
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from backportr.git.repo import Repo
from backportr.infra.filecache import read_once
from backportr.model import Oid

GREP_CHUNK = 20
"""At most this many names in one git grep. git's fixed-string search with `-w` slows
sharply past a few dozen patterns, so more names are more processes: a grep of 20 names
costs 1.0-1.7 times one of 5, a grep of 80 names 3-90 times, four of 20 4-7 times."""

GREPS_BEFORE_THE_SET = 6
"""A tip's grep processes past which its identifier set is built instead (a question that
would take more is answered by the set). Reading every source file of a tree costs four to
six greps of a few names on the five real trees measured and about ten on a generated
kernel-size one, so switching then never costs much more than twice the cheaper choice,
whichever many questions the rest of the run asks: a single resolve greps. A scan, which
knows many are coming, builds the set at its first question (12 greps of up to 200 names
cost FRR's scan 5.3 s on a tree whose set costs 0.6 s)."""


CACHED_FILES = 1024
"""`FileIdentifiers` caches the sets of this many files, the least recently asked dropped."""


class FileIdentifiers:
    """A file's identifiers by its blob id. The symbol finder reads the whole of every file
    a member touches as the branch (plus the series so far) holds it, and a scan's members
    touch the same few files at the same branch tip again and again: OVN's scan read 1,503
    such files, 5.4 s of splitting text into identifiers in one process."""

    def __init__(self, limit: int = CACHED_FILES) -> None:
        self._limit = limit
        self._memo: OrderedDict[object, frozenset[str]] = OrderedDict()

    def of(self, blob: object, read: Callable[[], set[str]]) -> frozenset[str]:
        """The identifiers of the file whose blob id is `blob`; `read` makes them once."""
        found = self._memo.get(blob)
        if found is None:
            found = frozenset(read())
            if len(self._memo) >= self._limit:
                self._memo.popitem(last=False)
            self._memo[blob] = found
        else:
            self._memo.move_to_end(blob)
        return found


class WordLookup:
    """Identifier -> does it occur in the tip's files matching `patterns`? Cached."""

    def __init__(
        self,
        repo: Repo,
        tip: Oid,
        patterns: tuple[str, ...],
        cache: Path | None,
        *,
        eager: bool = False,
    ):
        """`eager`: many questions are coming (a scan), so the set is read at the first."""
        self.repo = repo
        self.eager = eager
        self.tip = tip
        self.patterns = patterns
        self.cache = cache
        self.known: dict[str, bool] = {}
        self._all: set[bytes] | None = None
        self._greps = 0

    def present(self, names: list[str]) -> set[str]:
        """Which of `names` occur as whole words."""
        unknown = sorted({n for n in names if n not in self.known})
        if unknown:
            chunks = [unknown[at : at + GREP_CHUNK] for at in range(0, len(unknown), GREP_CHUNK)]
            if self._all is None and (
                self.eager
                or self._greps + len(chunks) > GREPS_BEFORE_THE_SET
                or self._cached_file()
            ):
                self._all = self._load_or_build()
            found: set[str] = set()
            if self._all is not None:
                found = {n for n in unknown if n.encode() in self._all}
            else:
                for chunk in chunks:
                    found |= self.repo.search.grep_words(self.tip, chunk, self.patterns)
                self._greps += len(chunks)
            self.known.update({n: n in found for n in unknown})
        return {n for n in names if self.known[n]}

    def _path(self) -> Path | None:
        if self.cache is None:
            return None
        return self.cache / f"{self.repo.tree_id(self.tip)}.words.gz"

    def _cached_file(self) -> bool:
        path = self._path()
        return path is not None and path.exists()

    def _load_or_build(self) -> set[bytes]:
        """The cached set, else one read now and cached. One process reads a tree's set at a
        time: another that asks meanwhile (a second `--jobs` worker, the scan's read-ahead)
        waits and loads it (`filecache`)."""
        path = self._path()
        if path is None:
            return self.repo.search.tree_words(self.tip, self.patterns)
        return read_once(
            path,
            lambda: self.repo.search.tree_words(self.tip, self.patterns),
            dump_words,
            load_words,
        )


def cache_identifier_set(repo: Repo, tip: Oid, patterns: tuple[str, ...], cache: Path) -> None:
    """Read and keep the tip's identifier set unless it is cached already (a scan's
    read-ahead: `scan.prefetch`). A cached one is not loaded: the scan loads it, and checks it."""
    lookup = WordLookup(repo, tip, patterns, cache, eager=True)
    if not lookup._cached_file():
        lookup._load_or_build()


def load_words(data: bytes) -> set[bytes]:
    return set(gzip.decompress(data).split())


def dump_words(words: set[bytes]) -> bytes:
    """Sorted, one a line; gzip level 1: DPDK's 316,000 words in 0.06 s against level 9's
    0.37 s, the file a fifth larger (1.7 MB)."""
    return gzip.compress(b"\n".join(sorted(words)), compresslevel=1)
