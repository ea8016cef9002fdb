"""`backportr config`: the effective settings and where each comes from."""

from __future__ import annotations

from pathlib import Path

import typer

from backportr.cli.app import PatternOption, RepoOption, UpstreamOption, app, git_config


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
    except BackportrError:
        return  # no repository, no upstream: the settings above are all there is
