"""The command line: parse arguments, build Settings, call the core, render, exit.

No logic lives here. One boundary (main) turns BackportrError into its exit code and a
one-line message on stderr, and any other exception into exit 3 with a crash log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import pygit2
import typer

from backportr import __version__
from backportr.config import DEFAULT_MAX_COMMITS, Settings
from backportr.dbfault import explain
from backportr.errors import BackportrError, ExitCode, UsageError
from backportr.gitconfig import GitConfig
from backportr.model import CulpritPolicy, StatusResult
from backportr.output import write_atomically
from backportr.output.report import render_json, render_script, render_text
from backportr.output.status import render_status_json, render_status_text
from backportr.progress import TerminalProgress
from backportr.repo import DEFAULT_BRANCH_PATTERN, Repo
from backportr.workspace import open_workspace

if TYPE_CHECKING:
    from backportr.mail.sending import SmtpServer

_PLAIN_HELP = not sys.stdout.isatty()  # boxes and colour for a terminal; plain text for a pipe
app = typer.Typer(
    name="backportr",
    help="Find the complete, ordered series a Linux stable backport needs.",
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None if _PLAIN_HELP else "rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


class StatusFormat(StrEnum):
    text = "text"
    json = "json"


RepoOption = Annotated[
    Path,
    typer.Option(
        "--repo", help="The git repository (work tree or bare).", show_default=".", metavar="PATH"
    ),
]
UpstreamOption = Annotated[
    str | None,
    typer.Option(
        "--upstream",
        help="Upstream ref (default: origin/master, master, origin/main or main).",
        metavar="REF",
    ),
]
BranchOption = Annotated[
    list[str] | None,
    typer.Option(
        "--branch", "-b", help="Stable branch, e.g. linux-5.10.y (repeatable).", metavar="BRANCH"
    ),
]
PatternOption = Annotated[
    str | None,
    typer.Option(
        "--branch-pattern",
        help="Which branches the index covers (default: backportr.branchPattern, else "
        f"{DEFAULT_BRANCH_PATTERN}).",
        metavar="GLOB",
    ),
]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print nothing on success (errors still).")
]
IndexOption = Annotated[
    Path | None,
    typer.Option(
        "--index", help="Index file (default: <git dir>/backportr/index.sqlite).", metavar="FILE"
    ),
]


_OVERRIDES: list[str] = []  # -c KEY=VALUE, given before the command
_NO_REPLY = "backportr <backportr@localhost>"


def _config(repo: Path) -> GitConfig:
    return GitConfig(repo, _OVERRIDES)


def _smtp_server(repo: Path, server: str) -> SmtpServer:
    """HOST:PORT with the encryption, user and password file of git config."""
    from backportr.mail.sending import SmtpServer

    config = _config(repo)
    return SmtpServer.parse(
        server,
        config.value("backportr.smtpEncryption"),
        config.value("backportr.smtpUser"),
        config.value("backportr.smtpPassFile"),
    )


def _settings(
    repo: Path,
    upstream: str | None,
    branches: list[str] | None,
    pattern: str | None = None,
    index: Path | None = None,
    max_commits: int = DEFAULT_MAX_COMMITS,
) -> Settings:
    """The command line's values, and git config's (backportr.*) where it gave none."""
    config = _config(repo)
    return Settings(
        repo=repo,
        upstream=upstream or config.value("backportr.upstream"),
        branches=tuple(branches or ()),
        branch_pattern=pattern or config.value("backportr.branchpattern") or DEFAULT_BRANCH_PATTERN,
        index_path=index,
        max_commits=max_commits,
    )


def _default_branches(repo: Path, pattern: str | None) -> list[str]:
    """status and scan without -b: backportr.branches, else every branch the index covers."""
    config = _config(repo)
    configured = (config.value("backportr.branches") or "").split()
    if configured:
        return configured
    effective = pattern or config.value("backportr.branchpattern") or DEFAULT_BRANCH_PATTERN
    opened = Repo(repo)
    found = []
    for name in opened.stable_branches(effective):
        try:
            opened.branch(name)
        except BackportrError as stray:
            logging.getLogger("backportr").warning("skipped a branch: %s", stray)
            continue
        found.append(name)
    if not found:
        raise UsageError(
            f"no branch matches {effective!r}: give --branch, or set backportr.branches"
        )
    return found


@app.command("index")
def index_command(
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch: BranchOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Start the index afresh.")] = False,
    quiet: QuietOption = False,
) -> None:
    """Build or update the commit index (incremental; progress on a terminal)."""
    progress = TerminalProgress(enabled=False if quiet else None)
    settings = _settings(repo, upstream, branch, branch_pattern, index)
    try:
        with open_workspace(settings, progress=progress, rebuild=rebuild) as ws:
            progress.finish()
            if quiet:
                return
            for name, count in ws.stats.new_commits.items():
                typer.echo(f"{name}: {count} new commits indexed", err=True)
            for name in ws.stats.rewritten:
                typer.echo(
                    f"{name}: rewritten history detected, re-indexed from its fork point", err=True
                )
            typer.echo(f"{ws.index.count()} commits in {ws.index.path}")
    finally:
        progress.finish()


@app.command("status")
def status_command(
    commits: Annotated[
        list[str],
        typer.Argument(help="Upstream commits (ids, prefixes, refs).", metavar="COMMIT..."),
    ],
    branch: BranchOption = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    output_format: Annotated[
        StatusFormat, typer.Option("--format", "-f", help="Output format.")
    ] = StatusFormat.text,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print nothing; exit 0 when every commit is in every branch, 4 otherwise.",
        ),
    ] = False,
) -> None:
    """Is each upstream commit in each branch, and as which commit?"""
    branch = branch or _default_branches(repo, branch_pattern)
    progress = TerminalProgress(enabled=False if quiet else None)
    settings = _settings(repo, upstream, branch, branch_pattern, index)
    try:
        with open_workspace(settings, progress=progress) as ws:
            progress.finish()
            results = []
            for spec in commits:
                oid = ws.repo.resolve_commit(spec)
                info = ws.index.info(oid)
                subject = info.subject if info else ws.repo.message(oid).split("\n", 1)[0]
                presences = tuple(ws.presence.check(oid, b) for b in ws.branches)
                results.append(StatusResult(oid, subject, presences))
    finally:
        progress.finish()
    if quiet:
        everywhere = all(p.present for r in results for p in r.branches)
        raise typer.Exit(int(ExitCode.OK if everywhere else ExitCode.ATTENTION))
    render = render_status_json if output_format is StatusFormat.json else render_status_text
    sys.stdout.write(render(results))


class ResolveFormat(StrEnum):
    text = "text"
    json = "json"
    script = "script"
    mbox = "mbox"
    dot = "dot"
    svg = "svg"
    html = "html"


class Siblings(StrEnum):
    none = "none"
    earlier = "earlier"
    all = "all"


class AnnotationStyle(StrEnum):
    greg = "greg"
    sasha = "sasha"


def _render_html(report):  # type: ignore[no-untyped-def]
    import shutil

    from backportr.output.graph import render_svg
    from backportr.output.html import render_html

    return render_html(report, render_svg(report) if shutil.which("dot") else None)


def _render_dot(report):  # type: ignore[no-untyped-def]
    from backportr.output.graph import render_dot

    return render_dot(report)


def _render_svg(report):  # type: ignore[no-untyped-def]
    from backportr.output.graph import render_svg

    return render_svg(report)


_RENDERERS = {
    ResolveFormat.text: render_text,
    ResolveFormat.json: render_json,
    ResolveFormat.script: render_script,
    ResolveFormat.dot: _render_dot,
    ResolveFormat.svg: _render_svg,
    ResolveFormat.html: _render_html,
}


@app.command("resolve")
def resolve_command(
    target: Annotated[
        str, typer.Argument(help="The upstream commit to backport.", metavar="TARGET")
    ],
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
    output_format: Annotated[
        ResolveFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ResolveFormat.text,
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
            help="How deep to look for commits that resolve conflicts (0: never).",
            metavar="N",
        ),
    ] = 1,
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
        AnnotationStyle | None,
        typer.Option(
            "--annotation",
            help="mbox: 'commit X upstream.' (greg) or '[ Upstream commit X ]' (sasha); "
            "default: backportr.annotation, else greg.",
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
            "stable branch) or 'always'. Default: git config backportr.culprits, else evidence.",
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
    """The complete, ordered series to backport TARGET onto each branch, with evidence."""
    from backportr.resolve import Resolver  # networkx costs 0.1 s to import: only when needed

    names = list(branch or [])
    if branches:
        from backportr.repo import Repo

        names += [n for n in Repo(repo).stable_branches(branches) if n not in names]
    if branches and len(names) == len(branch or []):
        raise UsageError(f"--branches {branches!r} matches no branch")
    names = names or _default_branches(repo, branch_pattern)
    progress = TerminalProgress()
    settings = _settings(repo, upstream, names, branch_pattern, index, max_commits=max_commits)
    try:
        with open_workspace(settings, progress=progress) as ws:
            oid = ws.repo.resolve_commit(target)
            resolver = Resolver(
                ws,
                max_commits=max_commits,
                symbols=symbols,
                conflict_depth=conflict_depth,
                culprits=_culprit_policy(culprits or _config(repo).value("backportr.culprits")),
                siblings=with_siblings.value,
                progress=progress,
            )
            report = resolver.resolve(oid, ws.branches)
            if lore:
                from backportr.mail.covers import with_covers
                from backportr.mail.lore import Lore

                report = with_covers(report, Lore(lore), ws.index)
            steps = None
            if output_format is ResolveFormat.script:
                from backportr.patches import script_steps

                style = annotation or AnnotationStyle(
                    _config(repo).value("backportr.annotation") or "greg"
                )
                who = _signoff(repo) if signoff else None
                steps = {
                    b.branch: script_steps(ws.repo, b, style.value, who) for b in report.branches
                }
            if output_format is ResolveFormat.mbox:
                who = _signoff(repo) if signoff else None
                style = annotation or AnnotationStyle(
                    _config(repo).value("backportr.annotation") or "greg"
                )
                _write_mbox(
                    ws, resolver, report, output, style, who, _mailing(repo, to, cc, cover), quiet
                )
    finally:
        progress.finish()
    if output_format is not ResolveFormat.mbox:
        text = (
            render_script(report, steps)
            if output_format is ResolveFormat.script
            else _RENDERERS[output_format](report)
        )
        if output is not None:
            write_atomically(output, text)
        elif not quiet:
            sys.stdout.write(text)
    if any(
        b.status == "conflict" or any(m.apply == "conflict" for m in b.series)
        for b in report.branches
    ):
        raise typer.Exit(int(ExitCode.ATTENTION))  # a branch's series needs a human


def _culprit_policy(value: str | None) -> CulpritPolicy:
    if value in (None, "", "evidence"):
        return "evidence"
    if value == "always":
        return "always"
    raise UsageError(f"--culprits (or backportr.culprits) is 'evidence' or 'always', not {value!r}")


def _mailing(repo: Path, to: list[str] | None, cc: list[str] | None, cover: bool):  # type: ignore[no-untyped-def]
    """Recipients, cover letter and threading of --format mbox; the sender is the backporter
    (user.name and user.email) or backportr.from."""
    import email.utils

    from backportr.output.mbox import Mailing

    config = _config(repo)
    name, address = config.value("user.name"), config.value("user.email")
    sender = f"{name} <{address}>" if name and address else config.value("backportr.from")
    domain = email.utils.parseaddr(sender or "")[1].partition("@")[2] or "backportr.invalid"
    return Mailing(tuple(to or ()), tuple(cc or ()), cover, sender, domain)


def _signoff(repo: Path) -> str:
    config = _config(repo)
    name, email = config.value("user.name"), config.value("user.email")
    if not name or not email:
        raise BackportrError("--signoff needs user.name and user.email in git config")
    return f"{name} <{email}>"


def _write_mbox(  # type: ignore[no-untyped-def]
    ws,
    resolver,
    report,
    output: Path | None,
    annotation: AnnotationStyle,
    signoff: str | None,
    mailing,
    quiet: bool = False,
) -> None:
    """--format mbox: one mbox on stdout, or a directory (per branch when several)."""
    import email.utils

    from backportr.output.mbox import cover_for, render_mbox, write_series
    from backportr.patches import build_patches, dropped

    tips = {b.name: b.tip for b in ws.branches}
    for branch in report.branches:
        patches = build_patches(
            ws.repo, resolver.applier, tips[branch.branch], branch, annotation.value, signoff
        )
        for commit, why in dropped(branch).items():
            if not quiet:
                typer.echo(f"{branch.branch}: left out {commit[:12]}: {why}", err=True)
        now = time.time()
        stamp = f"{time.strftime('%Y%m%d%H%M%S', time.gmtime(now))}-{report.target[:12]}"
        stamp += f"-{branch.branch}"
        cover = None
        if mailing.cover_letter and patches:
            date = email.utils.formatdate(now, localtime=False)
            cover = cover_for(report.target, report.subject, branch, patches, date)
        if output is None:
            if not quiet:
                sys.stdout.write(render_mbox(patches, mailing, cover, stamp))
        else:
            directory = output / branch.branch if len(report.branches) > 1 else output
            written = write_series(directory, patches, mailing, cover, stamp)
            if not quiet:
                typer.echo(f"{branch.branch}: {len(written)} patches in {directory}", err=True)


class ScanFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


@app.command("scan")
def scan_command(
    branch: BranchOption = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only upstream commits after REV, or committed after DATE.",
            metavar="REV|DATE",
        ),
    ] = None,
    range_: Annotated[
        str | None, typer.Option("--range", help="Only upstream commits in A..B.", metavar="A..B")
    ] = None,
    output_format: Annotated[
        ScanFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ScanFormat.text,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (atomically).", metavar="FILE"),
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option("--state", help="Remember what was reported (SQLite).", metavar="FILE"),
    ] = None,
    new_only: Annotated[
        bool, typer.Option("--new-only", help="Only findings not reported by earlier runs.")
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", "-j", min=1, help="Spread the targets over N processes.", metavar="N"
        ),
    ] = 1,
    ignore: Annotated[
        Path | None,
        typer.Option("--ignore", help="File of path globs to leave out.", metavar="FILE"),
    ] = None,
    dropped: Annotated[
        Path | None,
        typer.Option(
            "--dropped", help="The stable queue's dropped list ('<X.Y> <40 hex>').", metavar="FILE"
        ),
    ] = None,
    untagged: Annotated[
        str,
        typer.Option(
            "--untagged",
            help="Missing fixes without Cc: stable: include (by priority), separate (after "
            "every tagged one) or skip.",
            metavar="MODE",
        ),
    ] = "include",
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print nothing (-o still writes the report); the exit code "
            "answers: 0 no findings, 4 findings, 1 errors.",
        ),
    ] = False,
) -> None:
    """Which fixes each branch lacks, and which of its backports are incomplete.

    Exit 0: no findings; 4: findings; 1: errors."""
    from backportr.output.scan import (
        RunInfo,
        render_scan_html,
        render_scan_json,
        render_scan_markdown,
        render_scan_text,
    )
    from backportr.scan import Policy, run_scan, run_scan_parallel
    from backportr.scan_state import ScanState

    branch = branch or _default_branches(repo, branch_pattern)
    if since and range_:
        raise UsageError("--since and --range exclude each other")
    if new_only and state is None:
        raise UsageError("--new-only needs --state FILE")
    if untagged not in ("include", "separate", "skip"):
        raise UsageError(f"--untagged is include, separate or skip, not {untagged!r}")
    policy = Policy.load(ignore, dropped, untagged)  # type: ignore[arg-type]
    progress = TerminalProgress()
    settings = _settings(repo, upstream, branch, branch_pattern, index)
    holder = ScanState(state) if state is not None else None
    started, clock = datetime.now(UTC), time.monotonic()
    try:
        if jobs > 1:
            scans = run_scan_parallel(
                settings, policy, jobs, since=since, range_=range_, progress=progress
            )
        else:
            scans = run_scan(settings, policy, since=since, range_=range_, progress=progress)
        progress.finish()
        every = [f for s in scans for f in s.findings]
        if holder is not None and new_only:
            fresh = {f.key for f in holder.new(every)}
            for s in scans:
                s.findings = [f for f in s.findings if f.key in fresh]
        run = RunInfo(
            repository=str(Path(repo).resolve()),
            started=started.isoformat(timespec="seconds"),
            seconds=time.monotonic() - clock,
            range=f"--since {since}" if since else f"--range {range_}" if range_ else None,
            commit_url=_config(repo).value("backportr.commitUrl"),
        )
        if output_format is ScanFormat.json:
            text = render_scan_json(scans, run)
        elif output_format is ScanFormat.html:
            text = render_scan_html(scans, run)
        elif output_format is ScanFormat.markdown:
            text = render_scan_markdown(scans)
        else:
            text = render_scan_text(scans)
        if output is not None:
            write_atomically(output, text)
        elif not quiet:
            sys.stdout.write(text)
            sys.stdout.flush()  # a full device fails here, before the state says "reported"
        if holder is not None and (output is not None or not quiet):
            holder.record(every)  # only once the report describing them is safely out
    finally:
        progress.finish()
        if holder is not None:
            holder.close()
    errors = [e for s in scans for e in s.errors]
    for error in errors:  # errors are said even with -q
        typer.echo(f"backportr: scan error: {error}", err=True)
    if errors:
        raise typer.Exit(int(ExitCode.BAD_INPUT))
    if any(s.findings for s in scans):
        raise typer.Exit(int(ExitCode.ATTENTION))


mail_app = typer.Typer(
    help="Check mails from stable@ (files, stdin, or a lore archive).",
    no_args_is_help=True,
    rich_markup_mode=None if _PLAIN_HELP else "rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(mail_app, name="mail")


class MailFormat(StrEnum):
    text = "text"
    json = "json"
    reply = "reply"


@mail_app.command("check")
def mail_check_command(
    message: Annotated[
        str,
        typer.Argument(help="A file (.eml or mbox), -, a lore URL, or a Message-ID (with --lore)."),
    ],
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    lore: Annotated[
        str | None,
        typer.Option(
            "--lore", help="Inbox URL, e.g. https://lore.kernel.org/stable/", metavar="URL"
        ),
    ] = None,
    output_format: Annotated[
        MailFormat, typer.Option("--format", "-f", help="Output format.")
    ] = MailFormat.text,
    send: Annotated[bool, typer.Option("--send", help="Send the reply (needs --smtp).")] = False,
    smtp: Annotated[
        str | None,
        typer.Option("--smtp", help="HOST:PORT of the mail server.", metavar="HOST:PORT"),
    ] = None,
    sender: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="The reply's From: (default: backportr.from, user.email).",
            metavar="ADDR",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print nothing (a reply is still sent with --send); the exit "
            "code answers: 0 nothing missing, 4 something missing or conflicting.",
        ),
    ] = False,
) -> None:
    """What a backport submission, FAILED mail or patch is missing; the reply in the thread.

    Exit 0: nothing missing or nothing to check; 4: something is missing or conflicts."""
    from backportr.mail.check import Checker
    from backportr.mail.reply import compose_reply, render_check_json, render_check_text
    from backportr.mail.sending import send_message
    from backportr.mail.source import load

    config = _config(repo)
    lore = lore or config.value("backportr.lore")
    smtp = smtp or config.value("backportr.smtp")
    sender = sender or config.value("backportr.from") or _NO_REPLY
    if send and not smtp:
        raise UsageError("--send needs --smtp HOST:PORT (or backportr.smtp)")
    mail, thread = load(message, lore)
    progress = TerminalProgress()
    try:
        with open_workspace(
            _settings(repo, upstream, [], branch_pattern, index), progress=progress
        ) as ws:
            progress.finish()
            from backportr.mail.lore import Lore

            check = Checker(ws, Lore(lore) if lore else None).check(mail, thread)
    finally:
        progress.finish()
    say = (lambda text: None) if quiet else (lambda text: typer.echo(text, err=True))
    out = (lambda text: None) if quiet else sys.stdout.write
    if check.skipped and (output_format is MailFormat.reply or send):
        # nothing to answer: no reply (and no Cc: stable) for a mail that was not checked
        say(f"no reply: skipped: {check.skipped}")
    elif output_format is MailFormat.reply or send:
        reply = compose_reply(check, sender=sender)
        if send and smtp:
            send_message(reply, _smtp_server(repo, smtp))
            say(f"sent {reply['Message-ID']} to {reply['To']}")
        if output_format is MailFormat.reply:
            out(reply.as_string())
    if output_format is MailFormat.text:
        out(render_check_text(check))
    elif output_format is MailFormat.json:
        out(render_check_json(check))
    if check.actionable:
        raise typer.Exit(int(ExitCode.ATTENTION))


@app.command("bot")
def bot_command(
    lore: Annotated[
        str | None,
        typer.Option(
            "--lore",
            help="Inbox URL, e.g. https://lore.kernel.org/stable/ (or backportr.lore)",
            metavar="URL",
        ),
    ] = None,
    repo: RepoOption = Path("."),
    upstream: UpstreamOption = None,
    branch_pattern: PatternOption = None,
    index: IndexOption = None,
    query: Annotated[
        str | None,
        typer.Option(
            "--query", help="A search (default: the inbox's new messages).", metavar="SEARCH"
        ),
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="One poll, then exit (for cron).")] = False,
    quiet: QuietOption = False,
    interval: Annotated[
        float, typer.Option("--interval", min=1, help="Seconds between polls.", metavar="SECONDS")
    ] = 300.0,
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            help="What was processed (SQLite; default: backportr.botState, else "
            "<git dir>/backportr/bot.sqlite).",
            metavar="FILE",
        ),
    ] = None,
    smtp: Annotated[
        str | None,
        typer.Option("--smtp", help="HOST:PORT of the mail server.", metavar="HOST:PORT"),
    ] = None,
    sender: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="The replies' From: (default: backportr.from, user.email).",
            metavar="ADDR",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Record verdicts, send nothing.")
    ] = False,
    pending_grace: Annotated[
        float,
        typer.Option(
            "--pending-grace",
            min=0,
            help="Seconds to wait for an unconfirmed reply to reach the archive before "
            "sending it again.",
            metavar="SECONDS",
        ),
    ] = 600.0,
) -> None:
    """Poll a public-inbox archive and answer each new actionable mail once, in its thread.

    Exit 0 when the run worked; 1 when the archive or the mail server could not be used (what
    was not answered is answered by a later run)."""
    from backportr.mail.bot import Bot, BotSettings, BotState
    from backportr.mail.lore import Lore

    config = _config(repo)
    lore = lore or config.value("backportr.lore")
    smtp = smtp or config.value("backportr.smtp")
    sender = sender or config.value("backportr.from") or _NO_REPLY
    where = state or Path(config.value("backportr.botstate") or "backportr-bot.sqlite")
    if not lore:
        raise UsageError("give --lore URL (or set backportr.lore)")
    if not dry_run and smtp is None:
        raise UsageError("give --smtp HOST:PORT to send replies (or backportr.smtp), or --dry-run")
    holder = BotState(where)
    settings = _settings(repo, upstream, [], branch_pattern, index)
    bot = None
    try:
        bot = Bot(
            open_workspace(settings),
            Lore(lore),
            holder,
            BotSettings(
                query=query,
                smtp=_smtp_server(repo, smtp) if smtp else None,
                sender=sender,
                dry_run=dry_run,
                pending_grace=pending_grace,
            ),
            reopen=lambda: open_workspace(settings),  # every poll: today's tips and index
        )
        bot.install_signal_handlers()
        summary = bot.run_once() if once else bot.run(interval)
    finally:
        if bot is not None:
            bot.ws.close()
        holder.close()
    if not quiet:
        typer.echo(
            f"bot: {summary.seen} seen, {summary.processed} checked, {summary.replied} "
            f"replied, {summary.skipped} skipped, {summary.errors} bad messages",
            err=True,
        )
    for error in (*summary.network_errors, *summary.send_errors):
        typer.echo(f"backportr: error: {error}", err=True)
    if summary.network_errors or summary.send_errors:
        raise typer.Exit(int(ExitCode.BAD_INPUT))


@app.command("demo")
def demo_command(
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep", help="Build the example repository here and keep it.", metavar="PATH"
        ),
    ] = None,
) -> None:
    """Build the IMA/overlayfs example repository and resolve its backport."""
    from backportr.examples.ima import A1175, B836C, DB1D1, F8A92, OVL18, build
    from backportr.resolve import Resolver

    with tempfile.TemporaryDirectory(prefix="backportr-demo-") as scratch:
        path = keep if keep is not None else Path(scratch) / "linux"
        typer.echo(f"building the IMA/overlayfs example in {path} ...", err=True)
        fixture = build(path)
        if keep is not None:
            from backportr.builder import RepoBuilder

            RepoBuilder.open(path).check_out()  # a kept repository with a clean `git status`
        target = fixture.ids[B836C]
        for state, branch in (("5.10.194", "v5.10.194"), ("5.10.202", "linux-5.10.y")):
            typer.echo(f"\n$ backportr resolve {target[:12]} --branch {branch}   # {state} state")
            settings = _settings(path, None, [branch])
            with open_workspace(settings) as ws:
                report = Resolver(ws).resolve(target, ws.branches)
            sys.stdout.write(render_text(report))
        legend = {fixture.ids[name]: name for name in (A1175, DB1D1, OVL18, B836C, F8A92)}
        typer.echo("\nfixture commit -> the real upstream commit it stands for:")
        for oid, real in legend.items():
            typer.echo(f"  {oid[:12]} -> {real}")
        typer.echo("(algorithm and this example explained in docs/algorithm.md)")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"backportr {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "-c",
            help="Set a configuration value for this run, as git's -c.",
            metavar="KEY=VALUE",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Say what is being done (on stderr): index, resolve, scan, bot."
        ),
    ] = False,
) -> None:
    """Find the complete, ordered series a Linux stable backport needs."""
    _OVERRIDES[:] = overrides or []
    if verbose:
        logging.getLogger("backportr").setLevel(logging.INFO)


@app.command("config")
def config_command(repo: RepoOption = Path(".")) -> None:
    """The effective settings and where each comes from (git config, -c, a fallback)."""
    from backportr.gitconfig import KEYS

    for setting in _config(repo).effective():
        value = setting.value if setting.value is not None else "-"
        typer.echo(f"{setting.key}\t{value}\t{setting.source}\t# {KEYS[setting.key]}")


def main(argv: list[str] | None = None) -> int:
    """The one boundary: exceptions become exit codes and one line on stderr."""
    _log_to_stderr()
    try:
        app(args=_verbose_first(sys.argv[1:] if argv is None else argv), prog_name="backportr")
    except SystemExit as done:
        return _exit(done.code if isinstance(done.code, int) else ExitCode.BAD_INPUT)
    except BackportrError as error:
        _say(f"backportr: error: {error}")
        return _exit(int(error.exit_code))
    except KeyboardInterrupt:
        _say("backportr: interrupted")
        return _exit(130)
    except BrokenPipeError:
        return _exit(ExitCode.OK)
    except (OSError, sqlite3.DatabaseError, pygit2.GitError) as error:
        _say(f"backportr: error: {_environment_fault(error)}")  # the machine's, not a bug
        return _exit(ExitCode.BAD_INPUT)
    except KeyError as error:
        missing = str(error.args[0]) if error.args else ""
        if len(missing) != 40 or any(c not in "0123456789abcdef" for c in missing):
            log = _write_crash_log()
            _say(f"backportr: internal error (KeyError: {error}); details in {log}")
            return _exit(ExitCode.INTERNAL)
        _say(  # libgit2 could not find an object: a damaged or incomplete repository
            f"backportr: error: the repository lacks an object it refers to ({error}); "
            "run git fsck, or fetch again"
        )
        return _exit(ExitCode.BAD_INPUT)
    except Exception as error:
        log = _write_crash_log()
        _say(f"backportr: internal error ({type(error).__name__}: {error}); details in {log}")
        return _exit(ExitCode.INTERNAL)
    return _exit(ExitCode.OK)


class _LevelFormatter(logging.Formatter):
    """`backportr: warning: ...` for warnings, `backportr: ...` for what -v says."""

    def format(self, record: logging.LogRecord) -> str:
        kind = "warning: " if record.levelno >= logging.WARNING else ""
        return f"backportr: {kind}{record.getMessage()}"


def _verbose_first(args: list[str]) -> list[str]:
    """`-v` is a global option that may also follow the command (`backportr scan -v ...`):
    moved to the front, before the command, where it is read (never after a `--`)."""
    end = args.index("--") if "--" in args else len(args)
    flags = [a for a in args[:end] if a in ("-v", "--verbose")]
    if not flags:
        return args
    return ["-v", *[a for a in args[:end] if a not in ("-v", "--verbose")], *args[end:]]


def _log_to_stderr() -> None:
    """Warnings of the `backportr` logger as one line each on stderr (never on stdout)."""
    logger = logging.getLogger("backportr")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_LevelFormatter())
        said: set[str] = set()

        def once(record: logging.LogRecord) -> bool:
            text = record.getMessage()
            if text in said:
                return False
            said.add(text)
            return True

        handler.addFilter(once)
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


def _environment_fault(error: BaseException) -> str:
    """One line for a fault of the environment: a file, the disk, a database, the repository."""
    if isinstance(error, OSError):
        where = f" ({error.filename})" if error.filename else ""
        reason = error.strerror or str(error) or type(error).__name__
        return f"{reason}{where}"
    if isinstance(error, sqlite3.DatabaseError):
        return explain(error, "file", "backportr's index or state")
    if "not owned by current user" in str(error):  # git's safe.directory check
        return (
            f"the repository belongs to another user ({error}); if you trust it, run "
            "git config --global --add safe.directory <its path>"
        )
    return f"the repository cannot be read ({error})"


def _exit(code: int | None) -> int:
    return int(code or 0)


def run() -> None:
    """The console script: exit with main()'s code."""
    code = main()
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    sys.exit(code)


def _say(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")


def _write_crash_log() -> str:
    fd, path = tempfile.mkstemp(prefix=f"backportr-crash-{int(time.time())}-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"backportr {__version__}\nargv: {sys.argv!r}\n\n")
        handle.write(traceback.format_exc())
    return path
