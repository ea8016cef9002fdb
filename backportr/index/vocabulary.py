"""A project's fix vocabulary, learned from its own history once per index build.

Every line of the newest upstream commits that cites an earlier commit by id is grouped by
the phrase it cites it with (`text/citations.py`). A phrase becomes a fix relation only on
the repository's evidence:

- **use**: at least `LEAST_COMMITS` commits cite with it, and their ids name commits;
- **another relation**: a phrase whose lines the built-in reader reads as a revert or an
  upstream annotation (`This reverts commit`, `(cherry picked from commit`), or that says
  `revert`, is that, not a fix; one whose lines it reads as a fix is already known
  (`Fixes:`, `Follow-up for`);
- **a phrase**: one of words, not of function words only (`in`, `since`, `see`);
- **the code**: in at least `TOUCH` of a sample, the citing commit changes a file the
  cited one changed;
- **the stable teams**: where the project's stable branches carry a cited commit (and
  `STABLE_PAIRS` such pairs are seen), they carry its citing commit too, at least
  `STABLE_RATE` of the time and `STABLE_LIFT` times as often as an upstream commit of the
  same years. A phrase too few pairs speak for counts as a relation only where it is
  written as a trailer (`Amends: <id>`), a line the project made for relations, only in a
  project with stable branches (in one without, nothing says a trailer is a fix's), and
  only where the pair seen, if any, took it (util-linux's `References: <id>` names related
  work: its one pair went without it); or where it is a known trailer written without its
  colon (`Fixes <id>`).

What was learned is saved beside the index (`<index>.forms.json`, written whole under the
index's writers' lock) with every phrase's counts and an example, shown by `backportr
config`; `backportr.fixesPattern` adds forms, `backportr.ignoreForm` removes learned ones.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import random
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from backportr.errors import BackportrError
from backportr.git.log_records import LogRecord, log_record, raw_fields
from backportr.git.repo import Repo
from backportr.git.streams import PIPELINES
from backportr.index.transaction import held
from backportr.infra.files import read_regular
from backportr.model import Oid
from backportr.text.citations import Citation, line_citations, lines_with_hex_runs
from backportr.text.relation_forms import LearnedPhrase
from backportr.text.relation_words import lowered_mentions_relations
from backportr.text.trailers import parse_message, upstream_refs

_log = logging.getLogger(__name__)

LEARN_COMMITS = 20_000
"""Newest upstream commits read (a kernel's three months, a smaller project's years)."""
BRANCH_COMMITS = 3_000
"""Newest commits of each stable branch read for the upstream commits it carries."""
TOGETHER_COMMITS = 60_000
"""The most commits upstream lacks read in one walk for every stable branch at once."""
LEAST_COMMITS = 5
SAMPLE = 30  # citations whose diffs are compared, per phrase
TOUCH = 0.5
STABLE_PAIRS = 2
STABLE_RATE = 0.3
STABLE_LIFT = 4.0
STABLE_SIGNIFICANCE = 0.05
"""How often chance alone may give the stable branches' count of pairs taken: a phrase
whose few pairs chance explains (runc's `added by`: 1 of 2 taken where 0.15 were expected,
1 time in 7) is no evidence."""
_LARGEST_DIFF = 60  # files: a larger commit is no evidence of where a fix is
_FUNCTION_WORDS = (
    "a about above after again against also an and as at be because been before below "
    "between both but by c can could did do does done during each else even ever every "
    "for from further had has have he her here his how i if in into is it its just last "
    "later like made make many may more most much must new next no nor not now of off "
    "old on once one only or other our out over own per prior same see seen she should "
    "since so some such than that the their them then there these they this those "
    "through thus to too under until up upon us very via was we were what when where "
    "whether which while who why will with within without would yet you s"
)
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
"""Words that make no phrase alone (`in <id>`, `since <id>`, `see <id>`, Xen's `c/s`)."""

VERSION = 2  # of the saved file and of the rules: another version learns again


@dataclass(frozen=True, slots=True)
class PhraseEvidence:
    """One phrase, what the repository says of it, and the verdict."""

    phrase: str
    written: str  # as most lines write it
    commits: int  # citing commits
    example: str  # a line citing with it
    sampled: int  # citations whose cited commit was found and compared
    touching: int  # of those, the citing commit changed a file the cited one changed
    pairs: int  # (stable branch, citation): the branch carries the cited commit
    taken: int  # of those, it carries the citing commit too
    chance: float  # expected `taken` of that many random upstream commits
    verdict: str  # "fix", "known: <form>", or why not

    @property
    def accepted(self) -> bool:
        return self.verdict == "fix"

    def ignored_by(self, ignored: Iterable[str]) -> bool:
        """Named by `backportr.ignoreForm` (as its words or as written, any case)."""
        names = {i.strip().lower() for i in ignored}
        return self.phrase in names or self.written.lower() in names

    def describe(self) -> str:
        stable = (
            f"stable {self.taken}/{self.pairs} taken (chance {self.chance:.1f})"
            if self.pairs
            else "no stable evidence"
        )
        touch = f"touch {self.touching}/{self.sampled}" if self.sampled else "no diffs compared"
        return f"{self.written!r}: {self.commits} commits, {touch}, {stable}"


@dataclass(frozen=True, slots=True)
class LearnedVocabulary:
    """What one learning found: every phrase used enough, with its evidence; the accepted
    ones are fix relations."""

    upstream_tip: Oid
    looked_at: int
    phrases: tuple[PhraseEvidence, ...]

    def accepted(self, ignored: Iterable[str] = ()) -> tuple[LearnedPhrase, ...]:
        ignored = tuple(ignored)
        return tuple(
            LearnedPhrase(p.phrase, p.written, p.example)
            for p in self.phrases
            if p.accepted and not p.ignored_by(ignored)
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": VERSION,
                "upstream_tip": self.upstream_tip,
                "looked_at": self.looked_at,
                "phrases": [asdict(p) for p in self.phrases],
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> LearnedVocabulary | None:
        """The saved vocabulary, or None where it is another version's or unreadable (it is
        learned again)."""
        try:
            data = json.loads(text)
            if data.get("version") != VERSION:
                return None
            phrases = tuple(PhraseEvidence(**p) for p in data["phrases"])
            tip, looked_at = data["upstream_tip"], data["looked_at"]
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None
        if not isinstance(tip, str) or not isinstance(looked_at, int):
            return None
        if not all(_well_typed(p) for p in phrases):
            return None  # a file backportr did not write so: learned again
        return cls(Oid(tip), looked_at, phrases)


def _well_typed(evidence: PhraseEvidence) -> bool:
    """Every field of the type the dataclass declares (a float field may hold an int)."""
    for name, declared in PhraseEvidence.__annotations__.items():
        value = getattr(evidence, name)
        wanted = _TYPES[str(declared)]
        if not isinstance(value, wanted) or isinstance(value, bool):
            return False
    return True


_TYPES: dict[str, type | tuple[type, ...]] = {"str": str, "int": int, "float": (int, float)}
_SAVED_LIMIT = 16 << 20  # bytes of the saved file read at most (a phrase list is kilobytes)


def saved_path(index_path: Path) -> Path:
    return index_path.with_suffix(".forms.json")


def load(index_path: Path) -> LearnedVocabulary | None:
    try:
        data = read_regular(saved_path(index_path), _SAVED_LIMIT)
    except BackportrError as error:  # not a regular file, or too large: learned again
        _log.warning("%s", error)
        return None
    if data is None:
        return None
    return LearnedVocabulary.from_json(data.decode("utf-8", "replace"))


def save(index_path: Path, learned: LearnedVocabulary) -> None:
    """Write the file whole: a temporary file beside it, renamed over it (OSError where it
    cannot be written: nothing is left half-written)."""
    path = saved_path(index_path)
    fd, tmp = tempfile.mkstemp(prefix=".forms-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(learned.to_json())
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


Progress = Callable[[str, int, int | None], None]


class VocabularyLearner:
    """Reads the history once and weighs each phrase (module docstring)."""

    def __init__(self, repo: Repo, *, commits: int = LEARN_COMMITS, seed: int = 0) -> None:
        self.repo = repo
        self.commits = commits
        self._random = random.Random(seed)
        self._times: dict[Oid, int] = {}

    def learn(
        self,
        upstream: Oid,
        stable: Sequence[Oid] | Callable[[], Sequence[Oid]],
        progress: Progress,
    ) -> LearnedVocabulary:
        """`stable`: the stable branches' tips, or what gives them, asked only where a
        phrase is weighed against the branches: each branch's commits that upstream lacks
        are read then (`git log <tip> ^<upstream>`, a walk of both histories down to the
        fork: seconds at kernel scale, for a vocabulary that may need none; git's walk, in
        its own process, where libgit2's merge base held this one's interpreter)."""
        groups: dict[str, list[tuple[Oid, Citation]]] = defaultdict(list)
        looked_at = 0
        # Raw records: most cite nothing and are never split into a `LogRecord` or decoded
        # (the history's read, 0.23 s of 20,000 DPDK commits, is then 0.1 s).
        for raw in self.repo.streams.log_raw(upstream):
            if looked_at >= self.commits:
                break
            looked_at += 1
            head, parents, _, committed, _, _, message = raw_fields(raw)
            oid = Oid(head.decode("ascii"))
            self._times[oid] = int(committed or 0)
            if b" " in parents.strip():  # a merge
                continue
            for line in lines_with_hex_runs(message):
                for citation in line_citations(line.decode("utf-8", "replace")):
                    groups[citation.phrase].append((oid, citation))
            if looked_at % 5000 == 0:
                progress("learning the fix phrases", looked_at, None)

        @functools.cache
        def carried() -> list[_Branch]:  # read once a phrase is weighed against them
            tips = list(stable() if callable(stable) else stable)
            read = self._carried_together(tips, upstream)
            if read is None:
                # Each read is mostly git's walk of upstream down to the branch's fork (a
                # tenth of a second on DPDK, seconds at kernel scale): side by side.
                with ThreadPoolExecutor(PIPELINES, thread_name_prefix="branches") as pool:
                    read = list(pool.map(lambda tip: self._carried(tip, upstream), tips))
            return [b for b in read if b is not None]

        weighed = [
            self._sampled(phrase, items)
            for phrase, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            if len({oid for oid, _ in items}) >= LEAST_COMMITS
        ]
        # The sampled citations' paths, every phrase's, listed by one git process (a tree
        # diff each was most of the learning on a history of large directories: glibc's)
        self.repo.diffs.learn_paths(
            oid for w in weighed if isinstance(w, _Sample) for pair in w.pairs for oid in pair
        )

        @functools.cache
        def shares() -> list[float]:  # each branch's, once: every citation is resolved now
            return [_share(branch, self._times) for branch in carried()]

        phrases = [
            w if isinstance(w, PhraseEvidence) else self._weigh(w, carried, shares) for w in weighed
        ]
        return LearnedVocabulary(upstream, looked_at, tuple(_variants(phrases)))

    def _carried_together(self, tips: list[Oid], upstream: Oid) -> list[_Branch | None] | None:
        """`_carried` of every branch from one walk of their commits upstream lacks (git
        walks upstream down to the oldest fork once, where a walk a branch walked it for
        each: glibc's 78 branches, 9 s of git's time, are 0.3 s), each branch's newest
        `BRANCH_COMMITS` in the walk's order (its own walk's but where commit dates go
        backwards: the same on every branch of ten projects); each message read once.
        None when the
        branches' commits are more than `TOGETHER_COMMITS` (a kernel's stable branches:
        each branch is read apart, its newest only)."""
        if len(tips) < 2:
            return None
        records: list[LogRecord] = []
        for raw in self.repo.streams.log_raw(tips, [upstream]):
            if len(records) >= TOGETHER_COMMITS:
                return None
            records.append(log_record(raw))
        at = {r.oid: i for i, r in enumerate(records)}
        reaches = _reaching_tips(records, at, tips)
        chosen: list[list[int]] = [[] for _ in tips]
        for i, mask in enumerate(reaches):
            while mask:
                bit = mask & -mask
                mask ^= bit
                mine = chosen[bit.bit_length() - 1]
                if len(mine) < BRANCH_COMMITS:
                    mine.append(i)
        named: dict[int, list[Oid]] = {}

        def names(i: int) -> list[Oid]:
            if i not in named:
                record = records[i]
                named[i] = (
                    [Oid(ref.oid.lower()) for ref in upstream_refs(record.message)]
                    if lowered_mentions_relations(record.raw_message.lower())
                    else []
                )
            return named[i]

        branches: list[_Branch | None] = []
        for mine in chosen:
            carried = frozenset(oid for i in mine for oid in names(i))
            times = [records[i].commit_time for i in mine]
            enough = len(carried) >= LEAST_COMMITS
            branches.append(_Branch(carried, min(times), max(times)) if enough else None)
        return branches

    def _carried(self, tip: Oid, upstream: Oid) -> _Branch | None:
        """The upstream ids a stable branch's newest commits (those upstream lacks) name,
        and its years."""
        named: set[Oid] = set()
        times: list[int] = []
        for count, record in enumerate(self.repo.streams.log(tip, [upstream])):
            if count >= BRANCH_COMMITS:
                break
            times.append(record.commit_time)
            if not lowered_mentions_relations(record.raw_message.lower()):
                continue
            for ref in upstream_refs(record.message):
                named.add(Oid(ref.oid.lower()))
        if len(named) < LEAST_COMMITS:
            return None
        return _Branch(frozenset(named), min(times), max(times))

    def _sampled(self, phrase: str, items: list[tuple[Oid, Citation]]) -> PhraseEvidence | _Sample:
        """The phrase's evidence where its form decides it, else the citations to weigh it
        by: those whose id names an earlier commit, and the sample whose files are compared."""
        evidence = PhraseEvidence(
            phrase,
            written=_most_written(items),
            commits=len({oid for oid, _ in items}),
            example=items[0][1].line,
            sampled=0,
            touching=0,
            pairs=0,
            taken=0,
            chance=0.0,
            verdict="",
        )
        read = _read_as(items)
        if any(word.startswith("revert") for word in phrase.split()):
            read = "another relation"  # `Reverts <id>`, `partial revert of <id>`
        if read is not None:
            return replace(evidence, verdict=read)
        if all(word in FUNCTION_WORDS for word in phrase.rstrip(":").split()):
            return replace(evidence, verdict="function words")
        resolved = [(c, cited) for c, ci in items if (cited := self._resolve(ci.ref, c))]
        sample = self._random.sample(resolved, min(SAMPLE, len(resolved)))
        return _Sample(evidence, resolved, sample)

    def _weigh(
        self,
        sampled: _Sample,
        carried: Callable[[], list[_Branch]],
        shares: Callable[[], list[float]],
    ) -> PhraseEvidence:
        """A phrase weighed by its sample's files and by what the branches took (`shares`:
        each branch's share of the upstream commits of its years, `_share`)."""
        evidence, resolved = sampled.evidence, sampled.resolved
        compared = [
            t for t in (self._touches(c, cited) for c, cited in sampled.pairs) if t is not None
        ]
        pairs, taken, chance = _stable_pairs(resolved, carried(), shares(), self._times)
        evidence = replace(
            evidence,
            sampled=len(compared),
            touching=sum(compared),
            pairs=pairs,
            taken=taken,
            chance=round(chance, 2),
        )
        return replace(evidence, verdict=_verdict(evidence, len(resolved), bool(carried())))

    def _resolve(self, ref: str, citing: Oid) -> Oid | None:
        """The commit an id names, where it is an earlier commit than the citing one."""
        try:
            oid = self.repo.names.resolve_commit(ref)
        except BackportrError:
            return None
        if oid == citing or not self.repo.has_commit(oid):
            return None
        if oid not in self._times:
            self._times[oid] = self.repo.commit(oid).commit_time
        return oid

    def _touches(self, citing: Oid, cited: Oid) -> bool | None:
        """Whether the citing commit changes a file the cited one changed (None: one of
        them is a merge, a root, or too large to say where its change is). Files, not
        lines: a build fix or the rest of an incomplete change is written beside the cited
        lines, seldom over them."""
        try:
            if len(self.repo.parents(citing)) != 1 or len(self.repo.parents(cited)) != 1:
                return None
            before = self.repo.changed_paths(cited)
            after = self.repo.changed_paths(citing)
        except BackportrError:
            return None
        if not before or len(before) > _LARGEST_DIFF or len(after) > _LARGEST_DIFF:
            return None
        return bool(before & after)


@dataclass(frozen=True, slots=True)
class _Sample:
    """A phrase to weigh: its evidence so far, its citations that name an earlier commit
    (citing, cited), and those of them whose files are compared."""

    evidence: PhraseEvidence
    resolved: list[tuple[Oid, Oid]]
    pairs: list[tuple[Oid, Oid]]


@dataclass(frozen=True, slots=True)
class _Branch:
    named: frozenset[Oid]
    first: int
    last: int

    def carries(self, oid: Oid) -> bool:
        return oid in self.named


def _reaching_tips(records: list[LogRecord], at: dict[Oid, int], tips: list[Oid]) -> list[int]:
    """For each record, the tips (bit `i`: `tips[i]`) whose history holds it: each tip's
    bit, carried from every commit to its parents in an order where a commit's children
    come first (Kahn's: the walk's date order may put a parent first where dates go
    backwards)."""
    reaches = [0] * len(records)
    for bit, tip in enumerate(tips):
        if tip in at:
            reaches[at[tip]] |= 1 << bit
    children = [0] * len(records)
    for record in records:
        for parent in record.parents:
            if (j := at.get(parent)) is not None:
                children[j] += 1
    ready = [i for i, n in enumerate(children) if n == 0]
    while ready:
        i = ready.pop()
        for parent in records[i].parents:
            if (j := at.get(parent)) is not None:
                reaches[j] |= reaches[i]
                children[j] -= 1
                if children[j] == 0:
                    ready.append(j)
    return reaches


def _stable_pairs(
    resolved: list[tuple[Oid, Oid]],
    branches: list[_Branch],
    shares: list[float],
    times: dict[Oid, int],
) -> tuple[int, int, float]:
    """(pairs, taken, chance): citations whose cited commit a branch carries, written before
    the branch's newest commit; how many of their citing commits it carries too; and how
    many it would carry by chance (`shares`: each branch's share of the upstream commits
    of its years, `_share`; one pass over the history's times a branch, not a phrase: on
    glibc's 78 branches 22 phrases took 6 s)."""
    pairs = taken = 0
    chance = 0.0
    for citing, cited in resolved:
        for branch, share in zip(branches, shares, strict=True):
            if times.get(citing, 0) > branch.last or not branch.carries(cited):
                continue
            pairs += 1
            chance += share
            taken += branch.carries(citing)
    return pairs, taken, chance


def _share(branch: _Branch, times: dict[Oid, int]) -> float:
    year = 365 * 86400
    window = [oid for oid, t in times.items() if branch.first - year <= t <= branch.last]
    if not window:
        return 0.0
    return sum(branch.carries(oid) for oid in window) / len(window)


def _variants(phrases: list[PhraseEvidence]) -> list[PhraseEvidence]:
    """A phrase that is a known trailer without its colon (`Fixes <id>`) is that form,
    written loosely: it needs the code's evidence, not the stable branches'."""
    known = {p.phrase.rstrip(":") for p in phrases if p.verdict.startswith("known")}
    return [
        replace(p, verdict="fix") if p.verdict == "no stable evidence" and p.phrase in known else p
        for p in phrases
    ]


def _verdict(e: PhraseEvidence, resolved: int, has_stable: bool) -> str:
    if resolved < LEAST_COMMITS:
        return "names no commits"
    if e.sampled == 0 or e.touching < TOUCH * e.sampled:
        return "does not change the cited lines"
    if e.pairs >= STABLE_PAIRS:
        if e.taken < STABLE_RATE * e.pairs or e.taken < STABLE_LIFT * e.chance:
            return "stable branches do not take it with the cited commit"
        if by_chance(e.taken, e.chance) > STABLE_SIGNIFICANCE:
            return "too few pairs taken to tell from chance"
        return "fix"
    if e.phrase.endswith(":") and has_stable:
        # a trailer, new since the stable branches' last backports, unless the one pair
        # they met says they do not take it
        if e.taken >= STABLE_RATE * e.pairs:
            return "fix"
        return "stable branches do not take it with the cited commit"
    return "no stable evidence"


def by_chance(taken: int, expected: float) -> float:
    """How often chance alone takes `taken` pairs or more where `expected` were: the tail
    of a Poisson count of that mean (the pairs are many branches' and commits' chances,
    each small)."""
    term = total = math.exp(-expected)
    for count in range(1, taken):
        term *= expected / count
        total += term
    return max(0.0, 1.0 - total) if taken > 0 else 1.0


def _read_as(items: list[tuple[Oid, Citation]]) -> str | None:
    """What the built-in reader reads most of the phrase's lines as: `known: <form>` (a fix
    form it has), `another relation` (a revert, an upstream annotation), or None."""
    fixes: dict[str, int] = defaultdict(int)
    other = 0
    sample = items[:SAMPLE]
    for _, citation in sample:
        # read as in a fix: a form that needs a fault named (`Introduced by`) is known
        # for its words, not learned again as the project's own phrase
        parsed = parse_message("fix\n\n" + citation.line, trailers=False)
        forms = [f.form for f in parsed.fixes if citation.ref.startswith(f.ref[:7])]
        if forms:
            fixes[forms[0]] += 1
        elif parsed.reverts or parsed.upstream_refs:
            other += 1
    best = max(fixes, key=lambda form: fixes[form], default=None)
    if best is not None and fixes[best] * 2 > len(sample):
        return f"known: {best}"
    if other * 2 > len(sample):
        return "another relation"
    return None


def _most_written(items: list[tuple[Oid, Citation]]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for _, citation in items:
        counts[citation.written] += 1
    return max(counts, key=lambda text: (counts[text], text))


def saved_or_learned(
    repo: Repo, index_path: Path, upstream: Oid, stable: Sequence[Oid]
) -> LearnedVocabulary:
    """What is saved beside the index, or (none saved yet) what would be learned now; nothing
    is written."""
    return load(index_path) or _learn(repo, upstream, stable, lambda *_: None)


def learned_vocabulary(
    repo: Repo,
    index_path: Path,
    upstream: Oid,
    stable: Callable[[], Sequence[Oid]],
    progress: Progress,
    *,
    relearn: bool = False,
) -> LearnedVocabulary:
    """The vocabulary saved beside the index, learned first where there is none (or on a
    rebuild): under the index's writers' lock, so two first runs learn once. `stable`
    gives the stable branches' tips, asked only when learning."""
    saved = None if relearn else load(index_path)
    if saved is not None:
        return saved
    try:
        index_path.parent.mkdir(parents=True, exist_ok=True)
        with held(index_path.with_suffix(".lock")):
            saved = None if relearn else load(index_path)  # learned by another run meanwhile
            if saved is not None:
                return saved
            learned = _learn(repo, upstream, stable(), progress)
            save(index_path, learned)
    except OSError as error:  # nowhere to keep it (a read-only index): learned for this run
        _log.info("cannot keep the learned fix phrases beside %s: %s", index_path, error)
        learned = _learn(repo, upstream, stable(), progress)
    for phrase in learned.phrases:
        if phrase.accepted:
            _log.info("learned the fix phrase %s", phrase.describe())
    return learned


def _learn(
    repo: Repo, upstream: Oid, stable: Sequence[Oid], progress: Progress
) -> LearnedVocabulary:
    return VocabularyLearner(repo).learn(upstream, stable, progress)
