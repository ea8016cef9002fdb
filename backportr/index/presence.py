"""Presence detection: is upstream commit U in branch B, as which commit, and how do we know?

Evidence, strongest first: `ancestor` (U is in B's history), `annotation` (a branch commit
names U in an upstream-reference line), `patch-id` (a branch commit carries the same patch),
`subject` (same subject and same files, or same subject and author and some of the same
files, from a branch commit that names no other upstream commit as its original). A backport
later reverted in the branch (and not re-applied) makes U absent, reported with
`reverted_in_branch`.

Answers come from the index; git is asked only for patch-ids of upstream commits (once,
then cached) and for the files of subject candidates.
"""

from __future__ import annotations

from backportr.git.names import Ref
from backportr.git.repo import Repo
from backportr.index import CommitIndex
from backportr.model import Oid, Presence

_MAX_REVERT_DEPTH = 8
_LIST_PATHS_AFTER = 50  # patch-ids asked about a branch before its commits' paths are listed
_LIST_PATHS_SHARE = 20  # ... or one for every this many of its own commits, if more


class PresenceChecker:
    """Answers presence questions for one repository; caches per (commit, branch)."""

    def __init__(self, repo: Repo, index: CommitIndex) -> None:
        self.repo = repo
        self.index = index
        self._cache: dict[tuple[Oid, str], Presence] = {}
        self._contained: dict[tuple[Oid, str], bool] = {}  # `contains`, asked again by a scan
        self._path_sets: dict[str, set[str]] = {}
        self._asked: dict[str, int] = {}
        self._own: dict[str, list[Oid]] = {}

    def check(self, commit: Oid, branch: Ref) -> Presence:
        key = (commit, branch.refname)
        if key not in self._cache:
            self._cache[key] = self._check(commit, branch)
        return self._cache[key]

    def _check(self, commit: Oid, branch: Ref) -> Presence:
        name = branch.name
        if self.contains(commit, branch):
            reverter = self._effective_reverter(commit, branch, 0)
            return Presence(
                commit,
                name,
                present=reverter is None,
                as_commit=commit,
                how="ancestor",
                reverted_in_branch=reverter is not None,
                reverted_by=reverter,
            )
        candidates: list[tuple[Oid, str]] = [
            (c, "annotation") for c in self.index.reader.carriers(commit, branch.refname)
        ]
        if not candidates and (
            self._looked_up(commit, branch) or self._may_share_patch_id(commit, branch)
        ):
            patch_id = self.index.patch_ids.patch_id(commit)
            if patch_id:
                candidates = [
                    (c, "patch-id")
                    for c in self.index.patch_ids.branch_commits_with_patch_id(
                        commit, patch_id, branch.refname
                    )
                    if not self._carries_a_reverted_original(c, commit)
                ]
        if not candidates:
            candidates = [
                (c, "subject")
                for c in self._subject_matches(commit, branch)
                if not self._carries_a_reverted_original(c, commit)
            ]
        if not candidates:
            return Presence(commit, name, present=False)
        last_reverted: tuple[Oid, str, Oid] | None = None
        for carrier, how in reversed(candidates):
            reverter = self._effective_reverter(carrier, branch, 0)
            if reverter is None:
                return Presence(commit, name, present=True, as_commit=carrier, how=how)  # type: ignore[arg-type]
            last_reverted = last_reverted or (carrier, how, reverter)
        assert last_reverted is not None
        carrier, how, reverter = last_reverted
        return Presence(
            commit,
            name,
            present=False,
            as_commit=carrier,
            how=how,  # type: ignore[arg-type]
            reverted_in_branch=True,
            reverted_by=reverter,
        )

    def needs_patch_id(self, commit: Oid, branch: Ref) -> bool:
        """Would a presence check of `commit` in `branch` compute a patch-id? (A search that
        is a lookup only, `looked_up`, does not ask which paths the commit changes.)"""
        if self.contains(commit, branch) or self.index.reader.carriers(commit, branch.refname):
            return False
        return not self._looked_up(commit, branch) and self._may_share_patch_id(commit, branch)

    def _looked_up(self, commit: Oid, branch: Ref) -> bool:
        """`PatchIds.looked_up`, counted as a question toward listing the branch's paths
        (`_may_share_patch_id`): a run that finds the first patch-ids it asks known would
        otherwise give the questions before the listing to commits not yet asked, and
        compute their patch-ids whatever their paths (a warm DPDK detection, 51 more each
        run, 0.3-0.5 s, until all were)."""
        if not self.index.patch_ids.looked_up(commit, branch.refname):
            return False
        self._asked[branch.refname] = self._asked.get(branch.refname, 0) + 1
        return True

    def _may_share_patch_id(self, commit: Oid, branch: Ref) -> bool:
        """Could one of the branch's own commits carry `commit`'s patch-id? A patch-id hashes
        every `diff --git` header of the patch, so two commits share one only when they
        change the same paths. A commit's patch-id costs a `git log -p` of it (of a large
        file, tens of milliseconds); the branch's paths are listed once, by one git process,
        when its patch-ids are asked for in bulk (a scan), and then a commit whose paths
        no commit of the branch changes needs none."""
        sets = self._path_sets.get(branch.refname)
        if sets is None:
            asked = self._asked[branch.refname] = self._asked.get(branch.refname, 0) + 1
            if asked < _LIST_PATHS_AFTER:
                return True
            if branch.refname not in self._own:
                self._own[branch.refname] = self.index.patch_ids.branch_commits_patched(
                    branch.refname
                )
            own = self._own[branch.refname]
            if asked < len(own) // _LIST_PATHS_SHARE:
                return True
            digests = self.index.patch_ids.digests(own).values()
            sets = self._path_sets[branch.refname] = set(digests)
        return self.index.patch_ids.digests([commit])[commit] in sets

    def contains(self, commit: Oid, branch: Ref) -> bool:
        """Is the commit itself in the branch's history? (Remembered: a scan's stage 1 and
        its checks ask it of the same commits.)"""
        key = (commit, branch.tip)
        answer = self._contained.get(key)
        if answer is None:
            answer = self.index.after_fork.in_branch(commit, branch.refname)
            if answer is None:
                answer = self.repo.has_ancestor(branch.tip, commit)
            self._contained[key] = answer
        return answer

    def _effective_reverter(self, commit: Oid, branch: Ref, depth: int) -> Oid | None:
        """The branch commit that reverts `commit` and is not itself reverted, if any."""
        if depth > _MAX_REVERT_DEPTH:
            return None
        reverters = [r.commit for r in self.index.reader.reverted_by(commit)]
        for reverter in reverters:
            if self.index.reader.is_upstream(reverter) and not self.contains(reverter, branch):
                # An upstream revert counts only where the branch carries it.
                carried = self.index.reader.carriers(reverter, branch.refname)
                if not carried:
                    continue
                reverter = carried[-1]
            elif not self.contains(reverter, branch):
                continue
            if self._effective_reverter(reverter, branch, depth + 1) is None:
                return reverter
        return None

    def _carries_a_reverted_original(self, carrier: Oid, commit: Oid) -> bool:
        """The branch commit is the backport of another upstream commit, one that upstream
        reverted: `commit` is then its re-application after the revert (same patch, same
        subject), and that backport says nothing about it."""
        named = self.index.reader.carried_upstream(carrier)
        return (
            named is not None
            and named != commit
            and bool(self.index.reader.reverted_by(named, upstream_only=True))
        )

    def _subject_matches(self, commit: Oid, branch: Ref) -> list[Oid]:
        """Branch commits with `commit`'s subject that change the same files; or, by the
        same author, some of the same files (a backport the author posted again for the
        branch, adapted: a file the branch lacks left out, a test file added). Where another
        upstream commit has the subject too, only a branch commit with `commit`'s author and
        author date (a cherry-pick keeps both): a subject a project writes again and again
        (tcpdump's "CHANGES: Add a change backported to 4.99", 32 commits of one author on
        one file; NetworkManager's "NEWS: update") names none of them by itself."""
        subject = self.index.reader.subject(commit, self.repo)
        matches = self.index.reader.branch_commits_with_subject(subject, branch.refname)
        if not matches:
            return []
        shared = any(u != commit for u in self.index.reader.upstream_by_subject(subject))
        files = set(self.repo.diffs.files_touched(commit))
        out = []
        for m in matches:
            if self._carries_another(m, commit):
                continue
            if shared and not self.index.reader.same_authorship(m, commit):
                continue
            theirs = set(self.repo.diffs.files_touched(m))
            if theirs == files or (theirs & files and self.index.reader.same_author(m, commit)):
                out.append(m)
        return out

    def _carries_another(self, carrier: Oid, commit: Oid) -> bool:
        """The branch commit names another upstream commit as its original: it is that
        commit's backport, and a subject they share says nothing about `commit` (projects
        reuse subjects: two "fix build with optional flag" commits of one author, a day
        apart, each its own change). A carrier of the same patch is found by patch-id."""
        named = self.index.reader.carried_upstream(carrier)
        return named is not None and named != commit and self.index.reader.is_upstream(named)
