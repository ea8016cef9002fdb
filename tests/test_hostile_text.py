"""Text from a repository is data anyone upstream wrote: a commit subject holding terminal
control sequences (`ESC ] 0 ; ... BEL` sets the title, `ESC [ 2 J` clears the screen, CR and
BS overwrite a line), bidi overrides, or markup must reach no format raw. Text output shows
them escaped, XML (SVG, HTML) stays well-formed, Markdown holds no raw HTML, and mail
headers hold no line break (tests/test_patches.py)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backportr.output.safe import markdown, terminal, xml
from tests.conftest import backportr
from tests.resolve_scenarios import BRANCH, Kernel

HOSTILE = (
    "\x1b]0;owned\x07 \x1b[2J \r\b\x7f \x9b31m \u202egnp.exe <script>alert(1)</script> <!-- | `"
)
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Kernel:
    """The target's subject, its follow-up's and its author's name are hostile; the branch
    lacks both (a scan finds them)."""
    k = Kernel(tmp_path_factory.mktemp("hostile") / "r")
    k.edit_fn("target", "drv_fn1", "y += 100;", subject=f"drv: {HOSTILE}",
              trailers="Cc: stable@vger.kernel.org\n" + k.fixes("v5.10"))  # fmt: skip
    k.edit_fn("fix", "drv_fn2", "y += 2;", subject=f"drv: fix {HOSTILE}",
              trailers=k.fixes("target"))  # fmt: skip
    return k


def _resolve(k: Kernel, *args: str) -> str:
    proc = backportr("resolve", k.b.ids["target"], "--repo", str(k.b.path), "-b", BRANCH, *args)
    assert proc.returncode in (0, 4), proc.stderr
    return proc.stdout


@pytest.mark.parametrize("fmt", ["text", "script", "dot"])
def test_text_formats_show_control_characters_escaped(hostile: Kernel, fmt: str) -> None:
    out = _resolve(hostile, "-f", fmt)
    assert not _RAW.search(out), repr(_RAW.search(out))
    assert "\\x1b]0;owned\\x07" in out or fmt == "dot"  # dot shortens the subject


def test_status_and_scan_text_show_control_characters_escaped(
    hostile: Kernel, tmp_path: Path
) -> None:
    status = backportr("status", hostile.b.ids["fix"], "--repo", str(hostile.b.path))
    assert status.returncode == 0 and not _RAW.search(status.stdout)
    assert "\\x1b[2J" in status.stdout
    for fmt in ("text", "markdown", "html", "json"):
        scan = backportr("scan", "--repo", str(hostile.b.path), "-b", BRANCH, "-f", fmt)
        assert scan.returncode == 4, scan.stderr
        assert not _RAW.search(scan.stdout), (fmt, _RAW.search(scan.stdout))
        if fmt in ("markdown", "html"):
            assert "<script>alert" not in scan.stdout and "<!-- |" not in scan.stdout, fmt


def test_html_is_well_formed_and_holds_no_markup_from_data(hostile: Kernel) -> None:
    out = _resolve(hostile, "-f", "html")
    assert not _RAW.search(out) and "<script>alert" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_svg_is_well_formed_xml(hostile: Kernel) -> None:
    out = _resolve(hostile, "-f", "svg")
    root = ElementTree.fromstring(out.encode())
    assert root.tag.endswith("svg")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_the_safety_layer_on_any_text(text: str) -> None:
    shown = terminal(text)
    assert not _RAW.search(shown)
    assert shown.count("\n") == text.count("\n") and shown.count("\t") == text.count("\t")
    ElementTree.fromstring(f'<a b="{xml(text)}">{xml(text)}</a>')
    cell = markdown(text)
    assert "<" not in cell and "|" not in cell.replace("\\|", "") and not _RAW.search(cell)
