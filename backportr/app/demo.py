"""The demo workflow: the IMA/overlayfs example repository built (in a scratch directory,
or saved where asked) and its backport resolved at the two states of linux-5.10.y."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from backportr.app.console import Console
from backportr.errors import BackportrError, ExitCode
from backportr.model import Oid, short
from backportr.resolve.workspace import open_workspace
from backportr.settings import Settings


def demo(
    console: Console,
    keep: Path | None = None,
    settings_for: Callable[[Path, str], Settings] = lambda path, branch: Settings(
        repo=path, branches=(branch,)
    ),
) -> ExitCode:
    """Build the example (saved at `keep`, which must be absent or empty) and resolve it;
    `settings_for(repository, branch)` gives each resolve's settings (the command line's
    read git config too)."""
    from backportr.examples.ima import A1175, B836C, DB1D1, F8A92, OVL18, build
    from backportr.output.report import render_text
    from backportr.resolve.resolver import Resolver

    if keep is not None:
        _refuse_unless_empty(keep)
    with tempfile.TemporaryDirectory(prefix="backportr-demo-") as scratch:
        path = keep if keep is not None else Path(scratch) / "linux"
        console.warn(f"building the IMA/overlayfs example in {path} ...")
        fixture = build(path)
        if keep is not None:
            _save_repository(path, fixture.ids)
        target = fixture.ids[B836C]
        for state, branch in (("5.10.194", "v5.10.194"), ("5.10.202", "linux-5.10.y")):
            console.warn(
                f"\n$ backportr resolve {short(target)} --branch {branch}   # {state} state"
            )
            with open_workspace(settings_for(path, branch)) as ws:
                report = Resolver(ws).resolve(target, ws.branches)
            console.out.write(render_text(report))
        console.warn("\nfixture commit -> the real upstream commit it stands for:")
        for real in (A1175, DB1D1, OVL18, B836C, F8A92):
            console.warn(f"  {short(fixture.ids[real])} -> {real}")
        console.warn("(algorithm and this example explained in docs/algorithm.md)")
    return ExitCode.OK


def _save_repository(path: Path, ids: dict[str, Oid]) -> None:
    """A saved repository with a clean `git status`, the real ids as tags: the README's and
    the docs' examples run in it as written (`git show b836c4d29f27` too)."""
    from backportr.examples.ima import A1175, B836C, BP_194, BP_202, DB1D1, F8A92, OVL18
    from backportr.git.builder import RepoBuilder

    saved = RepoBuilder.open(path)
    saved.check_out()
    for real in (A1175, DB1D1, OVL18, B836C, F8A92, BP_194, BP_202):
        saved.tag(real, ids[real])


def _refuse_unless_empty(path: Path) -> None:
    """`--keep` builds only into an absent or empty directory: anything there (a repository,
    a user's files) is the user's, and is never touched."""
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
