"""The structure the linters cannot see: the floors of the package and what each may import,
which modules may touch git, that classes compose rather than inherit state. (ruff, its
complexity limits and `mypy --strict` over the package, tests and benchmarks are steps of
their own in `.ci/run`, each failing CI.)"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> list[Path]:
    return sorted((ROOT / "backportr").rglob("*.py"))


def test_only_the_git_layer_imports_pygit2_or_runs_git() -> None:
    """pygit2 and git processes stay behind `Repo` and its few companions."""
    outside = [p for p in _modules() if p.relative_to(ROOT / "backportr").parts[0] != "git"]
    imports = [
        str(p.relative_to(ROOT))
        for p in outside
        if any(  # at the top or inside a function: any indentation
            line.lstrip().startswith(("import pygit2", "from pygit2"))
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


_FLOORS: tuple[tuple[str, ...], ...] = (  # the lowest first; a floor's names are packages or
    # top-level modules, and each may import its own floor and those below, never one above
    ("errors", "model", "infra"),
    ("text",),  # pure parsing
    ("git", "settings", "examples"),  # the only code that touches git, and its users
    ("index",),  # the commit index and presence read from it
    ("resolve",),  # the workspace, the resolver, the closure, the rules, the finders
    ("scan",),
    ("cves",),
    ("output",),  # renders what the floors below answer
    ("mail",),  # the bot, lore, covers: answers in mail
    ("app",),  # the workflows
    ("cli", "__main__"),
)


def _floor_of(name: str) -> int:
    """The floor of a module under backportr/ (a dotted name past `backportr.`)."""
    top = name.split(".")[0]
    for level, names in enumerate(_FLOORS):
        if top in names:
            return level
    raise AssertionError(f"backportr.{top} is on no floor of tests/test_lint.py")


def _imports(module: Path) -> list[str]:
    import ast

    names: list[str] = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [n for n in names if n.startswith("backportr.")]


def test_no_floor_imports_one_above_it() -> None:
    """Every module of the package sits on a floor (`_FLOORS`): `text/` and `git/` at the
    bottom, the index, presence and the resolver above them, the scan and the CVE view above
    the resolver, output, mail and the workflows above what they render, the CLI on top. An
    import from a higher floor (the resolver reading the scan, the index rendering output) is
    an arrow running back up, and fails here."""
    upward = []
    for module in _modules():
        own = module.relative_to(ROOT / "backportr").with_suffix("")
        if own.parts == ("__init__",):
            continue  # the package's names, loaded lazily
        floor = _floor_of(".".join(own.parts))
        upward += [
            f"{'/'.join(own.parts)}.py imports {name}"
            for name in _imports(module)
            if _floor_of(name.removeprefix("backportr.")) > floor
        ]
    assert not upward, upward


def test_the_floors_form_no_cycle_between_packages() -> None:
    """No two packages import each other, directly or through others (a cycle at package
    level is one `_FLOORS` cannot show inside one floor)."""
    import networkx as nx

    graph: nx.DiGraph[str] = nx.DiGraph()
    for module in _modules():
        own = module.relative_to(ROOT / "backportr").parts[0].removesuffix(".py")
        for name in _imports(module):
            other = name.removeprefix("backportr.").split(".")[0]
            if other != own and own != "__init__":
                graph.add_edge(own, other)
    assert list(nx.simple_cycles(graph)) == []


def test_no_two_modules_import_each_other() -> None:
    """Not even for types: a collaborator needs what it uses of its owner (a protocol such as
    `git.proc.GitHandle`, the shared `index.part.IndexFile`), never the owner's module, so
    no module imports one that imports it back, directly or through others."""
    import networkx as nx

    modules = {
        ".".join(m.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): m
        for m in _modules()
    }
    graph: nx.DiGraph[str] = nx.DiGraph()
    for name, module in modules.items():
        if module.name == "__init__.py":
            continue  # a package's names, loaded lazily from its modules
        for imported in _imports(module):
            if imported in modules and modules[imported].name != "__init__.py":
                graph.add_edge(name, imported)
    assert list(nx.simple_cycles(graph)) == []


def test_no_class_inherits_state_from_a_chain_of_project_classes() -> None:
    """Composition, not inheritance chains: a class has at most one project class among its
    bases, and that one derives from no other (a part such as `StorePart` or `GitAccess`).
    Exceptions are exempt: their hierarchy is what callers catch."""
    import ast

    bases: dict[str, list[str]] = {}
    for module in _modules():
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [ast.unparse(b).split(".")[-1] for b in node.bases]

    def is_error(name: str) -> bool:
        return name.endswith(("Error", "Exception")) or any(
            is_error(b) for b in bases.get(name, [])
        )

    chains = []
    for name, of in sorted(bases.items()):
        own = [b for b in of if b in bases]
        if is_error(name) or not own:
            continue
        if len(own) > 1 or any(b in bases for b in bases[own[0]]):
            chains.append(f"{name}({', '.join(of)})")
    assert not chains, chains


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
