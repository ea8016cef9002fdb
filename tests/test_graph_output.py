"""--format dot, svg and html; the HTML page checked in a real headless browser."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from backportr.examples.ima import A1175, B836C, DB1D1, F8A92, ImaFixture
from tests.browser import browser, dump_dom, screenshot
from tests.conftest import backportr


def _resolve(
    ima: ImaFixture, fmt: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """resolve the IMA target on both states of 5.10 in the given format."""
    return backportr(
        "resolve",
        ima.ids[B836C],
        "--repo",
        str(ima.path),
        "-b",
        "v5.10.194",
        "-b",
        "linux-5.10.y",
        "--format",
        fmt,
        *extra,
        env=env,
    )


def test_dot(ima: ImaFixture) -> None:
    proc = _resolve(ima, "dot")
    assert proc.returncode == 4, proc.stderr  # linux-5.10.y has a member to adapt by hand
    assert proc.stdout.startswith("digraph backportr {")
    assert 'label="linux-5.10.y: incomplete"' in proc.stdout
    # one direction, the order of application, labelled with the evidence: the file, the
    # symbols, Fixes:; top to bottom (rankdir TB), so the series reads as a list does
    assert "rankdir=TB" in proc.stdout and "rankdir=LR" not in proc.stdout
    a1175, db1d1, b836c = (f'"0:{ima.ids[n][:12]}"' for n in (A1175, DB1D1, B836C))
    assert f"{a1175} -> {db1d1}" in proc.stdout and f"{db1d1} -> {b836c}" in proc.stdout
    assert f"{db1d1} -> {a1175}" not in proc.stdout  # it was drawn against the series
    assert f'{db1d1} -> "0:{ima.ids[F8A92][:12]}"' in proc.stdout  # then its follow-up
    assert '[label="conflict in security/integrity/ima/ima_api.c"]' in proc.stdout
    assert '[label="adapted in security/integrity/ima/ima_api.c"]' in proc.stdout
    assert '[label="symbol STATX_CHANGE_COOKIE, change_cookie"]' in proc.stdout
    assert '[label="fixed by (Fixes:)"]' in proc.stdout
    assert "subgraph cluster_legend" in proc.stdout and "A before B" in proc.stdout
    assert 'fillcolor="#f6c85f"' in proc.stdout  # the target's colour


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_svg(ima: ImaFixture) -> None:
    proc = _resolve(ima, "svg")
    assert proc.returncode == 4, proc.stderr  # linux-5.10.y has a member to adapt by hand
    assert (
        "<svg" in proc.stdout and "ima: detect changes to the backing overlay file" in proc.stdout
    )
    import re

    one = backportr(
        "resolve", ima.ids[B836C], "--repo", str(ima.path), "-b", "v5.10.194", "-f", "svg"
    )
    width = re.search(r'<svg width="(\d+)pt"', one.stdout)
    assert width is not None and int(width.group(1)) < 1000  # four commits: 1,417 pt before


def test_svg_without_graphviz_is_a_clear_error(ima: ImaFixture, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(shutil.which("git") or "/usr/bin/git", bin_dir / "git")
    env = {**os.environ, "PATH": str(bin_dir)}
    proc = _resolve(ima, "svg", env=env)
    assert proc.returncode == 1
    assert "Graphviz's dot program is not installed" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(browser() is None, reason="no headless browser installed")
def test_html_renders_in_a_headless_browser(ima: ImaFixture, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    proc = _resolve(ima, "html", "--output", str(page))
    assert proc.returncode == 4, proc.stderr  # linux-5.10.y has a member to adapt by hand
    text = page.read_text()
    assert "<script" not in text and "http://" not in text.split("<svg", 1)[0]
    dom = dump_dom(page, tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-500:]
    assert 'class="status ready"' in dom.stdout and 'class="status incomplete"' in dom.stdout
    assert dom.stdout.count("<tr>") >= 1 + 2 + 4 + 3  # matrix, headers, both series
    if shutil.which("dot"):
        assert "<svg" in dom.stdout
        assert "legend" in dom.stdout and "A before B" in dom.stdout  # drawn with the graph
    shot = tmp_path / "shot.png"
    screenshot(page, tmp_path / "profile", shot, "1200,1400")
    assert shot.exists() and shot.stat().st_size > 10_000
