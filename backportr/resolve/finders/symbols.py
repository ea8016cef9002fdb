"""Symbol prerequisites: identifiers a member's added lines use that the branch lacks.

A patch can apply cleanly and still be broken on an old branch: it calls a helper, uses a
macro, a struct member or a flag only newer upstream has. For a member that applies in the
trial, take the identifiers of its added C lines (comments and string literals stripped, C
keywords and common types dropped); those that occur nowhere in the branch's tree as it is
*before* the member (the branch plus the series so far) are missing. For each missing one,
find the upstream commit between the fork point and the member's parent that introduced it:
a pickaxe search limited to the files of the parent's tree that define it (else the build
files that mention it, else the C files: a name a macro makes). A name no file defines in any
form, first used by a commit of another part of the tree, is the system's or a library's:
that commit is not needed.
Identifiers the member introduces itself are in no file of its parent, so no commit is
found for them and they do not count.

Cost: the branch tip's identifiers are looked up through resolve/finders/words.py (a bounded
`git grep` for a few names, the tip's identifier set, built once and cached by tree id, for
many), and pickaxe searches run only for the few identifiers that are missing. No file is
scanned per identifier with a process per call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from backportr.git.trial import TreeState
from backportr.model import Oid, Reason, short
from backportr.resolve.finders import Context, Finding

_C_FILES = (".c", ".h", ".S")
# Names defined outside C: Kconfig symbols (used in C as CONFIG_<name>) and what the build
# system defines (meson's conf.set('HAVE_X', ...), a Makefile's -DX, CMake's options).
_KCONFIG_FILES = ("Kconfig*",)
_BUILD_FILES = (
    *_KCONFIG_FILES,
    "Makefile*",
    ".mk",
    "meson.build",
    "meson_options.txt",
    "meson.options",
    "CMakeLists.txt",
    ".cmake",
    ".ac",
    ".am",
)
SEARCHED = _C_FILES + _BUILD_FILES
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/")
_ASCII_SPACES = str.maketrans(
    {c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")}
)
_MAX_IDENTIFIERS = 200
_MAX_MISSING = 12

C_WORDS = frozenset(
    (
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "register",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        "bool",
        "true",
        "false",
        "NULL",
        "define",
        "include",
        "ifdef",
        "ifndef",
        "endif",
        "elif",
        "undef",
        "pragma",
        "error",
        "warning",
        "defined",
        "asm",
        "__asm__",
        "typeof",
        "__typeof__",
        "__attribute__",
        "u8",
        "u16",
        "u32",
        "u64",
        "s8",
        "s16",
        "s32",
        "s64",
        "__u8",
        "__u16",
        "__u32",
        "__u64",
        "__s8",
        "__s16",
        "__s32",
        "__s64",
        "__le16",
        "__le32",
        "__le64",
        "__be16",
        "__be32",
        "__be64",
        "size_t",
        "ssize_t",
        "loff_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uintptr_t",
        "bool",
        "dev_t",
        "umode_t",
        "gfp_t",
    )
)


_DECLARATION = (
    re.compile(  # `size_t a = 0, b;`  `struct foo *p;`  `const char *name,` (a parameter)
        r"^\s*(?:(?:const|static|unsigned|signed|volatile|register|struct|enum|union|inline)\s+)*"
        r"[A-Za-z_]\w*[\s\*]+[A-Za-z_]\w*\s*(?:=|;|,|\[|\))"
    )
)
_DECLARED = re.compile(r"(?:^|[\s\*,(])([A-Za-z_]\w*)\s*(?:=[^=]|;|,|\[|\))")


def declared_names(line: str) -> set[str]:
    """Variables and parameters a line of code declares (the member's own names)."""
    if line[:1].isalpha() and "(" in line and not line.rstrip().endswith(";"):
        # a function definition's first line: its parameters are its own names
        params = line.split("(", 1)[1].split(")", 1)[0]
        names = {found[-1] for p in params.split(",") if len(found := _IDENTIFIER.findall(p)) > 1}
        return names - C_WORDS
    if not _DECLARATION.match(line):
        return set()
    head = line.split("=", 1)[0] if line.count("=") == 1 else line
    return {m.group(1) for m in _DECLARED.finditer(head + ";")} - C_WORDS


def added_identifiers(ctx: Context, member: Oid) -> dict[str, str]:
    """Identifiers used in the member's added C lines -> the first file using each; the
    names it declares itself (local variables, parameters) are left out."""
    out: dict[str, str] = {}
    declared: set[str] = set()
    for file in ctx.repo.diffs.diff(member):
        path = file.new_path
        if not path.endswith(_C_FILES):
            continue
        in_comment = False
        for hunk in file.hunks:
            for line in hunk.lines:
                if line.origin != "+":
                    continue
                text, in_comment = _code_only(line.content, in_comment)
                declared |= declared_names(text)
                for name in _IDENTIFIER.findall(text):
                    if name not in C_WORDS and not name.isdigit() and len(name) > 2:
                        out.setdefault(name, path)
    used = {name: path for name, path in out.items() if name not in declared}
    return dict(list(used.items())[:_MAX_IDENTIFIERS])


def _code_only(line: str, in_comment: bool) -> tuple[str, bool]:
    """The code of a line without comments and string literals; tracks /* */ across lines."""
    text = line
    if in_comment:
        end = text.find("*/")
        if end < 0:
            return "", True
        text = text[end + 2 :]
    text = _BLOCK_COMMENT.sub(" ", _STRING.sub(" ", text))
    start = text.find("/*")
    if start >= 0:
        return text[:start], True
    if "//" in text:
        text = text[: text.index("//")]
    stripped = text.lstrip()
    if stripped.startswith(("*", "#include")):
        return "", False
    return text, False


def symbol_prerequisites(
    ctx: Context,
    member: Oid,
    before: TreeState,
    is_candidate: Callable[[Oid], bool],
) -> list[Finding]:
    """Commits that introduced identifiers `member` uses and the branch (before it) lacks."""
    used = added_identifiers(ctx, member)
    if not used:
        return []
    missing = [name for name in _absent(ctx, used, member, before)][:_MAX_MISSING]
    parents = ctx.repo.parents(member)
    if not missing or not parents:
        return []
    parent = parents[0]
    mentions = _Mentions(ctx, parent, missing)
    found: dict[Oid, list[tuple[str, str]]] = {}
    for name in missing:
        introduced = _introducer(ctx, name, parent, mentions, member)
        if introduced is None:
            continue
        commit, path = introduced
        if commit != member and is_candidate(commit):
            found.setdefault(commit, []).append((name, path))
    findings = []
    for commit, names in found.items():
        symbols = ", ".join(
            f"{name} introduced by {short(commit)} in {path}" for name, path in names
        )
        detail = f"symbol {symbols}; used by {ctx.describe(member)}"
        findings.append(Finding(commit, "prerequisite", Reason("symbol", detail, member)))
    return findings


def _absent(ctx: Context, used: dict[str, str], member: Oid, before: TreeState) -> list[str]:
    """The identifiers that occur in no C file of `before` (the branch tip plus the series
    so far). Cheapest first: the files the member touches and the series' changed files are
    read in-process; the rest is one `git grep` over the branch tip, cached per branch."""
    remaining = set(used)
    paths = {c.new_path for c in ctx.applier.changes(member)} | set(before.overlay)
    for path in sorted(paths):
        if not remaining:
            return []
        if path.endswith(_C_FILES) and (entry := ctx.applier.lookup(before, path)):
            remaining -= ctx.file_words.of(entry[0], _reader(ctx, before, path))
    if not remaining:
        return []
    words = sorted({*remaining, *(kconfig_name(n) for n in remaining if kconfig_name(n))})
    present = (
        ctx.words.present(words)
        if ctx.words
        else set(ctx.repo.search.grep_words(ctx.branch.tip, words, SEARCHED))
    )
    return [
        n for n in used if n in remaining and n not in present and kconfig_name(n) not in present
    ]


def _reader(ctx: Context, state: TreeState, path: str) -> Callable[[], set[str]]:
    return lambda: _identifiers(ctx.applier.file_text(state, path) or "")


def _identifiers(text: str) -> set[str]:
    """`set(_IDENTIFIER.findall(text))`, five times faster on a large file: the text split at
    ASCII characters that are no letter, digit or underscore, each ASCII piece an identifier
    unless it starts with a digit; a piece holding other characters goes through the regex."""
    out: set[str] = set()
    for piece in set(text.translate(_ASCII_SPACES).split()):
        if not piece.isascii():
            out.update(_IDENTIFIER.findall(piece))
        elif not piece[0].isdigit():
            out.add(piece)
    return out


def kconfig_name(name: str) -> str:
    """`CONFIG_FOO` -> `FOO` (its name in Kconfig files); '' for other identifiers."""
    return name[len("CONFIG_") :] if name.startswith("CONFIG_") and len(name) > 7 else ""


_STRONG_DEFINITION = (  # a macro, a struct/union/enum, a typedef
    r"(#\s*define\s+{0}\b|\b(struct|union|enum)\s+{0}\s*\{{|\btypedef\b.*\b{0}\s*;)"
)
_WEAK_DEFINITION = (  # a function definition at the start of a line, a struct member
    r"(^[A-Za-z_].*\b{0}\s*\(|^\s+[A-Za-z_][\w\s\*]*\b{0}(\s*\[[^\]]*\])?\s*;\s*(/\*.*)?$)"
)


_OTHER_DEFINITION = (  # GNU style (the name at the start of its line), an enumerator, a
    # declaration after its type (a variable, a parameter, a bit-field), a struct with an
    # attribute (`struct __rte_packed name {`), a definition by a macro (`DEFINE_MUTEX(name)`)
    r"(^{0}\s*\(|^\s*{0}\s*(=[^=].*)?,?\s*(/[*/].*)?$"
    r"|\b(?!(?:return|case|goto|else|sizeof|do)\b)[A-Za-z_]\w*[\s\*]+{0}\s*(\[[^\]]*\])?"
    r"\s*(=[^=]|;|,|\)|:\s*\w)"
    r"|\b(struct|union|enum)\b[^;=()]*\b{0}\s*\{{"
    r"|^\s*(static\s+)?[A-Z][A-Z0-9_]*\s*\(([^()]*,\s*)?{0}\s*[,)])"
)


@functools.lru_cache(maxsize=4096)
def _definition(pattern: str, name: str) -> re.Pattern[str]:
    """A definition pattern for one name, compiled once (a scan asks about the same
    missing names for member after member; the weak pattern takes a while to compile)."""
    return re.compile(pattern.format(re.escape(name)))


class _Mentions:
    """Where the missing names occur at the member's parent: the files mentioning each, with
    the lines; one `git grep` for all of them per kind of file, each asked once."""

    def __init__(self, ctx: Context, parent: Oid, names: list[str]) -> None:
        self._ctx = ctx
        self._parent = parent
        self._names = names
        self._found: dict[tuple[str, ...], dict[str, dict[str, list[str]]]] = {}

    def kconfig(self, option: str) -> dict[str, list[str]]:
        options = [o for n in self._names if (o := kconfig_name(n))]
        return self._of(options, _KCONFIG_FILES).get(option, {})

    def code(self, name: str) -> dict[str, list[str]]:
        """The C files mentioning `name`, with those lines."""
        return self._of(self._names, _C_FILES).get(name, {})

    def build(self, name: str) -> dict[str, list[str]]:
        """The build files mentioning `name`, with those lines."""
        return self._of(self._names, _BUILD_FILES).get(name, {})

    def _of(self, names: list[str], suffixes: tuple[str, ...]) -> dict[str, dict[str, list[str]]]:
        if suffixes not in self._found:
            self._found[suffixes] = self._ctx.repo.search.grep_files(self._parent, names, suffixes)
        return self._found[suffixes]


def _introducer(
    ctx: Context, name: str, parent: Oid, mentions: _Mentions, member: Oid
) -> tuple[Oid, str] | None:
    """The oldest commit after the fork (up to `parent`) that added `name` to the file that
    defines it: a C file, else a build file mentioning it, else any C file mentioning it
    (unless that commit touches none of `member`'s directories)."""
    if option := kconfig_name(name):  # defined by `config FOO` in a Kconfig file
        kconfig = mentions.kconfig(option)
        regex = re.compile(rf"^\s*(?:menu)?config\s+{re.escape(option)}\s*$")
        defining = [f for f, lines in kconfig.items() if any(regex.match(ln) for ln in lines)]
        if defining:
            return ctx.repo.search.pickaxe(option, parent, ctx.fork, defining[:20])
    code = mentions.code(name)
    for pattern in (_STRONG_DEFINITION, _WEAK_DEFINITION, _OTHER_DEFINITION):
        regex = _definition(pattern, name)
        defining = [f for f, lines in code.items() if any(regex.search(ln) for ln in lines)]
        if defining:
            hit = ctx.repo.search.pickaxe(name, parent, ctx.fork, defining[:20])
            if hit is not None:
                return hit
    # Defined by the build (meson's `conf.set('HAVE_X', ...)`, a Makefile's -DX): every
    # mention there a definition.
    built = mentions.build(name)
    if built:
        return ctx.repo.search.pickaxe(name, parent, ctx.fork, list(built)[:20])
    # Defined in no form: made by a macro (`mlx5dr_definer_##name##_set`), or the system's or
    # a library's (MSVC's `wcscpy_s`). The commit that added it to the code is the one, but
    # for a commit of another part of the tree (no directory of the member's), which began
    # to use a library's function there: no prerequisite of this member.
    if not code:
        return None
    hit = ctx.repo.search.pickaxe(name, parent, ctx.fork, list(code)[:20])
    if hit is not None and _directories(ctx, hit[0]).isdisjoint(_directories(ctx, member)):
        return None
    return hit


def _directories(ctx: Context, commit: Oid) -> set[str]:
    return {path.rpartition("/")[0] for path in ctx.repo.diffs.files_touched(commit)}
