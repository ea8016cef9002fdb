"""What an index update does to each branch, decided before the upstream pass starts; the
background `git log -p | git patch-id` pass that gives a branch's patch-ids, and the
background search of each branch's fork."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence

from backportr.git.names import Ref
from backportr.git.repo import Repo
from backportr.git.streams import PIPELINES
from backportr.index.schema import IndexedRef
from backportr.model import Oid, oids
from backportr.text.trailers import names_upstream

_PATCH_SLICE = 5_000  # branch commits per `git log -p | git patch-id` pipeline


class PatchIdPass:
    """The `git log -p | git patch-id` pipelines of a branch's new commits, in the
    background (git does the work on the other cores while this one reads the upstream
    history). The commits are listed first and shared among up to `PIPELINES` pipelines at
    once, none given more than `_PATCH_SLICE`: the diffs are git's work, and a branch whose
    backports touch 40,000-line files keeps one core busy for seconds.

    Without `named`, the commits whose messages name their upstream commit are left out:
    a question finds those by their upstream reference, and a question by patch-id computes
    the few that could share its commit's (`PatchIds`). On a stable branch they are
    most commits (FRR's `stable/10.2`: 308 of 357; a kernel branch nearly all of its
    25,000), and their diffs most of the pass. Heavy commits (`Streams.heavy`) are left out
    too, and computed the same way when a question could need them: util-linux's branches
    merge their translation catalogs, whose diffs were 2 of a pass's 2.3 s."""

    def __init__(
        self,
        repo: Repo,
        tips: list[Oid],
        exclude: list[Oid] | Callable[[], list[Oid]],
        *,
        named: bool = True,
    ) -> None:
        """`exclude` may be found in the background too (the branches' merge bases, once
        their fork probes know them)."""
        self._patch_ids: list[tuple[Oid, str]] = []
        self._left_out = 0
        self._error: BaseException | None = None

        def run() -> None:
            try:
                excluded = exclude() if callable(exclude) else exclude
                if named:
                    commits = repo.streams.commits_between(tips, excluded)
                    listed = len(commits)
                else:
                    messages = repo.streams.messages_between(tips, excluded)
                    commits = [oid for oid, message in messages if not names_upstream(message)]
                    listed = len(messages)
                heavy = repo.streams.heavy(commits)
                commits = [c for c in commits if c not in heavy]
                self._left_out = listed - len(commits)
                found = repo.streams.patch_ids_in_parts(commits, _PATCH_SLICE, PIPELINES)
                self._patch_ids = list(found)
            except BaseException as error:
                self._error = error

        self._thread = threading.Thread(target=run, name="patch-ids", daemon=True)
        self._thread.start()

    def result(self) -> list[tuple[Oid, str]]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._patch_ids

    def left_out(self) -> int:
        """How many commits the pass left without a patch-id (those naming upstream, the
        heavy ones)."""
        self.result()
        return self._left_out


class ForkProbes:
    """The fork points from upstream of branches new to the index, and the upstream commits
    after each, found by git in background threads while this one reads the upstream
    history (libgit2's merge base holds the interpreter: 0.15 s of NetworkManager's build).
    With several merge bases the fork is libgit2's (`Repo.merge_base`), as before.

    With `later`, only the probes of `first` run in the background; the others' merge bases
    are asked of `later` when first needed, once upstream is read (`BranchPlan.fork`): the
    index then knows upstream's commits, and a branch's merge bases are the first of them
    its own commits reach (`Repo.reached_first`; of several, those no other reaches: `git
    merge-base --independent`, a few milliseconds), a walk of those few hundred commits
    where git's merge base walks upstream's history down to the fork (FRR's 26 siblings: 27
    `merge-base` processes of 0.3 s each, most of a first run's index)."""

    def __init__(
        self,
        repo: Repo,
        upstream_tip: Oid,
        tips: list[Oid],
        first: Sequence[int] = (),
        listed: Collection[int] | None = None,
        later: Callable[[Oid], list[Oid]] | None = None,
    ) -> None:
        """The probes of `first` (indices into `tips`) run first; the upstream commits after
        the fork are listed for those of `listed` only (every branch when None)."""
        self._later = later
        self._repo = repo
        self._upstream = upstream_tip
        self._found: list[tuple[list[Oid], list[Oid] | None]] = [([], None)] * len(tips)
        self._errors: list[BaseException | None] = [None] * len(tips)
        self._done = [threading.Event() for _ in tips]
        self._chosen: dict[int, Oid | None] = {}  # forks chosen among several merge bases
        # Up to `PIPELINES` probes at once, taken in the order the branches are read (but
        # those of `first`, whose patch-id pass waits for their merge bases, before): a
        # branch is read as soon as its own fork is known (each probe is two git walks of
        # upstream, a fifth of a second each on a 45,000-commit history without a
        # commit-graph; a repository of 27 stable branches waited 11 s for them one by one).
        leading = set(first)
        others = [i for i in range(len(tips)) if i not in leading]
        self._deferred = set(others) if later is not None else set()
        queue = iter([*first, *(i for i in others if i not in self._deferred)])
        lock = threading.Lock()

        def run() -> None:
            while True:
                with lock:
                    i = next(queue, None)
                if i is None:
                    return
                try:
                    self._found[i] = self._probe(tips[i], listed is None or i in listed)
                except BaseException as error:
                    self._errors[i] = error
                finally:
                    self._done[i].set()

        for _ in range(min(PIPELINES, len(tips) - len(self._deferred))):
            threading.Thread(target=run, name="forks", daemon=True).start()
        self._tips = tips

    def _probe(self, tip: Oid, listed: bool) -> tuple[list[Oid], list[Oid] | None]:
        bases = oids(self._repo.run_git("merge-base", "--all", tip, self._upstream, check=False))
        after = None
        if len(bases) == 1 and listed:
            after = oids(self._repo.run_git("rev-list", self._upstream, f"^{bases[0]}"))
        return bases, after

    def _result(self, i: int) -> tuple[list[Oid], list[Oid] | None]:
        if i in self._deferred:  # asked in this thread, once upstream is read
            assert self._later is not None
            self._deferred.discard(i)
            try:
                self._found[i] = (self._later(self._tips[i]), None)
            except BaseException as failure:
                self._errors[i] = failure
            finally:
                self._done[i].set()
        self._done[i].wait()
        if (error := self._errors[i]) is not None:
            raise error
        return self._found[i]

    def fork(self, i: int, tip: Oid) -> Oid | None:
        """The fork point of the i-th branch asked for (its tip `tip`)."""
        bases, _ = self._result(i)
        if len(bases) < 2:
            return bases[0] if bases else None
        if i not in self._chosen:  # libgit2's choice, found once
            self._chosen[i] = self._repo.newest_committed(bases) or self._repo.merge_base(
                tip, self._upstream
            )
        return self._chosen[i]

    def after_fork(self, i: int) -> list[Oid] | None:
        """The upstream commits after the i-th branch's fork (None: not listed here)."""
        return self._result(i)[1]

    def bases(self, i: int) -> list[Oid]:
        """Every merge base of the i-th branch and upstream."""
        return self._result(i)[0]


class BranchPlan:
    """What an update does to one branch, decided before the upstream pass starts (a branch
    new to the index is read whole, whatever its fork: that is found meanwhile)."""

    def __init__(
        self,
        branch: Ref,
        stored: IndexedRef | None,
        fork: Oid | None,
        mode: str,
        exclude: list[Oid],
        probe: tuple[ForkProbes, int] | None = None,
        *,
        unless_taken: bool = False,
    ) -> None:
        """`unless_taken`: the fork stands unless upstream's new commits took some of the
        branch's own commits, which the writer checks once upstream is read (`replanned`)."""
        self.branch = branch
        self.stored = stored
        self._fork = fork
        self.mode = mode  # noop | upstream-only | incremental | rewind | full
        self.exclude = exclude
        self.pass_: PatchIdPass | None = None  # may be shared with other branches
        self._probe = probe
        self.unless_taken = unless_taken

    @property
    def fork(self) -> Oid | None:
        if self._probe is not None:
            probes, i = self._probe
            return probes.fork(i, self.branch.tip)
        return self._fork

    def after_fork(self) -> list[Oid] | None:
        """The upstream commits after the fork where the probe listed them."""
        return self._probe[0].after_fork(self._probe[1]) if self._probe is not None else None

    def own_commits_exclude(self) -> list[Oid]:
        """What the walk of the branch's own commits excludes. Where the probe found the
        merge bases, they: a commit of both histories is an ancestor of one of them, so the
        walk is the same as one excluding upstream's tip, but it stops at the fork instead of
        walking upstream's history to it (a fifth of a second a branch on a 45,000-commit
        history without a commit-graph)."""
        bases = self._probe[0].bases(self._probe[1]) if self._probe is not None else []
        return bases or self.exclude

    def patch_ids(self) -> list[tuple[Oid, str]]:
        """The patch-ids of (at least) this branch's new commits."""
        return self.pass_.result() if self.pass_ is not None else []


def branch_plans(
    repo: Repo,
    upstream: Ref,
    branches: Sequence[Ref],
    stored: Sequence[IndexedRef | None],
    upstream_moved: bool,
    worked_on: Collection[str] = (),
    upstream_among: Callable[[list[Oid]], set[Oid]] | None = None,
    upstream_forward: bool = False,
) -> list[BranchPlan]:
    """Each branch's plan, from what the index holds of it (`stored`). A branch the index
    holds is planned from its fork now (libgit2's merge base, whose commits the ancestry
    tests then find in its cache); the forks of branches new to it are found by git in the
    background, those of `worked_on` (refnames) first and with the upstream commits after
    them listed (a sibling's are listed when asked for: `AfterFork.complete`). With
    `upstream_among` (which of these commits are upstream's, asked once upstream is read),
    a sibling's merge bases are found from it instead (`ForkProbes`).

    A branch the index holds whose tip has not moved, while upstream only moved forward,
    keeps its fork unless upstream's new commits include some of the branch's own: the
    common history of the two gained only those. That is checked once upstream is read
    (`BranchPlan.unless_taken`; libgit2's merge base then, as for a branch that moved),
    where a merge base of each such branch cost 0.04 s before anything was read (FRR's 27
    branches: 1.1 s of a 1.4 s update after upstream moved)."""
    held = [s if s is not None and s.kind == "branch" else None for s in stored]
    new = [i for i, known in enumerate(held) if known is None]
    first = [n for n, i in enumerate(new) if branches[i].refname in worked_on]
    tips = [branches[i].tip for i in new]
    # A probe lists the upstream commits after its fork for a few branches worked on (it
    # runs beside the upstream read); many are listed at the update's end instead, each
    # from the nearest fork known (`AfterFork.complete`): a walk of upstream from its tip
    # each would cost as much as the rest of the build (FRR's 27 branches).
    listed = set(first) if len(first) <= PIPELINES else set()
    later = None
    if upstream_among is not None:
        among = upstream_among

        def later(tip: Oid) -> list[Oid]:
            bases = repo.reached_first(tip, among)
            if len(bases) > 1:  # a branch that merged upstream again: the newest of them
                bases = sorted(oids(repo.run_git("merge-base", "--independent", *bases)))
            return bases

    probes = ForkProbes(repo, upstream.tip, tips, first, listed, later)
    plans = []
    for i, (branch, known) in enumerate(zip(branches, held, strict=True)):
        if known is None:  # read whole, whatever its fork
            probe = (probes, new.index(i))
            plans.append(BranchPlan(branch, stored[i], None, "full", [upstream.tip], probe))
        elif known.tip == branch.tip and not upstream_moved:
            plans.append(BranchPlan(branch, known, known.fork, "noop", []))
        elif known.tip == branch.tip and upstream_forward:
            plans.append(
                BranchPlan(branch, known, known.fork, "upstream-only", [], unless_taken=True)
            )
        else:
            fork = repo.merge_base(branch.tip, upstream.tip)
            plans.append(_plan(repo, branch, known, fork, upstream))
    return plans


def replanned(repo: Repo, plan: BranchPlan, upstream: Ref) -> BranchPlan:
    """The plan of a branch indexed `upstream-only` whose own commits upstream took: from its
    fork now."""
    assert plan.stored is not None
    fork = repo.merge_base(plan.branch.tip, upstream.tip)
    return _plan(repo, plan.branch, plan.stored, fork, upstream)


def _plan(
    repo: Repo, branch: Ref, stored: IndexedRef, fork: Oid | None, upstream: Ref
) -> BranchPlan:
    """The plan of a branch the index holds, from its fork now."""
    if stored.fork == fork:
        if stored.tip == branch.tip:
            return BranchPlan(branch, stored, fork, "upstream-only", [])
        if repo.is_ancestor(branch.tip, stored.tip):
            return BranchPlan(branch, stored, fork, "rewind", [branch.tip])
        if repo.is_ancestor(stored.tip, branch.tip):
            return BranchPlan(branch, stored, fork, "incremental", [stored.tip, upstream.tip])
    return BranchPlan(branch, stored, fork, "full", [upstream.tip])
