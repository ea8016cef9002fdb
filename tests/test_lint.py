"""The structure the linters cannot see: which modules may touch git, which may import the
command-line package. (ruff, its complexity limits and `mypy --strict` over the package,
tests and benchmarks are steps of their own in `.ci/run`, each failing CI.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )


_GIT_LAYER = {
    "repo.py",
    "gitnames.py",
    "gitproc.py",
    "gitsearch.py",
    "gittreegrep.py",
    "gitblame.py",
    "gitstream.py",
    "gitwalk.py",
    "gitlog.py",
    "githistory.py",
    "gitdiff.py",
    "gitconfig.py",
    "gitmerge.py",
    "gitfiles.py",
    "apply.py",
    "treestate.py",
    "builder.py",
}


def _modules() -> list[Path]:
    return sorted((ROOT / "backportr").rglob("*.py"))


def test_only_the_git_layer_imports_pygit2_or_runs_git() -> None:
    """pygit2 and git processes stay behind `Repo` and its few companions."""
    outside = [
        p for p in _modules() if p.relative_to(ROOT / "backportr").as_posix() not in _GIT_LAYER
    ]
    imports = [
        str(p.relative_to(ROOT))
        for p in outside
        if any(
            line.startswith(("import pygit2", "from pygit2"))
            for line in p.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert not imports, f"pygit2 imported outside the git layer: {imports}"
    runs_git = [
        str(p.relative_to(ROOT))
        for p in outside
        if "subprocess" in (text := p.read_text(encoding="utf-8"))
        and ('"git"' in text or "'git'" in text)
    ]
    assert not runs_git, f"git run outside the git layer: {runs_git}"


def test_the_command_modules_import_the_app_never_the_package() -> None:
    """`cli/__init__.py` registers the commands by importing them; a command module that
    imported the package back (`from backportr.cli import ...`) made `cli/` an import cycle."""
    import ast

    cli = Path(__file__).resolve().parent.parent / "backportr" / "cli"
    for module in sorted(cli.glob("*.py")):
        if module.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.module != "backportr.cli", f"{module.name} imports backportr.cli"
            if isinstance(node, ast.Import):
                assert all(a.name != "backportr.cli" for a in node.names), module.name
