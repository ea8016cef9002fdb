"""The mailing-list bot: poll an archive, check each new message once, answer in the thread.

Every message is processed at most once: its id, verdict and reply id are recorded in a
SQLite state file before the next one starts. A bad message (malformed MIME, unknown commit,
binary junk) is recorded as such and skipped; network errors back off and retry; SIGTERM
ends the loop after the current message. Nothing here prints: the front-end gets a summary.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from backportr.errors import BackportrError
from backportr.mail.check import Checker
from backportr.mail.lore import Lore, LoreError
from backportr.mail.message import parse_mail
from backportr.mail.reply import compose_reply
from backportr.mail.sending import send_message
from backportr.workspace import Workspace


@dataclass
class BotSettings:
    query: str | None = None  # a search; None: the inbox's new.atom
    smtp: str | None = None
    sender: str = "backportr <backportr@localhost>"
    list_address: str = "stable@vger.kernel.org"
    dry_run: bool = False
    retries: int = 3
    backoff: float = 2.0


@dataclass
class RunSummary:
    seen: int = 0
    processed: int = 0
    replied: int = 0
    skipped: int = 0
    errors: int = 0
    network_errors: list[str] = field(default_factory=list)


class BotState:
    """message-id -> verdict, reply id, when (SQLite)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path)
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS messages(message_id TEXT PRIMARY KEY, "
                "verdict TEXT NOT NULL, detail TEXT, reply_id TEXT, at INTEGER NOT NULL)"
            )
        except sqlite3.DatabaseError as error:
            raise BackportrError(f"the bot state {path} is unreadable ({error})") from None

    def seen(self, message_id: str) -> bool:
        return (
            self.db.execute("SELECT 1 FROM messages WHERE message_id=?", (message_id,)).fetchone()
            is not None
        )

    def record(
        self, message_id: str, verdict: str, detail: str = "", reply_id: str | None = None
    ) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO messages VALUES(?, ?, ?, ?, ?)",
                (message_id, verdict, detail, reply_id, int(time.time())),
            )

    def rows(self) -> list[tuple[str, str, str, str | None]]:
        return self.db.execute(
            "SELECT message_id, verdict, detail, reply_id FROM messages ORDER BY at, message_id"
        ).fetchall()

    def close(self) -> None:
        self.db.close()


class Bot:
    def __init__(
        self,
        ws: Workspace,
        lore: Lore,
        state: BotState,
        settings: BotSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.ws = ws
        self.lore = lore
        self.state = state
        self.settings = settings
        self.sleep = sleep
        self.stopping = False

    def install_signal_handlers(self) -> None:
        def stop(signum: int, frame: object) -> None:
            self.stopping = True

        signal.signal(signal.SIGTERM, stop)

    def run_once(self) -> RunSummary:
        """One poll: every message of the feed not seen before, oldest first."""
        summary = RunSummary()
        entries = self._with_retries(summary, self._feed)
        if entries is None:
            return summary
        for entry in reversed(entries):  # feeds list the newest first
            if self.stopping:
                break
            summary.seen += 1
            if self.state.seen(entry.message_id):
                continue
            raw = self._with_retries(summary, lambda e=entry: self.lore.raw(e.message_id))
            if raw is None:
                break  # the archive went away: what is left waits for the next run
            self._process(entry.message_id, raw, summary)
        return summary

    def run(self, interval: float, *, rounds: int | None = None) -> RunSummary:
        total = RunSummary()
        done = 0
        while not self.stopping and (rounds is None or done < rounds):
            summary = self.run_once()
            for name in ("seen", "processed", "replied", "skipped", "errors"):
                setattr(total, name, getattr(total, name) + getattr(summary, name))
            total.network_errors += summary.network_errors
            done += 1
            waited = 0.0
            while not self.stopping and waited < interval and (rounds is None or done < rounds):
                self.sleep(min(1.0, interval - waited))
                waited += 1.0
        return total

    def _feed(self) -> list:  # type: ignore[type-arg]
        return self.lore.search(self.settings.query) if self.settings.query else self.lore.new()

    def _with_retries(self, summary: RunSummary, call: Callable[[], object]):  # type: ignore[no-untyped-def]
        delay = self.settings.backoff
        for attempt in range(self.settings.retries + 1):
            try:
                return call()
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
                thread = [
                    parse_mail(r)
                    for r in self._with_retries(summary, lambda: self.lore.thread(message_id))
                    or [raw]
                ]
            check = Checker(self.ws, self.lore).check(mail, thread)
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
            if self.settings.smtp and not self.settings.dry_run:
                send_message(reply, self.settings.smtp)
            summary.replied += 1
            self.state.record(
                message_id,
                "replied" if not self.settings.dry_run else "dry-run",
                verdict,
                str(reply["Message-ID"]).strip("<>"),
            )
        except BackportrError as error:
            summary.errors += 1
            self.state.record(message_id, "error", str(error))
        except Exception as error:
            summary.errors += 1
            self.state.record(message_id, "error", f"{type(error).__name__}: {error}")
