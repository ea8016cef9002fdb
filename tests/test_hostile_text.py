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
    assert proc.returncode == 0, proc.stderr
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


# -- every format on repositories written with hostile alphabets -----------------------------

_HOSTILE_CHARS = st.sampled_from(
    ["\x1b", "\x07", "\r", "\n", "\b", "\x7f", "\x9b", "\u202e", "\u2066", "<", "&", '"', "|", "`"]
)
_TEXT = st.lists(st.one_of(_HOSTILE_CHARS, st.text(max_size=4)), max_size=30).map("".join)
_LONG = st.builds(
    lambda c, n: c * n, st.sampled_from(["a", " ", "\x1b", "<"]), st.integers(1, 3000)
)


def _name(text: str) -> str:
    """What git can store as a signature's name or a path component."""
    clean = "".join(c for c in text if c not in "<>\n\0/")
    return f"x{clean}x"  # libgit2 trims control characters and spaces at a name's ends


@settings(
    max_examples=6,
    deadline=None,  # each example builds a repository and runs eleven commands
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(subject=st.one_of(_TEXT, _LONG), body=_TEXT, author=_TEXT, path=_TEXT)
def test_every_format_of_resolve_and_scan_on_hostile_data(
    tmp_path_factory: pytest.TempPathFactory, subject: str, body: str, author: str, path: str
) -> None:
    import email
    import email.policy
    import json

    from backportr.git.builder import Person

    k = Kernel(tmp_path_factory.mktemp("prop") / "r")
    folder = _name(path)
    who = Person(_name(author), "hostile@example.org")
    # libgit2 writes a message as a C string: a NUL would end it before the trailers
    subject, body = subject.replace("\x00", ""), body.replace("\x00", "")
    k.b.commit(
        f"{subject.splitlines()[0] if subject.splitlines() else 'x'}\n\n{body}\n\n"
        + k.fixes("v5.10")
        + "Cc: stable@vger.kernel.org\n",
        {f"{folder}/file.c": "int x;\n"},
        name="target",
        author=who,
    )
    target, repo = k.b.ids["target"], str(k.b.path)
    for fmt in ("text", "json", "script", "dot", "html", "mbox"):
        proc = backportr("resolve", target, "--repo", repo, "-b", BRANCH, "-f", fmt)
        assert proc.returncode == 0, (fmt, proc.stderr)
        if fmt == "json":
            json.loads(proc.stdout)
        elif fmt == "mbox" and not proc.stdout:  # not whole: nothing written, said why
            assert proc.returncode == 4 and "left out" in proc.stderr, proc.stderr
            assert not _RAW.search(proc.stderr), proc.stderr
        elif fmt == "mbox":
            head = proc.stdout.split("\n\n", 1)[0]
            assert "\r" not in head and not _RAW.search(head), fmt
            mail = email.message_from_string(
                proc.stdout.split("\n", 1)[1], policy=email.policy.default
            )
            assert mail["Subject"] is not None and mail["From"] is not None
        else:
            assert not _RAW.search(proc.stdout), (fmt, _RAW.search(proc.stdout))
    if shutil.which("dot"):
        svg = backportr("resolve", target, "--repo", repo, "-b", BRANCH, "-f", "svg")
        assert svg.returncode == 0, svg.stderr
        ElementTree.fromstring(svg.stdout.encode())
    for fmt in ("text", "json", "markdown", "html"):
        scan = backportr("scan", "--repo", repo, "-b", BRANCH, "-f", fmt)
        assert scan.returncode == 4, (fmt, scan.stderr)
        if fmt == "json":
            json.loads(scan.stdout)
        else:
            assert not _RAW.search(scan.stdout), (fmt, _RAW.search(scan.stdout))


def test_mail_check_text_and_reply_show_control_characters_escaped(
    hostile: Kernel, tmp_path: Path
) -> None:
    """`mail check` prints the subjects of the series (and the reply's body carries them to
    a maintainer's mail reader): escaped there too."""
    mail = tmp_path / "failed.eml"
    mail.write_text(
        "From: <gregkh@linuxfoundation.org>\nTo: dev@example.org\n"
        'Subject: FAILED: patch "[PATCH] drv: x" failed to apply to 5.10-stable tree\n'
        "Message-ID: <failed-hostile@example.org>\n\n"
        f"git cherry-pick -x {hostile.b.ids['target']}\n"
    )
    for fmt in ("text", "reply"):
        proc = backportr("mail", "check", str(mail), "--repo", str(hostile.b.path), "-f", fmt)
        assert proc.returncode == 4, proc.stderr
        assert "\\x1b]0;owned\\x07" in proc.stdout, (fmt, proc.stdout)
        assert not _RAW.search(proc.stdout), (fmt, _RAW.search(proc.stdout))
