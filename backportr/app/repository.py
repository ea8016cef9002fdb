"""The repository's workflows: `index` (build or update it, say what changed) and `status`
(is each commit in each branch, and as which)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from backportr.app.console import Console, attention_if
from backportr.app.formats import FORMATS, FormatTable
from backportr.errors import ExitCode
from backportr.model import StatusResult
from backportr.resolve.workspace import Workspace, open_workspace
from backportr.settings import Settings

_GRAPH_HINT = 200_000  # commits: below this, path-limited walks are fast without a graph


def index(settings: Settings, console: Console, *, rebuild: bool = False) -> ExitCode:
    """Build or update the index of `settings`; what changed said on `console`."""
    try:
        with open_workspace(settings, progress=console.progress, rebuild=rebuild) as ws:
            console.progress.finish()
            if not console.quiet:
                _say_what_changed(ws, console)
    finally:
        console.progress.finish()
    return ExitCode.OK


def _say_what_changed(ws: Workspace, console: Console) -> None:
    stats = ws.stats
    if (old := stats.replaced_upstream) is not None:
        console.say(
            f"{old}: upstream replaced (another ref, or its history rewritten), "
            "the index built afresh"
        )
    for name in stats.dropped:
        console.say(f"{name}: no longer in the repository, dropped from the index")
    for name, count in stats.new_commits.items():
        console.say(f"{name}: {count} new commits indexed")
    for name in stats.rewritten:
        console.say(f"{name}: rewritten history detected, re-indexed from its fork point")
    commits = ws.index.reader.count()
    console.write(f"{commits} commits in {ws.index.path}\n")
    log = logging.getLogger("backportr")
    for form, count in ws.index.reader.fix_form_counts().items():
        log.info("%d commits name a culprit as %s", count, form)
    if commits >= _GRAPH_HINT and not ws.repo.has_commit_graph():
        console.say(
            "hint: the repository has no commit-graph; `git commit-graph write "
            "--reachable --changed-paths` (or `git maintenance start`) makes the "
            "conflict search of resolve and scan about twice as fast at this size"
        )


@dataclass(frozen=True)
class StatusOutcome:
    results: list[StatusResult]
    answered_by_exit: bool = False  # quiet: the exit status is the answer

    @property
    def exit_code(self) -> ExitCode:
        if not self.answered_by_exit:
            return ExitCode.OK
        return attention_if(not all(p.present for r in self.results for p in r.branches))


def status(
    settings: Settings,
    commits: Sequence[str],
    console: Console,
    *,
    output_format: str = "text",
    formats: FormatTable = FORMATS,
) -> StatusOutcome:
    """Each commit (as a user names it) in each branch of `settings`: present, and as what.
    Quiet, only the exit status answers (4: absent somewhere)."""
    try:
        with open_workspace(settings, progress=console.progress) as ws:
            console.progress.finish()
            results = []
            for spec in commits:
                oid = ws.repo.names.resolve_commit(spec)
                subject = ws.index.reader.subject(oid, ws.repo)
                presences = tuple(ws.presence.check(oid, b) for b in ws.branches)
                results.append(StatusResult(oid, subject, presences))
    finally:
        console.progress.finish()
    console.write(formats.writer("status", output_format)(results))
    return StatusOutcome(results, answered_by_exit=console.quiet)
