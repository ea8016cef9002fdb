"""Render patches as `git format-patch` mails: an mbox on stdout, or one file per patch plus
a quilt `series` file in a directory. Ready for `git am` and `git send-email`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from backportr import __version__
from backportr.output import write_atomically
from backportr.patches import Patch


def render_patch(patch: Patch) -> str:
    return (
        f"From {patch.commit} Mon Sep 17 00:00:00 2001\n"
        f"From: {patch.author_name} <{patch.author_email}>\n"
        f"Date: {patch.date}\n"
        f"Subject: [{patch.prefix}] {patch.subject}\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        "\n"
        f"{patch.body}"
        "---\n"
        f"{patch.diffstat}\n"
        f"{patch.diff}"
        "-- \n"
        f"backportr {__version__}\n\n"
    )


def render_mbox(patches: Sequence[Patch]) -> str:
    return "".join(render_patch(p) for p in patches)


def write_series(directory: Path, patches: Sequence[Patch]) -> list[Path]:
    """One file per patch and a `series` file in quilt order, each written atomically."""
    written = []
    for patch in patches:
        path = directory / patch.filename
        write_atomically(path, render_patch(patch))
        written.append(path)
    write_atomically(directory / "series", "".join(p.name + "\n" for p in written))
    return written
