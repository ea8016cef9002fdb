"""The tree is ruff-clean (lint and format) and the whole package passes `mypy --strict`,
checked by the suite so CI enforces both."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.skipif(
    shutil.which("ruff") is None and _ruff("--version").returncode != 0,
    reason="ruff is not installed (pip install '.[test]')",
)
def test_ruff_check_and_format() -> None:
    check = _ruff("check", ".")
    assert check.returncode == 0, check.stdout + check.stderr
    form = _ruff("format", "--check", ".")
    assert form.returncode == 0, form.stdout + form.stderr


def _mypy() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.skipif(
    subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True).returncode
    != 0,
    reason="mypy is not installed (pip install '.[test]')",
)
def test_mypy_strict_on_the_core() -> None:
    checked = _mypy()
    assert checked.returncode == 0, checked.stdout + checked.stderr
