"""Hermetic test setup: temporary HOME and git config, fixed identity, no prompts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Sealed before pygit2 is imported: libgit2 reads HOME and the config search path once, when
# it is loaded, so a later change would leave in-process runs reading the user's ~/.gitconfig.
# Once per session: pytest imports this file as `conftest`, test modules as `tests.conftest`.
_HOME = Path(
    os.environ.get("BACKPORTR_TEST_HOME") or tempfile.mkdtemp(prefix="backportr-test-home-")
)
os.environ.update(
    {
        "BACKPORTR_TEST_HOME": str(_HOME),
        "HOME": str(_HOME),
        "XDG_CONFIG_HOME": str(_HOME / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(_HOME / ".gitconfig"),
    }
)

from backportr.examples.ima import A1175, B836C, DB1D1, F8A92, ImaFixture, build  # noqa: E402
from backportr.git.builder import RepoBuilder  # noqa: E402 (after the seal, on purpose)
from tests.inbox import DATA, Archive, patch_mail, start_archive  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _hermetic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = _HOME  # HOME and git's config paths: sealed above, at import
    scratch = tmp_path_factory.mktemp("tmp")
    saved = dict(os.environ)
    saved_tempdir = tempfile.tempdir
    tempfile.tempdir = str(scratch)  # crash logs of in-process runs too, not the real /tmp
    os.environ.update(
        {
            "GIT_AUTHOR_NAME": "Test Author",
            "GIT_AUTHOR_EMAIL": "author@example.org",
            "GIT_COMMITTER_NAME": "Test Committer",
            "GIT_COMMITTER_EMAIL": "committer@example.org",
            "GIT_AUTHOR_DATE": "1600000000 +0000",
            "GIT_COMMITTER_DATE": "1600000000 +0000",
            "GIT_EDITOR": "false",
            "GIT_TERMINAL_PROMPT": "0",
            "TMPDIR": str(scratch),
        }
    )
    (home / ".gitconfig").write_text(
        "[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = master\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    yield
    os.environ.clear()
    os.environ.update(saved)
    tempfile.tempdir = saved_tempdir
    shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture
def builder(tmp_path: Path) -> RepoBuilder:
    return RepoBuilder(tmp_path / "repo")


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


@pytest.fixture(scope="session")
def ima_template(tmp_path_factory: pytest.TempPathFactory) -> ImaFixture:
    """The IMA/overlayfs example, built once per session with its index made for the two
    5.10 states; tests never use it directly (`ima` copies it)."""
    fixture = build(tmp_path_factory.mktemp("ima") / "linux")
    made = backportr("index", "--repo", str(fixture.path), "-b", "linux-5.10.y", "-b", "v5.10.194")
    assert made.returncode == 0, made.stderr
    return fixture


@pytest.fixture
def ima(ima_template: ImaFixture, tmp_path: Path) -> ImaFixture:
    """A copy of the IMA example of this test's own: git's objects hard-linked (never
    written), everything else copied, the index included, so no test sees what another
    wrote into it and none depends on the order they run in."""
    copy = tmp_path / "_ima" / "linux"
    shutil.copytree(ima_template.path, copy, symlinks=True, copy_function=_link_objects)
    return ImaFixture(copy, dict(ima_template.ids))


def _link_objects(source: str, target: str) -> object:
    if f"{os.sep}objects{os.sep}" in source:
        os.link(source, target)
        return target
    return shutil.copy2(source, target)


def backportr(
    *args: str, timeout: int = 300, process: bool = False, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """Run the command line as a user does, text out, no exceptions on failure: in this
    process (the suite's start-up cost once, not per call) unless the call needs a process of
    its own (`process`, or its own environment, working directory or stdin)."""
    if kwargs or process:
        return subprocess.run(  # type: ignore[no-any-return]
            [sys.executable, "-m", "backportr", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            **kwargs,
        )  # type: ignore[call-overload]
    return _in_process(list(args))


def _in_process(args: list[str]) -> subprocess.CompletedProcess[str]:
    import contextlib
    import io
    import logging

    from backportr.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", newline="")
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", newline="")
    logger = logging.getLogger("backportr")
    saved = (logger.handlers[:], logger.level)
    logger.handlers.clear()  # the run's own stderr handler, as in a new process
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(args)
    finally:
        logger.handlers[:], level = saved
        logger.setLevel(level)
    stdout.flush()
    stderr.flush()
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "backportr", *args],
        code,
        out.getvalue().decode("utf-8", "surrogateescape"),
        err.getvalue().decode("utf-8", "replace"),
    )


@pytest.fixture(scope="module")
def mails(ima_template: ImaFixture) -> dict[str, str]:
    ima = ima_template
    ids = {
        "B836C": ima.ids[B836C],
        "A1175": ima.ids[A1175],
        "DB1D1": ima.ids[DB1D1],
        "F8A92_12": ima.ids[F8A92][:12],
    }
    out = {}
    for path in sorted(DATA.glob("*.eml.in")):
        text = path.read_text()
        for key, value in ids.items():
            text = text.replace("{" + key + "}", value)
        out[path.name.removesuffix(".eml.in")] = text
    out["patch"] = patch_mail(ima)
    return out


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, mails: dict[str, str]) -> Iterator[Archive]:
    if shutil.which("public-inbox-httpd") is None:
        pytest.skip("public-inbox is not installed")
    started = start_archive(tmp_path_factory.mktemp("public-inbox"), mails)
    yield started
    started.stop()
