"""The mail commands: `mail check` (one mail, its reply) and `bot` (poll an archive, answer
each actionable mail once)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from backportr.app.console import Console
from backportr.cli.app import (  # the app and what every command shares
    NO_REPLY,
    PLAIN_HELP,
    IndexOption,
    PatternOption,
    QuietOption,
    RepoOption,
    UpstreamOption,
    app,
    format_option,
    git_config,
    make_settings,
    smtp_server,
)
from backportr.cli.progress import TerminalProgress
from backportr.errors import UsageError

if TYPE_CHECKING:
    from email.message import EmailMessage

mail_app = typer.Typer(
    help="Check mails from stable@ (files, stdin, or a lore archive).",
    no_args_is_help=True,
    rich_markup_mode=None if PLAIN_HELP else "rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(mail_app, name="mail")


LoreOption = Annotated[
    str | None,
    typer.Option(
        "--lore",
        help="Inbox URL, e.g. https://lore.kernel.org/stable/ (default: backportr.lore)",
        metavar="URL",
    ),
]
SmtpOption = Annotated[
    str | None,
    typer.Option(
        "--smtp",
        help="HOST:PORT of the mail server (default: backportr.smtp).",
        metavar="HOST:PORT",
    ),
]
FromOption = Annotated[
    str | None,
    typer.Option(
        "--from", help="The replies' From: (default: backportr.from, user.email).", metavar="ADDR"
    ),
]


def _mail_settings(
    repo: Path, lore: str | None, smtp: str | None, sender: str | None
) -> tuple[str | None, str | None, str]:
    """--lore, --smtp and --from, else their git config settings (one reader for both commands)."""
    config = git_config(repo)
    return (
        lore or config.value("backportr.lore"),
        smtp or config.value("backportr.smtp"),
        sender or config.value("backportr.from") or NO_REPLY,
    )


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
    lore: LoreOption = None,
    output_format: Annotated[str, format_option("mail check")] = "text",
    send: Annotated[bool, typer.Option("--send", help="Send the reply (needs --smtp).")] = False,
    smtp: SmtpOption = None,
    sender: FromOption = None,
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
    from backportr.app.mail import CheckRequest, check_mail

    lore, smtp, sender = _mail_settings(repo, lore, smtp, sender)
    if send and not smtp:
        raise UsageError("--send needs --smtp HOST:PORT (or backportr.smtp)")
    request = CheckRequest(
        settings=make_settings(repo, upstream, [], branch_pattern, index),
        message=message,
        lore=lore,
        sender=sender,
        output_format=output_format,
        smtp=smtp_server(repo, smtp) if send and smtp else None,
    )
    outcome = check_mail(request, Console(progress=TerminalProgress(), quiet=quiet))
    raise typer.Exit(int(outcome.exit_code))


@app.command("bot")
def bot_command(
    lore: LoreOption = None,
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
    smtp: SmtpOption = None,
    sender: FromOption = None,
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
    retries: Annotated[
        int,
        typer.Option(
            "--retries",
            min=0,
            help="Tries again after an archive's failure, waiting 2, 4, 8... seconds between "
            "(0: a cron run fails fast and the next run tries again).",
            metavar="N",
        ),
    ] = 3,
    status: Annotated[
        bool,
        typer.Option(
            "--status",
            help="List the replies not known to be sent (pending, possibly sent); exit 4 "
            "when one is possibly sent.",
        ),
    ] = False,
    resend: Annotated[
        str | None,
        typer.Option(
            "--resend",
            help="Send the recorded reply to this Message-ID again (a possibly-sent one, "
            "once you checked it did not reach the list).",
            metavar="MSGID",
        ),
    ] = None,
) -> None:
    """Poll a public-inbox archive and answer each new actionable mail once, in its thread.

    Exit 0 when the run worked; 1 when the archive or the mail server could not be used (what
    was not answered is answered by a later run)."""
    from backportr.app import mail as workflows

    lore, smtp, sender = _mail_settings(repo, lore, smtp, sender)
    where = state or Path(git_config(repo).value("backportr.botstate") or "backportr-bot.sqlite")
    console = Console(quiet=quiet)
    if resend:
        if smtp is None:
            raise UsageError("give --smtp HOST:PORT (or backportr.smtp) to send a reply again")
        code = workflows.resend_reply(where, resend.strip("<>"), smtp_server(repo, smtp), console)
        raise typer.Exit(int(code))
    if status:
        raise typer.Exit(int(workflows.unconfirmed_replies(where, console)))
    if not lore:
        raise UsageError("give --lore URL (or set backportr.lore)")
    if not dry_run and smtp is None:
        raise UsageError("give --smtp HOST:PORT to send replies (or backportr.smtp), or --dry-run")
    request = workflows.BotRequest(
        settings=make_settings(repo, upstream, [], branch_pattern, index),
        lore=lore, state=where, query=query, smtp=smtp_server(repo, smtp) if smtp else None,
        dry_run=dry_run, sender=sender, once=once, interval=interval,
        pending_grace=pending_grace, retries=retries,
        on_draft=None if quiet else _print_draft,
    )  # fmt: skip
    raise typer.Exit(int(workflows.run_bot(request, console).exit_code))


def _print_draft(reply: EmailMessage) -> None:
    """`bot --dry-run`: each reply it would send, on stdout as one mbox."""
    import email.policy
    import re

    text = reply.as_string(policy=email.policy.default.clone(linesep="\n"))
    text = re.sub(r"^(>*From )", r">\1", text, flags=re.MULTILINE)  # mboxrd
    sys.stdout.write(f"From backportr Mon Sep 17 00:00:00 2001\n{text.rstrip()}\n\n")
    sys.stdout.flush()
