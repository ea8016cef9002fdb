"""A client for a public-inbox archive (lore.kernel.org, or a local public-inbox-httpd).

Endpoints relative to an inbox URL such as https://lore.kernel.org/stable/: `<msgid>/raw`
(one message), `<msgid>/t.mbox.gz` (the whole thread), `new.atom` and `?q=<query>&x=A`
(Atom feeds). Message-IDs go without angle brackets, URL-quoted. Network failures become a
LoreError with one line saying what could not be reached.
"""

from __future__ import annotations

import logging
import mailbox
import tempfile
import time
import xml.etree.ElementTree as ElementTree
import zlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from backportr import __version__
from backportr.errors import BackportrError

_log = logging.getLogger("backportr")

_ATOM = "{http://www.w3.org/2005/Atom}"


class LoreError(BackportrError):
    """The archive could not be reached or answered with an error."""


class LoreNotFound(LoreError):
    """The archive answered that this message (or feed) does not exist: permanent."""


_MAX_BYTES = 64 << 20  # a message, a feed or a thread never needs more
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of an Atom feed."""

    message_id: str
    title: str
    updated: str
    author: str = ""  # the author's address, as the feed gives it


class Lore:
    """Every request has one overall deadline (connection, redirects and the whole body
    together) and a size cap, so a server that drips a byte every few seconds or sends a
    bomb cannot stall or flood a run. Transient answers (429, 5xx) are retried with backoff
    and Retry-After by urllib3 on the session."""

    def __init__(
        self,
        inbox_url: str,
        *,
        timeout: float = 30.0,
        max_bytes: int = _MAX_BYTES,
        session: requests.Session | None = None,
        retries: int = 2,
    ) -> None:
        self.url = inbox_url.rstrip("/") + "/"
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.session = session or requests.Session()
        self.session.headers.setdefault("User-Agent", f"backportr/{__version__}")
        retry = Retry(
            total=retries,
            connect=retries,
            read=0,  # a read that timed out has used the deadline: no second one
            status=retries,
            backoff_factor=0.5,
            status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=frozenset({"GET"}),
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def raw(self, message_id: str) -> bytes:
        return self._get(f"{_quote(message_id)}/raw")

    def thread(self, message_id: str) -> list[bytes]:
        """Every message of the thread, oldest first (decompressed as a stream, capped)."""
        data = self._get(f"{_quote(message_id)}/t.mbox.gz")
        return split_mbox(gunzip_capped(data, self.max_bytes))

    def search(self, query: str) -> list[Entry]:
        return self._atom("?" + urlencode({"q": query, "x": "A"}), missing_ok=True)

    def new(self) -> list[Entry]:
        """The inbox's newest messages; an inbox URL that serves no Atom feed is an error."""
        return self._atom("new.atom", missing_ok=False)

    def _atom(self, path: str, *, missing_ok: bool) -> list[Entry]:
        try:
            data = self._get(path)
        except LoreNotFound:
            if missing_ok:  # a search without results
                return []
            raise LoreError(
                f"{self.url}{path}: not found (404): is {self.url} a public-inbox inbox URL?"
            ) from None
        try:
            root = ElementTree.fromstring(data)
        except ElementTree.ParseError as error:
            raise LoreError(f"{self.url}{path}: not an Atom feed ({error})") from None
        if root.tag != f"{_ATOM}feed":
            raise LoreError(f"{self.url}{path}: not an Atom feed (a {root.tag!r} document)")
        entries = []
        for entry in root.iter(f"{_ATOM}entry"):
            link = entry.find(f"{_ATOM}link")
            href = link.get("href", "") if link is not None else ""
            message_id = _message_id_from_link(href, self.url)
            if not message_id:
                _log.warning(
                    "%s%s: a feed entry whose link names no message (%s): skipped",
                    self.url,
                    path.split("?")[0],
                    ascii(href[:120]) if href else "no link",
                )
            else:
                entries.append(
                    Entry(
                        message_id,
                        entry.findtext(f"{_ATOM}title", ""),
                        entry.findtext(f"{_ATOM}updated", ""),
                        entry.findtext(f"{_ATOM}author/{_ATOM}email", ""),
                    )
                )
        return entries

    def _get(self, path: str) -> bytes:
        url = self.url + path
        deadline = time.monotonic() + self.timeout
        try:
            with self.session.get(url, timeout=(self.timeout, self.timeout), stream=True) as got:
                if got.status_code == 404:
                    raise LoreNotFound(f"{url}: not found in the archive (404)")
                if got.status_code >= 400:
                    raise LoreError(f"{url}: the archive answered {got.status_code}")
                body = bytearray()
                while chunk := got.raw.read1(_CHUNK, decode_content=True):  # what has arrived
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise LoreError(f"{url}: more than {self.max_bytes} bytes; not read")
                    if time.monotonic() > deadline:
                        raise LoreError(f"{url}: no complete answer within {self.timeout:g} s")
                return bytes(body)
        except requests.RequestException as error:
            raise LoreError(f"cannot reach {url}: {type(error).__name__}") from None


def gunzip_capped(data: bytes, limit: int) -> bytes:
    """Decompress gzip data as a stream, refusing more than `limit` bytes of output (a small
    bomb expands to gigabytes); data that is not gzip is returned as it is."""
    if not data.startswith(b"\x1f\x8b"):
        return data  # some servers send it already decompressed
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    view = memoryview(data)
    for start in range(0, len(data), _CHUNK):
        out += inflater.decompress(view[start : start + _CHUNK], limit + 1 - len(out))
        while inflater.unconsumed_tail and len(out) <= limit:
            out += inflater.decompress(inflater.unconsumed_tail, limit + 1 - len(out))
        if len(out) > limit:
            raise LoreError(f"a thread that decompresses to more than {limit} bytes; not read")
        if inflater.eof:
            break
    return bytes(out)


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
    """`<base><msgid>/` (or any URL whose last path component is the id) -> the id; a
    link of another shape gives ''."""
    from urllib.parse import unquote

    if not href:
        return ""
    tail = href[len(base) :] if href.startswith(base) else href
    parts = [p for p in tail.split("/") if p]
    if not parts:
        return ""
    candidate = parts[0] if href.startswith(base) else parts[-1]
    return unquote(candidate) if "@" in unquote(candidate) else ""
