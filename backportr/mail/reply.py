"""Compose what backportr says about a mail: text for a person, JSON for a machine, and an
RFC 5322 reply in the thread (plain text, short lines, no HTML), addressed to the sender with
the list in Cc."""

from __future__ import annotations

import email.utils
import re
import textwrap
from email.message import EmailMessage

from backportr import __version__
from backportr.mail.check import BranchCheck, MailCheck
from backportr.model import BranchReport, Member, short
from backportr.output.jsontext import dumps_indented
from backportr.output.report import member_dict
from backportr.output.safe import terminal

VERDICT_WORDS = {
    "complete": "the submitted series is complete",
    "incomplete": "the submitted series is incomplete",
    "needs-series": "it applies with this series",
    "conflict": "a manual backport is needed",
    "incomplete-target": "the target is there, but what it needs is missing",
    "already-present": "it is already in the branch",
    "not-needed": "not needed: the branch lacks what it fixes",
    "reverted-upstream": "it was reverted upstream: do not backport",
}


def check_to_dict(check: MailCheck) -> dict[str, object]:
    return {
        "schema": 1,
        "message_id": check.mail.message_id,
        "kind": check.mail.kind,
        "skipped": check.skipped,
        "target": check.target,
        "subject": check.subject,
        "notes": list(check.notes),
        "tree": check.tree or None,
        "tips": [{"name": name, "tip": tip} for name, tip in check.tips],
        "pending": [
            {"fixes": fixed, "message_id": message_id, "subject": title}
            for fixed, message_id, title in check.pending
        ],
        "branches": [
            {
                "branch": b.branch,
                "verdict": b.verdict,
                "status": b.report.status,
                "missing": list(b.missing),
                "notes": list(b.notes),
                "series": [
                    {**member_dict(m), "why": m.reasons[0].detail if m.reasons else ""}
                    for m in b.report.series
                ],
            }
            for b in check.branches
        ],
    }


def render_check_json(check: MailCheck) -> str:
    return dumps_indented(check_to_dict(check)) + "\n"


def render_check_text(check: MailCheck) -> str:
    """The answer as text, for a terminal and for the reply's body: subjects and notes
    come from the repository and the mail, so what acts on a terminal is shown escaped."""
    if check.skipped:
        return terminal(f"skipped: {check.skipped}\n")
    return terminal("\n".join(_lines(check)) + "\n")


def _lines(check: MailCheck) -> list[str]:
    assert check.target is not None
    out = [*_wrap([f'upstream {short(check.target)} ("{check.subject}")'], ""), ""]
    for b in check.branches:
        out += _branch_lines(b)
    out += _wrap(check.notes, "")
    if check.pending:
        out.append("Follow-ups still on the list (not merged upstream yet):")
        for fixed, message_id, title in check.pending:
            out += _wrap([f"{title} <{message_id}> fixes {short(fixed)}"], "  ")
        out.append("")
    return out


def _branch_lines(b: BranchCheck) -> list[str]:
    status = b.report.status
    words = VERDICT_WORDS.get(b.verdict, b.verdict)
    if b.verdict == "incomplete" and status == "incomplete":
        words = VERDICT_WORDS["incomplete-target"]
    out = _wrap([f"{b.branch}: {words}"], "")
    members = [m for m in b.members if m.commit in set(b.missing)] or list(b.members)
    if members and b.verdict not in ("complete", "already-present"):
        label = "missing, in order:" if b.verdict == "incomplete" else "series, in order:"
        out.append(f"  {label}")
        for n, m in enumerate(members, 1):
            out += _wrap([f'{n}. {short(m.commit)} ("{m.subject}")'], "  ")
            if m.reasons:
                out += _wrap([f"{m.role}: {m.reasons[0].detail}"], "       ")
            if m.apply == "conflict":
                out += _wrap([f"does not apply cleanly ({', '.join(m.conflict_files)})"], "       ")
                out += _wrap(_possible_dependencies(b.report, m), "       ")
            lacking = _absent_siblings(m)
            if lacking:
                out += _wrap([lacking], "       ")
    if b.report.alternative:
        out += _wrap([f"alternative: {b.report.alternative}"], "  ")
    out += _wrap(b.notes, "  ")
    out.append("")
    return out


def _possible_dependencies(report: BranchReport, m: Member) -> list[str]:
    """`possible dependencies: X ("..."), Y ("...")`: the commits suggested for a member's
    conflict (helpers that left the series, or what last changed the lines it conflicts
    on), as the stable team's FAILED mails list them; or nothing."""
    found = [
        f'{short(s.commit)} ("{s.subject}")'
        for s in report.suggestions
        if s.reason.kind == "conflict" and s.reason.related == m.commit
    ]
    return [f"possible dependencies: {', '.join(found)}"] if found else []


def _absent_siblings(m: Member) -> str:
    """`3/8 of posting X; the branch lacks 1/8 ("..."), 2/8 ("...")`, or nothing."""
    p = m.posting
    if p is None:
        return ""
    absent = [s for s in p.siblings if s.state == "absent"]
    if not absent:
        return ""
    of = p.name
    listed = ", ".join(f'{s.position}/{p.total} {short(s.commit)} ("{s.subject}")' for s in absent)
    return f"{p.position}/{p.total} of {of}; the branch lacks {listed}"


def _wrap(items: tuple[str, ...] | list[str], indent: str) -> list[str]:
    out: list[str] = []
    for item in items:
        out += textwrap.wrap(
            item,
            72,
            initial_indent=indent,
            subsequent_indent=indent + "  ",
            break_long_words=False,  # a link or an id stays whole
            break_on_hyphens=False,
        )
    return out


def compose_reply(
    check: MailCheck, *, sender: str, list_address: str = "stable@vger.kernel.org"
) -> EmailMessage:
    """The reply in the thread: Re: subject, In-Reply-To and References, To the sender, Cc
    the list. FAILED mails are answered on the message they name."""
    mail = check.mail
    reply = EmailMessage()
    subject = mail.subject if mail.subject.lower().startswith("re:") else f"Re: {mail.subject}"
    parent = mail.reply_to_id if mail.kind == "failed" and mail.reply_to_id else mail.message_id
    reply["From"] = sender
    reply["To"] = mail.sender
    reply["Cc"] = ", ".join(_carbon_copies(mail.recipients, mail.sender, sender, list_address))
    reply["Subject"] = subject
    reply["Date"] = email.utils.formatdate(localtime=False)
    reply["Message-ID"] = email.utils.make_msgid(idstring="backportr", domain=_domain(sender))
    reply["In-Reply-To"] = f"<{parent}>"
    reply["References"] = " ".join(f"<{r}>" for r in (*mail.references, parent))
    reply["X-Mailer"] = f"backportr {__version__}"
    greeting = "Hi,\n\n" + "\n".join(checked_against(check)) + "\n\n"
    body = greeting + render_check_text(check) + "\n-- \nbackportr " + __version__ + "\n"
    reply.set_content(body, charset="utf-8", cte="8bit")
    return reply


def checked_against(check: MailCheck) -> list[str]:
    """`backportr checked this against <tree>` and the tips, as the stable bots say it."""
    if not check.tree:
        return ["backportr looked at this against the repository's upstream and stable branches."]
    tips = ", ".join(f"{name} at {short(tip)}" for name, tip in check.tips)
    return _wrap([f"backportr checked this against {check.tree}: {tips}."], "")


_BOT = re.compile(
    r"(?:^|[-+._])(?:syzbot|bot|lkp|noreply|no-reply|donotreply)(?:$|[-+._0-9])", re.I
)


def _carbon_copies(
    recipients: tuple[str, ...], author: str, sender: str, list_address: str
) -> list[str]:
    """The list, then everyone the mail was sent to (its author, reviewers), once each,
    without the mail's sender (who gets it as To), ourselves, and bots."""
    skip = {email.utils.parseaddr(a)[1].lower() for a in (author, sender)}
    out, seen = [list_address], {list_address.lower()}
    for recipient in recipients:
        address = email.utils.parseaddr(recipient)[1]
        local = address.split("@", 1)[0]
        key = address.lower()
        if key in skip or key in seen or _BOT.search(local):
            continue
        seen.add(key)
        out.append(recipient)
    return out


def _domain(address: str) -> str:
    _, addr = email.utils.parseaddr(address)
    return addr.split("@", 1)[1] if "@" in addr else "backportr.invalid"
