"""A queue directory: patches as a stable queue keeps them (`queue-6.1/` with a quilt `series`).

The directory accumulates many fixes from many runs, beside the maintainer's own patches and
other tools' files. A run (one target, or one batch of targets: its `owner`) adds its patches
to `series` in series order and never removes anything but what the same owner's earlier
run wrote; a patch already queued (the same upstream commit, by its annotation line) is
reported and kept where it is. Names are the stable queue's (the subject in lower case, made
unique with `-2`, `-3`), or with `numbered` `git format-patch`'s (`0001-...`) for a one-off
directory.

What backportr wrote is kept in `.backportr-series` (JSON: each owner's files and `series`
lines). Everything read from the directory is data: every name is held to `inside`, a patch
file is read only to its first `_READ_CAP` bytes, and a list file that is not what backportr
writes is an error, never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from backportr.errors import BackportrError
from backportr.model import Oid
from backportr.output import inside, make_directory, write_atomically
from backportr.text.trailers import parse_message

RECORD = ".backportr-series"  # what backportr wrote into the directory, per owner
COVER = "0000-cover-letter.patch"  # as git format-patch names it
_READ_CAP = 64 * 1024  # the head of a patch file that names its upstream commit
_RECORD_CAP = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class QueuedFile:
    """One file of a run: its preferred name, its text, the upstream commit it carries (None
    for a cover letter), and whether it is a line of `series` (a cover letter is not)."""

    name: str
    text: str
    upstream: Oid | None
    listed: bool = True


@dataclass(slots=True)
class QueueResult:
    """What a run did: the files written, and the patches already queued (upstream id, the
    name of the file that holds it), kept where they are."""

    written: list[Path] = field(default_factory=list)
    already: list[tuple[Oid, str]] = field(default_factory=list)


class QueueDirectory:
    """One output directory and what backportr knows of it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.series_path = inside(directory, "series")
        self.record_path = inside(directory, RECORD)
        self.series = self._read_series()
        self.runs = self._read_record()

    def add(
        self, owner: str, files: Sequence[QueuedFile], left_out: Sequence[str] = ()
    ) -> QueueResult:
        """Add one run's files in order, replacing the same owner's earlier run (its files
        and its lines of `series`, in place); `left_out` becomes `# left out:` comments
        after its patches. Nothing is written when any name breaks the directory's rule."""
        make_directory(self.directory)
        earlier = self.runs.get(owner, {"files": [], "lines": []})
        mine = set(earlier["files"])
        queued = self._queued(exclude=mine)
        result = QueueResult()
        taken = {n for n in self._names_in_use() if n not in mine}  # never overwritten
        plan: list[tuple[Path, QueuedFile]] = []
        for item in files:
            if item.upstream is not None and item.upstream in queued:
                result.already.append((item.upstream, queued[item.upstream]))
                continue
            name = _unique(item.name, taken)
            taken.add(name)
            plan.append((inside(self.directory, name), item))  # every name checked first
        for path, item in plan:
            write_atomically(path, item.text)
            result.written.append(path)
        names = [path.name for path, _ in plan]
        for name in mine - set(names):
            inside(self.directory, name).unlink(missing_ok=True)  # the earlier run's, not now
        lines = [path.name for path, item in plan if item.listed]
        lines += [f"# left out: {one}" for one in left_out]
        self._write_series(set(earlier["lines"]), lines)
        self.runs[owner] = {"files": names, "lines": lines}
        self._write_record()
        return result

    # -- the directory's files -------------------------------------------------------------

    def _read_series(self) -> list[str]:
        if not self.series_path.exists():
            return []
        return _read_text(self.series_path, _RECORD_CAP).splitlines()

    def _read_record(self) -> dict[str, dict[str, list[str]]]:
        """Each owner's files and lines. A plain list of names (an older backportr's) is
        an owner nobody matches: its files are kept, never replaced."""
        if not self.record_path.exists():
            return {}
        text = _read_text(self.record_path, _RECORD_CAP)
        if not text.lstrip().startswith("{"):
            names = text.split()
            for name in names:
                inside(self.directory, name)
            return {"": {"files": names, "lines": names}} if names else {}
        try:
            data = json.loads(text)
            runs = data["runs"]
            out = {
                str(owner): {
                    "files": [str(n) for n in run["files"]],
                    "lines": [str(n) for n in run["lines"]],
                }
                for owner, run in runs.items()
            }
        except (ValueError, KeyError, TypeError, AttributeError):
            raise BackportrError(
                f"{self.record_path}: not a list backportr wrote; move it aside to start anew"
            ) from None
        for run in out.values():
            for name in run["files"]:
                inside(self.directory, name)  # a record naming ../x or /abs: refused whole
        return out

    def _names_in_use(self) -> set[str]:
        names = {(line.split() or [""])[0] for line in self.series if not line.startswith("#")}
        for run in self.runs.values():
            names.update(run["files"])
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
            upstream = _upstream_of(_read_text(path, _READ_CAP))
            if upstream is not None:
                out.setdefault(upstream, name)
        return out

    def _write_series(self, earlier: set[str], lines: list[str]) -> None:
        """The owner's new lines where its earlier ones were (at the end for a first run);
        every other line kept as it is."""
        out: list[str] = []
        placed = False
        for line in self.series:
            if line in earlier:
                if not placed:
                    out += lines
                    placed = True
                continue
            out.append(line)
        if not placed:
            out += lines
        write_atomically(self.series_path, "".join(line + "\n" for line in out))
        self.series = out

    def _write_record(self) -> None:
        runs = {owner: run for owner, run in self.runs.items() if run["files"] or run["lines"]}
        write_atomically(
            self.record_path, json.dumps({"version": 2, "runs": runs}, indent=1) + "\n"
        )


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


def _read_text(path: Path, cap: int) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(cap).decode("utf-8", errors="replace")
    except OSError as error:
        raise BackportrError(f"cannot read {path}: {error.strerror}") from None
