"""`backportr config`: the effective settings and where each comes from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from backportr.cli.app import PatternOption, RepoOption, UpstreamOption, app, git_config

if TYPE_CHECKING:
    from backportr.git.repo import Repo
    from backportr.model import Oid


@app.command("config")
def config_command(
    repo: RepoOption = Path("."), upstream: UpstreamOption = None, pattern: PatternOption = None
) -> None:
    """The effective settings and where each comes from (git config, -c, a fallback), and
    what is learned from the repository: each stable branch's annotation form."""
    from backportr.git.config import KEYS
    from backportr.git.merge import trial_engine

    for setting in git_config(repo).effective():
        value = setting.value if setting.value is not None else "-"
        typer.echo(f"{setting.key}\t{value}\t{setting.source}\t# {KEYS[setting.key]}")
    engine, source, how = trial_engine()
    typer.echo(f"trial\t{engine}\t{source}\t# {how}")
    _learned_annotations(repo, upstream, pattern)


def _learned_annotations(repo: Path, upstream_name: str | None, pattern: str | None) -> None:
    """The annotation form each stable branch's backports use (what its patches carry unless
    --annotation or backportr.annotation says otherwise), with the counts it rests on."""
    from backportr.errors import BackportrError
    from backportr.git.repo import Repo
    from backportr.output.annotations import learn_form

    config = git_config(repo)
    try:
        opened = Repo(repo)
        pattern = pattern or config.value("backportr.branchpattern")
        names = opened.stable_branches(pattern) if pattern else opened.stable_branches()
        upstream = opened.upstream(upstream_name or config.value("backportr.upstream")).tip
        for name in names:
            tip = opened.branch(name).tip
            fork = opened.merge_base(tip, upstream)
            learned = learn_form(opened, tip, fork)
            typer.echo(f"annotation[{name}]\t{learned.form.name}\tlearned\t# {learned.describe()}")
        _learned_phrases(opened, upstream, [opened.branch(name).tip for name in names])
    except BackportrError:
        return  # no repository, no upstream: the settings above are all there is


def _learned_phrases(opened: Repo, upstream: Oid, stable: list[Oid]) -> None:
    """The fix phrases learned from the history (saved beside the index; learned now where
    the index has none yet), each with its counts and an example: those read as fixes,
    those the built-in forms read already, and those weighed and not taken, with why."""
    from backportr.index.store import default_index_path
    from backportr.index.vocabulary import saved_or_learned
    from backportr.output.safe import terminal

    ignored = git_config(opened.path).values("backportr.ignoreform")
    learned = saved_or_learned(opened, default_index_path(opened), upstream, stable)
    for phrase in learned.phrases:
        if phrase.sampled == 0 and not phrase.verdict.startswith("known"):
            continue  # weighed on use alone (function words, another relation, no commits)
        state = (
            "fix" if phrase.accepted else "known" if phrase.verdict.startswith("known") else "not"
        )
        if phrase.accepted and phrase.ignored_by(ignored):
            state = "ignored"
        why = "" if phrase.accepted or state == "known" else f" ({phrase.verdict})"
        line = terminal(f"{phrase.describe()}{why}; e.g. {phrase.example}")
        typer.echo(f"fixes-form[{terminal(phrase.written)}]\t{state}\tlearned\t# {line}")
