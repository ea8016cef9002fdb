"""The mail commands: `mail check` (one mail, its reply) and `bot` (poll an archive, answer
each actionable mail once)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from backportr.cli.app import (  # the app and what every command shares
    NO_REPLY,
    PLAIN_HELP,
    IndexOption,
    PatternOption,
    QuietOption,
    RepoOption,
    UpstreamOption,
    app,
    git_config,
    make_settings,
    smtp_server,
)
from backportr.cli.progress import TerminalProgress
from backportr.errors import BackportrError, ExitCode, UsageError
from backportr.output.safe import terminal
from backportr.resolve.workspace import open_workspace

if TYPE_CHECKING:
    from email.message import EmailMessage

mail_app = typer.Typer(
    help="Check mails from stable@ (files, stdin, or a lore archive).",
    no_args_is_help=True,
    rich_markup_mode=None if PLAIN_HELP else "rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(mail_app, name="mail")


class MailFormat(StrEnum):
    text = "text"
    json = "json"
    reply = "reply"


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
    output_format: Annotated[
        MailFormat, typer.Option("--format", "-f", help="Output format.")
    ] = MailFormat.text,
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
    from backportr.mail.check import Checker
    from backportr.mail.reply import compose_reply, render_check_json, render_check_text
    from backportr.mail.sending import send_message
    from backportr.mail.source import load

    lore, smtp, sender = _mail_settings(repo, lore, smtp, sender)
    if send and not smtp:
        raise UsageError("--send needs --smtp HOST:PORT (or backportr.smtp)")
    mail, thread = load(message, lore)
    progress = TerminalProgress()
    try:
        with open_workspace(
            make_settings(repo, upstream, [], branch_pattern, index), progress=progress
        ) as ws:
            progress.finish()
            from backportr.mail.lore import Lore

            check = Checker(ws, Lore(lore) if lore else None, sender).check(mail, thread)
    finally:
        progress.finish()

    def say(text: str) -> None:
        if not quiet:
            typer.echo(text, err=True)

    def out(text: str) -> None:
        if not quiet:
            sys.stdout.write(text)

    if check.skipped and (output_format is MailFormat.reply or send):
        # nothing to answer: no reply (and no Cc: stable) for a mail that was not checked
        say(f"no reply: skipped: {check.skipped}")
    elif output_format is MailFormat.reply or send:
        reply = compose_reply(check, sender=sender)
        if send and smtp:
            send_message(reply, smtp_server(repo, smtp))
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
    from backportr.mail.bot import Bot, BotSettings, BotState
    from backportr.mail.lore import Lore

    lore, smtp, sender = _mail_settings(repo, lore, smtp, sender)
    where = state or Path(git_config(repo).value("backportr.botstate") or "backportr-bot.sqlite")
    if status or resend:
        _bot_outbox(where, repo, smtp if resend else None, resend.strip("<>") if resend else None)
        return
    if not lore:
        raise UsageError("give --lore URL (or set backportr.lore)")
    if not dry_run and smtp is None:
        raise UsageError("give --smtp HOST:PORT to send replies (or backportr.smtp), or --dry-run")
    holder = BotState(where)
    settings = make_settings(repo, upstream, [], branch_pattern, index)
    bot = None
    try:
        bot = Bot(
            open_workspace(settings),
            Lore(lore),
            holder,
            BotSettings(
                query=query,
                smtp=smtp_server(repo, smtp) if smtp else None,
                sender=sender,
                dry_run=dry_run,
                on_draft=None if quiet else _print_draft,
                pending_grace=pending_grace,
                retries=retries,
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
        answered = (
            f"{summary.drafted} drafted (dry run: printed, nothing sent)"
            if dry_run
            else f"{summary.replied} replied"
        )
        typer.echo(
            f"bot: {summary.seen} seen, {summary.processed} checked, {answered}, "
            f"{summary.skipped} skipped, {summary.errors} bad messages",
            err=True,
        )
    for error in (*summary.network_errors, *summary.send_errors):
        typer.echo(f"backportr: error: {terminal(error)}", err=True)
    for message_id in summary.possibly_sent:
        typer.echo(
            f"backportr: warning: the reply to <{terminal(message_id)}> was possibly sent; not "
            "sent again (check the list, then: backportr bot --resend MSGID)",
            err=True,
        )
    if summary.network_errors or summary.send_errors:
        raise typer.Exit(int(ExitCode.BAD_INPUT))


def _bot_outbox(where: Path, repo: Path, smtp: str | None, resend: str | None) -> None:
    """`bot --status`: the replies not known to be sent; `bot --resend MSGID`: one of them
    sent again, as recorded."""
    import datetime

    from backportr.mail.bot import BotState

    if resend is not None and smtp is None:
        raise UsageError("give --smtp HOST:PORT (or backportr.smtp) to send a reply again")
    holder = BotState(where)
    try:
        if resend is not None:
            from backportr.mail.sending import send_raw

            reply = holder.recorded_reply(resend)
            if reply is None:
                raise BackportrError(f"no unconfirmed reply to <{resend}> in {where}")
            send_raw(reply, smtp_server(repo, smtp or ""))
            holder.record_sent(resend)
            typer.echo(f"bot: the reply to <{terminal(resend)}> was sent again", err=True)
            return
        rows = holder.unconfirmed()
    finally:
        holder.close()
    for message_id, reply_id, verdict, at in rows:
        when = datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M")
        typer.echo(terminal(f"{verdict}\t<{message_id}>\treply <{reply_id}>\t{when} UTC"))
    if any(verdict == "possibly-sent" for _, _, verdict, _ in rows):
        raise typer.Exit(int(ExitCode.ATTENTION))


def _print_draft(reply: EmailMessage) -> None:
    """`bot --dry-run`: each reply it would send, on stdout as one mbox."""
    import email.policy
    import re

    text = reply.as_string(policy=email.policy.default.clone(linesep="\n"))
    text = re.sub(r"^(>*From )", r">\1", text, flags=re.MULTILINE)  # mboxrd
    sys.stdout.write(f"From backportr Mon Sep 17 00:00:00 2001\n{text.rstrip()}\n\n")
    sys.stdout.flush()
