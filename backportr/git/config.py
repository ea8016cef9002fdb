"""Settings a maintainer repeats, read from git config: `backportr.*` keys, git's own
fallbacks (`user.name`/`user.email`, `sendemail.smtpServer`/`smtpServerPort`), and
`-c key=value` given on the command line (as git has it). The front-end's edge: the core never
reads configuration; the CLI fills what the command line left unset from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backportr.errors import BackportrError, UsageError
from backportr.git.proc import config_list, git_dir_of

KEYS: dict[str, str] = {
    "backportr.upstream": "the upstream ref (--upstream)",
    "backportr.branchpattern": "the branches the index covers (--branch-pattern)",
    "backportr.branches": "default branches of status and scan, space-separated (-b)",
    "backportr.lore": "the inbox URL (--lore)",
    "backportr.from": "the From: of replies (--from); else user.name <user.email>",
    "backportr.smtp": "HOST:PORT of the mail server (--smtp); else sendemail.smtpServer",
    "backportr.smtpencryption": "none, starttls or ssl; else sendemail.smtpEncryption",
    "backportr.smtpuser": "the SMTP login; else sendemail.smtpUser",
    "backportr.smtppassfile": "a file holding the SMTP password; else git's credential helpers",
    "backportr.botstate": "the bot's state file (--state); else <git dir>/backportr/bot.sqlite",
    "backportr.annotation": "the form patches carry (--annotation; unset: each branch's own)",
    "backportr.culprits": "auto, evidence or always (--culprits)",
    "backportr.commiturl": "a commit link template for reports, e.g. "
    "https://git.kernel.org/linus/{commit}",
    "backportr.fixespattern": "a regex whose one group is a culprit's id, beside the default "
    "forms (Fixes:, Follow-up for, ...) and the learned ones; multi-valued",
    "backportr.ignoreform": "a learned fix phrase not to read (as `backportr config` shows "
    "it: amends:, regressed by); multi-valued",
}


@dataclass(frozen=True, slots=True)
class Setting:
    key: str
    value: str | None
    source: str  # "-c", "git config (<file>)", "fallback: ...", "default", "unset"


class GitConfig:
    """The effective configuration of one repository (or of the user, outside one)."""

    def __init__(self, repo: Path, overrides: list[str] | tuple[str, ...] = ()) -> None:
        self.repo = repo
        self.overrides: dict[str, str] = {}
        self.override_list: list[tuple[str, str]] = []
        for item in overrides:
            key, sep, value = item.partition("=")
            if not sep or "." not in key:
                raise UsageError(f"-c expects KEY=VALUE with a dotted key, got {item!r}")
            self.overrides[key.lower()] = value
            self.override_list.append((key.lower(), value))
        self.listed = config_list(repo)
        self.entries = {key: (value, origin) for key, value, origin in self.listed}

    def get(self, key: str) -> Setting:
        key = key.lower()
        if key in self.overrides:
            return Setting(key, self.overrides[key], "-c")
        if key in self.entries:
            value, origin = self.entries[key]
            return Setting(key, value, f"git config ({origin})")
        return self._fallback(key)

    def value(self, key: str) -> str | None:
        return self.get(key).value

    def identity(self) -> tuple[str, str] | None:
        """user.name and user.email, when both are set; a value holding a line break (it
        would split a trailer or a header in two) is an error, never written."""
        name, email = self.value("user.name"), self.value("user.email")
        if not name or not email:
            return None
        for key, value in (("user.name", name), ("user.email", email)):
            if any(c in value for c in "\r\n\x00"):
                raise BackportrError(
                    f"{key} in git config holds a line break ({value!r}); set it to one line"
                )
        return name, email

    def commit_url(self) -> str | None:
        """backportr.commitUrl: an http(s) link template; any other scheme (`javascript:`,
        `data:`, `file:`) is an error, never a link in a report."""
        url = self.value("backportr.commiturl")
        if not url:
            return None
        if not url.lower().startswith(("https://", "http://")) or any(
            ord(c) < 33 or c in "\"'<>\\" for c in url
        ):
            raise BackportrError(
                f"backportr.commitUrl {url!r} is not an http(s) URL; give one such as "
                "https://git.kernel.org/linus/{commit}"
            )
        return url

    def values(self, key: str) -> tuple[str, ...]:
        """Every value of a multi-valued key: `-c` given (each -c one value) over git
        config's, else git config's, in the order git lists them."""
        key = key.lower()
        given = tuple(v for k, v in self.override_list if k == key)
        return given or tuple(v for k, v, _ in self.listed if k == key)

    def _fallback(self, key: str) -> Setting:
        if key == "backportr.from":
            name, email = self.value("user.name"), self.value("user.email")
            if name and email:
                return Setting(key, f"{name} <{email}>", "fallback: user.name, user.email")
        if key == "backportr.smtp":
            server = self.value("sendemail.smtpserver")
            if server and not server.startswith("/"):
                port = self.value("sendemail.smtpserverport") or "25"
                return Setting(key, f"{server}:{port}", "fallback: sendemail.smtpServer")
        git_keys = {
            "backportr.smtpencryption": "sendemail.smtpEncryption",
            "backportr.smtpuser": "sendemail.smtpUser",
        }
        if key in git_keys:
            value = self.value(git_keys[key])
            if value:
                return Setting(key, value, f"fallback: {git_keys[key]}")
        if key == "backportr.botstate":
            git_dir = git_dir_of(self.repo)
            if git_dir is not None:
                return Setting(key, str(git_dir / "backportr" / "bot.sqlite"), "default")
        return Setting(key, None, "unset")

    def effective(self) -> list[Setting]:
        return [self.get(key) for key in KEYS]
