"""`backportr resolve`: the series for a target on each branch, in every output format (text,
JSON, script, mbox with cover letter, dot/svg/html)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from backportr.app.console import Console
from backportr.cli.app import (  # the app and what every command shares
    BranchOption,
    IndexOption,
    PatternOption,
    RepoOption,
    UpstreamOption,
    app,
    complete_refs,
    default_branches,
    format_option,
    git_config,
    make_settings,
)
from backportr.cli.progress import TerminalProgress
from backportr.errors import BackportrError, UsageError
from backportr.settings import DEFAULT_CONFLICT_DEPTH, DEFAULT_MAX_COMMITS
from backportr.text.annotations import ANNOTATIONS

if TYPE_CHECKING:
    from backportr.output.patchset import MboxOptions


class Siblings(StrEnum):
    none = "none"
    earlier = "earlier"
    all = "all"


def _annotation(repo: Path, asked: str | None) -> str | None:
    """--annotation, else backportr.annotation, else None (each branch's learned form); a
    name not in the table is a usage error, one line."""
    value = asked or git_config(repo).value("backportr.annotation")
    if value is not None and value not in ANNOTATIONS:
        where = "--annotation" if asked else "backportr.annotation"
        raise UsageError(f"{where} is one of {', '.join(ANNOTATIONS.names())}, not {value!r}")
    return value


@app.command("resolve")
def resolve_command(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            help="The upstream commits to backport: one series for all of them on each branch.",
            metavar="TARGET...",
            show_default=False,
            autocompletion=complete_refs,
        ),
    ] = None,
    stdin: Annotated[
        bool,
        typer.Option(
            "--stdin", help="Read more targets from stdin: one id per line, '#' comments."
        ),
    ] = False,
    branch: BranchOption = None,
    branches: Annotated[
        str | None,
        typer.Option(
            "--branches", help="All branches matching a pattern, e.g. 'linux-*.y'.", metavar="GLOB"
        ),
    ] = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    output_format: Annotated[str, format_option("resolve")] = "text",
    max_commits: Annotated[
        int,
        typer.Option(
            "--max-commits", min=1, help="Stop the closure at this many commits.", metavar="N"
        ),
    ] = DEFAULT_MAX_COMMITS,
    conflict_depth: Annotated[
        int,
        typer.Option(
            "--conflict-depth",
            min=0,
            help="How deep to look for commits that resolve conflicts (0: never; past the "
            "first level, retained only when the series then applies).",
            metavar="N",
        ),
    ] = DEFAULT_CONFLICT_DEPTH,
    symbols: Annotated[
        bool,
        typer.Option(
            "--symbols/--no-symbols",
            help="Look for commits that introduced identifiers a member uses.",
        ),
    ] = True,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write to this file (atomically); with --format mbox, a directory "
            "of patches and a series file.",
            metavar="FILE",
        ),
    ] = None,
    annotation: Annotated[
        str | None,
        typer.Option(
            "--annotation",
            metavar="FORM",
            help="mbox, script: the upstream annotation: "
            + ", ".join(f"{f.name} ('{f.example}')" for f in ANNOTATIONS)
            + "; default: backportr.annotation, else the form the branch's own backports use "
            "(greg where none).",
        ),
    ] = None,
    signoff: Annotated[
        bool,
        typer.Option(
            "--signoff",
            "-s",
            help="mbox: add your Signed-off-by: (user.name and user.email of git config) last.",
        ),
    ] = False,
    culprits: Annotated[
        str | None,
        typer.Option(
            "--culprits",
            help="When an absent culprit joins: 'evidence' (tagged for stable, taken by another "
            "stable branch), 'always', or 'auto' (evidence where the project tags fixes for "
            "stable, always where it never does). Default: git config backportr.culprits, "
            "else auto.",
            metavar="POLICY",
        ),
    ] = None,
    to: Annotated[
        list[str] | None,
        typer.Option(
            "--to", help="mbox: a To: of every mail (repeatable), as format-patch.", metavar="ADDR"
        ),
    ] = None,
    cc: Annotated[
        list[str] | None,
        typer.Option("--cc", help="mbox: a Cc: of every mail (repeatable).", metavar="ADDR"),
    ] = None,
    cover: Annotated[
        bool,
        typer.Option(
            "--cover-letter",
            help="mbox: a 0/N mail first, saying what the series is and why each patch is in "
            "it; the patches reply to it.",
        ),
    ] = False,
    lore: Annotated[
        str | None,
        typer.Option(
            "--lore",
            help="Read each member's posting from this archive (e.g. https://lore.kernel.org/all/"
            "): the cover letter's subject and how many patches were posted.",
            metavar="URL",
        ),
    ] = None,
    with_siblings: Annotated[
        Siblings,
        typer.Option(
            "--with-siblings",
            help="Absent patches of a member's posting join the series: 'earlier' ones (as "
            "prerequisites), 'all', or 'none' (shown only).",
        ),
    ] = Siblings.none,
    numbered: Annotated[
        bool,
        typer.Option(
            "--numbered",
            "-n",
            help="mbox: subjects say [PATCH n/m] even for a single patch (git format-patch -n).",
        ),
    ] = False,
    partial: Annotated[
        bool,
        typer.Option(
            "--partial",
            help="mbox: when a member is left out, write the members before it (and list the "
            "rest); without it the series is written whole or not at all (exit 4).",
        ),
    ] = False,
    mboxrd: Annotated[
        bool,
        typer.Option(
            "--mboxrd",
            help="mbox on stdout: escape body lines starting 'From ' (apply with git am "
            "--patch-format=mboxrd).",
        ),
    ] = False,
    subject_prefix: Annotated[
        str,
        typer.Option(
            "--subject-prefix",
            help="mbox: the subject's prefix before the branch, as git format-patch's "
            "(e.g. 'PATCH v2', 'RFC PATCH').",
            metavar="PREFIX",
        ),
    ] = "PATCH",
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print nothing (-o still writes); the exit code answers: 0 "
            "every series ready or nothing to do, 4 a series needs a human.",
        ),
    ] = False,
) -> None:
    """The complete, ordered series to backport TARGET (or several) onto each branch, with
    evidence."""
    from backportr.app.resolve import ResolveOptions, ResolveRequest, resolve

    names = _branches(repo, branch, branches, branch_pattern)
    settings = make_settings(
        repo, upstream, names, branch_pattern, index, max_commits=max_commits, culprits=culprits
    )
    search = ResolveOptions(conflict_depth, symbols, with_siblings.value, lore)
    patched = output_format in ("script", "mbox")  # annotated and signed off
    request = ResolveRequest(
        settings=settings,
        targets=_targets(targets or [], stdin),
        search=search,
        output_format=output_format,
        output=output,
        annotation=_annotation(repo, annotation) if patched else None,
        signoff=_signoff(repo) if patched and signoff else None,
        patches=_mbox(repo, to, cc, cover, numbered, partial, mboxrd, subject_prefix),
        commit_url=git_config(repo).commit_url() if output_format == "html" else None,
    )
    progress = TerminalProgress(enabled=False if quiet else None)
    outcome = resolve(request, Console(progress=progress, quiet=quiet))
    raise typer.Exit(int(outcome.exit_code))


def _mbox(
    repo: Path,
    to: list[str] | None,
    cc: list[str] | None,
    cover: bool,
    numbered: bool,
    partial: bool,
    mboxrd: bool,
    subject_prefix: str,
) -> MboxOptions:
    from backportr.output.patchset import MboxOptions

    return MboxOptions(
        mailing=_mailing(repo, to, cc, cover),
        numbered=numbered,
        partial=partial,
        mboxrd=mboxrd,
        subject_prefix=subject_prefix,
    )


def _branches(
    repo: Path, named: list[str] | None, pattern: str | None, branch_pattern: str | None
) -> list[str]:
    """The branches asked for: named ones, then those matching `--branches`, else the
    configured ones."""
    names = list(named or [])
    if pattern:
        from backportr.git.repo import Repo

        names += [n for n in Repo(repo).stable_branches(pattern) if n not in names]
        if len(names) == len(named or []):
            raise UsageError(f"--branches {pattern!r} matches no branch")
    return names or default_branches(repo, branch_pattern)


def _targets(named: list[str], stdin: bool) -> list[str]:
    """The targets named as arguments, then those read from stdin (`--stdin`)."""
    out = list(named)
    if stdin:
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        text_in = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        for number, line in enumerate(text_in.split("\n"), 1):
            if "\x00" in line or "\ufffd" in line:
                raise UsageError(f"stdin line {number}: a NUL or non-UTF-8 byte; one id a line")
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            if len(text.split()) != 1:
                raise UsageError(f"stdin line {number}: one commit id per line, not {text!r}")
            out.append(text)
    if not out:
        raise UsageError("name a TARGET (or give --stdin ids, one per line)")
    return out


def _mailing(repo: Path, to: list[str] | None, cc: list[str] | None, cover: bool):  # type: ignore[no-untyped-def]
    """Recipients, cover letter and threading of --format mbox; the sender is the backporter
    (user.name and user.email) or backportr.from."""
    import email.utils

    from backportr.output.mbox import Mailing

    config = git_config(repo)
    identity = config.identity()
    sender = f"{identity[0]} <{identity[1]}>" if identity else config.value("backportr.from")
    domain = email.utils.parseaddr(sender or "")[1].partition("@")[2] or "backportr.invalid"
    return Mailing(tuple(to or ()), tuple(cc or ()), cover, sender, domain)


def _signoff(repo: Path) -> str:
    identity = git_config(repo).identity()
    if identity is None:
        raise BackportrError("--signoff needs user.name and user.email in git config")
    return f"{identity[0]} <{identity[1]}>"
