"""`--format mbox`: each branch's series as mails, whole or (with `partial`) the prefix that
applies, on stdout as one mbox or into a queue directory.

A series is written whole or not at all: when a member is left out (it conflicts, or
depends on one that does) nothing of that branch is written and each left-out member is
said in one line; `partial` writes the members before the first left-out one, with every
`Stable-dep-of:` naming a member inside, and lists the rest in the cover letter and as
`# left out:` comments in `series`. A cover letter is a file of its own
(`0000-cover-letter.patch`, as `git format-patch` writes it), never inside the mbox, which
`git am` takes whole.
"""

from __future__ import annotations

import email.utils
import io
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from backportr.errors import BackportrError
from backportr.git.repo import Repo
from backportr.git.trial import TrialApplier
from backportr.infra.files import read_regular
from backportr.model import BranchReport, Oid, Report, short
from backportr.output import inside, make_directory, write_atomically
from backportr.output.mbox import Cover, Mailing, cover_for, render_cover, render_mbox, render_patch
from backportr.output.patches import Annotation, Patch, applicable_prefix, build_patches, dropped
from backportr.output.queue import COVER, QueuedFile, QueueDirectory
from backportr.output.safe import directory_name, one_line
from backportr.text.annotations import DEFAULT


@dataclass(frozen=True, slots=True)
class MboxOptions:
    """How the patches are written: annotation, sign-off, the mails' recipients and cover
    letter, file names, and what happens when a member is left out."""

    annotations: Mapping[str, Annotation] = field(default_factory=dict)  # branch -> form
    signoff: str | None = None
    mailing: Mailing = field(default_factory=Mailing)
    numbered: bool = False  # `[PATCH n/m]` even for one patch (git format-patch -n)
    partial: bool = False  # write the applicable prefix when a member is left out
    mboxrd: bool = False  # escape body `From ` lines (git am --patch-format=mboxrd)
    subject_prefix: str = "PATCH"
    branch_template: str = "linux-{v}.y"  # the repository's branch naming (branchPattern)


class SeriesWriter:
    """Writes the series of each branch of one report; `say` takes a line for stderr."""

    def __init__(
        self, repo: Repo, applier: TrialApplier, options: MboxOptions, say: Callable[[str], None]
    ) -> None:
        self.repo = repo
        self.applier = applier
        self.options = options
        self.say = say
        self.incomplete = False  # a branch's series was left out, whole or in part

    def write(
        self, report: Report, tips: dict[str, Oid], output: Path | None, stdout: TextIO | None
    ) -> None:
        """Every branch of `report`: to `stdout` (one mbox), into a file `output` named
        `*.mbox` (that mbox, as `git format-patch --stdout > PATH` writes it), or into
        `output` (a queue directory, a subdirectory per branch when several)."""
        if output is not None and output.suffix == ".mbox" and not output.is_dir():
            buffer = io.StringIO()
            self.write(report, tips, None, buffer)
            if buffer.getvalue():
                write_atomically(output, buffer.getvalue())
                self.say(f"{len(report.branches)} branch(es) written to {output}")
            return
        now = time.time()
        targets = report.targets or (report.target,)
        owner = ",".join(targets)
        for branch in report.branches:
            stamp = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime(now))}-{short(targets[0])}"
            stamp += f"-{branch.branch}"
            patches, left_out = self._patches(branch, tips[branch.branch])
            if patches is None:
                continue
            cover = self._cover(report, branch, patches, left_out, now)
            if output is None:
                self._to_stdout(branch, patches, cover, stamp, stdout, len(report.branches))
                continue
            several = len(report.branches) > 1
            if several:
                make_directory(output)  # a subdirectory per branch in it
            directory = output / directory_name(branch.branch) if several else output
            self._to_directory(directory, owner, branch, patches, cover, left_out, stamp)

    def _patches(self, branch: BranchReport, tip: Oid) -> tuple[list[Patch] | None, list[str]]:
        """The patches to write and a line per member left out; None when the series is
        not whole and `partial` was not asked for."""
        left_out = dropped(branch)
        if not left_out:
            members = list(branch.series)
            rest: dict[Oid, str] = {}
        elif self.options.partial:
            members, rest = applicable_prefix(branch, left_out)
        else:
            members, rest = [], left_out
        subjects = {m.commit: m.subject for m in branch.series}
        lines = [f"{short(c)} ({one_line(subjects.get(c, ''))}): {why}" for c, why in rest.items()]
        for line in lines:
            self.say(f"{branch.branch}: left out {line}")
        if left_out:
            self.incomplete = True
        if left_out and not self.options.partial:
            self.say(
                f"{branch.branch}: nothing written: the series is not whole "
                "(--partial writes the part that applies)"
            )
            return None, lines
        patches = build_patches(
            self.repo,
            self.applier,
            tip,
            branch,
            self.options.annotations.get(branch.branch, DEFAULT),
            self.options.signoff,
            members=members,
            prefix=self.options.subject_prefix,
            template=self.options.branch_template,
            numbered=self.options.numbered,
        )
        return patches, lines

    def _cover(
        self,
        report: Report,
        branch: BranchReport,
        patches: list[Patch],
        left_out: list[str],
        now: float,
    ) -> Cover | None:
        if not self.options.mailing.cover_letter or not patches:
            return None
        date = email.utils.formatdate(now, localtime=True)  # +hhmm, as git dates
        return cover_for(
            report.target, report.subject, branch, patches, date, left_out, report.targets
        )

    def _to_stdout(
        self,
        branch: BranchReport,
        patches: list[Patch],
        cover: Cover | None,
        stamp: str,
        stdout: TextIO | None,
        branches: int,
    ) -> None:
        mailing = self.options.mailing
        if cover is not None:  # beside the mbox, as git format-patch writes it
            name = COVER if branches == 1 else f"0000-cover-letter-{_file_part(branch.branch)}"
            name += "" if branches == 1 else ".patch"
            path = inside(Path("."), name)
            if path.exists() and not _written_by_us(path):
                raise BackportrError(
                    f"{path} exists and was not written by backportr; move it or use -o DIR"
                )
            write_atomically(path, render_cover(cover, mailing, stamp))
            self.say(f"{branch.branch}: cover letter in {path}")
        if stdout is not None:
            stdout.write(render_mbox(patches, mailing, stamp, mboxrd=self.options.mboxrd))

    def _to_directory(
        self,
        directory: Path,
        owner: str,
        branch: BranchReport,
        patches: list[Patch],
        cover: Cover | None,
        left_out: list[str],
        stamp: str,
    ) -> None:
        mailing = self.options.mailing
        files = [
            QueuedFile(
                p.filename,  # numbered by its place in the queue's series
                render_patch(p, mailing=mailing, stamp=stamp),
                p.commit,
            )
            for p in patches
        ]
        if cover is not None:
            files.insert(0, QueuedFile(COVER, render_cover(cover, mailing, stamp), None, False))
        result = QueueDirectory(directory).add(owner, files, left_out)
        for name in result.changed:
            self.say(
                f"{branch.branch}: {directory / name} was changed since backportr wrote it: "
                "left as it is, and no longer backportr's to replace"
            )
        for upstream, name in result.already:
            self.say(f"{branch.branch}: {short(upstream)} already queued as {name}, left there")
        written = sum(1 for p in result.written if p.name != COVER)
        self.say(f"{branch.branch}: {written} patch{'es' if written != 1 else ''} in {directory}")


def _file_part(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in name)


def _written_by_us(path: Path) -> bool:
    """A cover letter an earlier run wrote (a regular file that ends with backportr's
    signature); a FIFO or a device there is not read."""
    try:
        data = read_regular(path, 1 << 20)
    except BackportrError:
        return False
    return data is not None and b"\n-- \nbackportr " in data[-200:]
