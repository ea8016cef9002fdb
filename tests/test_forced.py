"""`git.forced`: a diff the same under Myers (libgit2's merge) and histogram (git's), checked
against git itself, whose `diff --no-index` runs either algorithm on the same two files."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backportr.git.forced import Lines, records
from backportr.git.forced import diff_is_forced as _forced

_SHARED = ["{", "}", "", "return 0;", "x();"]


def diff_is_forced(old: bytes, new: bytes) -> bool:
    return _forced(Lines.of(old), Lines.of(new))


def _text(lines: list[str]) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode()


def test_records_are_xdiffs_lines() -> None:
    assert records(b"a\nb\n") == [b"a\n", b"b\n"]
    assert records(b"a\nb") == [b"a\n", b"b"]
    assert records(b"") == []


def test_what_is_forced_and_what_is_not() -> None:
    distinct = [f"int v{n};" for n in range(10)]
    assert diff_is_forced(_text(distinct), _text([*distinct[:4], "int w;", *distinct[5:]]))
    # a line both share that one of them repeats: either copy may be the one kept
    assert not diff_is_forced(_text([*distinct, "}"]), _text(["}", *distinct, "}"]))
    # shared lines out of order: which of them a diff keeps is the algorithm's choice
    assert not diff_is_forced(_text(distinct), _text([*distinct[5:], *distinct[:5]]))
    # a last line without its newline is another line
    assert diff_is_forced(_text(distinct), _text(distinct)[:-1])
    # binary to git (a NUL in the first 8,000 bytes): git's merge conflicts
    assert not diff_is_forced(b"\0" + _text(distinct), _text(distinct))
    # far apart, Myers in xdiff may stop short of the fewest changes
    assert not diff_is_forced(_text(distinct), _text([f"int w{n};" for n in range(200)]))


def _git_diff(tmp: Path, algorithm: str) -> list[bytes]:
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-indent-heuristic", f"--diff-algorithm={algorithm}",
         "-U0", "a", "b"],
        cwd=tmp, capture_output=True, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    return [line for line in proc.stdout.split(b"\n") if line.startswith(b"@@")]


_LINE = st.one_of(st.sampled_from(_SHARED), st.integers(0, 40).map(lambda n: f"u{n}"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    old=st.lists(_LINE, max_size=30),
    new=st.lists(_LINE, max_size=30),
    tail=st.booleans(),
)
def test_a_forced_diff_is_the_same_under_myers_and_histogram(
    tmp_path_factory: object, old: list[str], new: list[str], tail: bool
) -> None:
    tmp = tmp_path_factory.mktemp("diff")  # type: ignore[attr-defined]
    a, b = _text(old), _text(new)
    if tail:
        b = b.rstrip(b"\n")
    (tmp / "a").write_bytes(a)
    (tmp / "b").write_bytes(b)
    if diff_is_forced(a, b):
        assert _git_diff(tmp, "myers") == _git_diff(tmp, "histogram")
