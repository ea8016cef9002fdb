"""Whole-word search of a tree's files in-process, for many questions over close trees.

A scan's symbol finder asks, for each member, which files of the member's parent mention the
names it lacks: one `git grep` of a whole tree each time (0.2 s on DPDK's 4,300 C files, read
and decompressed again for every question), over upstream trees that share almost every
file. Here the answer comes from the object database with two caches: a directory's entries
by its tree id (a walk reads again only the directories that changed between two parents)
and each file's words by blob id (a file is read again only to collect the lines of a name
it holds). The answers are `git grep -w -F -I`'s, in its order (a test compares).

A question's files (the tree's paths matching its patterns) are cached too, by directory:
a directory's matching files under its tree id, so a walk of the next tree reads only the
directories that changed and joins the cached lists of the others (DPDK's scan: 197 questions
over trees of 4,300 C files, the walks 2.9 s of a 28 s scan before they were cached).

Part of the git layer. Memory is bounded. The files' words are held as postings: each
distinct word once, with an array of the numbers of the cached files holding it (four bytes
per word of a file, where a set per file held a bytes object and a hash slot for every word:
DPDK's scan held 394 MB of sets for 10,000 files, postings of ids in lists about a tenth,
and numbers in arrays about half that again).
A question then looks up its names, not the files' words. DPDK's scan asks 718 questions of
trees holding 18,300 distinct files, 9.8 million word and file pairs: held whole, each file is
read once (the questions 16 s); under a bound of 5 million every posting was dropped 14 times
and 172,000 files read (114 s), and the process peaked higher, not lower. Past
`_MAX_POSTINGS` pairs the postings of the files the question's tree does not hold are
dropped (or, where that frees too little, all), past
`_MAX_DIRECTORIES` cached directories all are, and past `_MAX_LISTED` cached file names all
the cached lists (a name and blob id pair is shared by the lists of every directory above it
and of every tree that did not change it: DPDK, 100 trees, 925,000 cached names in 20 MB).
"""

from __future__ import annotations

import fnmatch
import re
from array import array

import pygit2

from backportr.errors import MissingObjectError
from backportr.git.proc import read_object

# Every byte that is not a letter, digit or underscore, as a space: a file's words (git's
# -w: a match has none of those on either side) are then its `split()`.
WORD_SPACES = bytes(
    c if chr(c).isascii() and (chr(c).isalnum() or c == ord("_")) else ord(" ") for c in range(256)
)
_WORD_BYTES = frozenset(c for c in range(256) if WORD_SPACES[c] != ord(" "))
_BINARY_PROBE = 8000  # git's -I: a NUL in the first 8000 bytes makes a file binary
_MAX_POSTINGS = 10_000_000
_MAX_DIRECTORIES = 200_000
_MAX_LISTED = 2_000_000
FITS_BYTES = 128 << 20
"""A tree whose searched files hold more bytes than this is left to git grep. Their word
postings would not fit under `_MAX_POSTINGS` (DPDK's C files: 78 MB, 1.5 million words of
files), and a walk that drops the postings it read itself reads the whole tree again at
every question (a kernel tree's C files and headers: several hundred megabytes); git grep
reads it on every core."""


class TreeGrep:
    """`grep_files`'s answers for many trees of one repository, from the object database."""

    def __init__(self, git: pygit2.Repository) -> None:
        self._git = git
        self._odb = git.odb
        self._dirs: dict[pygit2.Oid, list[tuple[str, pygit2.Oid, bool]]] = {}
        # a word: the cached files holding it, by number (`_numbered`: four bytes a pair,
        # where a list of ids took eight and the slack of a list)
        self._postings: dict[bytes, array[int]] = {}
        self._numbers: dict[pygit2.Oid, int] = {}  # a cached file's number
        self._numbered: list[pygit2.Oid] = []  # the files by number
        self._read_blobs: set[pygit2.Oid] = set()  # files whose words are in the postings
        self._held = 0  # word and file pairs in the postings
        # a directory's files matching a question's patterns: (tree id, its path, patterns)
        self._listed: dict[tuple[pygit2.Oid, str, str], list[tuple[str, pygit2.Oid]]] = {}
        self._listed_names = 0
        self._asked: list[tuple[str, pygit2.Oid]] = []  # the files of the question asked

    def grep(
        self, tree: pygit2.Tree, words: list[str], patterns: tuple[str, ...]
    ) -> dict[str, dict[str, list[str]]]:
        """For each of `words`: the files matching the pathspecs `*<pattern>` that mention
        it as a whole word, with those lines, as `repo.search.grep_files` gives them."""
        found: dict[str, dict[str, list[str]]] = {word: {} for word in words}
        wanted = {word.encode(): word for word in words}
        spec = _spec(patterns)
        regexes = {w: whole_word(w) for w in words}
        files = self._matching(tree.id, "", spec)
        self._asked = files
        holding: dict[pygit2.Oid, list[bytes]] = {}  # a file: the question's names it holds
        for name in wanted:  # the files read before (first: reading more may drop them)
            for number in self._postings.get(name, ()):
                holding.setdefault(self._numbered[number], []).append(name)
        for _, blob in files:
            if blob not in self._read_blobs:
                held = self._post(blob)
                if not held.isdisjoint(wanted):
                    holding[blob] = [name for name in wanted if name in held]
        if not holding:
            return found
        for path, blob in files:
            names = holding.get(blob)
            if names is None:
                continue
            data = self._read(blob)
            for name in names:
                word = wanted[name]
                _collect(found[word], path, data, word, regexes[word])
        return found

    def fits(self, tree: pygit2.Tree, patterns: tuple[str, ...]) -> bool:
        """Do the tree's files matching `patterns` hold at most `FITS_BYTES`? From the
        objects' headers (DPDK's 4,400 C files: 0.07 s), not their data."""
        total = 0
        for _, blob in self._matching(tree.id, "", _spec(patterns)):
            try:
                total += self._odb.read_header(blob)[1]
            except pygit2.NotFoundError:
                raise MissingObjectError.lacking(str(blob), "a search of the tree") from None
            if total > FITS_BYTES:
                return False
        return True

    def _matching(
        self, tree: pygit2.Oid, prefix: str, spec: re.Pattern[str]
    ) -> list[tuple[str, pygit2.Oid]]:
        """The files under the directory `tree` (at `prefix`) whose full path matches, in
        git's order; cached by the directory's id, so that a walk of a close tree reads only
        the directories that changed and joins the lists of the others."""
        key = (tree, prefix, spec.pattern)
        listed = self._listed.get(key)
        if listed is None:
            listed = []
            for name, oid, is_tree in self._entries(tree):
                path = prefix + name
                if is_tree:
                    listed += self._matching(oid, path + "/", spec)
                elif spec.fullmatch(path):
                    listed.append((path, oid))
            if self._listed_names + len(listed) > _MAX_LISTED:
                self._listed.clear()
                self._listed_names = 0
            if len(listed) <= _MAX_LISTED:  # a list alone past the bound is not cached
                self._listed[key] = listed
                self._listed_names += len(listed)
        return listed

    def _entries(self, tree: pygit2.Oid) -> list[tuple[str, pygit2.Oid, bool]]:
        entries = self._dirs.get(tree)
        if entries is None:
            if len(self._dirs) >= _MAX_DIRECTORIES:
                self._dirs.clear()
            entries = [
                (e.name or "", e.id, isinstance(e, pygit2.Tree))
                for e in read_object(self._git, tree, "a search of the tree").peel(pygit2.Tree)
                if isinstance(e, (pygit2.Tree, pygit2.Blob))
            ]
            self._dirs[tree] = entries
        return entries

    def _read(self, blob: pygit2.Oid) -> bytes:
        """A blob's bytes from the object database (a third faster than through a `Blob`:
        DPDK's tree 0.74 s against 1.1-1.3 s); a missing one is `MissingObjectError`."""
        try:
            return self._odb.read(blob)[1]
        except pygit2.NotFoundError:
            raise MissingObjectError.lacking(str(blob), "a search of the tree") from None

    def _post(self, blob: pygit2.Oid) -> set[bytes]:
        """Add the file's distinct words to the postings, and return them (a binary file,
        git's -I: none); past `_MAX_POSTINGS` pairs those of the files the question's tree
        does not hold are dropped first, and where that leaves more than half the bound
        every posting (a pass over the pairs held then frees at least half of them)."""
        data = self._read(blob)
        words: set[bytes] = set()
        if b"\0" not in data[:_BINARY_PROBE]:
            words = set(data.translate(WORD_SPACES).split())
        if self._held + len(words) > _MAX_POSTINGS:
            self._retain_only({b for _, b in self._asked})
            if self._held + len(words) > _MAX_POSTINGS // 2:  # each pass frees half, or all
                self._retain_only(set())
        number = self._numbers.get(blob)
        if number is None:
            number = self._numbers[blob] = len(self._numbered)
            self._numbered.append(blob)
        postings = self._postings
        for word in words:
            files = postings.get(word)
            if files is None:
                postings[word] = array("I", (number,))
            else:
                files.append(number)
        self._held += len(words)
        self._read_blobs.add(blob)
        return words

    def _retain_only(self, blobs: set[pygit2.Oid]) -> None:
        """Drop the postings of every file but these (one pass over the pairs held)."""
        retained: dict[bytes, array[int]] = {}
        held = 0
        numbers = {self._numbers[b] for b in blobs if b in self._numbers}
        if numbers:
            for word, files in self._postings.items():
                holding = array("I", (f for f in files if f in numbers))
                if holding:
                    retained[word] = holding
                    held += len(holding)
        else:  # nothing retained: the numbers start again
            self._numbers.clear()
            self._numbered.clear()
        self._postings = retained
        self._read_blobs &= blobs
        self._held = held


def _spec(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """The paths git grep's pathspecs `*<pattern>` match."""
    return re.compile("|".join(fnmatch.translate(f"*{p}") for p in patterns))


def whole_word(word: str) -> re.Pattern[str]:
    """git's -w: no ASCII letter, digit or underscore on either side of an occurrence."""
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])")


def _collect(
    found: dict[str, list[str]], path: str, data: bytes, word: str, regex: re.Pattern[str]
) -> None:
    """The lines of the file git grep prints for one word, parsed as `grep_files` parses
    git's output (split into lines as Python does, so a line holding a carriage return is
    cut there as it is out of git). Occurrences by `bytes.find`: a pattern that starts
    with a look-behind is tried at every position of the file."""
    needle = word.encode()
    at = data.find(needle)
    while at >= 0:
        after = at + len(needle)
        if (at > 0 and data[at - 1] in _WORD_BYTES) or (
            after < len(data) and data[after] in _WORD_BYTES
        ):
            at = data.find(needle, at + 1)
            continue
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", after)
        if end < 0:
            end = len(data)
        line = data[start:end].decode(errors="replace")
        for piece in f"{path}:{line}".splitlines():
            where, _, rest = piece.partition(":")
            if regex.search(rest):
                found.setdefault(where, []).append(rest)
        at = data.find(needle, end)
