"""The mail workflows: `check` (one mail: what it is missing, the reply composed, written,
sent), `bot` (poll an archive, answer each actionable mail once) and the bot's outbox
(replies not known to be sent, listed or sent again)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backportr.app.console import Console, attention_if
from backportr.app.formats import FORMATS, CheckAnswer, FormatTable
from backportr.errors import BackportrError, ExitCode
from backportr.resolve.workspace import open_workspace
from backportr.settings import Settings

if TYPE_CHECKING:
    from email.message import EmailMessage

    from backportr.mail.bot import RunSummary
    from backportr.mail.check import MailCheck
    from backportr.mail.sending import SmtpServer


@dataclass(frozen=True, kw_only=True)
class CheckRequest:
    settings: Settings
    message: str  # a file, -, a lore URL, or a Message-ID (with lore)
    lore: str | None = None
    sender: str
    output_format: str = "text"
    smtp: SmtpServer | None = None  # send the reply through it
    formats: FormatTable = field(default=FORMATS)


@dataclass(frozen=True)
class CheckOutcome:
    check: MailCheck

    @property
    def exit_code(self) -> ExitCode:
        return attention_if(bool(self.check.actionable))


def check_mail(request: CheckRequest, console: Console) -> CheckOutcome:
    """Check one mail; its reply written (`-f reply`) or sent (`smtp`) unless the mail was
    not checked (nothing to answer: no reply, and no Cc: stable)."""
    from backportr.mail.check import Checker
    from backportr.mail.lore import Lore
    from backportr.mail.reply import compose_reply
    from backportr.mail.sending import send_message
    from backportr.mail.source import load

    mail, thread = load(request.message, request.lore)
    try:
        with open_workspace(request.settings, progress=console.progress) as ws:
            console.progress.finish()
            archive = Lore(request.lore) if request.lore else None
            check = Checker(ws, archive, request.sender).check(mail, thread)
    finally:
        console.progress.finish()
    replying = request.output_format == "reply" or request.smtp is not None
    reply = None
    if check.skipped and replying:
        console.say(f"no reply: skipped: {check.skipped}")
    elif replying:
        reply = compose_reply(check, sender=request.sender)
        if request.smtp is not None:
            send_message(reply, request.smtp)
            console.say(f"sent {reply['Message-ID']} to {reply['To']}")
    text = reply.as_string() if reply is not None else None
    answer = CheckAnswer(check, text)
    if request.output_format != "reply" or text is not None:
        console.write(request.formats.writer("mail check", request.output_format)(answer))
    return CheckOutcome(check)


@dataclass(frozen=True, kw_only=True)
class BotRequest:
    settings: Settings
    lore: str
    state: Path
    query: str | None = None
    smtp: SmtpServer | None = None
    dry_run: bool = False  # record verdicts, send nothing
    sender: str
    once: bool = False
    interval: float = 300.0
    pending_grace: float = 600.0
    retries: int = 3
    on_draft: Callable[[EmailMessage], None] | None = None  # a dry run's replies


@dataclass(frozen=True)
class BotOutcome:
    summary: RunSummary

    @property
    def exit_code(self) -> ExitCode:
        failed = self.summary.network_errors or self.summary.send_errors
        return ExitCode.BAD_INPUT if failed else ExitCode.OK


def run_bot(request: BotRequest, console: Console) -> BotOutcome:
    """Poll the archive (once, or every `interval` seconds until stopped) and answer."""
    from backportr.mail.bot import Bot, BotSettings, BotState
    from backportr.mail.lore import Lore

    holder = BotState(request.state)
    bot = None
    try:
        bot = Bot(
            open_workspace(request.settings),
            Lore(request.lore),
            holder,
            BotSettings(
                query=request.query,
                smtp=request.smtp,
                sender=request.sender,
                dry_run=request.dry_run,
                on_draft=request.on_draft,
                pending_grace=request.pending_grace,
                retries=request.retries,
            ),
            reopen=lambda: open_workspace(request.settings),  # every poll: today's tips
        )
        bot.install_signal_handlers()
        summary = bot.run_once() if request.once else bot.run(request.interval)
    finally:
        if bot is not None:
            bot.ws.close()
        holder.close()
    _report(summary, request.dry_run, console)
    return BotOutcome(summary)


def _report(summary: RunSummary, dry_run: bool, console: Console) -> None:
    answered = (
        f"{summary.drafted} drafted (dry run: printed, nothing sent)"
        if dry_run
        else f"{summary.replied} replied"
    )
    console.say(
        f"bot: {summary.seen} seen, {summary.processed} checked, {answered}, "
        f"{summary.skipped} skipped, {summary.errors} bad messages"
    )
    for error in (*summary.network_errors, *summary.send_errors):
        console.warn(f"backportr: error: {error}")
    for message_id in summary.possibly_sent:
        console.warn(
            f"backportr: warning: the reply to <{message_id}> was possibly sent; not "
            "sent again (check the list, then: backportr bot --resend MSGID)"
        )


def resend_reply(state: Path, message_id: str, smtp: SmtpServer, console: Console) -> ExitCode:
    """Send the recorded reply to `message_id` again (a possibly-sent one, once checked)."""
    from backportr.mail.bot import BotState
    from backportr.mail.sending import send_raw

    holder = BotState(state)
    try:
        reply = holder.recorded_reply(message_id)
        if reply is None:
            raise BackportrError(f"no unconfirmed reply to <{message_id}> in {state}")
        send_raw(reply, smtp)
        holder.record_sent(message_id)
    finally:
        holder.close()
    console.warn(f"bot: the reply to <{message_id}> was sent again")
    return ExitCode.OK


def unconfirmed_replies(state: Path, console: Console) -> ExitCode:
    """The replies not known to be sent, one a line; 4 when one was possibly sent."""
    from backportr.mail.bot import BotState

    holder = BotState(state)
    try:
        rows = holder.unconfirmed()
    finally:
        holder.close()
    for message_id, reply_id, verdict, at in rows:
        when = datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M")
        console.out.write(_safe(f"{verdict}\t<{message_id}>\treply <{reply_id}>\t{when} UTC\n"))
    return attention_if(any(verdict == "possibly-sent" for _, _, verdict, _ in rows))


def _safe(line: str) -> str:
    from backportr.output.safe import terminal

    return terminal(line.rstrip("\n")) + "\n"
