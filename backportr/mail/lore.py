"""A client for a public-inbox archive (lore.kernel.org, or a local public-inbox-httpd).

Endpoints relative to an inbox URL such as https://lore.kernel.org/stable/: `<msgid>/raw`
(one message), `<msgid>/t.mbox.gz` (the whole thread), `new.atom` and `?q=<query>&x=A`
(Atom feeds). Message-IDs go without angle brackets, URL-quoted. Network failures become a
LoreError with one line saying what could not be reached.
"""

from __future__ import annotations

import gzip
import mailbox
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

import requests

from backportr import __version__
from backportr.errors import BackportrError

_ATOM = "{http://www.w3.org/2005/Atom}"


class LoreError(BackportrError):
    """The archive could not be reached or answered with an error."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of an Atom feed."""

    message_id: str
    title: str
    updated: str


class Lore:
    def __init__(
        self, inbox_url: str, *, timeout: float = 30.0, session: requests.Session | None = None
    ) -> None:
        self.url = inbox_url.rstrip("/") + "/"
        self.timeout = timeout
        self.session = session or requests.Session()
        self.session.headers.setdefault("User-Agent", f"backportr/{__version__}")

    def raw(self, message_id: str) -> bytes:
        return self._get(f"{_quote(message_id)}/raw")

    def thread(self, message_id: str) -> list[bytes]:
        """Every message of the thread, oldest first."""
        data = self._get(f"{_quote(message_id)}/t.mbox.gz")
        try:
            text = gzip.decompress(data)
        except OSError:
            text = data  # some servers send it already decompressed
        return split_mbox(text)

    def search(self, query: str) -> list[Entry]:
        return self._atom("?" + urlencode({"q": query, "x": "A"}))

    def new(self) -> list[Entry]:
        return self._atom("new.atom")

    def _atom(self, path: str) -> list[Entry]:
        data = self._get(path, missing_ok=True)
        if not data:
            return []
        try:
            root = ElementTree.fromstring(data)
        except ElementTree.ParseError as error:
            raise LoreError(f"{self.url}{path}: not an Atom feed ({error})") from None
        entries = []
        for entry in root.iter(f"{_ATOM}entry"):
            link = entry.find(f"{_ATOM}link")
            href = link.get("href", "") if link is not None else ""
            message_id = _message_id_from_link(href, self.url)
            if message_id:
                entries.append(
                    Entry(
                        message_id,
                        entry.findtext(f"{_ATOM}title", ""),
                        entry.findtext(f"{_ATOM}updated", ""),
                    )
                )
        return entries

    def _get(self, path: str, *, missing_ok: bool = False) -> bytes:
        url = self.url + path
        try:
            response = self.session.get(url, timeout=self.timeout)
        except requests.RequestException as error:
            raise LoreError(f"cannot reach {url}: {type(error).__name__}") from None
        if response.status_code == 404:
            if missing_ok:
                return b""
            raise LoreError(f"{url}: not found in the archive (404)")
        if response.status_code >= 400:
            raise LoreError(f"{url}: the archive answered {response.status_code}")
        return response.content


def split_mbox(data: bytes) -> list[bytes]:
    """The messages of an mbox (mboxrd or mboxo), as bytes."""
    with tempfile.TemporaryDirectory(prefix="backportr-mbox-") as scratch:
        path = Path(scratch) / "thread.mbox"
        path.write_bytes(
            data
            if data.startswith(b"From ")
            else b"From mboxrd@z Thu Jan  1 00:00:00 1970\n" + data
        )
        box = mailbox.mbox(str(path), create=False)
        try:
            return [message.as_bytes() for message in box]
        finally:
            box.close()


def _quote(message_id: str) -> str:
    return quote(message_id.strip().strip("<>"), safe="@!$&'()*+,;=:-._~")


def _message_id_from_link(href: str, base: str) -> str:
    from urllib.parse import unquote

    if not href:
        return ""
    tail = href[len(base) :] if href.startswith(base) else href.rsplit("/", 2)[-2]
    return unquote(tail.strip("/").split("/")[0])
