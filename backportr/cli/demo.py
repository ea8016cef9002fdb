"""`backportr demo`: the IMA/overlayfs example repository, built and resolved."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from backportr.cli.app import app, make_settings
from backportr.output.report import render_text
from backportr.resolve.workspace import open_workspace


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
    from backportr.examples.ima import A1175, B836C, BP_194, BP_202, DB1D1, F8A92, OVL18, build
    from backportr.resolve.resolver import Resolver

    if keep is not None:
        _refuse_unless_empty(keep)
    with tempfile.TemporaryDirectory(prefix="backportr-demo-") as scratch:
        path = keep if keep is not None else Path(scratch) / "linux"
        typer.echo(f"building the IMA/overlayfs example in {path} ...", err=True)
        fixture = build(path)
        if keep is not None:
            from backportr.git.builder import RepoBuilder

            kept = RepoBuilder.open(path)
            kept.check_out()  # a kept repository with a clean `git status`
            for real in (A1175, DB1D1, OVL18, B836C, F8A92, BP_194, BP_202):
                # the README's and the docs' examples name the real ids: as tags here, they
                # run in the example as written (`git show b836c4d29f27` too)
                kept.tag(real, fixture.ids[real])
        target = fixture.ids[B836C]
        for state, branch in (("5.10.194", "v5.10.194"), ("5.10.202", "linux-5.10.y")):
            typer.echo(f"\n$ backportr resolve {target[:12]} --branch {branch}   # {state} state")
            settings = make_settings(path, None, [branch])
            with open_workspace(settings) as ws:
                report = Resolver(ws).resolve(target, ws.branches)
            sys.stdout.write(render_text(report))
        legend = {fixture.ids[name]: name for name in (A1175, DB1D1, OVL18, B836C, F8A92)}
        typer.echo("\nfixture commit -> the real upstream commit it stands for:")
        for oid, real in legend.items():
            typer.echo(f"  {oid[:12]} -> {real}")
        typer.echo("(algorithm and this example explained in docs/algorithm.md)")


def _refuse_unless_empty(path: Path) -> None:
    """`--keep` builds only into an absent or empty directory: anything there (a repository,
    a user's files) is the user's, and is never touched."""
    from backportr.errors import BackportrError

    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise BackportrError(
            f"demo --keep {path}: it exists and is not a directory; name a new one"
        )
    if path.is_dir() and any(path.iterdir()):
        raise BackportrError(
            f"demo --keep {path}: the directory is not empty (nothing was touched); "
            "name a new or empty directory"
        )
    if not path.parent.is_dir():
        raise BackportrError(f"demo --keep {path}: {path.parent} does not exist")
