"""The mailing-list bot: poll an archive, check each new message once, answer in the thread.

Replies at most once: one bot at a time holds the state file's lock; a reply is recorded as
*pending* (with the whole message and its Message-ID) before it is sent and as *replied*
after. On start, a pending reply is looked up in the archive by its Message-ID: there, it is
recorded as sent; not there (and older than the grace period), it is *possibly sent* (a run
killed during its send). A session that failed after the server took DATA is possibly sent
too. A possibly-sent reply is reported by every run and by `bot --status`, and sent again
only when asked (`bot --resend MSGID`), never by itself. An SMTP failure before DATA forgets
the message (it is checked again next run) and ends the run with an error. Own replies are
known by the Message-IDs the state recorded, nothing else (a From: or a domain anyone can
write). A message the archive says does not exist (404) is recorded and skipped; an outage
ends the run. A bad message (malformed MIME, unknown commit, binary junk) is recorded as
such and skipped; SIGTERM or SIGHUP ends the loop after the current message. Nothing here
prints: the front-end gets a summary.
"""

from __future__ import annotations

import contextlib
import email.policy
import functools
import logging
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from backportr.errors import BackportrError
from backportr.infra.dbfault import explain
from backportr.infra.statefile import open_state
from backportr.mail.check import Checker
from backportr.mail.lore import Lore, LoreError, LoreNotFound
from backportr.mail.message import parse_mail
from backportr.mail.reply import compose_reply
from backportr.mail.sending import (
    PossiblySentError,
    SendError,
    SmtpServer,
    send_message,
)
from backportr.resolve.workspace import Workspace

_log = logging.getLogger("backportr")


@dataclass
class BotSettings:
    query: str | None = None  # a search; None: the inbox's new.atom
    smtp: str | SmtpServer | None = None
    sender: str = "backportr <backportr@localhost>"
    list_address: str = "stable@vger.kernel.org"
    dry_run: bool = False
    retries: int = 3
    backoff: float = 2.0
    pending_grace: float = 600.0  # seconds before an unconfirmed reply is sent again
    on_draft: Callable[[EmailMessage], None] | None = None  # dry run: each reply not sent


@dataclass
class RunSummary:
    seen: int = 0
    processed: int = 0
    replied: int = 0
    drafted: int = 0  # dry run: replies composed, not sent
    skipped: int = 0
    errors: int = 0
    network_errors: list[str] = field(default_factory=list)
    send_errors: list[str] = field(default_factory=list)
    possibly_sent: list[str] = field(default_factory=list)  # message ids: not sent again


class BotState:
    """message-id -> verdict, reply id, when; and the replies pending confirmation (SQLite).
    Holds an exclusive lock on the state for as long as it is open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock, self.db = open_state(
            path,
            f"another bot is running with the state {path}; one at a time",
            "CREATE TABLE IF NOT EXISTS messages(message_id TEXT PRIMARY KEY, "
            "verdict TEXT NOT NULL, detail TEXT, reply_id TEXT, at INTEGER NOT NULL);"
            "CREATE TABLE IF NOT EXISTS outbox(message_id TEXT PRIMARY KEY, "
            "reply_id TEXT NOT NULL, reply BLOB NOT NULL, at INTEGER NOT NULL);"
            "CREATE INDEX IF NOT EXISTS messages_by_reply ON messages(reply_id);",
            "the bot state",
        )

    def seen(self, message_id: str) -> bool:
        return (
            self.db.execute("SELECT 1 FROM messages WHERE message_id=?", (message_id,)).fetchone()
            is not None
        )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One transaction; a state that cannot be written is the user's one-line error."""
        try:
            with self.db:
                yield
        except sqlite3.DatabaseError as error:
            raise BackportrError(explain(error, self.path, "the bot state")) from None

    def record(
        self, message_id: str, verdict: str, detail: str = "", reply_id: str | None = None
    ) -> None:
        _log.info("bot: <%s>: %s %s", message_id, verdict, detail[:120])
        with self._writing():
            self.db.execute(
                "INSERT OR REPLACE INTO messages VALUES(?, ?, ?, ?, ?)",
                (message_id, verdict, detail, reply_id, int(time.time())),
            )

    def record_pending(self, message_id: str, detail: str, reply: EmailMessage) -> None:
        """Before sending: the reply and its Message-ID, in one transaction."""
        reply_id = str(reply["Message-ID"]).strip("<>")
        now = int(time.time())
        with self._writing():
            self.db.execute(
                "INSERT OR REPLACE INTO messages VALUES(?, 'pending', ?, ?, ?)",
                (message_id, detail, reply_id, now),
            )
            self.db.execute(
                "INSERT OR REPLACE INTO outbox VALUES(?, ?, ?, ?)",
                (message_id, reply_id, reply.as_bytes(policy=email.policy.SMTP), now),
            )

    def record_sent(self, message_id: str) -> None:
        with self._writing():
            self.db.execute(
                "UPDATE messages SET verdict='replied', at=? WHERE message_id=?",
                (int(time.time()), message_id),
            )
            self.db.execute("DELETE FROM outbox WHERE message_id=?", (message_id,))

    def record_possibly_sent(self, message_id: str) -> None:
        """The send may have reached the server: recorded in the outbox, never sent again by
        itself (`resend` when asked)."""
        with self._writing():
            self.db.execute(
                "UPDATE messages SET verdict='possibly-sent' WHERE message_id=?", (message_id,)
            )

    def own_reply(self, message_id: str) -> bool:
        """Is this a Message-ID the bot recorded for a reply of its own?"""
        row = self.db.execute(
            "SELECT 1 FROM messages WHERE reply_id=? UNION SELECT 1 FROM outbox WHERE reply_id=?",
            (message_id, message_id),
        ).fetchone()
        return row is not None

    def unconfirmed(self) -> list[tuple[str, str, str, int]]:
        """The replies not known to be sent: message id, reply id, verdict (`pending` or
        `possibly-sent`), when recorded."""
        return self.db.execute(
            "SELECT o.message_id, o.reply_id, m.verdict, o.at FROM outbox o "
            "JOIN messages m USING(message_id) ORDER BY o.at, o.message_id"
        ).fetchall()

    def recorded_reply(self, message_id: str) -> bytes | None:
        row = self.db.execute(
            "SELECT reply FROM outbox WHERE message_id=?", (message_id,)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def forget(self, message_id: str) -> None:
        """The reply was never sent: the message is checked again on the next run."""
        with self._writing():
            self.db.execute("DELETE FROM messages WHERE message_id=?", (message_id,))
            self.db.execute("DELETE FROM outbox WHERE message_id=?", (message_id,))

    def pending(self) -> list[tuple[str, str, bytes, int]]:
        """The replies recorded before a send whose end no run saw (not possibly-sent)."""
        return self.db.execute(
            "SELECT o.message_id, o.reply_id, o.reply, o.at FROM outbox o "
            "JOIN messages m USING(message_id) WHERE m.verdict='pending' "
            "ORDER BY o.at, o.message_id"
        ).fetchall()

    def rows(self) -> list[tuple[str, str, str, str | None]]:
        return self.db.execute(
            "SELECT message_id, verdict, detail, reply_id FROM messages ORDER BY at, message_id"
        ).fetchall()

    def close(self) -> None:
        self.db.close()
        self._lock.close()


class Bot:
    def __init__(
        self,
        ws: Workspace,
        lore: Lore,
        state: BotState,
        settings: BotSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        reopen: Callable[[], Workspace] | None = None,
    ) -> None:
        """`reopen` gives a fresh view of the repository (branch tips read again, the index
        brought up to date): a bot that polls for days answers against today's branches."""
        self.ws = ws
        self.reopen = reopen
        self.lore = lore
        self.state = state
        self.settings = settings
        self.sleep = sleep
        self.stopping = False

    def install_signal_handlers(self) -> None:
        def stop(signum: int, frame: object) -> None:
            self.stopping = True

        signal.signal(signal.SIGTERM, stop)
        if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # a closed terminal too
            signal.signal(signal.SIGHUP, stop)

    def run_once(self) -> RunSummary:
        """One poll: every message of the feed not seen before, oldest first."""
        summary = RunSummary()
        self._settle_pending(summary)
        if summary.send_errors or summary.network_errors:
            return summary
        entries = self._with_retries(summary, self._feed)
        if entries is None:
            return summary
        for entry in reversed(entries):  # feeds list the newest first
            if self.stopping:
                break
            summary.seen += 1
            if self.state.seen(entry.message_id):
                continue
            try:
                raw = self._with_retries(
                    summary, functools.partial(self.lore.raw, entry.message_id), permanent=True
                )
            except LoreNotFound as gone:
                summary.skipped += 1
                self.state.record(entry.message_id, "missing", str(gone))
                continue
            if raw is None:
                break  # the archive went away: what is left waits for the next run
            self._process(entry.message_id, raw, summary)
            if summary.send_errors:
                break  # SMTP is down: the rest waits for the next run
        return summary

    def _settle_pending(self, summary: RunSummary) -> None:
        """Replies recorded as pending by a run that ended before it could confirm them:
        in the archive, sent; not there after the grace period, possibly sent (a run killed
        during its send), never sent again by itself."""
        for message_id, reply_id, _, at in self.state.pending():
            try:
                self.lore.raw(reply_id)
            except LoreNotFound:
                if time.time() - at >= self.settings.pending_grace:
                    self.state.record_possibly_sent(message_id)
                continue
            except LoreError as error:
                summary.network_errors.append(str(error))
                return
            self.state.record_sent(message_id)
        for message_id, reply_id, verdict, _ in self.state.unconfirmed():
            if verdict != "possibly-sent":
                continue
            try:
                self.lore.raw(reply_id)
            except LoreNotFound:
                summary.possibly_sent.append(message_id)
                continue
            except LoreError as error:
                summary.network_errors.append(str(error))
                return
            self.state.record_sent(message_id)  # it did reach the list after all

    def run(self, interval: float, *, rounds: int | None = None) -> RunSummary:
        total = RunSummary()
        done = 0
        while not self.stopping and (rounds is None or done < rounds):
            if done and self.reopen is not None:
                self.ws.close()
                self.ws = self.reopen()
            summary = self.run_once()
            for name in ("seen", "processed", "replied", "drafted", "skipped", "errors"):
                setattr(total, name, getattr(total, name) + getattr(summary, name))
            total.network_errors += summary.network_errors
            total.send_errors += summary.send_errors
            done += 1
            waited = 0.0
            while not self.stopping and waited < interval and (rounds is None or done < rounds):
                self.sleep(min(1.0, interval - waited))
                waited += 1.0
        return total

    def _feed(self) -> list:  # type: ignore[type-arg]
        return self.lore.search(self.settings.query) if self.settings.query else self.lore.new()

    def _with_retries(  # type: ignore[no-untyped-def]
        self, summary: RunSummary, call: Callable[[], object], *, permanent: bool = False
    ):
        """Transient failures back off and retry; with `permanent`, a 404 is raised as it
        is (the message does not exist) instead of being taken for an outage."""
        delay = self.settings.backoff
        for attempt in range(self.settings.retries + 1):
            try:
                return call()
            except LoreNotFound:
                if permanent:
                    raise
                if attempt == self.settings.retries:
                    return None
                self.sleep(delay)
                delay *= 2
            except LoreError as error:
                if attempt == self.settings.retries:
                    summary.network_errors.append(str(error))
                    return None
                self.sleep(delay)
                delay *= 2
        return None

    def _process(self, message_id: str, raw: bytes, summary: RunSummary) -> None:
        """One message: never raises; whatever happens is recorded."""
        try:
            mail = parse_mail(raw)
            if self.state.own_reply(mail.message_id):
                summary.skipped += 1
                self.state.record(message_id, "skipped", "our own reply")
                return
            if mail.kind == "skip":
                summary.skipped += 1
                self.state.record(message_id, "skipped", mail.reason or "")
                return
            if mail.kind == "submission" and mail.part and mail.part[0] < mail.part[1]:
                summary.skipped += 1
                self.state.record(
                    message_id,
                    "skipped",
                    f"part {mail.part[0]}/{mail.part[1]} of a series: answered on its last part",
                )
                return
            thread = [mail]
            if mail.kind == "submission" and mail.part is not None:
                try:
                    raws = self._with_retries(
                        summary, lambda: self.lore.thread(message_id), permanent=True
                    )
                except LoreNotFound:
                    raws = [raw]  # no thread in the archive: the mail alone
                if raws is None:
                    # The thread could not be read (an outage, or a thread past the size
                    # cap): no answer from a part of it. Not recorded: the next run tries
                    # again, and this one says why (exit 1).
                    return
                thread = [parse_mail(r) for r in raws]
            check = Checker(self.ws, self.lore, self.settings.sender).check(mail, thread)
            summary.processed += 1
            if check.skipped:
                summary.skipped += 1
                self.state.record(message_id, "skipped", check.skipped)
                return
            verdict = ",".join(f"{b.branch}:{b.verdict}" for b in check.branches)
            if not check.actionable:
                self.state.record(message_id, "nothing-to-say", verdict)
                return
            reply = compose_reply(
                check, sender=self.settings.sender, list_address=self.settings.list_address
            )
            self._answer(message_id, verdict, reply, summary)
        except sqlite3.Error:
            raise  # the state itself failed: nothing may be sent or recorded further
        except BackportrError as error:
            summary.errors += 1
            self.state.record(message_id, "error", str(error))
        except Exception as error:  # one bad message never stops the bot
            summary.errors += 1
            self.state.record(message_id, "error", f"{type(error).__name__}: {error}")

    def _answer(
        self, message_id: str, verdict: str, reply: EmailMessage, summary: RunSummary
    ) -> None:
        """Send the reply (recorded before the send starts), or record it as a dry run's."""
        if not self.settings.smtp or self.settings.dry_run:
            self.state.record(
                message_id,
                "dry-run" if self.settings.dry_run else "replied",
                verdict,
                str(reply["Message-ID"]).strip("<>"),
            )
            if self.settings.dry_run:
                summary.drafted += 1
                if self.settings.on_draft is not None:
                    self.settings.on_draft(reply)
            else:
                summary.replied += 1
            return
        self.state.record_pending(message_id, verdict, reply)  # before, never after
        try:
            send_message(reply, self.settings.smtp)
        except PossiblySentError as error:
            self.state.record_possibly_sent(message_id)  # never sent again by itself
            summary.possibly_sent.append(message_id)
            summary.send_errors.append(str(error))
            return
        except SendError as error:
            self.state.forget(message_id)  # refused before DATA: certainly not sent
            summary.send_errors.append(str(error))
            return
        self.state.record_sent(message_id)
        summary.replied += 1
