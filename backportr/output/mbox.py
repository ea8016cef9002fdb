"""Render patches as `git format-patch` mails: an mbox on stdout, or one file per patch plus
a quilt `series` file in a directory. Ready for `git am` and `git send-email`.

Headers are encoded as RFC 2047 where they are not ASCII (an author such as Uwe
Kleine-König) and folded at 78 columns, as git writes them; the body is 8-bit UTF-8. In an
mbox of several patches, body lines that a mail reader would take for a message separator
(`From `, `>From `, ...) get one more `>` (mboxrd: `git am --patch-format=mboxrd` takes them
back off); one file per patch needs no escaping.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from email.header import Header
from email.utils import formataddr
from pathlib import Path

from backportr import __version__
from backportr.errors import BackportrError
from backportr.output import write_atomically
from backportr.patches import Patch

_FROM_LINE = re.compile(r"^(>*From )", re.MULTILINE)
_RECORD = ".backportr-series"  # the patch names backportr wrote into the directory


def _header(name: str, value: str) -> str:
    """`Name: value`, RFC 2047-encoded when not ASCII, folded as git folds it."""
    charset = "us-ascii" if value.isascii() else "utf-8"
    encoded = Header(value, charset, header_name=name, maxlinelen=78).encode(linesep="\n")
    return f"{name}: {encoded}\n"


def _address(name: str, email: str) -> str:
    if name.isascii():
        return formataddr((name, email))
    return f"{Header(name, 'utf-8').encode()} <{email}>"


def render_patch(patch: Patch, *, escape_from: bool = False) -> str:
    body = f"{patch.body}---\n{patch.diffstat}\n{patch.diff}"
    if escape_from:
        body = _FROM_LINE.sub(r">\1", body)
    return (
        f"From {patch.commit} Mon Sep 17 00:00:00 2001\n"
        + _header("From", _address(patch.author_name, patch.author_email))
        + f"Date: {patch.date}\n"
        + _header("Subject", f"[{patch.prefix}] {patch.subject}")
        + "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        "\n"
        f"{body}"
        "-- \n"
        f"backportr {__version__}\n\n"
    )


def render_mbox(patches: Sequence[Patch]) -> str:
    return "".join(render_patch(p, escape_from=True) for p in patches)


def write_series(directory: Path, patches: Sequence[Patch]) -> list[Path]:
    """One file per patch, and the quilt `series` file. The names backportr wrote are kept in
    `.backportr-series` beside it: on a later run those lines of `series` (and those patch
    files) are replaced, every other line is kept, and a patch file of the same name that
    backportr did not write is never overwritten. Each file is written atomically."""
    series_path = directory / "series"
    record = directory / _RECORD
    old = series_path.read_text(encoding="utf-8").splitlines() if series_path.exists() else []
    ours = set(record.read_text(encoding="utf-8").split()) if record.exists() else set()
    for patch in patches:
        path = directory / patch.filename
        if path.exists() and patch.filename not in ours:
            raise BackportrError(
                f"{path} exists and was not written by backportr; choose another -o directory"
            )
    written = []
    for patch in patches:
        path = directory / patch.filename
        write_atomically(path, render_patch(patch))
        written.append(path)
    names = [p.name for p in written]
    for name in ours - set(names):
        (directory / name).unlink(missing_ok=True)  # our own earlier run's, not in this series
    kept = [line for line in old if (line.split() or [""])[0] not in ours | set(names)]
    write_atomically(series_path, "".join(line + "\n" for line in kept + names))
    write_atomically(record, "".join(name + "\n" for name in names))
    return written
