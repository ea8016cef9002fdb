"""Headless Chromium for the tests that look at a page: the DOM after scripts ran, and a
screenshot."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def browser() -> str | None:
    return (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )


def _command(profile: Path) -> list[str]:
    program = browser()
    assert program is not None
    return [
        program,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]


def dump_dom(page: Path, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_command(profile), "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )


def screenshot(page: Path, profile: Path, shot: Path, size: str) -> None:
    subprocess.run(
        [*_command(profile), f"--screenshot={shot}", f"--window-size={size}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
