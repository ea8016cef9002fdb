"""Cosmetic follow-ups, and whether a branch takes them, learned from its own history.

A follow-up that changes only comments and documentation (a typo in a comment, a man page
reworded) fixes nothing a user runs. Some stable branches take them with the fix they
follow; others leave them: systemd's stable branches took 2 to 6 of every 11 to 14 such
follow-ups of commits they carry, against 6 to 8 in 10 of the others; Xen's 4.18 took 1 of 6;
OVN and DPDK took the few they met. Where a branch's history says it leaves them (at least
`LEAST` seen, fewer than half taken), a cosmetic follow-up is optional there: a suggestion,
not a member (measured: docs/rules.md).

The practice is learned when a cosmetic follow-up asks (a resolve that meets none reads
nothing): of the upstream follow-ups of the branch's newest `LOOKED_AT` backports, committed
upstream at least `SETTLED` before the branch's tip (the branch had time to take them), the
cosmetic ones and how many the branch carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from backportr.git.names import Ref
from backportr.git.repo import Repo
from backportr.index import CommitIndex
from backportr.model import Oid
from backportr.resolve.finders.conflicts import is_documentation

LOOKED_AT = 2000  # newest backports of a branch whose follow-ups are read
LEAST = 5  # cosmetic follow-ups seen before a branch's practice says anything
SHARE = 0.5  # taken below this share: the branch leaves them
SETTLED = 60 * 86400  # seconds between a follow-up upstream and the branch's tip

_SLASH_COMMENTS = {".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".go", ".rs", ".java", ".js"}
_SLASH_COMMENTS |= {".ts", ".css", ".y", ".l", ".dts", ".dtsi", ".S"}
_HASH_COMMENTS = {".sh", ".py", ".pl", ".rb", ".yml", ".yaml", ".toml", ".cfg", ".conf"}
_HASH_COMMENTS |= {".mk", ".am", ".ac", ".cmake", ".build"}
_HASH_NAMES = ("meson.build", "meson_options.txt", "Makefile", "Kconfig", "CMakeLists.txt")


@dataclass(frozen=True, slots=True)
class Practice:
    """How a branch treats cosmetic follow-ups: how many it met, how many it took."""

    seen: int
    taken: int

    @property
    def leaves_them(self) -> bool:
        return self.seen >= LEAST and self.taken < SHARE * self.seen


class CosmeticFollowUps:
    """Which commits are cosmetic, and each branch's practice (computed when asked)."""

    def __init__(self, index: CommitIndex, repo: Repo) -> None:
        self.index = index
        self.repo = repo
        self._cosmetic: dict[Oid, bool] = {}
        self._practice: dict[Oid, Practice] = {}  # by branch tip

    def is_cosmetic(self, commit: Oid) -> bool:
        """Does the commit change only comments, blank lines and documentation?"""
        if commit not in self._cosmetic:
            self._cosmetic[commit] = self._judge(commit)
        return self._cosmetic[commit]

    def practice(self, branch: Ref) -> Practice:
        if branch.tip not in self._practice:
            self._practice[branch.tip] = self._learn(branch)
        return self._practice[branch.tip]

    def _judge(self, commit: Oid) -> bool:
        changed = False
        for file in self.repo.diffs.diff(commit):
            path = file.new_path
            if is_documentation(path):
                changed = True
                continue
            if not file.hunks:
                return False  # binary, or a mode or a path change
            for hunk in file.hunks:
                for line in hunk.lines:
                    if line.origin == " ":
                        continue
                    if not comment_or_blank(path, line.content):
                        return False
                    changed = True
        return changed

    def _learn(self, branch: Ref) -> Practice:
        reader = self.index.reader
        tip = self.repo.commit(branch.tip).commit_time
        seen = taken = 0
        looked: set[Oid] = set()
        for _, upstream in reader.backports_in(branch.refname)[-LOOKED_AT:]:
            for relation in reader.fixed_by(upstream):
                follow_up = relation.commit
                if follow_up in looked:
                    continue
                looked.add(follow_up)
                info = reader.info(follow_up)
                if info is None or info.commit_time > tip - SETTLED:
                    continue
                if not self.is_cosmetic(follow_up):
                    continue
                seen += 1
                taken += bool(reader.carriers(follow_up, branch.refname))
        return Practice(seen, taken)


def comment_or_blank(path: str, text: str) -> bool:
    """Is this changed line blank, or a comment in the file's language? (A line of a language
    not known here is not.)"""
    line = text.strip()
    if not line:
        return True
    name = PurePosixPath(path).name
    suffix = PurePosixPath(path).suffix
    if suffix in _SLASH_COMMENTS:
        return line.startswith(("/*", "//", "*/")) or (
            line.startswith("*") and (len(line) == 1 or line[1] in " \t/")
        )
    if suffix in _HASH_COMMENTS or name.startswith(_HASH_NAMES):
        return line.startswith("#")
    return False
