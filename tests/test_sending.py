"""SMTP with STARTTLS or SSL and authentication, against a real aiosmtpd server with a
self-signed certificate (trusted through SSL_CERT_FILE, as a site's own CA would be). The
password comes from a file or from git's credential helpers, never from the command line."""

from __future__ import annotations

import email.message
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from backportr.mail.sending import SendError, SmtpServer, send_message
from tests.inbox import free_port

aiosmtpd = pytest.importorskip("aiosmtpd.controller")
from aiosmtpd.smtp import AuthResult, LoginPassword  # noqa: E402


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        capture_output=True,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate here: {made.stderr!r}")
    return cert, key


class Server:
    def __init__(self, certificate: tuple[Path, Path], mode: str) -> None:
        import ssl

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(certificate[0]), str(certificate[1]))
        self.received: list[tuple[str | None, bytes]] = []
        outer = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
                outer.received.append((session.auth_data, envelope.content))
                return "250 OK"

        def authenticator(server, session, envelope, mechanism, auth_data):  # type: ignore[no-untyped-def]
            ok = isinstance(auth_data, LoginPassword) and (
                auth_data.login == b"bot" and auth_data.password == b"s3cret"
            )
            return AuthResult(success=ok, auth_data="bot" if ok else None)

        self.port = free_port()
        # aiosmtpd sees TLS only when it came by STARTTLS: with implicit TLS, do not require it
        options = {
            "authenticator": authenticator,
            "auth_required": True,
            "auth_require_tls": mode != "ssl",
        }
        if mode == "ssl":
            self.controller = aiosmtpd.Controller(
                Handler(), hostname="127.0.0.1", port=self.port, ssl_context=context, **options
            )
        else:
            self.controller = aiosmtpd.Controller(
                Handler(), hostname="127.0.0.1", port=self.port, tls_context=context,
                require_starttls=True, **options,
            )  # fmt: skip
        self.controller.start()


@pytest.fixture
def trusted(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    yield


def _message() -> email.message.EmailMessage:
    message = email.message.EmailMessage()
    message["From"], message["To"], message["Subject"] = "bot@example.org", "a@example.org", "x"
    message.set_content("hello\n")
    return message


@pytest.mark.usefixtures("trusted")
def test_starttls_with_a_password_file(certificate: tuple[Path, Path], tmp_path: Path) -> None:
    server = Server(certificate, "starttls")
    try:
        secret = tmp_path / "smtp-password"
        secret.write_text("s3cret\n")
        target = SmtpServer.parse(f"127.0.0.1:{server.port}", "tls", "bot", str(secret))
        assert target.encryption == "starttls"  # git send-email's word for it
        send_message(_message(), target)
        (login, content), = server.received  # fmt: skip
        assert login == "bot" and b"hello" in content
        secret.write_text("wrong\n")
        with pytest.raises(SendError, match="cannot send through"):
            send_message(_message(), target, timeout=2)  # aiosmtpd stalls after a refusal
        with pytest.raises(SendError):  # no authentication: the server demands it
            send_message(_message(), SmtpServer.parse(f"127.0.0.1:{server.port}", "starttls"))
    finally:
        server.controller.stop()


@pytest.mark.usefixtures("trusted")
def test_ssl_with_a_git_credential_helper(
    certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Server(certificate, "ssl")
    try:
        store = tmp_path / "credentials"
        store.write_text(f"smtp://bot:s3cret@127.0.0.1%3a{server.port}\n")
        config = tmp_path / "gitconfig"
        config.write_text(f"[credential]\n\thelper = store --file={store}\n")
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
        send_message(_message(), SmtpServer.parse(f"127.0.0.1:{server.port}", "ssl", "bot"))
        assert [login for login, _ in server.received] == ["bot"]
        config.write_text("")  # no helper, no file: a clear error, no prompt
        with pytest.raises(SendError, match="no SMTP password"):
            send_message(_message(), SmtpServer.parse(f"127.0.0.1:{server.port}", "ssl", "bot"))
    finally:
        server.controller.stop()


def test_bad_settings_are_usage_errors() -> None:
    from backportr.errors import UsageError

    with pytest.raises(UsageError, match="HOST:PORT"):
        SmtpServer.parse("mail.example.org")
    with pytest.raises(UsageError, match="none, starttls or ssl"):
        SmtpServer.parse("mail.example.org:25", "rot13")
