"""git in a scratch worktree, for the benchmarks that hold backportr's trial to `git
cherry-pick` (`trial_vs_git.py`, `scan_vs_git.py`): no hooks, no rerere, a fixed identity."""

from __future__ import annotations

import subprocess
from pathlib import Path

_QUIET = (
    "-c", "core.hooksPath=/dev/null", "-c", "rerere.enabled=false",
    "-c", "user.name=trial", "-c", "user.email=trial@localhost", "-c", "advice.detachedHead=false",
)  # fmt: skip


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *_QUIET, *args], cwd=cwd, capture_output=True, text=True, check=check
    )
