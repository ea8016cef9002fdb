"""CVE JSON 5 records as the kernel CVE team writes them, parsed into what backportr needs.

A record names, per release line, an introducing commit and the commit that fixed it there
(`affected[].versions[]` with `versionType: git`: `version` the introducing commit,
`lessThan` the fixing one; a pair without `lessThan` is a line still unfixed), and the
affected files (`programFiles`). Beside it, `.sha1` names the mainline fix. The introducing
commit `1da177e4c3f4...` (the first commit of the kernel's git history) or `0` means
"since the beginning".

Records are untrusted input: a file past `MAX_BYTES`, JSON nested past `MAX_DEPTH`, or a
record not in this shape is a `BadRecord` with one line, never a crash; every check here is
linear in the size of the text.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backportr.errors import BackportrError
from backportr.git.files import blob_text, files_changed_since, tree_blobs
from backportr.infra.files import depth_of_json
from backportr.model import Oid

MAX_BYTES = 1024 * 1024  # the largest real record is about 60 KiB
MAX_DEPTH = 32  # real records nest 8 deep
BEGINNING = ("0", "1da177e4c3f41524e886b7f1b8a0c1fc7321cac2")  # "since the beginning"
_ID = re.compile(r"CVE-\d{4}-\d{4,9}")
_HEX = re.compile(r"[0-9a-f]{40}")


class BadRecord(BackportrError):
    """A record that cannot be read as the kernel CVE team writes them."""


@dataclass(frozen=True, slots=True)
class CveRecord:
    """One CVE: its id and title, the (introducing, fixing) pairs of its release lines, the
    mainline fix (`.sha1`, else the fixes as listed), the files, and the hash of its text
    (a changed record is a new question)."""

    cve: str
    title: str
    pairs: tuple[tuple[str, Oid | None], ...]
    mainline: tuple[Oid, ...]  # `.sha1`: the mainline fix (rarely several)
    files: tuple[str, ...]
    digest: str

    @property
    def fixes(self) -> tuple[Oid, ...]:
        """Every fixing commit the record names, the mainline one first."""
        listed = [*self.mainline, *(f for _, f in self.pairs if f)]
        return tuple(dict.fromkeys(listed))

    @property
    def introduced(self) -> tuple[str, ...]:
        """Every introducing commit (or `0` / the first commit: since the beginning)."""
        return tuple(dict.fromkeys(i for i, _ in self.pairs))

    @property
    def since_the_beginning(self) -> bool:
        return any(i in BEGINNING for i in self.introduced)


def parse_record(text: str, name: str, sha1: str | None = None) -> CveRecord:
    """A record from its JSON text (`name` for messages; `sha1` the `.sha1` file's text)."""
    if len(text) > MAX_BYTES:
        raise BadRecord(f"{name}: larger than {MAX_BYTES} bytes")
    if depth_of_json(text) > MAX_DEPTH:
        raise BadRecord(f"{name}: JSON nested deeper than {MAX_DEPTH}")
    try:
        data = json.loads(text)
        cve = str(data["cveMetadata"]["cveId"])
        cna = data["containers"]["cna"]
        affected = cna.get("affected", [])
        title = str(cna.get("title", ""))
        if not isinstance(affected, list):
            raise TypeError("affected is not a list")
        pairs: list[tuple[str, Oid | None]] = []
        files: list[str] = []
        for block in affected:
            files += [str(f) for f in block.get("programFiles", []) if isinstance(f, str)]
            for version in block.get("versions", []):
                if version.get("versionType") != "git":
                    continue
                introduced = str(version.get("version", "")).lower()
                fixed = str(version.get("lessThan", "")).lower() or None
                if introduced not in BEGINNING and not _HEX.fullmatch(introduced):
                    raise ValueError(f"introducing commit {introduced[:50]!r}")
                if fixed is not None and not _HEX.fullmatch(fixed):
                    raise ValueError(f"fixing commit {fixed[:50]!r}")
                pairs.append((introduced, None if fixed is None else Oid(fixed)))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise BadRecord(f"{name}: not a CVE JSON 5 record as the kernel's ({error})") from None
    if not _ID.fullmatch(cve):
        raise BadRecord(f"{name}: {cve[:40]!r} is not a CVE id")
    mainline = tuple(
        Oid(line.strip().lower()) for line in (sha1 or "").splitlines() if line.strip()
    )
    if any(not _HEX.fullmatch(m) for m in mainline):
        raise BadRecord(f"{name}: its .sha1 holds a line that is not a commit id")
    return CveRecord(
        cve,
        title.replace("\n", " ")[:300],
        tuple(dict.fromkeys(pairs)),
        mainline,
        tuple(dict.fromkeys(files)),
        hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16],
    )


@dataclass(frozen=True, slots=True)
class RecordFile:
    """A record file found, not yet read: its name, a key naming its content without
    reading it (its blob ids in a git tree; its path, size and modification time in a
    directory), and how to read its JSON text and the `.sha1` beside it."""

    name: str
    key: str
    load: Callable[[], tuple[str, str | None]]


def changed_since(path: Path, ref: str | None, since: str) -> set[str]:
    """The record files the records repository at `path` added or changed after `since`."""
    return {
        name for name in files_changed_since(path, ref or "HEAD", since) if name.endswith(".json")
    }


def read_records(path: Path, ref: str | None = None) -> Iterator[RecordFile]:
    """Every `CVE-*.json` under `path` but those under a `rejected`, `testing` or `reserved`
    directory (the kernel CVE team's rejected CVEs, drafts, reserved ids), in name order:
    files of a directory (a checkout of the records repository), or, for a bare git
    repository (or with `ref`), the blobs of its tree at `ref` (default HEAD). A file past
    `MAX_BYTES` is read cut, and refused by `parse_record`."""
    if path.is_dir() and ref is None and not _is_bare(path):
        for found in sorted(path.rglob("CVE-*.json")):
            name = str(found.relative_to(path))
            if found.is_symlink() or not found.is_file() or _rejected(name):
                continue
            sha1 = found.with_suffix(".sha1")
            has_sha1 = sha1.is_file() and not sha1.is_symlink()
            key = f"file:{name}:{_stamp(found)}:{_stamp(sha1) if has_sha1 else '-'}"
            yield RecordFile(name, key, functools.partial(_load_files, found, sha1, has_sha1))
        return
    yield from _records_in_git(path, ref or "HEAD")


def _stamp(path: Path) -> str:
    status = path.stat()
    return f"{status.st_size}:{status.st_mtime_ns}"


def _load_files(found: Path, sha1: Path, has_sha1: bool) -> tuple[str, str | None]:
    return _read(found), _read(sha1) if has_sha1 else None


_UNPUBLISHED = ("rejected", "testing", "reserved")
"""Directories of the kernel CVE team's repository whose records are not published CVEs:
rejected ones, drafts under review, ids reserved for later."""


def _rejected(name: str) -> bool:
    return any(part in _UNPUBLISHED for part in Path(name).parts[:-1])


def _is_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_BYTES + 1).decode("utf-8", errors="replace")
    except OSError as error:
        raise BackportrError(f"cannot read {path}: {error.strerror}") from None


def _records_in_git(path: Path, ref: str) -> Iterator[RecordFile]:
    blobs = tree_blobs(path, ref, lambda n: n.endswith((".json", ".sha1")))
    for name in sorted(blobs):
        if not name.endswith(".json") or not Path(name).name.startswith("CVE-"):
            continue
        if _rejected(name):
            continue
        sha1 = blobs.get(name[: -len(".json")] + ".sha1")
        key = f"blob:{blobs[name]}:{sha1 or '-'}"
        yield RecordFile(name, key, functools.partial(_load_blobs, path, blobs[name], sha1))


def _load_blobs(path: Path, blob: str, sha1: str | None) -> tuple[str, str | None]:
    text = blob_text(path, blob, MAX_BYTES)
    return text, blob_text(path, sha1, MAX_BYTES) if sha1 else None


def record_to_json(record: CveRecord) -> dict[str, object]:
    return {
        "cve": record.cve,
        "title": record.title,
        "pairs": [list(p) for p in record.pairs],
        "mainline": list(record.mainline),
        "files": list(record.files),
        "digest": record.digest,
    }


def record_from_json(data: dict[str, Any]) -> CveRecord:
    return CveRecord(
        str(data["cve"]),
        str(data["title"]),
        tuple((str(i), None if f is None else Oid(str(f))) for i, f in data["pairs"]),
        tuple(Oid(str(m)) for m in data["mainline"]),
        tuple(str(f) for f in data["files"]),
        str(data["digest"]),
    )
