"""Scratch space for the benchmarks: git in a scratch worktree, for those that hold
backportr's trial to `git cherry-pick` (`trial_vs_git.py`, `scan_vs_git.py`: no hooks, no
rerere, a fixed identity), and temporary directories removed when the benchmark exits."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

_QUIET = (
    "-c", "core.hooksPath=/dev/null", "-c", "rerere.enabled=false",
    "-c", "user.name=trial", "-c", "user.email=trial@localhost", "-c", "advice.detachedHead=false",
)  # fmt: skip


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *_QUIET, *args], cwd=cwd, capture_output=True, text=True, check=check
    )


def scratch_dir(prefix: str) -> Path:
    """A new temporary directory, removed when the process exits (normally, by an exception
    or by SystemExit; not when killed)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
