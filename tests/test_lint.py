"""The structure the linters cannot see: the floors of the package and what each may import,
which modules may touch git, that classes compose rather than inherit state. (ruff, its
complexity limits and `mypy --strict` over the package, tests and benchmarks are steps of
their own in `.ci/run`, each failing CI.)"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> list[Path]:
    return sorted((ROOT / "backportr").rglob("*.py"))


def _every_import(module: Path) -> list[str]:
    """Every module name an import statement of `module` names, at the top or inside a
    function, a method or a conditional, and the modules `importlib.import_module` is given
    as a constant."""
    import ast

    names: list[str] = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append(str(node.args[0].value))
    return names


_STARTS = ("subprocess.", "process.run", "process.started", "started", "run")
"""The calls that start a process (`infra/process.py`'s, and `subprocess`'s itself)."""


def _runs_git(module: Path) -> bool:
    """A call that starts a process whose argument list starts with "git" (or names it)."""
    import ast

    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).startswith(_STARTS)
            and any(
                isinstance(n, ast.Constant) and n.value == "git"
                for arg in node.args
                for n in ast.walk(arg)
            )
        ):
            return True
    return False


def test_only_the_git_layer_imports_pygit2_or_runs_git() -> None:
    """pygit2 and git processes stay behind `Repo` and its few companions; every import is
    read from the syntax tree, so one inside a function counts as one at the top."""
    outside = [p for p in _modules() if p.relative_to(ROOT / "backportr").parts[0] != "git"]
    imports = [
        str(p.relative_to(ROOT))
        for p in outside
        if any(n == "pygit2" or n.startswith("pygit2.") for n in _every_import(p))
    ]
    assert not imports, f"pygit2 imported outside the git layer: {imports}"
    runs_git = [str(p.relative_to(ROOT)) for p in outside if _runs_git(p)]
    assert not runs_git, f"git run outside the git layer: {runs_git}"


_SUBPROCESS_STARTS = ("Popen", "run", "call", "check_call", "check_output", "getoutput")


def test_every_child_process_is_started_where_a_stop_cannot_lose_it() -> None:
    """`subprocess.Popen` and `subprocess.run` are called by `infra/process.py` alone: a
    stop signal raised while Popen waits on the child's exec left the child running unseen
    (a stopped scan's `git merge-tree` wrote into a scratch directory already removed)."""
    import ast

    starts = {f"subprocess.{name}" for name in _SUBPROCESS_STARTS}
    direct = [
        str(p.relative_to(ROOT))
        for p in _modules()
        if p != ROOT / "backportr" / "infra" / "process.py"
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if (isinstance(node, ast.Call) and ast.unparse(node.func) in starts)
        or (isinstance(node, ast.ImportFrom) and node.module == "subprocess")
    ]
    assert not direct, f"a process started outside infra/process.py: {direct}"


def test_the_lint_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """The checks above can fail: a pygit2 import hidden in a method and a git process run
    from a function are both seen."""
    hidden = tmp_path / "hidden.py"
    hidden.write_text(
        "import subprocess\n"
        "class A:\n"
        "    def f(self):\n"
        "        if True:\n"
        "            from pygit2 import Repository\n"
        "        subprocess.run(['git', 'log'])\n"
    )
    assert "pygit2" in _every_import(hidden)
    assert _runs_git(hidden)


def test_the_package_has_few_top_level_modules() -> None:
    """The folders are the layers; at the top only what every layer shares (the values, the
    errors, the settings) and the package's entry points."""
    loose = sorted(
        p.stem for p in (ROOT / "backportr").glob("*.py") if p.stem not in ("__init__", "__main__")
    )
    assert len(loose) <= 8, loose


def test_commit_ids_are_shortened_in_one_place() -> None:
    """`model.short` shows an id to a person; no module slices ids by hand."""
    sliced = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in _modules()
        if p.name != "model.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "[:12]" in line
    ]
    assert not sliced, sliced


def _names_saying_kept(source: str) -> list[str]:
    """The names of `source` (not its strings or comments) that say "kept" or "keep",
    `keep` alone left out (the demo's `--keep` option and its parameter)."""
    import io
    import re
    import tokenize

    return [
        f"{t.start[0]}:{t.string}"
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type == tokenize.NAME
        and re.search("kept|keep", t.string, re.IGNORECASE)
        and t.string != "keep"
    ]


def test_no_name_says_kept() -> None:
    """ "Kept" meant four things; each has its word now (the README's Development section:
    cached, retained, saved, left in place), and no name goes back to the old one."""
    found = [
        f"{p.relative_to(ROOT)}:{hit}"
        for p in _modules()
        for hit in _names_saying_kept(p.read_text(encoding="utf-8"))
    ]
    assert not found, found
    assert _names_saying_kept("kept = 1\nx = 'kept' # kept\nkeep_it()\n") == ["1:kept", "3:keep_it"]


def _callback_lengths() -> dict[str, int]:
    """Each command callback of `cli/` and the lines of its body, docstring left out."""
    import ast

    lengths = {}
    for module in sorted((ROOT / "backportr" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if not any(".command(" in d or ".callback(" in d for d in decorators):
                continue
            body = node.body
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            end = body[-1].end_lineno or body[-1].lineno
            lengths[f"{module.name}:{node.name}"] = end - body[0].lineno + 1
    return lengths


def test_no_command_callback_holds_a_workflow() -> None:
    """A command parses its options, calls one workflow of `app/`, and maps its outcome to
    an exit status: no callback body over 30 lines."""
    lengths = _callback_lengths()
    assert len(lengths) >= 9, lengths  # every command was found
    assert {k: n for k, n in lengths.items() if n > 30} == {}


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
    return [n for n in _every_import(module) if n.startswith("backportr.")]


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


_MUTATORS = {"append", "extend", "add", "update", "pop", "remove", "clear", "discard"}
_MUTATORS |= {"insert", "setdefault", "add_node", "add_dependency", "add_reason"}


def _writes_of(module: Path, owner: str, fields: set[str]) -> list[str]:
    """Where `module` writes a field of `owner` (a variable so named): an assignment, an
    item set or deleted, or a mutating method called on it."""
    import ast

    found = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        written: list[ast.AST] = []
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for target in targets:
                written += [
                    n.value if isinstance(n, ast.Subscript) else n for n in ast.walk(target)
                ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
        ):
            written.append(node.func.value)
        found += [
            f"{module.name}:{n.lineno} {ast.unparse(n)}"
            for n in written
            if isinstance(n, ast.Attribute) and n.attr in fields and ast.unparse(n.value) == owner
        ]
    return sorted(set(found))


def test_the_closure_changes_only_through_its_methods(tmp_path: Path) -> None:
    """The closure owns its state: outside `resolve/closure.py` its fields are read, never
    written; the check itself can fail."""
    import dataclasses

    from backportr.resolve.closure import Closure

    fields = {f.name for f in dataclasses.fields(Closure)}
    writes = [
        w for p in _modules() if p.name != "closure.py" for w in _writes_of(p, "closure", fields)
    ]
    assert writes == []
    sample = tmp_path / "sample.py"
    sample.write_text("closure.capped = True\nclosure.warnings.append('x')\nclosure.adapt[1] = 2\n")
    assert [w.split()[1] for w in _writes_of(sample, "closure", fields)] == [
        "closure.capped",
        "closure.warnings",
        "closure.adapt",
    ]
