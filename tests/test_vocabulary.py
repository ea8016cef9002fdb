"""A project's fix vocabulary, learned from its history: a phrase the project names fixed
commits with is read as `Fixes:` is, with nothing configured; a phrase that cites commits for
another reason is not; `backportr config` shows both with their evidence, and
`backportr.ignoreForm` drops a learned one."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backportr.git.builder import RepoBuilder
from backportr.git.log_records import LogRecord
from backportr.git.repo import Repo
from backportr.git.streams import Streams
from backportr.index.vocabulary import (
    LearnedVocabulary,
    PhraseEvidence,
    VocabularyLearner,
    saved_path,
)
from backportr.model import Oid
from backportr.text.citations import citations, line_citations, lines_with_hex_runs
from backportr.text.relation_forms import LearnedPhrase, Vocabulary
from tests.conftest import backportr

CULPRITS = 7
LEAST = 5  # upstream commits a stable branch names before the learner reads it


def _lines(tag: str) -> str:
    return "".join(f"{tag} line {n} = compute({n});\n" for n in range(10))


def _xen_like(
    path: Path, phrase: str = "Amends:", taken: tuple[int, int] = (5, 4)
) -> tuple[RepoBuilder, list[Oid], list[Oid]]:
    """Upstream `master` where each of seven features is later corrected by a commit citing
    it with `phrase` (changing the lines it added), and cited again by a rebase note that
    changes other files; dozens of unrelated commits; a stable branch forked before them
    that took the first five features and four of their corrections (`master commit:`;
    `taken`: how many of each)."""
    b = RepoBuilder(path)
    b.commit("base", {f"f{n}.c": _lines(f"f{n}") for n in range(CULPRITS)} | {"doc.txt": "0\n"})
    b.branch("stable-4.19", "master")
    features, fixes = [], []
    for n in range(CULPRITS):
        text = _lines(f"f{n}").replace(
            f"f{n} line 4 = compute(4);", f"feature_{n}_setup(ctx, {n});"
        )
        features.append(b.commit(f"f{n}: add feature {n}", {f"f{n}.c": text}))
    for n in range(40):
        b.commit(f"doc: note {n}", {"doc.txt": f"{n}\n"})
    for n, feature in enumerate(features):
        text = _lines(f"f{n}").replace(
            f"f{n} line 4 = compute(4);", f"feature_{n}_setup(ctx, {n} + 1);"
        )
        fixes.append(
            b.commit(f"f{n}: correct feature {n}\n\n{phrase} {feature[:12]}", {f"f{n}.c": text})
        )
        b.commit(f"doc: rebase\n\nRebased onto {feature[:12]}", {"doc.txt": f"r{n}\n"})
    for commit in features[: taken[0]] + fixes[: taken[1]]:
        subject = b.repo[commit].peel(pygit2.Commit).message.split("\n", 1)[0]
        b.cherry_pick(
            commit,
            "stable-4.19",
            message=f"{subject}\n\nmaster commit: {commit}\n",
            annotation=None,
        )
    return b, features, fixes


def test_citations_are_read_with_the_phrase_before_the_id() -> None:
    message = (
        "x: fix it\n\n"
        'Amends: 0123456789ab ("x: add 9abcdef012345")\n'
        "This fixes a regression from commit 1234567890ab.\n"
        "(cherry picked from commit 234567890abc)\n"
        "See https://example.org/commit/34567890abcd and #1234567\n"
        "commit 4567890abcde upstream.\n"
    )
    found = [(c.phrase, c.ref) for c in citations(message)]
    assert found == [
        ("amends:", "0123456789ab"),  # a trailer cites one id; its quoted subject's are not
        ("regression from", "1234567890ab"),
        ("picked from", "234567890abc"),
    ]


_TRAILS = ("Amends: ", "Fixes: commit ", "regression from ", "(cherry picked from commit ")
_IDS = ("0123456789ab", "abcdef1", "1234567", "deadbeefcafe0123", "ABCDEF1234")
_PIECES = st.sampled_from([*_TRAILS, *_IDS, "\n", " ", "é", ", ", ". ", "#", "/", "\t", "x" * 990])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES | st.text(max_size=12), max_size=40), st.binary(max_size=6))
def test_the_lines_found_by_bytes_cite_what_the_message_cites(
    pieces: list[str], junk: bytes
) -> None:
    """The learner reads raw records: the lines `lines_with_hex_runs` finds in a message's
    bytes, decoded, cite exactly what `citations` finds in the decoded message (bytes that
    are no UTF-8 among them, lines past the longest read)."""
    raw = "".join(pieces).encode() + junk + "".join(reversed(pieces)).encode()
    message = raw.decode("utf-8", "replace")
    from_lines = [
        c
        for line in lines_with_hex_runs(raw)
        for c in line_citations(line.decode("utf-8", "replace"))
    ]
    assert from_lines == list(citations(message))


def test_a_learned_phrase_is_read_as_a_fix_relation() -> None:
    vocabulary = Vocabulary(learned=[LearnedPhrase("amends:", "Amends:", "Amends: 0123456789ab")])
    body = 'x: fix\n\nAmends: 0123456789ab ("x: add")\nsee amends: 1234567890ab\n'
    mentions = list(vocabulary.mentions(body, body.lower()))
    assert [(m.ref, m.subject, m.form) for m in mentions] == [("0123456789ab", "x: add", "Amends:")]
    assert vocabulary.may_relate(b"x\n\namends: 0123456789ab")
    assert vocabulary.fingerprint != Vocabulary().fingerprint


def test_the_learner_takes_the_fix_phrase_and_not_the_other(tmp_path: Path) -> None:
    b, _, _ = _xen_like(tmp_path / "r")
    repo = Repo(b.path)
    master = repo.upstream("master").tip
    stable = repo.branch("stable-4.19").tip
    learned = VocabularyLearner(repo).learn(master, [stable], lambda *_: None)
    verdicts = {p.phrase: p for p in learned.phrases}
    amends = verdicts["amends:"]
    assert amends.accepted, amends
    assert (amends.commits, amends.touching, amends.pairs, amends.taken) == (
        CULPRITS,
        CULPRITS,
        5,
        4,
    )
    assert amends.chance < 1.5  # four taken is far above chance
    rebased = verdicts["rebased onto"]
    assert not rebased.accepted and rebased.verdict == "does not change the cited lines"
    assert [p.phrase for p in learned.accepted()] == ["amends:"]
    assert learned.accepted(ignored=["Amends:"]) == ()
    again = LearnedVocabulary.from_json(learned.to_json())
    assert again == learned


def test_the_sampled_files_are_listed_by_one_git_process_with_the_same_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The learner lists its sampled citations' paths by one git process for every phrase
    (`learn_paths`); where nothing is listed each pair's trees are walked: the same
    weighing either way."""
    b, _, _ = _xen_like(tmp_path / "r")
    master = Repo(b.path).upstream("master").tip
    stable = Repo(b.path).branch("stable-4.19").tip
    listed = Repo(b.path)
    asked: list[list[Oid]] = []
    learn_paths = listed.diffs.learn_paths

    def counted(oids: Iterable[Oid]) -> None:
        asked.append(list(oids))
        learn_paths(asked[-1])

    monkeypatch.setattr(listed.diffs, "learn_paths", counted)
    by_listing = VocabularyLearner(listed).learn(master, [stable], lambda *_: None)
    walked = Repo(b.path)
    monkeypatch.setattr(walked.diffs, "learn_paths", lambda oids: None)
    by_walk = VocabularyLearner(walked).learn(master, [stable], lambda *_: None)
    assert by_listing == by_walk
    assert len(asked) == 1 and len(asked[0]) >= 2 * CULPRITS  # both sides of each pair
    assert all(listed.diffs.known_paths(oid) is not None for oid in asked[0])


def _learned_with_pairs(path: Path, phrase: str, taken: tuple[int, int]) -> PhraseEvidence:
    """What is learned of `phrase` in `_xen_like` history whose stable branch took `taken`
    (features, corrections) and names enough upstream commits besides to be read."""
    b, _, _ = _xen_like(path, phrase=phrase, taken=taken)
    for n in range(LEAST):
        note = b.commit(f"notes: add {n}", {f"notes/{n}.txt": f"{n}\n"})
        b.cherry_pick(note, "stable-4.19")
    repo = Repo(b.path)
    master, stable = repo.upstream("master").tip, repo.branch("stable-4.19").tip
    learned = VocabularyLearner(repo).learn(master, [stable], lambda *_: None)
    return {p.phrase: p for p in learned.phrases}[phrase.lower()]


@pytest.mark.parametrize(("taken", "accepted"), [((0, 0), True), ((1, 0), False), ((1, 1), True)])
def test_a_trailer_too_few_pairs_speak_for_is_read_unless_the_pair_went_without_it(
    tmp_path: Path, taken: tuple[int, int], accepted: bool
) -> None:
    """A trailer the stable branches have not met (no pair) is a relation, as a line the
    project made for relations; one whose only pair, a branch carrying a cited commit, went
    without its citing commit is not (util-linux's `References: <id>` names related work);
    one whose pair took it is."""
    references = _learned_with_pairs(tmp_path / "r", "References:", taken)
    assert (references.pairs, references.taken) == taken
    assert references.accepted is accepted, references
    if not accepted:
        assert references.verdict == "stable branches do not take it with the cited commit"


@pytest.mark.parametrize(
    ("taken", "verdict"), [((2, 1), "too few pairs taken to tell from chance"), ((2, 2), "fix")]
)
def test_a_phrase_whose_pairs_chance_explains_is_not_learned(
    tmp_path: Path, taken: tuple[int, int], verdict: str
) -> None:
    """Two pairs, one taken, where the branch takes an eighth of its years' upstream commits
    (0.24 pairs expected): chance gives as much one time in five (runc's `added by`, rpm's
    `similar to`); both taken, one time in thirty: the phrase is learned."""
    from backportr.index.vocabulary import STABLE_SIGNIFICANCE, by_chance

    amends = _learned_with_pairs(tmp_path / "r", "Amends:", taken)
    assert (amends.pairs, amends.taken) == taken and amends.verdict == verdict, amends
    assert (by_chance(amends.taken, amends.chance) > STABLE_SIGNIFICANCE) is (verdict != "fix")


def test_chance_is_the_tail_of_a_poisson_count() -> None:
    from backportr.index.vocabulary import by_chance

    assert by_chance(0, 0.5) == 1.0 and by_chance(1, 0.0) == 0.0
    assert abs(by_chance(1, 0.15) - (1 - math.exp(-0.15))) < 1e-12
    assert abs(by_chance(2, 0.43) - (1 - math.exp(-0.43) * 1.43)) < 1e-12
    assert by_chance(3, 0.2) < by_chance(2, 0.2) < by_chance(1, 0.2)


def test_a_fixes_only_project_learns_nothing_new(tmp_path: Path) -> None:
    b, _, _ = _xen_like(tmp_path / "r", phrase="Fixes:")
    repo = Repo(b.path)
    master = repo.upstream("master").tip
    stable = repo.branch("stable-4.19").tip
    learned = VocabularyLearner(repo).learn(master, [stable], lambda *_: None)
    assert learned.accepted() == ()
    assert {p.phrase: p.verdict for p in learned.phrases}["fixes:"] == "known: Fixes:"


@pytest.mark.parametrize("phrase", ["Fixes:", "Amends:"])
def test_branches_are_read_only_where_a_phrase_is_weighed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, phrase: str
) -> None:
    """Where every phrase cited is one the table knows, no branch is read (a walk of both
    histories down to the fork: seconds at kernel scale); a phrase to weigh reads each
    branch's commits that upstream lacks, those only."""
    from backportr.index import vocabulary

    b = RepoBuilder(tmp_path / "r")
    base = b.commit("base", {"a.c": "int a;\n"})
    b.branch("stable-4.19", "master")
    own = b.commit(
        "a: stable only\n\n[ upstream commit " + base + " ]", {"a.c": "s\n"}, branch="stable-4.19"
    )
    for n in range(6):
        b.commit(f"a: change {n}\n\n{phrase} {base[:12]}", {"a.c": f"int a{n};\n"})
    repo = Repo(b.path)
    read: list[list[Oid]] = []
    log = Streams.log

    def counted(
        self: Streams, include: Oid, exclude: list[Oid] | tuple[Oid, ...] = ()
    ) -> Iterator[LogRecord]:
        records = list(log(self, include, exclude))
        read.append([r.oid for r in records])
        return iter(records)

    monkeypatch.setattr(Streams, "log", counted)
    master, stable = repo.upstream("master").tip, repo.branch("stable-4.19").tip
    learned = vocabulary._learn(repo, master, [stable], lambda *_: None)
    verdicts = {p.phrase: p.verdict for p in learned.phrases}
    if phrase == "Fixes:":
        assert verdicts == {"fixes:": "known: Fixes:"} and read == []
    else:
        assert set(verdicts) == {"amends:"} and read == [[own]]


def test_the_branches_read_in_one_walk_carry_what_each_walk_of_its_own_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every stable branch's upstream commits read from one walk of all their histories is
    what a walk of each branch reads: a branch forked from another (a vendor's, sharing its
    commits), one with a merge and a commit dated before its parent, one with nothing
    upstream lacks; each its newest `BRANCH_COMMITS` only (in the walk's order: where dates
    go backwards, one walk's order and another's may differ there); past `TOGETHER_COMMITS`
    each branch is read apart."""
    from backportr.index import vocabulary

    b = RepoBuilder(tmp_path / "r")
    b.commit("base", {"a.c": "0\n"})
    b.branch("stable-1", "master")
    upstream = [b.commit(f"a: change {n}", {"a.c": f"{n}\n"}) for n in range(12)]
    b.branch("stable-3", "master")  # forked after everything: it lacks nothing upstream has
    for n, commit in enumerate(upstream[:8]):
        b.commit(f"s1 {n}\n\n[ upstream commit {commit} ]", {f"s1-{n}": "x\n"}, branch="stable-1")
    b.branch("stable-2", "stable-1")
    b.branch("side", "stable-2")
    for n, commit in enumerate(upstream[8:]):
        gap = -3600 if n == 1 else 60  # a commit dated an hour before its parent
        b.commit(
            f"s2 {n}\n\ncommit {commit} upstream.", {f"s2-{n}": "y\n"}, branch="stable-2", gap=gap
        )
    b.commit(f"side\n\n[ upstream commit {upstream[0]} ]", {"side": "z\n"}, branch="side")
    b.merge("stable-2", "side", "Merge side")
    repo = Repo(b.path)
    tips = [repo.branch(name).tip for name in ("stable-1", "stable-2", "stable-3")]
    master = repo.upstream("master").tip
    learner = VocabularyLearner(repo)
    together = learner._carried_together(tips, master)
    assert together == [learner._carried(tip, master) for tip in tips]
    assert [len(b.named) if b else 0 for b in together] == [8, 12, 0]
    monkeypatch.setattr(vocabulary, "BRANCH_COMMITS", 6)  # the newest six of each
    together = learner._carried_together(tips, master)
    assert together is not None and together[0] == learner._carried(tips[0], master)
    assert together[1] is not None and len(together[1].named) >= vocabulary.LEAST_COMMITS
    monkeypatch.setattr(vocabulary, "TOGETHER_COMMITS", 5)
    assert VocabularyLearner(repo)._carried_together(tips, master) is None


def _series(path: Path, target: str) -> list[str]:
    proc = backportr(
        "resolve", target, "-b", "stable-4.19", "--repo", str(path), "--upstream", "master",
        "--branch-pattern", "stable-*", "-f", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    return [m["commit"] for m in report["branches"][0]["series"]]


def test_resolve_finds_the_follow_up_the_learned_phrase_names(tmp_path: Path) -> None:
    b, features, fixes = _xen_like(tmp_path / "r")
    assert _series(b.path, features[5]) == [features[5], fixes[5]]
    kept = json.loads(saved_path(b.path / ".git" / "backportr" / "index.sqlite").read_text())
    assert [p["phrase"] for p in kept["phrases"] if p["verdict"] == "fix"] == ["amends:"]
    config = backportr("config", "--repo", str(b.path), "--upstream", "master",
                       "--branch-pattern", "stable-*")  # fmt: skip
    shown = [line for line in config.stdout.splitlines() if line.startswith("fixes-form[")]
    assert shown[0].startswith("fixes-form[Amends:]\tfix\tlearned\t# 'Amends:': 7 commits"), shown
    assert any(line.startswith("fixes-form[Rebased onto]\tnot\t") for line in shown), shown
    # Ignored: the index is read again without it, and the follow-up is not found.
    subprocess.run(
        ["git", "-C", str(b.path), "config", "backportr.ignoreForm", "amends:"], check=True
    )
    assert _series(b.path, features[5]) == [features[5]]
    config = backportr("config", "--repo", str(b.path), "--upstream", "master",
                       "--branch-pattern", "stable-*")  # fmt: skip
    assert "fixes-form[Amends:]\tignored\t" in config.stdout


_WRONG_TYPES = (
    '{"version": 1, "upstream_tip": "x", "looked_at": 1, "phrases": [{"phrase": 1, '
    '"written": "a", "commits": 5, "example": "e", "sampled": 1, "touching": 1, "pairs": 0, '
    '"taken": 0, "chance": 0.0, "verdict": "fix"}]}'
)


@pytest.mark.parametrize(
    "text",
    ["", "{", '{"version": 1, "phrases": 3}', '{"version": 99}', _WRONG_TYPES, "[" * 100_000],
)
def test_a_kept_vocabulary_another_wrote_is_learned_again(text: str) -> None:
    assert LearnedVocabulary.from_json(text) is None
