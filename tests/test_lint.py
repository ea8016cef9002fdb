"""The structure the linters cannot see: which modules may touch git, which may import the
command-line package. (ruff, its complexity limits and `mypy --strict` over the package,
tests and benchmarks are steps of their own in `.ci/run`, each failing CI.)"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> list[Path]:
    return sorted((ROOT / "backportr").rglob("*.py"))


def test_only_the_git_layer_imports_pygit2_or_runs_git() -> None:
    """pygit2 and git processes stay behind `Repo` and its few companions."""
    outside = [p for p in _modules() if p.relative_to(ROOT / "backportr").parts[0] != "git"]
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


_FLOORS = {  # a package: what it may import besides itself (the lowest floors first)
    "text": ("backportr.errors", "backportr.model"),
    "git": ("backportr.errors", "backportr.model", "backportr.keptfiles", "backportr.text"),
    "scan": (  # everything below the answers' rendering: never output, mail, cves, the CLI
        *("backportr.errors", "backportr.model", "backportr.config", "backportr.progress"),
        *("backportr.childproc", "backportr.keptfiles", "backportr.statefile", "backportr.dbfault"),
        *("backportr.text", "backportr.git", "backportr.index", "backportr.workspace"),
        *("backportr.presence", "backportr.resolve"),
    ),
    "resolve": (  # the finders and below: never the scan, output, mail or the CLI
        *("backportr.errors", "backportr.model", "backportr.config", "backportr.progress"),
        *("backportr.text", "backportr.git", "backportr.index", "backportr.workspace"),
        *("backportr.presence", "backportr.keptfiles", "backportr.childproc"),
    ),
}


def _imports(module: Path) -> list[str]:
    import ast

    names: list[str] = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [n for n in names if n.startswith("backportr")]


@pytest.mark.parametrize("floor", sorted(_FLOORS))
def test_a_floor_imports_nothing_above_it(floor: str) -> None:
    """`backportr/text/` (pure parsing) and `backportr/git/` (the only code that touches
    git) are the lowest floors, `backportr/resolve/` above the finders, `backportr/scan/`
    above the resolver: each may import
    itself and what lies below it, never what builds on it (mail, output, the CLI)."""
    allowed = (f"backportr.{floor}", *_FLOORS[floor])
    upward = [
        f"{module.name}: {name}"
        for module in sorted((ROOT / "backportr" / floor).glob("*.py"))
        for name in _imports(module)
        if name != "backportr"  # its version
        and not any(name == a or name.startswith(a + ".") for a in allowed)
    ]
    assert not upward, upward


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
