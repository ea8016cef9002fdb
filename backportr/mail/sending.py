"""Send a reply through an SMTP server (the only module that talks SMTP)."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage

from backportr.errors import BackportrError, UsageError


def send_message(message: EmailMessage, server: str, *, timeout: float = 30.0) -> None:
    host, _, port = server.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--smtp expects HOST:PORT, got {server!r}")
    try:
        with smtplib.SMTP(host, int(port), timeout=timeout) as smtp:
            smtp.send_message(message)
    except (TimeoutError, OSError, smtplib.SMTPException) as error:
        raise BackportrError(f"cannot send through {server}: {error}") from None
