"""The resolve workflow, as `scan.run` is the scan's: a workspace opened for the branches asked
about, the targets resolved into one series per branch (covers read from an archive when
asked), and what needs the workspace while it is open (a script's steps, the patches). The
command line parses options into it and renders what it returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from backportr.app.console import Console, attention_if
from backportr.app.formats import FORMATS, FormatTable, ResolveAnswer
from backportr.errors import ExitCode
from backportr.model import ProgressCallback, Report, SiblingsPolicy, no_progress
from backportr.resolve.workspace import Workspace, open_workspace
from backportr.settings import DEFAULT_CONFLICT_DEPTH, Settings

if TYPE_CHECKING:
    from backportr.git.names import Ref
    from backportr.output.annotations import LearnedForm
    from backportr.output.patches import Annotation, Step
    from backportr.output.patchset import MboxOptions
    from backportr.resolve.resolver import Resolver


@dataclass(frozen=True)
class ResolveOptions:
    """How a resolve searches, beyond its settings (the defaults are the command line's)."""

    conflict_depth: int = DEFAULT_CONFLICT_DEPTH
    symbols: bool = True
    siblings: SiblingsPolicy = "none"
    lore: str | None = None  # read each member's posting from this archive


class ResolveRun:
    """One resolve of one or more targets on the branches of `settings`, with the workspace
    open from `__enter__` to `__exit__`."""

    def __init__(
        self,
        settings: Settings,
        options: ResolveOptions,
        progress: ProgressCallback = no_progress,
    ) -> None:
        self.settings = settings
        self.options = options
        self.progress = progress
        self._open = ExitStack()
        self._ws: Workspace | None = None
        self._resolver: Resolver | None = None

    def __enter__(self) -> ResolveRun:
        from backportr.resolve.resolver import (
            Resolver,  # networkx costs 0.1 s to import: when needed
        )

        with ExitStack() as opening:  # closed again if anything below fails
            ws = opening.enter_context(open_workspace(self.settings, progress=self.progress))
            ws.use_what_scans_cached()
            self._resolver = Resolver(
                ws,
                symbols=self.options.symbols,
                conflict_depth=self.options.conflict_depth,
                siblings=self.options.siblings,
                progress=self.progress,
            )
            self._ws = ws
            self._open = opening.pop_all()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._ws = self._resolver = None
        self._open.__exit__(kind, error, trace)

    @property
    def ws(self) -> Workspace:
        assert self._ws is not None, "used outside its `with`"
        return self._ws

    @property
    def resolver(self) -> Resolver:
        assert self._resolver is not None, "used outside its `with`"
        return self._resolver

    @property
    def refs(self) -> dict[str, str]:
        """Each branch's full ref name, by the name the report gives it."""
        return {b.name: b.refname for b in self.ws.branches}

    def resolve(self, targets: list[str]) -> Report:
        """One series per branch for all of `targets` (each named as a user names a commit),
        with each member's posting read from the archive when one was given."""
        from backportr.resolve.batch import resolve_batch

        ws = self.ws
        oids = list(dict.fromkeys(ws.repo.names.resolve_target(t) for t in targets))
        report = resolve_batch(self.resolver, oids, ws.branches)
        if self.options.lore:
            from backportr.mail.covers import with_covers
            from backportr.mail.lore import Lore

            report = with_covers(report, Lore(self.options.lore), ws)
        return report

    def annotations(self, asked: Annotation | None) -> dict[str, Annotation]:
        """The annotation form of each branch's patches: `asked` (--annotation,
        backportr.annotation), else the one the branch's own backports use (learned)."""
        if asked is not None:
            return {b.name: asked for b in self.ws.branches}
        return {b.name: self.learned_form(b).form.name for b in self.ws.branches}

    def learned_form(self, branch: Ref) -> LearnedForm:
        from backportr.output.annotations import learn_form

        return learn_form(self.ws.repo, branch.tip, self.resolver.context(branch).fork)

    def script_steps(
        self, report: Report, annotations: Mapping[str, Annotation], signoff: str | None
    ) -> dict[str, list[Step]]:
        """Each branch's steps of the script output."""
        from backportr.output.patches import script_steps

        return {
            b.branch: script_steps(self.ws.repo, b, annotations.get(b.branch, "greg"), signoff)
            for b in report.branches
        }

    def write_patches(
        self,
        report: Report,
        options: MboxOptions,
        output: Path | None,
        stdout: TextIO | None,
        say: Callable[[str], None],
    ) -> bool:
        """The series as patches (`output/patchset.py`): to `stdout` as one mbox or into
        the directory `output`. True when a member was left out."""
        from backportr.output.patchset import SeriesWriter

        writer = SeriesWriter(self.ws.repo, self.resolver.applier, options, say)
        writer.write(report, {b.name: b.tip for b in self.ws.branches}, output, stdout)
        return writer.incomplete


@dataclass(frozen=True, kw_only=True)
class ResolveRequest:
    """What a user asks of `resolve`: the targets, how to search, and how the answer is
    written (`patches`: the mbox's choices; its annotations and branch naming are filled in
    from the branches)."""

    settings: Settings
    targets: list[str]
    search: ResolveOptions = ResolveOptions()
    output_format: str = "text"
    output: Path | None = None
    annotation: Annotation | None = None  # None: each branch's own (learned)
    signoff: str | None = None
    patches: MboxOptions | None = None
    commit_url: str | None = None
    formats: FormatTable = FORMATS


@dataclass(frozen=True)
class ResolveOutcome:
    report: Report
    left_out: bool = False  # a member was left out of the patches written

    @property
    def exit_code(self) -> ExitCode:
        return attention_if(
            self.left_out
            or any(
                b.status == "conflict" or any(m.apply == "conflict" for m in b.series)
                for b in self.report.branches
            )
        )


def resolve(request: ResolveRequest, console: Console) -> ResolveOutcome:
    """One series per branch for the targets, written in the format asked for: a text to
    `console` or to `request.output`, or patches (mbox) to `console` or into a directory."""
    steps, left_out = None, False
    patches = request.formats.writes_patches("resolve", request.output_format)
    try:
        with ResolveRun(request.settings, request.search, console.progress) as run:
            report = run.resolve(request.targets)
            refs = run.refs
            if request.output_format == "script":
                forms = run.annotations(request.annotation)
                steps = run.script_steps(report, forms, request.signoff)
            if patches:
                left_out = _write_patches(run, report, request, console)
    finally:
        console.progress.finish()
    if not patches:
        answer = ResolveAnswer(report, steps, refs, request.commit_url)
        console.deliver(
            request.formats.writer("resolve", request.output_format)(answer), request.output
        )
    return ResolveOutcome(report, left_out)


def _write_patches(
    run: ResolveRun, report: Report, request: ResolveRequest, console: Console
) -> bool:
    import dataclasses

    from backportr.git.repo import branch_template
    from backportr.output.patchset import MboxOptions

    options = dataclasses.replace(
        request.patches or MboxOptions(),
        annotations=run.annotations(request.annotation),
        signoff=request.signoff,
        branch_template=branch_template(run.ws.branch_pattern),
    )
    stdout = None if console.quiet else console.out
    return run.write_patches(report, options, request.output, stdout, console.say)
