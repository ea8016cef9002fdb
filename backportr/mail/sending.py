"""Send a reply through an SMTP server (the only module that talks SMTP)."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage

from backportr.errors import BackportrError, UsageError


class SendError(BackportrError):
    """The SMTP server could not be reached or refused the message: it was not sent."""


def _address(server: str) -> tuple[str, int]:
    host, _, port = server.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--smtp expects HOST:PORT, got {server!r}")
    return host, int(port)


def send_message(message: EmailMessage, server: str, *, timeout: float = 30.0) -> None:
    host, port = _address(server)
    try:
        with smtplib.SMTP(host, port, timeout=timeout) as smtp:
            smtp.send_message(message)
    except (TimeoutError, OSError, smtplib.SMTPException) as error:
        raise SendError(f"cannot send through {server}: {error}") from None


def send_raw(message: bytes, server: str, *, timeout: float = 30.0) -> None:
    """Send a message exactly as it was recorded (same Message-ID, same bytes)."""
    import email
    import email.policy

    parsed = email.message_from_bytes(message, policy=email.policy.SMTP)
    send_message(parsed, server, timeout=timeout)  # type: ignore[arg-type]
