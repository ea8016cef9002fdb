"""`backportr config`: the effective settings and where each comes from."""

from __future__ import annotations

from pathlib import Path

import typer

from backportr.cli.app import RepoOption, app, git_config


@app.command("config")
def config_command(repo: RepoOption = Path(".")) -> None:
    """The effective settings and where each comes from (git config, -c, a fallback)."""
    from backportr.git.config import KEYS
    from backportr.git.merge import trial_engine

    for setting in git_config(repo).effective():
        value = setting.value if setting.value is not None else "-"
        typer.echo(f"{setting.key}\t{value}\t{setting.source}\t# {KEYS[setting.key]}")
    engine, source, how = trial_engine()
    typer.echo(f"trial\t{engine}\t{source}\t# {how}")
