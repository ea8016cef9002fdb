"""The typer app, the options every command shares, and the settings they build from the
command line and git config. Command modules import this; it imports none of them.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from backportr import __version__
from backportr.errors import BackportrError, UsageError
from backportr.git.config import GitConfig
from backportr.git.repo import DEFAULT_BRANCH_PATTERN, GitError, Repo
from backportr.model import CulpritPolicy
from backportr.settings import DEFAULT_MAX_COMMITS, Settings

if TYPE_CHECKING:
    from backportr.mail.sending import SmtpServer

PLAIN_HELP = not sys.stdout.isatty()  # boxes and colour for a terminal; plain text for a pipe
app = typer.Typer(
    name="backportr",
    help="Find the complete, ordered series a Linux stable backport needs.",
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None if PLAIN_HELP else "rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def format_option(command: str) -> Any:
    """`--format/-f` of `command`: the names the format table offers it, read when the option
    is parsed (a format added to the table is offered at once)."""
    from backportr.app.formats import FORMATS

    def parse(value: str) -> str:
        offered = FORMATS.offered(command)
        if value not in offered:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(offered)}")
        return value

    def complete(incomplete: str) -> list[str]:
        return [n for n in FORMATS.offered(command) if n.startswith(incomplete)]

    return typer.Option(
        "--format",
        "-f",
        help=f"Output format: {', '.join(FORMATS.offered(command))}.",
        parser=parse,
        autocompletion=complete,
        metavar="FORMAT",
    )


RepoOption = Annotated[
    Path,
    typer.Option(
        "--repo", help="The git repository (work tree or bare).", show_default=".", metavar="PATH"
    ),
]
UpstreamOption = Annotated[
    str | None,
    typer.Option(
        "--upstream",
        help="Upstream ref (default: origin/master, master, origin/main or main).",
        metavar="REF",
    ),
]


def complete_refs(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of a branch or a target: the repository's branches (local and
    remote-tracking) and tags that start with what was typed; nothing where no repository is
    found (completion never fails loudly)."""
    try:
        names = Repo(ctx.params.get("repo") or ".").ref_names()
    except (BackportrError, GitError, OSError, ValueError):
        return []
    return [n for n in names if n.startswith(incomplete)]


BranchOption = Annotated[
    list[str] | None,
    typer.Option(
        "--branch",
        "-b",
        help="Stable branch, e.g. linux-5.10.y (repeatable).",
        metavar="BRANCH",
        autocompletion=complete_refs,
    ),
]
PatternOption = Annotated[
    str | None,
    typer.Option(
        "--branch-pattern",
        help="Which branches the index covers (default: backportr.branchPattern, else "
        f"{DEFAULT_BRANCH_PATTERN}).",
        metavar="GLOB",
    ),
]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print nothing on success (errors still).")
]
IndexOption = Annotated[
    Path | None,
    typer.Option(
        "--index", help="Index file (default: <git dir>/backportr/index.sqlite).", metavar="FILE"
    ),
]


OVERRIDES: list[str] = []  # -c KEY=VALUE, given before the command
NO_REPLY = "backportr <backportr@localhost>"


def git_config(repo: Path) -> GitConfig:
    return GitConfig(repo, OVERRIDES)


def smtp_server(repo: Path, server: str) -> SmtpServer:
    """HOST:PORT with the encryption, user and password file of git config."""
    from backportr.mail.sending import SmtpServer

    config = git_config(repo)
    return SmtpServer.parse(
        server,
        config.value("backportr.smtpEncryption"),
        config.value("backportr.smtpUser"),
        config.value("backportr.smtpPassFile"),
    )


def make_settings(
    repo: Path,
    upstream: str | None,
    branches: list[str] | None,
    pattern: str | None = None,
    index: Path | None = None,
    max_commits: int = DEFAULT_MAX_COMMITS,
    culprits: str | None = None,
) -> Settings:
    """The command line's values, and git config's (backportr.*) where it gave none."""
    config = git_config(repo)
    return Settings(
        culprits=culprit_policy(culprits or config.value("backportr.culprits")),
        repo=repo,
        upstream=upstream or config.value("backportr.upstream"),
        branches=tuple(branches or ()),
        branch_pattern=pattern or config.value("backportr.branchpattern") or DEFAULT_BRANCH_PATTERN,
        index_path=index,
        max_commits=max_commits,
        fixes_patterns=config.values("backportr.fixespattern"),
        ignored_forms=config.values("backportr.ignoreform"),
    )


def culprit_policy(value: str | None) -> CulpritPolicy:
    """--culprits or backportr.culprits: auto (the default), evidence or always."""
    if value in (None, "", "auto"):
        return "auto"
    if value in ("evidence", "always"):
        return cast(CulpritPolicy, value)
    raise UsageError(
        f"--culprits (or backportr.culprits) is 'auto', 'evidence' or 'always', not {value!r}"
    )


def default_branches(repo: Path, pattern: str | None) -> list[str]:
    """status and scan without -b: backportr.branches, else every branch the index covers."""
    config = git_config(repo)
    configured = (config.value("backportr.branches") or "").split()
    if configured:
        return configured
    effective = pattern or config.value("backportr.branchpattern") or DEFAULT_BRANCH_PATTERN
    opened = Repo(repo)
    found = []
    for name in opened.stable_branches(effective):
        try:
            opened.branch(name)
        except BackportrError as stray:
            logging.getLogger("backportr").warning("skipped a branch: %s", stray)
            continue
        found.append(name)
    if not found:
        raise UsageError(
            f"no branch matches {effective!r}: give --branch, or set backportr.branches"
        )
    return found


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"backportr {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "-c",
            help="Set a configuration value for this run, as git's -c.",
            metavar="KEY=VALUE",
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Say what is being done (on stderr): index, resolve, scan, bot."
        ),
    ] = False,
    directories: Annotated[
        list[str] | None,
        typer.Option(
            "-C",
            help="Run as if started in DIR, as git's -C (repeatable: each relative to the last).",
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """Find the complete, ordered series a Linux stable backport needs."""
    for directory in directories or ():
        if not directory:
            continue  # git ignores an empty -C ""
        try:
            os.chdir(directory)
        except OSError as error:
            raise UsageError(f"cannot change to {directory!r}: {error.strerror}") from None
    OVERRIDES[:] = overrides or []
    if verbose:
        logging.getLogger("backportr").setLevel(logging.INFO)
