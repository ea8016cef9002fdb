"""Trailer parsing over a corpus of realistic kernel messages (tests/data/trailer_corpus.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from backportr.errors import UsageError
from backportr.model import StableTag
from backportr.scan.findings import fit_line
from backportr.text.relation_forms import FORMS, RelationForm, Vocabulary, cited
from backportr.text.relation_words import RELATION_WORDS
from backportr.text.trailers import (
    co_authors,
    mentions_relations,
    parse_message,
    parse_stable_comment,
    parse_version,
)

CORPUS = json.loads((Path(__file__).parent / "data" / "trailer_corpus.json").read_text())


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_corpus(case: dict[str, Any]) -> None:
    parsed = parse_message(case["message"])
    expect = case["expect"]
    if "fixes" in expect:
        assert [[f.ref, f.subject] for f in parsed.fixes] == expect["fixes"]
    if "stable_deps" in expect:
        assert [[d.ref, d.subject] for d in parsed.stable_deps] == expect["stable_deps"]
    if "upstream" in expect:
        assert [[r.oid, r.form] for r in parsed.upstream_refs] == expect["upstream"]
    if "reverts" in expect:
        assert list(parsed.reverts) == expect["reverts"]
    if "reverted_subject" in expect:
        assert parsed.reverted_subject == expect["reverted_subject"]
    if "links" in expect:
        assert list(parsed.links) == expect["links"]
    if "stable_tags" in expect:
        got = [
            {
                "since": list(t.since) if t.since else None,
                "until": list(t.until) if t.until else None,
                "prerequisite": t.prerequisite,
                "noautosel": t.noautosel,
            }
            for t in parsed.stable_tags
        ]
        assert got == expect["stable_tags"]
    # The bulk indexer's shortcut must never skip a message that has relations.
    if parsed.fixes or parsed.upstream_refs or parsed.reverts or parsed.stable_tags:
        assert mentions_relations(case["message"])


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_a_message_with_cr_lf_line_ends_reads_as_with_lf(case: dict[str, Any]) -> None:
    """A message written on Windows (SDL holds a thousand) or carried by mail: each line
    ends in CR LF. It reads as the same message with LF (a `Cc: stable@...` line ending in
    CR was no stable tag: the CR after the address was read as more text)."""
    message = case["message"].replace("\r\n", "\n")
    assert parse_message(message.replace("\n", "\r\n")) == parse_message(message)


def test_a_cc_stable_line_ending_in_cr_lf_is_a_stable_tag() -> None:
    for line in (
        "Cc: stable@vger.kernel.org",
        "Cc: <stable@vger.kernel.org>",
        "Cc: stable@dpdk.org",
    ):
        parsed = parse_message(f"a: fix\r\n\r\n{line}\r\nSigned-off-by: A <a@example.org>\r\n")
        assert len(parsed.stable_tags) == 1, line


@pytest.mark.parametrize(
    ("line", "ref"),
    [
        ("Fixes: https://github.com/util-linux/util-linux/commit/a772d7c493afcec32f0123fc947013f74db6e45d",
         "a772d7c493afcec32f0123fc947013f74db6e45d"),
        ("Follow-up for https://github.com/systemd/systemd/commit/cd3c6322dbc6370448bafc216ee4e19e32a79d9e",
         "cd3c6322dbc6370448bafc216ee4e19e32a79d9e"),
        ("Follow-up for: https://gitlab.freedesktop.org/NetworkManager/NetworkManager/-/commit/"
         "0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
        ("Fixes: https://github.com/systemd/systemd/issues/12345", None),
        ("Fixes: https://github.com/systemd/systemd/pull/31337", None),
        ("See https://github.com/x/y/commit/0123456789abcdef0123456789abcdef01234567 for it", None),
    ],
)  # fmt: skip
def test_a_fix_line_may_name_its_culprit_by_the_commits_address(line: str, ref: str | None) -> None:
    """`Fixes: <forge>/commit/<id>` (util-linux writes it) and `Follow-up for <forge>/commit/<id>`
    (systemd) name the commit as the bare id does; an issue's or a pull request's address,
    or a commit's address in a line of no fix form, names none."""
    parsed = parse_message(f"a: fix\n\n{line}\nSigned-off-by: A <a@example.org>\n")
    assert [f.ref for f in parsed.fixes] == ([ref] if ref else [])


def test_co_authors_are_read_from_their_trailers() -> None:
    message = (
        "dcerpc: add upper limit on stub data\n\nSecurity 8182\n\n"
        "Co-authored-by: Philippe Antoine <pantoine@oisf.net>\n"
        "co-authored-by:Jane Q. Doe <Jane@Example.ORG>\n"
        "  Co-authored-by: <bare@example.org>\n"
        "Co-authored-by: no address\n"
        "Signed-off-by: Dev <dev@example.org>\n"
    )
    assert co_authors(message) == [
        ("Philippe Antoine", "pantoine@oisf.net"),
        ("Jane Q. Doe", "jane@example.org"),
        ("", "bare@example.org"),
    ]


def test_subject_is_first_line() -> None:
    assert parse_message("ima: x\n\nbody\n").subject == "ima: x"
    assert parse_message("").subject == ""


def test_declared_prerequisite_keeps_subject() -> None:
    tag = parse_stable_comment("3.3.x: a1f84a3: sched: Check for idle")
    assert tag == StableTag(
        since=(3, 3),
        prerequisite="a1f84a3",
        prerequisite_subject="sched: Check for idle",
        comment="3.3.x: a1f84a3: sched: Check for idle",
    )


@pytest.mark.parametrize(
    ("text", "version", "covered"),
    [
        ("5.10+", (5, 4), False),
        ("5.10+", (5, 10), True),
        ("v6.1+", (6, 6), True),
        ("4.19.x-5.4.x", (5, 10), False),
        ("4.19.x-5.4.x", (5, 4), True),
        ("after -rc3", (4, 4), True),
    ],
)
def test_stable_tag_covers(text: str, version: tuple[int, int], covered: bool) -> None:
    assert parse_stable_comment(text).covers(version) is covered


def test_parse_version() -> None:
    assert parse_version("linux-5.10.y") == (5, 10)
    assert parse_version("v6.1.55") == (6, 1)
    assert parse_version("master") is None


def test_plain_message_has_no_relations() -> None:
    msg = "mm: tidy\n\nMove code around.\n\nSigned-off-by: A <a@b>\n"
    assert not mentions_relations(msg)
    assert parse_message(msg).fixes == ()


def test_an_indented_stable_tag_is_quoted_text() -> None:
    """A trailer starts its line: a `Cc: stable@...` inside another commit's message quoted
    in this one (indented, as Xen quotes the Linux commits it ports) is not this commit's."""
    quoted = (
        "x86/ucode: port a Linux fix\n\nThis ports Linux commit 0123456789ab:\n\n"
        "    x86/microcode: clamp the size\n\n    Cc: stable@vger.kernel.org\n\n"
        "Signed-off-by: Xen Dev <dev@xen.org>\n"
    )
    assert parse_message(quoted).stable_tags == ()
    own = quoted.replace("    Cc: stable@vger.kernel.org", "Cc: stable@vger.kernel.org")
    assert len(parse_message(own).stable_tags) == 1


# -- the other ways of naming a culprit (relation_forms.FORMS) --------------------------------


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.name)
def test_each_relation_form_reads_its_real_line(form: RelationForm) -> None:
    """Each form reads the real commit line it was written from (systemd, DPDK, Xen,
    HAProxy), as the form it is, in the body or in the subject."""
    expected = re.search(r"\b[0-9a-f]{7,40}\b", form.example)
    assert expected is not None
    places = [f"subject\n\nSome text.\n{form.example}\n"]  # a trailer: in the body only
    places += [] if form.trailer else [f"{form.example}\n\nBody.\n"]
    for message in places:
        fixes = parse_message(message).fixes
        assert [(f.ref, f.form) for f in fixes] == [(expected.group(0), form.name)], message


def test_every_forms_words_make_the_index_read_the_message() -> None:
    """The bulk indexer reads a message in full only when it holds a relation word: each
    form's words are among them, or the vocabulary hands them to it."""
    for form in FORMS:
        assert all(word.encode() in RELATION_WORDS for word in form.words), form.name
        assert mentions_relations(form.example), form.name
    assert Vocabulary().words == ()  # the table's words are the cheap test's own


def test_a_form_added_to_the_table_is_read_and_re_reads_the_index() -> None:
    """Adding a relation form is one table entry: it is read, its words reach the cheap
    test, and the index's fingerprint changes by itself (no version raised by hand)."""
    amends = RelationForm(
        "Amends",
        "amends",
        re.compile(r"amends:?[ \t]+([0-9a-f]{7,40})\b", re.IGNORECASE),
        ("amends",),
        "Amends: {id}",
        "Amends: 5d2a9c5b3f3a",
    )
    table = (*FORMS, amends)
    with_it, without = Vocabulary(table=table), Vocabulary()
    message = "xen: fix the thing\n\nAmends: 5d2a9c5b3f3a\n"
    assert [(m.ref, m.form) for m in with_it.mentions(message, message.lower())] == [
        ("5d2a9c5b3f3a", "Amends")
    ]
    assert list(without.mentions(message, message.lower())) == []
    assert with_it.words == (b"amends",)
    assert with_it.may_relate(message.lower().encode())
    assert not without.may_relate(message.lower().encode())
    assert with_it.fingerprint != without.fingerprint
    assert Vocabulary(table=table).fingerprint == with_it.fingerprint  # derived, stable
    assert with_it.search_phrases("5d2a9c5b3f3a")[-1] == "Amends: 5d2a9c5b3f3a"


@pytest.mark.parametrize(
    ("line", "names"),
    [
        # HAProxy's instructions: the id is the condition the backport waits for
        ("This patch must be backported everywhere the commit bfab2ddd is. For now", True),
        ("No backport needed, unless 7d40b31 is", True),
        ("This will need to be backported to 3.3 and\nwherever commit 1968731765 was", True),
        # ...and where it is not: what to take with it, or before it, is another relation
        ("This patch must be backported in 1.8 with the commit 7805e2b", False),
        ("This should be backported after f40f5401b9 up to 2.8.", False),
        ("backporting ba7dc46a9 first.", False),
        ("Must be backported. If 1234abcd is", False),  # another sentence
        # a cause named with `the commit`, `recent`
        ('The issue was introduced with the commit c31499d74 ("MINOR: ssl: Add', True),
        ('it was introduced by recent commit 03816ccfa9 ("MAJOR: ring:', True),
        ("This fixes the commit 2c7e05f80e3b", True),
        ("Must be backported in every stable branch where the 8a91374 patch was", True),
        ("This fixes the 1048576 byte limit.", False),  # a number, not an id
        ('This change should have been part of b53b4037cef6 "libxl/xl: add', True),
        ('This reverts a small part of 7e21b25059ed ("xen: harmonize', False),
    ],
)
def test_a_relation_is_read_where_the_line_says_so(line: str, names: bool) -> None:
    """The prose forms read the cited id where the words say the commit corrects it or
    follows it, and nothing where the same words say something else (each line in a commit
    whose subject, as HAProxy's and Xen's do, says it fixes something)."""
    expected = re.search(r"\b[0-9a-f]{7,40}\b", line)
    assert expected is not None
    fixes = parse_message(f"BUG/MEDIUM: fix it\n\n{line}\n").fixes
    assert [f.ref for f in fixes] == ([expected.group(0)] if names else []), line


@pytest.mark.parametrize(
    "line",
    [
        "Fixes: #12345",  # an issue, not a commit
        "Fixes #3040",
        "This was introduced in v2.3.1.",
        "We follow up on the discussion in deadbeef-less terms.",
        "This fixes a crash.",
        "A regression from the last release.",
        "Follow-up for facade",  # a word, not an id: prose ids need a digit
    ],
)
def test_prose_that_names_no_commit_is_no_relation(line: str) -> None:
    assert parse_message(f"subject\n\n{line}\n").fixes == ()


@pytest.mark.parametrize(
    ("subject", "line", "names"),
    [
        # real lines: "introduced in/by <id>" names a culprit where something went wrong...
        ("sysusers: fix argument confusion", "Bug introduced in 335f6ab4f13a.", True),
        ("run: double free", "Introduced in f2b9f2c83e5b.", True),  # it opens its sentence
        ("doc: update the guide", 'A typo was introduced in commit ba54bdc79d94 ("net', True),
        ("sd-journal: fix NULL arg", "It was introduced in 9c66f528138f.", True),  # subject
        ("tools: libxl: Fix some const consts introduced in 711cb4229900", "", True),
        ("zstream: force-install zstreamdump link", "Accidentally introduced by 1234abcd5", True),
        # ...and is where code came from in a commit that says nothing went wrong
        ("libxl: rework domain userdata file lock", "The lock introduced in d2cd9d4f0 ...", False),
        ("pkg/oci: don't use var", "This variable was introduced in 8de612020e1", False),
        ("net/iavf: add VF initiated reset", "the path that was introduced in 3e6a5d2d310a", False),
        ("wifi: drop workaround for bad values", "This was first introduced by 5e2a6b4c0d", False),
    ],
)  # fmt: skip
def test_introduced_names_a_culprit_only_where_something_went_wrong(
    subject: str, line: str, names: bool
) -> None:
    """The `Introduced by` form (`in`, `with`): in the upstream histories of eight projects,
    most such lines of a commit that names no fault are the code's history (docs/reading.md)."""
    fixes = parse_message(f"{subject}\n\n{line}\n").fixes
    assert [f.form for f in fixes] == (["Introduced by"] if names else [])


def test_a_form_keeps_the_quoted_subject_and_fixes_wins_for_the_same_id() -> None:
    message = (
        "net: fix it\n\n"
        'Commit a2348166ea18 ("tailq: move to dynamic tailq") introduced a bug.\n'
        "Follow-up for 02f35b1c905a.\n"
    )
    fixes = parse_message(message).fixes
    assert [(f.ref, f.subject, f.form) for f in fixes] == [  # in the table's order
        ("02f35b1c905a", None, "Follow-up for"),
        ("a2348166ea18", "tailq: move to dynamic tailq", 'Commit <id> ("...") introduced'),
    ]
    with_trailer = message + 'Fixes: a2348166ea18 ("tailq: move to dynamic tailq")\n'
    assert [(f.ref, f.form) for f in parse_message(with_trailer).fixes] == [
        ("a2348166ea18", "Fixes:")
    ]


@pytest.mark.parametrize(
    "history",
    [
        # each from a real message whose Fixes: names another commit (rdma-core, DPDK, Xen)
        'fill_attr_in() was originally introduced in commit c34463569326 ("verbs: Add basic\n'
        'infrastructure support for the kabi ioctl").',
        "Partial unmap support was introduced in commit c13ca4e81cac",
        'As a follow up to commit cb1ddafdc573 ("xen/arm/static-shmem: Static-shmem',
    ],
)
def test_a_fixes_trailer_outranks_the_tables_prose(history: str) -> None:
    """In a message whose `Fixes:` line names its culprit, the table's prose forms name
    none: every such mention in seven projects' histories (DPDK 4, rdma-core 1, Xen 5;
    NetworkManager, OVN, systemd and Open vSwitch none) was the code's history."""
    message = f'fix it\n\n{history}\n\nFixes: 0123456789ab ("the culprit")\n'
    assert [f.ref for f in parse_message(message).fixes] == ["0123456789ab"]
    assert parse_message(f"fix it\n\n{history}\n").fixes != ()  # alone, it still reads


def test_a_projects_own_pattern_names_culprits_too() -> None:
    own = Vocabulary([r"^Amends:\s*([0-9a-f]{7,40})"])
    message = "subject\n\nAmends: 0123456789ab\n"
    assert parse_message(message).fixes == ()
    assert [(f.ref, f.form) for f in parse_message(message, vocabulary=own).fixes] == [
        ("0123456789ab", "fixesPattern 1")
    ]
    assert own.reads_every_message and own.fingerprint != Vocabulary().fingerprint
    for bad in (r"^Amends: [0-9a-f]+", r"(a)(b)", r"([0-9a-f]"):
        with pytest.raises(UsageError, match=r"backportr\.fixesPattern"):
            Vocabulary([bad])


def test_evidence_cites_the_culprit_as_the_form_named_it() -> None:
    """A line of evidence says how the fix named its culprit: the trailer, the table's prose
    forms in their own words, a learned phrase as the project writes it, a project's pattern
    by its number; an index row without a form (None) was a `Fixes:` line."""
    said = "0123456789ab (x: y)"
    assert cited(None, said) == f"Fixes: {said}"
    assert cited("Fixes:", said) == f"Fixes: {said}"
    assert cited("Follow-up for", said) == f"Follow-up for {said}"
    assert cited("Introduced by", said) == f"fixes a bug introduced by {said}"
    assert cited('Commit <id> ("...") introduced', said) == f"fixes a bug {said} introduced"
    assert cited("Amends:", said) == f"Amends: {said}"
    assert cited("fixesPattern 2", said) == f"{said} (backportr.fixesPattern 2)"
    assert cited("odd {} words", said) == f"odd {{}} words {said}"  # a phrase is data
    assert all(said in cited(form.name, said) for form in FORMS)


def test_a_why_line_shortens_the_subject_before_the_end() -> None:
    long = "Fixes: 0123456789ab (" + "s" * 80 + "), which the branch has as ba9876543210"
    fitted = fit_line(long, 88)
    assert len(fitted) == 88 and fitted.endswith("...), which the branch has as ba9876543210")
    assert fit_line("short", 88) == "short"
    assert fit_line("x" * 100, 88) == "x" * 85 + "..."
    assert fit_line("(" + "y" * 100 + ")", 88) == "(" + "y" * 84 + "..."
