"""Every parser of hostile text (commit messages, mails) is linear-time on any input.

Hypothesis feeds random and adversarial messages (long whitespace runs, nested quotes and
brackets, lines of up to 1 MB) to each parser with a per-example deadline. A pattern that
backtracks more than linearly (the old `Cc: stable` pattern took 6 s on 800 spaces and never
finished on a few thousand) fails the deadline."""

from __future__ import annotations

import re
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backportr.mail.message import parse_mail
from backportr.text.citations import citations
from backportr.text.patch_id import UNSURE, patch_id
from backportr.text.postings import message_key, posting_keys, posting_keys_of_raw
from backportr.text.relation_forms import LearnedPhrase, Vocabulary
from backportr.text.trailers import (
    co_authors,
    mentions_relations,
    parse_message,
    parse_stable_comment,
)

# Pieces that real trailers and mail headers are made of: prefixes that make a pattern start
# matching, and fillers that make a backtracking pattern try every split.
_HEADS = [
    "Cc:",
    "cc :",
    "Fixes:",
    "Stable-dep-of:",
    "Link: https://lore.kernel.org/r/",
    "(cherry picked from commit ",
    "(cherry-picked from master commit ",
    "master commit ",
    "[ Upstream commit ",
    "commit ",
    "This reverts commit ",
    'Revert "',
    "<stable@vger.kernel.org>",
    "stable@",
    "# 5.10.x: ",
    "mainline inclusion\n",
    "Message-Id: <",
    "Link: https://patch.msgid.link/",
    "20230124193025.185781-",
    "20240131-topic-v",
    # the other ways of naming a culprit (relation_forms.FORMS)
    "Follow-up for ",
    "follow up to commit ",
    "Fixup for ",
    "fixes commit ",
    "This fixes ",
    "regression introduced in ",
    "introduced by ",
    "caused by recent commit ",
    "broken in the commit ",
    "meant to be part of ",
    "This must be backported wherever commit ",
    "No backport needed unless ",
    'Commit 0123456789ab ("',
    '") introduced',
    # a commit's address in a fix line (relation_forms.COMMIT_URL)
    "Fixes: https://github.com/",
    "Follow-up for https://",
    "Co-authored-by: ",
    "/commit/",
    "/-/commit/",
]
_FILLERS = [" ", "\t", '"', "(", ")", "<", ">", "[", "]", "#", ":", "a", "0", "-", "@", ".", "/"]

pieces = st.one_of(
    st.sampled_from(_HEADS),
    st.builds(lambda f, n: f * n, st.sampled_from(_FILLERS), st.integers(1, 200_000)),
    st.text(max_size=50),
)
messages = st.lists(pieces, max_size=12).map("".join).map(lambda s: s[:1_000_000])
_ONE_SECOND = settings(
    deadline=timedelta(seconds=1),
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_ONE_SECOND
@given(messages)
def test_parse_message_is_linear(text: str) -> None:
    parsed = parse_message("subject\n\n" + text)
    assert parsed.subject == "subject"
    mentions_relations(text)
    assert all("\n" not in name + email for name, email in co_authors(text))


@_ONE_SECOND
@given(messages)
def test_stable_comment_is_linear(text: str) -> None:
    assert parse_stable_comment(text[:100_000]) is not None


@_ONE_SECOND
@given(messages, messages)
def test_parse_mail_is_linear(subject: str, body: str) -> None:
    subject_line = " ".join(subject[:2000].split())
    raw = (
        f"Message-ID: <x@example.org>\nFrom: a@example.org\nSubject: {subject_line}\n\n{body}"
    ).encode("utf-8", "surrogateescape")
    mail = parse_mail(raw)
    assert mail.kind in ("skip", "failed", "submission", "patch")


def test_the_line_that_stalled_the_bot() -> None:
    """The red team's line: a `Cc:` with a long whitespace run (exact reproduction)."""
    for n in (800, 5000, 1_000_000):
        line = "Cc:" + " " * n + "x stable@vger.kernel.org\nCc:" + " " * n + "\n"
        assert len(parse_message("s\n\n" + line).stable_tags) == 1  # "x" is a display name
    tags = parse_message("s\n\nCc:" + " " * 100_000 + "<stable@vger.kernel.org> # 5.10+\n")
    assert tags.stable_tags[0].since == (5, 10)


@_ONE_SECOND
@given(messages)
def test_posting_keys_are_linear(text: str) -> None:
    keys = posting_keys(text)
    assert all(k.stem and k.number >= 0 for k in keys) and posting_keys(text) == keys
    raw = posting_keys_of_raw(text.encode("utf-8", "surrogatepass"))
    assert all(k.stem and k.number >= 0 for k in raw)
    key = message_key(text[:10_000])
    assert key is None or (key.stem.split("-", 1)[0] in text and key.number >= 0)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(_HEADS), st.sampled_from(_FILLERS), st.text(max_size=30)),
        max_size=30,
    ).map("".join)
)
def test_bulk_readers_agree_with_the_plain_ones(text: str) -> None:
    """What the indexer's shortcuts read equals what the plain parsers read: the Link /
    Message-Id lines found by literal search, and the relations without the trailer list."""
    reference = re.compile(r"^[ \t]*(?:link|message-id)[ \t]*:[^\n]{0,1000}$", re.M | re.I)
    wanted = [m.group(0) for m in reference.finditer(text)]
    assert posting_keys_of_raw(text.encode()) == posting_keys("\n".join(wanted))
    full, bulk = parse_message("s\n" + text), parse_message("s\n" + text, trailers=False)
    for name in ("fixes", "stable_deps", "stable_tags", "upstream_refs", "reverts"):
        assert getattr(full, name) == getattr(bulk, name), name


_DIFF_HEADS = ["diff --git a/x b/x\n", "--- a/x\n", "+++ b/x\n", "@@ -1,3 +1,3 @@\n",
               "@@ -", "index 1..2\n", "\\ No newline\n", "Binary files "]  # fmt: skip
diff_pieces = st.one_of(
    st.sampled_from(_DIFF_HEADS),
    st.builds(
        lambda f, n: f * n,
        st.sampled_from([*_FILLERS, "\n", "+", ",", "9"]),
        st.integers(1, 200_000),
    ),
    st.text(max_size=50),
)


@_ONE_SECOND
@given(st.lists(diff_pieces, max_size=12).map("".join).map(lambda s: s[:1_000_000]))
def test_patch_id_is_linear(text: str) -> None:
    """A repository's file contents reach the patch-id as diff lines: any of them, in any
    number, is hashed in linear time."""
    data = text.encode("utf-8", "surrogatepass")
    found = patch_id(data.splitlines(keepends=True))
    assert found in (None, UNSURE) or re.fullmatch(r"[0-9a-f]{40}", found), found
    assert patch_id(data.splitlines(keepends=True)) == found  # the same diff, the same id


_LEARNED = Vocabulary(
    learned=[
        LearnedPhrase("amends:", "Amends:", "Amends: 0123456789ab"),
        LearnedPhrase("regressed by", "regressed by", "regressed by 0123456789ab"),
    ]
)


@_ONE_SECOND
@given(messages)
def test_citations_and_learned_phrases_are_linear(text: str) -> None:
    """What the vocabulary is learned from (every id cited on a line, with its phrase) and
    what a learned phrase reads."""
    text = text.replace("Fixes:", "Amends:") + " regressed by 0123456789ab " + text[:1000]
    for citation in citations(text):
        assert citation.ref in citation.line.lower()
    list(_LEARNED.mentions(text, text.lower()))
    parse_message("subject\n\n" + text, vocabulary=_LEARNED)


def test_a_master_commit_line_of_blanks_is_read_once() -> None:
    """`master commit` then a run of blanks: the blanks around an optional colon were
    matched two ways, quadratic (3.6 s for 20,000 tabs, the 200,000 here minutes; the
    deadline of the property tests above found it); now one way."""
    assert parse_message("s\n\nmain commit" + "\t" * 200_000 + "x").upstream_refs == ()
    assert parse_message("s\n\nmaster commit: " + "a" * 40 + "\n").upstream == "a" * 40
