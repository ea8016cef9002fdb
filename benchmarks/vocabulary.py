"""The learned fix vocabulary against hand-labelled citing lines (docs/accuracy.md).

    sample    REPO --upstream B [--pattern P] --out F.tsv   50 citing lines to label
    score     REPO --upstream B [--pattern P] F.tsv [...]    precision and recall
    relations REPO --upstream B [--pattern P] --by-hand RE   learned against configured

`sample` draws citing lines from the newest upstream commits the learner reads: at most
`PER_PHRASE` per phrase among those cited by `LEAST_COMMITS` commits or more (the phrases the
learner weighs), so that every candidate is labelled, not only `Fixes:`; where that gives
fewer than 50, the rest at random from all their lines. The file holds ids,
phrases and labels only (no commit text): the citing commit, the id it cites, the phrase, and
a label column to fill with `fix` (the line says the commit corrects the cited one: a bug it
brought, an incomplete change, a regression) or `other`.

`score` learns the vocabulary as an index build does (every stable branch `--pattern` names)
and reads each labelled line with it: a line is read as a fix where the built-in forms or a
learned phrase name its id. Line precision and recall, for the built-in forms alone and with
the learned ones; then per phrase (labelled by the majority of its lines): the fix phrases
found and the other phrases accepted.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backportr.git.repo import Repo
from backportr.index.vocabulary import (
    LEARN_COMMITS,
    LEAST_COMMITS,
    LearnedVocabulary,
    VocabularyLearner,
)
from backportr.model import Oid
from backportr.text.citations import citations
from backportr.text.relation_forms import Vocabulary
from backportr.text.trailers import parse_message

PER_PHRASE = 5
LINES = 50


def _citing_lines(repo: Repo, upstream: str) -> dict[str, list[tuple[str, str, str]]]:
    by_phrase: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for count, record in enumerate(repo.streams.log(repo.upstream(upstream).tip)):
        if count >= LEARN_COMMITS:
            break
        if len(record.parents) > 1:
            continue
        for c in citations(record.message):
            by_phrase[c.phrase].append((record.oid, c.ref, c.line))
    return by_phrase


def sample(args: argparse.Namespace) -> None:
    repo = Repo(args.repo)
    by_phrase = _citing_lines(repo, args.upstream)
    rng = random.Random(args.seed)
    pool = []
    for phrase, items in sorted(by_phrase.items()):
        if len({oid for oid, _, _ in items}) < LEAST_COMMITS:
            continue
        resolvable = [i for i in items if _names_commit(repo, i[1])]
        pool += [(phrase, *i) for i in rng.sample(resolvable, min(PER_PHRASE, len(resolvable)))]
    chosen = rng.sample(pool, min(LINES, len(pool)))
    if len(chosen) < LINES:  # few phrases: the rest drawn from all their lines
        rest = [
            (phrase, *i)
            for phrase, items in sorted(by_phrase.items())
            if len({oid for oid, _, _ in items}) >= LEAST_COMMITS
            for i in items
            if (phrase, *i) not in chosen and _names_commit(repo, i[1])
        ]
        chosen += rng.sample(rest, min(LINES - len(chosen), len(rest)))
    with open(args.out, "w", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["citing", "cited", "phrase", "label"])
        for phrase, oid, ref, line in sorted(chosen):
            writer.writerow([oid, ref, phrase, ""])
            print(f"{oid[:12]} {phrase!r:22} {line[:110]}", file=sys.stderr)


def _names_commit(repo: Repo, ref: str) -> bool:
    try:
        return repo.has_commit(repo.names.resolve_commit(ref))
    except Exception:
        return False


def _learned(args: argparse.Namespace) -> tuple[Repo, str, list[str], LearnedVocabulary]:
    """The repository, its upstream tip, its stable branches (`--pattern`) and the
    vocabulary an index build learns from them."""
    repo = Repo(args.repo)
    upstream = repo.upstream(args.upstream).tip
    names = [n for n in repo.ref_names() if args.pattern and fnmatch.fnmatchcase(n, args.pattern)]
    tips = sorted({t for n in names if (r := repo.find_ref(n)) and (t := r.tip) != upstream})
    return repo, upstream, names, VocabularyLearner(repo).learn(upstream, tips, lambda *_: None)


def score(args: argparse.Namespace) -> None:
    repo, _upstream, names, learned = _learned(args)
    accepted = learned.accepted()
    builtin, with_learned = Vocabulary(), Vocabulary(learned=accepted)
    rows = []
    for path in args.labels:
        with open(path, newline="") as source:
            rows += [r for r in csv.DictReader(source, delimiter="\t") if r["label"]]
    counts: dict[str, Counter[str]] = {"built-in": Counter(), "learned": Counter()}
    phrase_labels: dict[str, Counter[str]] = defaultdict(Counter)
    unread: set[str] = set()  # phrases with a fix line the learned vocabulary does not read
    for row in rows:
        lines = [
            c.line
            for c in citations(repo.message(Oid(row["citing"])))
            if c.ref == row["cited"] and c.phrase == row["phrase"]
        ]
        message = "subject\n\n" + (lines[0] if lines else "")  # the labelled line alone
        truth = row["label"] == "fix"
        phrase_labels[row["phrase"]][row["label"]] += 1
        for name, vocabulary in (("built-in", builtin), ("learned", with_learned)):
            read = any(
                f.ref[:7] == row["cited"][:7]
                for f in parse_message(message, vocabulary=vocabulary).fixes
            )
            if name == "learned" and truth and not read:
                unread.add(row["phrase"])
            counts[name][
                {(True, True): "tp", (True, False): "fn", (False, True): "fp"}.get(
                    (truth, read), "tn"
                )
            ] += 1
    print(f"{args.repo}: {len(rows)} labelled lines, {len(names)} stable branches")
    print("accepted:", ", ".join(p.written for p in accepted) or "none")
    for name, c in counts.items():
        precision = c["tp"] / max(1, c["tp"] + c["fp"])
        recall = c["tp"] / max(1, c["tp"] + c["fn"])
        print(f"  lines, {name:8}: tp {c['tp']} fp {c['fp']} fn {c['fn']} "
              f"precision {precision:.2f} recall {recall:.2f}")  # fmt: skip
    accepted_phrases = {p.phrase for p in accepted}
    known = {p.phrase for p in learned.phrases if p.verdict.startswith("known")}
    fix_phrases = {p for p, c in phrase_labels.items() if c["fix"] > c["other"]}
    other_phrases = {p for p, c in phrase_labels.items() if c["fix"] <= c["other"]}
    # found: accepted, known, or every line labelled fix read (a form longer than the two
    # words the learner groups by reads it: `meant to be part of <id>` among `part of` lines)
    found = fix_phrases & (accepted_phrases | known | (set(phrase_labels) - unread))
    wrong = other_phrases & accepted_phrases
    print(f"  phrases: {len(fix_phrases)} labelled fix, {len(found)} read "
          f"(missed: {sorted(fix_phrases - found) or 'none'}); {len(other_phrases)} labelled "
          f"other, {len(wrong)} accepted ({sorted(wrong) or 'none'})")  # fmt: skip


def relations(args: argparse.Namespace) -> None:
    """The fix relations (citing commit, cited id) the newest upstream commits name, read
    with the learned phrases and with the phrases configured by hand (`backportr.fixesPattern`
    regular expressions): the learned must read every one the configured read."""
    repo, upstream, _names, learned = _learned(args)
    vocabularies = {
        "built-in": Vocabulary(),
        "by hand": Vocabulary(args.by_hand),
        "learned": Vocabulary(learned=learned.accepted()),
    }
    read: dict[str, set[tuple[str, str]]] = {name: set() for name in vocabularies}
    for count, record in enumerate(repo.streams.log(Oid(upstream))):
        if count >= LEARN_COMMITS:
            break
        for name, vocabulary in vocabularies.items():
            for fix in parse_message(record.message, vocabulary=vocabulary).fixes:
                read[name].add((record.oid, fix.ref[:7]))
    print(f"{args.repo}: learned {', '.join(p.written for p in learned.accepted()) or 'none'}")
    for name, pairs in read.items():
        print(f"  {name:8}: {len(pairs)} relations")
    hand, machine = read["by hand"], read["learned"]
    print(f"  read by hand only: {len(hand - machine)}; learned only: {len(machine - hand)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("sample", "score", "relations"):
        p = sub.add_parser(name)
        p.add_argument("repo")
        p.add_argument("--upstream", required=True)
        p.add_argument("--pattern", default="")
        if name == "sample":
            p.add_argument("--out", required=True)
            p.add_argument("--seed", type=int, default=1)
        elif name == "score":
            p.add_argument("labels", nargs="+")
        else:
            p.add_argument("--by-hand", action="append", default=[])
    args = parser.parse_args()
    {"sample": sample, "score": score, "relations": relations}[args.command](args)


if __name__ == "__main__":
    main()
