"""The ways projects write that a commit fixes an earlier one, as data.

The kernel writes `Fixes: <id> ("subject")` (the table's first row; `text/trailers.py` reads
it, with its wrapped subjects); other projects write `Follow-up for <id>`, `Fixup for <id>`,
`Fixes commit <id>`, `This fixes <id>`, `Regression from <id>`, `Introduced by <id>`, `caused
by <id>`, `broken by <id>`, `meant to be part of <id>`, `backport this wherever <id> is`, or
name the culprit in prose, `commit <id> ("subject") broke ...`. Each of those forms is a row of
`FORMS`: where its match starts (a lowercase word, searched literally), its pattern (matched at
that word only, with bounded gaps: linear on any message), the words a message holds whenever
it matches (the bulk indexer's cheap test, `text/relation_words.py`) and a real commit line it
reads.

A project's own forms are learned from its history (`index/vocabulary.py`: a `LearnedPhrase`
each, read as a row of this table is) or come from `backportr.fixesPattern` (multi-valued git
config): a regular expression whose one group is the id, searched in the whole message. A
`Vocabulary` is the default table plus those; the index records its fingerprint and reads
every message again when it changes.

PURE: text in, values out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from backportr.errors import UsageError
from backportr.model import FixesTag
from backportr.text.annotations import ANNOTATIONS
from backportr.text.relation_words import RELATION_WORDS, lowered_mentions_relations

_GAP = r"[ \t\r\n]{1,8}"  # between two words: spaces, or a line wrapped between them
_ID = r"(?=[0-9a-fA-F]{0,39}[0-9])([0-9a-fA-F]{6,40})\b"  # prose: hex with a digit in it
COMMIT_URL = r"https?://[^\s/]{1,100}/[^\s]{0,200}?/commit/"
"""A forge's address of a commit, up to its id (`https://github.com/systemd/systemd/commit/`,
GitLab's `.../-/commit/`): `Follow-up for <url><id>` names the commit as `<id>` would. An id
of another project's repository names no commit here."""
# `fixes commit <id>`, `the commit <id>`, `the <id> patch` (an id with a letter: not a
# number), `<forge>/commit/<id>`
_COMMIT = rf"(?:(?:the{_GAP})?commit{_GAP}|the{_GAP}(?=[0-9a-fA-F]{{0,39}}[a-fA-F])|{COMMIT_URL})?"
_RECENT = (
    rf"(?:(?:the{_GAP})?(?:recent|previous|earlier|latest|last){_GAP})?"  # `by recent commit <id>`
)
_CLAUSE = r"(?:[^.;\n]|\.(?=\w))"  # a character of the same sentence (`3.3` is one)
_WHERE = r"(?:where|wherever|whenever|everywhere|anywhere|if|when|unless|once)"
_FLAGS = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class RelationForm:
    """One way of writing "this commit fixes <id>"."""

    name: str
    start: str  # the lowercase word a match starts with
    pattern: re.Pattern[str]  # matched at `start`; group 1 the id
    words: tuple[str, ...]  # a message matching holds one of these (lowercase)
    phrase: str | None  # how a mail names the id this way, for an archive's phrase search
    example: str  # a real commit line it reads (tests hold it to that)
    trailer: bool = False
    """A trailer `text/trailers.py` reads with its own parser (a subject wrapped over lines,
    quoted text left out): in the table for what it is, skipped by `mentions`."""
    faulty: bool = False
    """The words name where code came from as often as a culprit ("the lock introduced in
    <id>"): a match names one only where something went wrong (`names_a_fault`)."""


def _form(
    name: str,
    start: str,
    pattern: str,
    words: tuple[str, ...],
    phrase: str | None,
    example: str,
    *,
    trailer: bool = False,
    faulty: bool = False,
) -> RelationForm:
    return RelationForm(
        name,
        start,
        re.compile(pattern, _FLAGS),
        words,
        phrase,
        example,
        trailer=trailer,
        faulty=faulty,
    )


FORMS: tuple[RelationForm, ...] = (
    _form(
        "Fixes:",
        "fixes",
        r"fixes[ \t]*:[ \t]*(?:commit[ \t]+)?([0-9a-fA-F]{6,40})\b",
        ("fixes",),
        "Fixes: {id}",
        'Fixes: db1d1e8b9867 ("IMA: use vfs_getattr_nosec to get the i_version")',  # Linux
        trailer=True,
    ),
    _form(
        "Follow-up for",
        "follow",
        rf"follow[ -]?up(?:{_GAP}(?:for|to|of|on))?[ \t]*:?{_GAP}{_COMMIT}{_ID}",
        ("follow",),
        "Follow-up for {id}",
        "Follow-up for 02f35b1c905ac63ba62f94efebf858412e961fc1.",  # systemd
    ),
    _form(
        "Fixup for",
        "fix",
        rf"fix[ -]?up(?:{_GAP}(?:for|of|to|on))?[ \t]*:?{_GAP}{_COMMIT}{_ID}",
        ("fixup", "fix-up", "fix up"),
        "Fixup for {id}",
        "Fixup for dfad86b83807fa8696ca94982a5ba591b6d86a80.",  # systemd
    ),
    _form(
        "Fixes commit",
        "fixes",
        rf"fixes{_GAP}commit{_GAP}{_ID}",
        ("fixes",),
        "fixes commit {id}",
        "RTE_EAL_UNBIND_PORTS is disabled (fixes commit a22f5ce8fcc).",  # DPDK
    ),
    _form(
        "This fixes",
        "this",
        rf"this{_GAP}(?:also{_GAP})?fixes{_GAP}{_COMMIT}{_ID}",
        ("fixes",),
        "This fixes {id}",
        "This fixes 3e87a057a796b57bf9540b948823fbefef6693d7, which passed the",  # systemd
    ),
    _form(
        "Regression from",
        "regress",
        rf"regress(?:ion|ed)(?:{_GAP}introduced)?{_GAP}(?:from|in|since|by|with){_GAP}"
        rf"{_RECENT}{_COMMIT}{_ID}",
        ("regress",),
        "regression from {id}",
        "chase-symlinks: Fix regression from 5bc244aaa90211ccd8370535274c266cdff6a1cb",  # systemd
    ),
    _form(
        "Introduced by",
        "introduced",
        rf"introduced{_GAP}(?:by|in|with){_GAP}{_RECENT}{_COMMIT}{_ID}",
        ("introduced",),
        "introduced by {id}",
        "Fixes a bug introduced by 7ef26afca555a5e167ebc59514490906a46db2cb.",  # systemd
        faulty=True,
    ),
    _form(
        "Caused by",
        "caused",
        rf"caused{_GAP}by{_GAP}{_RECENT}{_COMMIT}{_ID}",
        ("caused",),
        "caused by {id}",
        'This bug was caused by recent commit ed891fd ("MEDIUM: memory: make local',  # HAProxy
    ),
    _form(
        "Broken by",
        "broken",
        rf"broken{_GAP}(?:by|in){_GAP}{_RECENT}{_COMMIT}{_ID}",
        ("broke",),
        "broken by {id}",
        "bgpd: fix vni table output broken by 8304dabfab906",  # FRR
    ),
    _form(
        "Part of",
        "be",
        rf"be(?:en)?{_GAP}(?:a{_GAP})?part of{_GAP}{_COMMIT}{_ID}",
        ("part of",),
        None,
        "The documentation change was meant to be part of 9b807e23e7c5",  # Xen
    ),
    _form(
        "Backported where",
        "backport",
        rf"backport[a-z]*\b{_CLAUSE}{{0,40}}?(?:\n{_CLAUSE}{{0,40}}?)?\b{_WHERE}{_GAP}{_COMMIT}{_ID}",
        ("backport",),
        None,
        "This should be backported if commit 3c923d075 is backported.",  # HAProxy
    ),
    _form(
        'Commit <id> ("...") introduced',
        "commit",
        rf"commit{_GAP}{_ID}[ \t\r\n]{{0,8}}\(\"(?P<subject>[^\"\n]{{1,200}})\"\){_GAP}"
        r"(?:introduced|broke|caused|regressed)",
        ("introduced", "broke", "caused", "regressed"),
        None,
        'Commit a2348166ea18 ("tailq: move to dynamic tailq") introduced a bug in',  # DPDK
    ),
)


@dataclass(frozen=True, slots=True)
class LearnedPhrase:
    """A phrase a project was found to name a fixed commit with (`index/vocabulary.py`):
    its words lowercased (`amends:`, `regressed by`), as written, and a line that uses it."""

    phrase: str
    written: str
    example: str

    def form(self) -> RelationForm:
        """The phrase as a row of the table: a trailer at the start of a line, words
        anywhere (a line may wrap between them), an optional `commit` before the id."""
        words = self.phrase.rstrip(":").split()
        if self.phrase.endswith(":"):
            pattern = rf"(?<![^\n]){re.escape(words[0])}:[ \t]*{_COMMIT}{_ID}"
        else:
            pattern = _GAP.join(re.escape(w) for w in words) + rf"(?:[ \t]*:)?{_GAP}{_COMMIT}{_ID}"
        start = words[0]
        return RelationForm(
            self.written,
            start,
            re.compile(pattern, _FLAGS),
            (start,),
            f"{self.written} {{id}}",
            self.example,
        )


_READING = (
    "a Fixes: trailer outranks the table's prose forms; CR LF is a line's end; "
    "a commit's address names it"
)
"""How the forms are read beyond the table itself (in the fingerprint: a change re-reads)."""

FIXES_FORM = FORMS[0].name
"""The kernel's trailer, parsed by `text/trailers.py` (its subject may wrap)."""


class Vocabulary:
    """The forms one project's messages are read with: the table (`FORMS`), the phrases
    learned from its history and its own patterns (`backportr.fixesPattern`)."""

    def __init__(
        self,
        patterns: Sequence[str] = (),
        learned: Sequence[LearnedPhrase] = (),
        table: tuple[RelationForm, ...] = FORMS,
    ) -> None:
        self.patterns = tuple(patterns)
        self.learned = tuple(learned)
        self.table = table
        learned_forms = tuple(phrase.form() for phrase in self.learned)
        self.forms = table + learned_forms
        self.annotations = ANNOTATIONS.beyond_the_readers()
        # the forms `mentions` reads, each with its words, and those words once; the
        # table's apart from the project's own (learned), which a `Fixes:` trailer outranks
        self._prose = tuple((f, frozenset(f.words)) for f in self.forms if not f.trailer)
        self._own_prose = tuple((f, frozenset(f.words)) for f in learned_forms if not f.trailer)
        self._prose_words = tuple(sorted({w for _, words in self._prose for w in words}))
        self._own_words = tuple(sorted({w for _, words in self._own_prose for w in words}))
        words = {w for form in self.forms for w in form.words}
        words |= {w for form in self.annotations for w in form.words}
        # what the cheap test must look for beyond its own words
        self.words = tuple(sorted({w.encode() for w in words} - set(RELATION_WORDS)))
        self._own: list[re.Pattern[str]] = []
        for text in self.patterns:
            try:
                compiled = re.compile(text, _FLAGS | re.MULTILINE)
            except re.error as error:
                raise UsageError(f"backportr.fixesPattern {text!r}: {error}") from None
            if compiled.groups != 1:
                raise UsageError(
                    f"backportr.fixesPattern {text!r} has {compiled.groups} groups; it needs one "
                    "group, the id"
                )
            self._own.append(compiled)

    @property
    def reads_every_message(self) -> bool:
        """A project's own pattern has no word to test first: every message is read."""
        return bool(self._own)

    @property
    def fingerprint(self) -> str:
        """What the index records: the table's own fingerprint (every form as it reads), the
        project's patterns and the learned phrases; a change to any re-reads every message."""
        text = "\n".join(
            [
                table_fingerprint(self.table),
                _READING,
                *(f"annotation {a.name} {a.pattern.pattern}" for a in self.annotations),
                *self.patterns,
                *(f"learned {p.phrase}" for p in self.learned),
            ]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def mentions(self, body: str, low: str, *, table: bool = True) -> Iterator[FixesTag]:
        """Every culprit the forms name in a message body (`low`: the body lowercased, same
        offsets), in form order, then the project's patterns. `table=False` leaves the
        table's prose forms out (a message whose `Fixes:` trailer names its culprits: "the
        function was introduced in commit X" there is history, not a culprit); the project's
        learned phrases and patterns are read still."""
        forms, wanted = (
            (self._prose, self._prose_words) if table else (self._own_prose, self._own_words)
        )
        present = {word for word in wanted if word in low}  # each word once
        for form, words in forms if present else ():
            if words.isdisjoint(present):
                continue
            at = low.find(form.start)
            while at != -1:
                if at == 0 or not low[at - 1].isalnum():
                    match = form.pattern.match(body, at)
                    if match is not None and (not form.faulty or names_a_fault(low, at)):
                        subject = match.groupdict().get("subject")
                        yield FixesTag(
                            match.group(1).lower(),
                            subject or _subject_after(body, match.end()),
                            form.name,
                        )
                at = low.find(form.start, at + len(form.start))
        for index, pattern in enumerate(self._own):
            for match in pattern.finditer(body):
                ref = match.group(1)
                if ref and re.fullmatch(r"[0-9a-fA-F]{6,40}", ref):
                    yield FixesTag(
                        ref.lower(), _subject_after(body, match.end()), f"fixesPattern {index + 1}"
                    )

    def search_phrases(self, oid12: str) -> list[str]:
        """How a mail on a list names `oid12` as its culprit: `Fixes: <id>`, then each
        form's fixed words before the id (for an archive's phrase search)."""
        return [f.phrase.format(id=oid12) for f in self.forms if f.phrase]

    def may_relate(self, low: bytes) -> bool:
        """Whether a message (lowercased) may name a relation these forms read: the bulk
        indexer's cheap test (`text/relation_words.py`), with the learned phrases' words."""
        return (
            self.reads_every_message
            or lowered_mentions_relations(low)
            or any(word in low for word in self.words)
        )


_FAULT = re.compile(
    r"\b(?:bug|regress|issue|problem|typo|error|crash|leak|memleak|warn|break|broke|fail|flaw"
    r"|mistake|fault|segfault|assert|race|deadlock|fix|wrong|incorrect|overflow|accidental"
    r"|inadvertent|unintention|mistaken|uninitiali[sz]ed|correct|stray|complain|inappropriate"
    r"|forgot|missing|missed)"
)
_SENTENCE_ENDS = (". ", ".\n", "! ", "? ", "\n\n")
_SENTENCE = 300  # characters before a phrase its sentence is looked for in


def names_a_fault(low: str, at: int) -> bool:
    """Does the phrase at `at` of a lowercased message (its subject the first line) name a
    culprit, not where code came from? Yes where it opens its sentence ("Introduced in
    <id>."), where its sentence up to it says something went wrong ("Bug introduced by",
    "a typo was accidentally introduced in"), or where the subject does ("sd-journal: fix
    ...: It was introduced in <id>"); not in "The lock introduced in <id> ..." of a commit
    that reworks it. A bounded look back (`_SENTENCE` characters): linear on any message."""
    newline = low.find("\n")
    subject = low if newline == -1 else low[:newline]
    if newline == -1 or at <= newline:
        return bool(_FAULT.search(subject[:at]))
    before = low[max(newline + 1, at - _SENTENCE) : at]
    opens = (found + len(end) for end in _SENTENCE_ENDS if (found := before.rfind(end)) != -1)
    sentence = before[max(opens, default=0) :]
    if not sentence.strip() or _FAULT.search(sentence):
        return True
    return bool(_FAULT.search(subject))


def table_fingerprint(forms: tuple[RelationForm, ...]) -> str:
    """A table's fingerprint, derived from what each form reads: adding or changing a form
    changes it, with no version to raise by hand."""
    text = "\n".join(
        "\t".join(
            (f.name, f.start, f.pattern.pattern, str(f.pattern.flags), *f.words)
            + (("faulty",) if f.faulty else ())
        )
        for f in forms
    )
    return "forms " + hashlib.sha256(text.encode()).hexdigest()[:16]


DEFAULT = Vocabulary()

_CITED = {  # a fix's relation to its culprit, in the words of the form that names it
    "Fixes commit": "fixes commit {}",
    "This fixes": "fixes {}",
    "Regression from": "fixes a regression from {}",
    "Introduced by": "fixes a bug introduced by {}",
    "Caused by": "fixes a bug caused by {}",
    "Broken by": "fixes what was broken by {}",
    "Part of": "completes {}",
    "Backported where": "to be backported wherever {} is",
    'Commit <id> ("...") introduced': "fixes a bug {} introduced",
}


def cited(form: str | None, described: str) -> str:
    """A fix's culprit as the fix named it, for a line of evidence: `Fixes: <described>`,
    `Follow-up for <described>`, `fixes a bug introduced by <described>`, a learned phrase
    as the project writes it (`Amends: <described>`); a commit of an index that did not
    record the form (None) named it by `Fixes:`."""
    name = form or FIXES_FORM
    if name.startswith("fixesPattern"):
        return f"{described} (backportr.{name})"
    if name not in _CITED:
        return f"{name} {described}"
    before, _, after = _CITED[name].partition("{}")
    return f"{before}{described}{after}"


def _subject_after(body: str, end: int) -> str | None:
    """A `("subject")` right after the id, on the same line (looked for in the next few
    hundred characters: a subject is shorter, and a long line holding many ids stays
    linear)."""
    rest = body[end : end + 400].split("\n", 1)[0].lstrip(" \t")
    if rest.startswith('("'):
        close = rest.find('")', 2)
        if close != -1:
            return rest[2:close]
    return None
