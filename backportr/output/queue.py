"""A queue directory: patches as a stable queue keeps them (`queue-6.1/` with a quilt `series`).

The directory accumulates many fixes from many runs, beside the maintainer's own patches and
other tools' files. A run (one target, or one batch of targets: its `owner`) adds its patches
to `series` in series order and never removes anything but what the same owner's earlier
run wrote and that is still as it wrote it (its size and hash are in the record); a file the
user changed since is left where it is and named. A patch already queued (the same upstream
commit, by its annotation line) is reported and left where it is. Names are the stable
ones `git format-patch` gives: the patch's place among the patches of `series`, then its
sanitized subject (`0003-ima-detect-...patch`, made unique with `-2`, `-3`), so that a glob of
the directory lists (and `git send-email dir/*.patch` sends) them in series order.

What backportr wrote is recorded in `.backportr-series` (JSON: each owner's files, with their
sizes and hashes, and `series` lines). A run changes the directory under a lock, all or
nothing (`infra.files.Transaction`): concurrent runs wait and each adds its own lines; a full
disk leaves the directory as it was; a rerun gives the same names. Everything read from the
directory is data: every name is held to `inside`, only regular files are read, `series` and
the record are read whole (refused past `LIMIT`, never cut), a patch file only to its first
`_READ_CAP` bytes, and a record that is not what backportr writes is an error, never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from backportr.errors import BackportrError
from backportr.infra.files import (
    Transaction,
    depth_of_json,
    digest,
    finish,
    locked,
    read_regular,
    unchanged,
)
from backportr.model import Oid
from backportr.output import inside, make_directory
from backportr.text.trailers import parse_message

RECORD = ".backportr-series"  # what backportr wrote into the directory, per owner
LOCK = ".backportr-series.lock"  # held while a run changes the directory
COVER = "0000-cover-letter.patch"  # as git format-patch names it
LIMIT = 64 << 20  # `series` and the record are read whole up to this size, else refused
_READ_CAP = 64 * 1024  # the head of a patch file that names its upstream commit
_RECORD_DEPTH = 5  # {"runs": {owner: {"files": [{...}]}}}


@dataclass(frozen=True, slots=True)
class QueuedFile:
    """One file of a run: its preferred name, its text, the upstream commit it carries (None
    for a cover letter), and whether it is a line of `series` (a cover letter is not)."""

    name: str
    text: str
    upstream: Oid | None
    listed: bool = True


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A file a run wrote: its name, size and SHA-256 (None for a record of an older
    backportr, which recorded names only)."""

    name: str
    size: int | None = None
    sha256: str | None = None

    def unchanged_in(self, directory: Path) -> bool:
        path = inside(directory, self.name)
        if self.size is None or self.sha256 is None:
            return path.is_file()
        return unchanged(path, self.size, self.sha256)

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "size": self.size, "sha256": self.sha256}


@dataclass(slots=True)
class Run:
    """One owner's files and lines of `series`."""

    files: list[WrittenFile] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


@dataclass(slots=True)
class QueueResult:
    """What a run did: the files written, the patches already queued (upstream id, the
    name of the file that holds it), left where they are, and the files an earlier run wrote
    that were changed since (left in place, no longer backportr's)."""

    written: list[Path] = field(default_factory=list)
    already: list[tuple[Oid, str]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


class QueueDirectory:
    """One output directory and what backportr knows of it."""

    def __init__(self, directory: Path, *, numbered: bool = True) -> None:
        """`numbered`: each patch's name starts with its place in `series` (`0003-...`), so
        that `dir/*.patch` lists (and git send-email sends) them in series order."""
        self.directory = directory
        self.numbered = numbered
        self.series_path = inside(directory, "series")
        self.record_path = inside(directory, RECORD)
        self.series: list[str] = []
        self.runs: dict[str, Run] = {}

    def add(
        self, owner: str, files: Sequence[QueuedFile], left_out: Sequence[str] = ()
    ) -> QueueResult:
        """Add one run's files in order, replacing the same owner's earlier run (its files
        and its lines of `series`, in place); `left_out` becomes `# left out:` comments
        after its patches. Under the directory's lock, all or nothing: nothing is written
        when any name breaks the directory's rule or any write fails."""
        make_directory(self.directory)
        with locked(self.directory, LOCK):
            finish(self.directory)  # a run killed during its renames: completed first
            self.series = self._read_series()
            self.runs = self._read_record()
            return self._add(owner, files, left_out)

    def _add(self, owner: str, files: Sequence[QueuedFile], left_out: Sequence[str]) -> QueueResult:
        result = QueueResult()
        earlier = self.runs.get(owner, Run())
        mine = {f.name: f for f in earlier.files if f.unchanged_in(self.directory)}
        result.changed = [f.name for f in earlier.files if f.name not in mine]
        queued = self._queued(exclude=set(mine))
        taken = {n for n in self._names_in_use() if n not in mine}  # never overwritten
        untouched: list[QueuedFile] = []
        for item in files:
            if item.upstream is not None and item.upstream in queued:
                result.already.append((item.upstream, queued[item.upstream]))
                continue
            untouched.append(item)
        own_lines = set(earlier.lines) - set(result.changed)  # a changed file's line stays
        comments = [f"# left out: {one}" for one in left_out]
        positions = self._positions(
            own_lines, [item for item in untouched if item.listed], comments
        )
        plan: list[tuple[str, QueuedFile]] = []
        for item in untouched:
            wanted = item.name
            if self.numbered and item.listed:
                wanted = numbered(positions[id(item)], item.name)
            name = _unique(wanted, taken)
            taken.add(name)
            inside(self.directory, name)  # every name checked before anything is written
            plan.append((name, item))
        lines = [name for name, item in plan if item.listed] + comments
        series = _placed(self.series, own_lines, lines)
        written: list[WrittenFile] = []
        with Transaction(self.directory) as change:
            for name, item in plan:
                data = item.text.encode("utf-8", "surrogateescape")
                change.stage(name, data)
                written.append(WrittenFile(name, len(data), digest(data)))
            for name in set(mine) - {name for name, _ in plan}:
                old = mine[name]  # the earlier run's, not now
                if old.size is not None and old.sha256 is not None:
                    change.remove(name, old.size, old.sha256)
            change.stage(
                "series", "".join(f"{line}\n" for line in series).encode("utf-8", "surrogateescape")
            )
            self.runs[owner] = Run(written, lines)
            change.stage(RECORD, self._record_bytes())  # the record last
            change.commit()
        self._remove_unrecorded_legacy(mine, plan)
        self.series = series
        result.written = [self.directory / name for name, _ in plan]
        return result

    def _positions(
        self, own_lines: set[str], listed: list[QueuedFile], comments: list[str]
    ) -> dict[int, int]:
        """Where each listed file of the run will stand among the patches of `series`
        (1-based), by `id()`: its line placed as `_placed` places it."""
        tokens = [f"\0{i}" for i in range(len(listed))]
        where: dict[int, int] = {}
        count = 0
        for line in _placed(self.series, own_lines, tokens + comments):
            if line.startswith("\0"):
                count += 1
                where[id(listed[int(line[1:])])] = count
            elif line.strip() and not line.startswith("#"):
                count += 1
        return where

    def _remove_unrecorded_legacy(
        self, mine: dict[str, WrittenFile], plan: list[tuple[str, QueuedFile]]
    ) -> None:
        """An older record's files (names only, no hash) that this run does not write
        again: removed as that backportr did."""
        planned = {name for name, _ in plan}
        for name, old in mine.items():
            if old.sha256 is None and name not in planned:
                inside(self.directory, name).unlink(missing_ok=True)

    # -- the directory's files -------------------------------------------------------------

    def _read_series(self) -> list[str]:
        """`series` line by line, whole; bytes that are not UTF-8 are left as they are."""
        data = read_regular(self.series_path, LIMIT)
        if not data:
            return []
        return data.decode("utf-8", "surrogateescape").removesuffix("\n").split("\n")

    def _read_record(self) -> dict[str, Run]:
        """Each owner's files and lines. A plain list of names (an older backportr's) is
        an owner nobody matches: its files are left in place, never replaced."""
        data = read_regular(self.record_path, LIMIT)
        if data is None:
            return {}
        text = data.decode("utf-8", "replace")
        if not text.lstrip().startswith(("{", "[")):
            names = text.split()
            for name in names:
                inside(self.directory, name)
            return {"": Run([WrittenFile(n) for n in names], names)} if names else {}
        if depth_of_json(text) > _RECORD_DEPTH:
            raise self._not_ours()
        try:
            runs = _runs(json.loads(text))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise self._not_ours() from None
        for run in runs.values():
            for written in run.files:
                inside(self.directory, written.name)  # a record naming ../x or /abs: refused
        return runs

    def _not_ours(self) -> BackportrError:
        return BackportrError(
            f"{self.record_path}: not a list backportr wrote; move it aside to start anew"
        )

    def _names_in_use(self) -> set[str]:
        names = {(line.split() or [""])[0] for line in self.series if not line.startswith("#")}
        for run in self.runs.values():
            names.update(f.name for f in run.files)
        if self.directory.is_dir():
            names.update(p.name for p in self.directory.iterdir())
        return names - {""}

    def _queued(self, exclude: set[str]) -> dict[Oid, str]:
        """The upstream commit of each patch in `series` (other than `exclude`): what it
        names in its annotation line (`commit X upstream.`, `[ Upstream commit X ]`)."""
        out: dict[Oid, str] = {}
        for line in self.series:
            name = (line.split() or [""])[0]
            if not name or name.startswith("#") or name in exclude:
                continue
            try:
                path = inside(self.directory, name)
            except BackportrError:
                continue  # a line naming no file in here carries nothing to compare
            if not path.is_file():
                continue
            head = read_regular(path, _READ_CAP, head=True) or b""
            upstream = _upstream_of(head.decode("utf-8", "replace"))
            if upstream is not None:
                out.setdefault(upstream, name)
        return out

    def _record_bytes(self) -> bytes:
        runs = {
            owner: {"files": [f.to_json() for f in run.files], "lines": run.lines}
            for owner, run in self.runs.items()
            if run.files or run.lines
        }
        text = json.dumps({"version": 3, "runs": runs}, indent=1, ensure_ascii=False)
        return (text + "\n").encode("utf-8", "surrogateescape")


def _runs(data: object) -> dict[str, Run]:
    """The record's runs, every value of the type it must have (else TypeError)."""
    if not isinstance(data, dict) or not isinstance(data["runs"], dict):
        raise TypeError("runs")
    out: dict[str, Run] = {}
    for owner, run in data["runs"].items():
        if not isinstance(run, dict):
            raise TypeError("run")
        files, lines = run["files"], run["lines"]
        if not isinstance(files, list) or not isinstance(lines, list):
            raise TypeError("files")
        if not all(isinstance(line, str) for line in lines):
            raise TypeError("lines")
        out[str(owner)] = Run([_written(one) for one in files], list(lines))
    return out


def _written(one: object) -> WrittenFile:
    if isinstance(one, str):
        return WrittenFile(one)  # version 2: a name alone
    if not isinstance(one, dict):
        raise TypeError("file")
    name, size, sha256 = one["name"], one["size"], one["sha256"]
    if not isinstance(name, str) or not isinstance(size, int) or not isinstance(sha256, str):
        raise TypeError("file")
    return WrittenFile(name, size, sha256)


def _placed(series: list[str], earlier: set[str], lines: list[str]) -> list[str]:
    """The owner's new lines where its earlier ones were (at the end for a first run);
    every other line left as it is."""
    out: list[str] = []
    placed = False
    for line in series:
        if line in earlier:
            if not placed:
                out += lines
                placed = True
            continue
        out.append(line)
    if not placed:
        out += lines
    return out


def numbered(position: int, name: str) -> str:
    """`0003-<name>`, as git format-patch numbers its files (64 characters at most before
    `.patch`, its default `format.filenameMaxLength`)."""
    stem = name.removesuffix(".patch")
    return f"{f'{position:04d}-{stem}'[:_NAME_MAX]}.patch"


_NAME_MAX = 64 - len(".patch") - 1


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `name-2.patch`, `-3`, ... when another file has it."""
    if name not in taken:
        return name
    stem, dot, suffix = name.rpartition(".")
    stem, suffix = (stem, f".{suffix}") if dot else (name, "")
    number = 2
    while f"{stem}-{number}{suffix}" in taken:
        number += 1
    return f"{stem}-{number}{suffix}"


def _upstream_of(text: str) -> Oid | None:
    """The upstream commit a patch mail names in its body (before the diff)."""
    head, _, body = text.partition("\n\n")
    subjects = (line[8:].strip() for line in head.splitlines() if line.startswith("Subject:"))
    subject = next(subjects, "")
    body = body.split("\n---\n", 1)[0]
    return parse_message(f"{subject}\n\n{body}").upstream
