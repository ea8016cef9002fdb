"""`backportr demo`: the IMA/overlayfs example repository, built and resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backportr.app.console import Console
from backportr.cli.app import app, make_settings


@app.command("demo")
def demo_command(
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep", help="Build the example repository here and keep it.", metavar="PATH"
        ),
    ] = None,
) -> None:
    """Build the IMA/overlayfs example repository and resolve its backport."""
    from backportr.app.demo import demo

    code = demo(Console(), keep, lambda path, branch: make_settings(path, None, [branch]))
    raise typer.Exit(int(code))
