"""Send a reply through an SMTP server (the only module that talks SMTP): plain, STARTTLS or
SSL, with authentication when a user is set. The password never comes from the command line:
it is read from a file (`backportr.smtpPassFile`) or asked of git's credential helpers
(`git credential fill`, as git send-email does)."""

from __future__ import annotations

import copy
import email.policy
import re
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Literal

from backportr.errors import BackportrError, UsageError
from backportr.git.proc import credential_password

Encryption = Literal["none", "starttls", "ssl"]


class SendError(BackportrError):
    """The SMTP server could not be reached or refused the message: it was not sent."""


class PossiblySentError(SendError):
    """The session failed after the server took the DATA command: the message may have
    been delivered (a dropped connection, or an error after the data was sent). Never sent
    again without being asked."""


@dataclass(frozen=True, slots=True)
class SmtpServer:
    host: str
    port: int
    encryption: Encryption = "none"
    user: str | None = None
    password_file: Path | None = None

    @property
    def name(self) -> str:
        return f"{self.host}:{self.port}"

    @classmethod
    def parse(
        cls,
        server: str,
        encryption: str | None = None,
        user: str | None = None,
        password_file: str | None = None,
    ) -> SmtpServer:
        host, _, port = server.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--smtp expects HOST:PORT, got {server!r}")
        mode = {"": "none", "none": "none", "starttls": "starttls", "tls": "starttls"}.get(
            (encryption or "").lower(), (encryption or "").lower()
        )
        if mode not in ("none", "starttls", "ssl"):
            raise UsageError(f"SMTP encryption is none, starttls or ssl, not {encryption!r}")
        return cls(
            host,
            int(port),
            mode,  # type: ignore[arg-type]
            user or None,
            Path(password_file).expanduser() if password_file else None,
        )


def _password(server: SmtpServer) -> str:
    """From the password file, else from git's credential helpers; never from argv."""
    if server.password_file is not None:
        try:
            return server.password_file.read_text(encoding="utf-8").strip("\r\n")
        except OSError as error:
            raise SendError(f"cannot read the SMTP password file: {error}") from None
    found = credential_password("smtp", server.name, server.user or "")
    if found is not None:
        return found
    raise SendError(
        f"no SMTP password for {server.user}@{server.name}: set backportr.smtpPassFile, or "
        "store it with a git credential helper"
    )


def send_message(message: EmailMessage, server: str | SmtpServer, *, timeout: float = 30.0) -> None:
    target = server if isinstance(server, SmtpServer) else SmtpServer.parse(server)
    try:
        context = ssl.create_default_context()
        smtp: smtplib.SMTP
        if target.encryption == "ssl":
            smtp = smtplib.SMTP_SSL(target.host, target.port, timeout=timeout, context=context)
        else:
            smtp = smtplib.SMTP(target.host, target.port, timeout=timeout)
        with smtp:
            if target.encryption == "starttls":
                smtp.starttls(context=context)
            if target.user:
                _login(smtp, target.user, _password(target))
            _deliver(smtp, message, target.name)
    except PossiblySentError:
        raise
    except (TimeoutError, OSError, smtplib.SMTPException) as error:
        raise SendError(f"cannot send through {target.name}: {error}") from None


def _deliver(smtp: smtplib.SMTP, message: EmailMessage, name: str) -> None:
    """MAIL, RCPT, DATA one step at a time: a failure before the server answers DATA with
    354 means not sent; any failure after it means possibly sent."""
    from email.utils import getaddresses, parseaddr

    smtp.ehlo_or_helo_if_needed()
    sender = parseaddr(str(message["From"] or ""))[1]
    fields = [str(v) for key in ("To", "Cc", "Bcc") for v in message.get_all(key, [])]
    recipients = [address for _, address in getaddresses(fields) if address]
    if not recipients:
        raise SendError(f"cannot send through {name}: the reply has no recipient")
    code, answer = smtp.mail(sender)
    if code != 250:
        raise SendError(f"cannot send through {name}: MAIL FROM refused ({code} {answer!r})")
    accepted = [r for r in recipients if smtp.rcpt(r)[0] in (250, 251)]
    if not accepted:
        raise SendError(f"cannot send through {name}: every recipient refused")
    code, answer = smtp.docmd("DATA")
    if code != 354:
        raise SendError(f"cannot send through {name}: DATA refused ({code} {answer!r})")
    if message["Bcc"] is not None:
        message = copy.copy(message)
        del message["Bcc"]
    data = message.as_bytes(policy=email.policy.SMTP)
    try:
        smtp.send(_dot_stuffed(data))
        code, answer = smtp.getreply()
    except (TimeoutError, OSError, smtplib.SMTPException) as error:
        raise PossiblySentError(
            f"the reply may have been sent through {name} (the session failed after DATA: "
            f"{error}); it is not sent again unless asked"
        ) from None
    if code != 250:
        raise PossiblySentError(
            f"the reply may have been sent through {name} (after the data, {code} "
            f"{answer.decode('utf-8', 'replace')!r}); it is not sent again unless asked"
        )


def _dot_stuffed(data: bytes) -> bytes:
    """The message as DATA sends it: CRLF line ends, leading dots doubled, `.` at the end."""
    text = re.sub(rb"(?:\r\n|\n|\r(?!\n))", b"\r\n", data)
    text = re.sub(rb"(?m)^\.", b"..", text)
    if not text.endswith(b"\r\n"):
        text += b"\r\n"
    return text + b".\r\n"


def _login(smtp: smtplib.SMTP, user: str, password: str) -> None:
    """PLAIN when offered, alone (smtplib's login would try the next mechanism after a refusal,
    and a server may then wait for a reply that never comes); else smtplib's choice."""
    smtp.ehlo_or_helo_if_needed()
    if "PLAIN" in smtp.esmtp_features.get("auth", "").upper().split():
        smtp.user, smtp.password = user, password
        smtp.auth("PLAIN", smtp.auth_plain)
    else:
        smtp.login(user, password)


def send_raw(message: bytes, server: str | SmtpServer, *, timeout: float = 30.0) -> None:
    """Send a message exactly as it was recorded (same Message-ID, same bytes)."""
    import email
    import email.policy

    parsed = email.message_from_bytes(message, policy=email.policy.SMTP)
    send_message(parsed, server, timeout=timeout)
