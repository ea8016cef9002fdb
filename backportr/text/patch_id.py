"""git's stable patch-id, computed from a commit's `git diff-tree -p` text in-process.

`git patch-id --stable` hashes each file's diff with whitespace, line numbers and `index`
lines left out, and adds the files' hashes (20-byte sums with carry), so the order of the
files does not matter. This is the same state machine, line for line, for text diffs: a
long-running `git diff-tree --stdin -p` then gives the patch-ids of a few commits without
starting two processes for them. What it does not follow is left to git (`patch_id`
answers `UNSURE`): binary files, and hunk headers that leave a count out (`@@ -5 +5 @@`),
which git's versions read differently (before 2.39 the line number was taken for it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

UNSURE = "?"
_SPACES = b" \t\n\r"  # git's own isspace(): not \v or \f
_HUNK = re.compile(rb"@@ -[0-9]+,([0-9]+) \+[0-9]+,([0-9]+) @@")


def patch_id(lines: Iterable[bytes]) -> str | None:
    """The stable patch-id of one commit's diff lines (each with its newline, the
    `commit <id>` line left out); None when there is no diff, `UNSURE` for a binary one
    or a hunk header without counts."""
    result = bytearray(20)
    ctx = hashlib.sha1()
    length = 0
    before = after = -1
    for line in lines:
        if line.startswith(b"\\ ") and len(line) > 12:
            continue  # "\ No newline at end of file"
        if not length and not line.startswith(b"diff "):
            continue  # before the first diff: the commit's header
        if before == -1:
            if line.startswith((b"Binary files ", b"GIT binary patch")):
                return UNSURE
            if line.startswith(b"index "):
                continue
            if line.startswith(b"--- "):
                before = after = 1
            elif not line[:1].isalpha():
                break
        if before == 0 and after == 0:
            if line.startswith(b"@@ -"):
                sizes = _HUNK.match(line)
                if sizes is None:
                    return UNSURE  # a count left out: git's versions read it differently
                before, after = int(sizes[1]), int(sizes[2])
                continue
            if not line.startswith(b"diff "):
                break
            _add(result, ctx)
            ctx = hashlib.sha1()
            before = after = -1
        first = line[:1]
        if first in (b"-", b" "):
            before -= 1
        if first in (b"+", b" "):
            after -= 1
        stripped = line.translate(None, _SPACES)
        length += len(stripped)
        ctx.update(stripped)
    if not length:
        return None
    _add(result, ctx)
    return result.hex()


def _add(result: bytearray, ctx: hashlib._Hash) -> None:
    """result += sha1 (a 20-byte little-endian sum with carry, as git's flush_one_hunk)."""
    carry = 0
    for i, byte in enumerate(ctx.digest()):
        carry += result[i] + byte
        result[i] = carry & 0xFF
        carry >>= 8


def paths_key(paths: Iterable[str]) -> tuple[str, ...]:
    """What two commits sharing a patch-id have in common: the paths they change, as the
    patch-id sees them (it drops whitespace, in names too). Two commits whose keys differ
    cannot share a patch-id, so a question by patch-id needs only the commits of its key."""
    return tuple(sorted("".join(path.split()) for path in paths))
