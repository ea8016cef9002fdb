"""Real parts for mail tests: a public-inbox v2 archive served by public-inbox-httpd on
loopback, built from tests/data/mail with public-inbox-init and public-inbox-mda; free ports."""

from __future__ import annotations

import difflib
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from backportr.examples.ima import ImaFixture

DATA = Path(__file__).parent / "data" / "mail"
needs_public_inbox = pytest.mark.skipif(
    shutil.which("public-inbox-httpd") is None, reason="public-inbox is not installed"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Archive:
    url: str
    process: subprocess.Popen[bytes]
    env: dict[str, str]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def patch_mail(ima: ImaFixture) -> str:
    """A plain patch posted for review, not in any repository, based on master."""
    from backportr.git.builder import RepoBuilder

    stat = RepoBuilder.open(ima.path)
    old = stat.files("master")["fs/stat.c"]
    new = old.replace("\t\treturn -EPERM;\n", "\t\treturn -EINVAL;\n", 1)
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(True), new.splitlines(True), "a/fs/stat.c", "b/fs/stat.c"
        )
    )
    master = stat.tip("master")
    return (
        "From: Dev <dev@example.org>\nTo: stable@vger.kernel.org\n"
        "Subject: [PATCH] fs: stat: return -EINVAL for AT_GETATTR_NOSEC from userspace\n"
        "Date: Wed, 20 Dec 2023 09:00:00 +0000\nMessage-ID: <20231220-patch-1@example.org>\n"
        "Content-Type: text/plain; charset=UTF-8\n\n"
        "-EPERM is the wrong answer for a flag userspace may not pass.\n\n"
        "Signed-off-by: Dev <dev@example.org>\n---\n"
        f"diff --git a/fs/stat.c b/fs/stat.c\n{diff}\nbase-commit: {master}\n-- \n2.39.3\n"
    )


def start_archive(root: Path, mails: dict[str, str]) -> Archive:
    """A public-inbox v2 inbox of the mails, served by public-inbox-httpd on loopback."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/stable/"
    env = {**os.environ, "HOME": str(root), "PI_CONFIG": str(root / "config"), "PI_DIR": str(root)}
    subprocess.run(
        [
            "public-inbox-init",
            "-V2",
            "stable",
            str(root / "inbox"),
            url.rstrip("/"),
            "stable@vger.kernel.org",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        ["git", "config", "-f", str(root / "config"), "publicinboxmda.spamcheck", "none"],
        check=True,
    )
    for text in mails.values():
        subprocess.run(
            ["public-inbox-mda", "--no-precheck"],
            input=text.encode(),
            env={**env, "ORIGINAL_RECIPIENT": "stable@vger.kernel.org"},
            check=True,
            capture_output=True,
        )
    process = subprocess.Popen(
        ["public-inbox-httpd", "-l", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started = Archive(url, process, env)
    import requests

    for _ in range(100):
        try:
            if requests.get(url + "new.atom", timeout=2).status_code == 200:
                return started
        except requests.RequestException:
            time.sleep(0.1)
    started.stop()
    raise RuntimeError("public-inbox-httpd did not start")
