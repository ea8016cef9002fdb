"""The README's maintainer's day, run as it is written: two fixes queued in two runs (one
with a prerequisite), the queue applied with `git quiltimport`, the same series mailed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _day() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## A maintainer's day", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_the_readme_maintainers_day_works_as_written(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.update(GIT_AUTHOR_NAME="M", GIT_AUTHOR_EMAIL="m@example.org")
    env.update(GIT_COMMITTER_NAME="M", GIT_COMMITTER_EMAIL="m@example.org")
    subprocess.run(["backportr", "demo", "--keep", "ima"], cwd=tmp_path, env=env, check=True)
    ima = tmp_path / "ima"
    lines = _day()
    assert lines[-1].startswith("git send-email")  # the one step that needs a mail server
    for line in lines[:-1]:
        proc = subprocess.run(
            ["bash", "-c", line], cwd=ima, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, (line, proc.stderr)
    queue = (ima / "queue-5.10" / "series").read_text().splitlines()
    assert len(queue) == len(set(queue)) == 4
    applied = subprocess.run(
        ["git", "log", "--format=%s", "v5.10.194.."], cwd=tmp_path / "q", env=env,
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(applied) == 4
    mailed = ima / "outgoing"
    listed = (mailed / "series").read_text().split()
    assert (mailed / "0000-cover-letter.patch").exists() and len(listed) == 4
    sends = lines[-1].replace("git send-email", "echo", 1)
    named = subprocess.run(["bash", "-c", sends], cwd=ima, capture_output=True, text=True)
    assert named.stdout.split() == ["outgoing/0000-cover-letter.patch"] + [
        f"outgoing/{n}" for n in listed
    ]


def test_the_docs_describe_the_present() -> None:
    """Every page under 400 lines; none names an issue number, a date of work (outside an
    example's code block) or a diary of what was measured and dropped: that history is the
    git log's."""
    import re

    root = Path(__file__).resolve().parent.parent
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert len(text.splitlines()) < 400, page.name
        prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
        assert not re.search(r"\b[Ii]ssues? #?\d+", prose), page.name
        assert not re.search(r"\b20(2[5-9]|[3-9]\d)-\d\d-\d\d\b", prose), page.name
        assert "Measured and not kept" not in prose, page.name
