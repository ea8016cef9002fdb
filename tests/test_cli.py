"""The command line as a user meets it: exit codes, stdout for results, stderr for errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from backportr.git.builder import RepoBuilder
from backportr.git.merge import merge_tree_version
from backportr.git.proc import git_version
from tests.conftest import backportr, git
from tests.scenarios import ambiguous_repo, presence_repo

run = backportr


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> RepoBuilder:
    return presence_repo(tmp_path_factory.mktemp("cli") / "repo")


def test_status_json(scenario: RepoBuilder) -> None:
    ids = scenario.ids
    proc = run(
        "status",
        ids["fix"][:12],
        ids["nolabel"],
        ids["reverted"],
        ids["absent"],
        "--branch",
        "linux-5.10.y",
        "--repo",
        str(scenario.path),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["schema"] == 1
    rows = {r["commit"]: r["branches"][0] for r in data["results"]}
    assert rows[ids["fix"]] == {
        "branch": "linux-5.10.y",
        "present": True,
        "as": ids["fix-bp"],
        "how": "annotation",
        "reverted_in_branch": False,
    }
    assert rows[ids["nolabel"]]["how"] == "patch-id"
    assert rows[ids["reverted"]] == {
        "branch": "linux-5.10.y",
        "present": False,
        "as": ids["reverted-bp"],
        "how": "annotation",
        "reverted_in_branch": True,
    }
    assert rows[ids["absent"]] == {
        "branch": "linux-5.10.y",
        "present": False,
        "as": None,
        "how": None,
        "reverted_in_branch": False,
    }
    assert data["results"][0]["subject"] == "foo: fix the helper"


def test_status_text_defaults_to_cwd(scenario: RepoBuilder) -> None:
    proc = run("status", scenario.ids["sasha"], "-b", "linux-5.10.y", cwd=scenario.path)
    assert proc.returncode == 0, proc.stderr
    assert "present as" in proc.stdout and "annotation" in proc.stdout
    assert proc.stderr == ""  # piped: no progress drawn


def test_index_command(scenario: RepoBuilder) -> None:
    proc = run("index", "--repo", str(scenario.path))
    assert proc.returncode == 0, proc.stderr
    assert "commits in" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["status", "HEAD", "-b", "linux-5.10.y", "--repo", "{tmp}"], "not a git repository"),
        (["status", "deadbeefdead", "-b", "linux-5.10.y", "--repo", "{repo}"], "unknown commit"),
        (["status", "HEAD", "-b", "linux-9.9.y", "--repo", "{repo}"], "unknown branch"),
        (
            ["status", "HEAD", "-b", "linux-5.10.y", "--repo", "{repo}", "--upstream", "nope"],
            "unknown upstream",
        ),
    ],
)
def test_bad_input_exits_1_with_one_line(
    scenario: RepoBuilder, tmp_path: Path, args: list[str], message: str
) -> None:
    args = [a.format(tmp=tmp_path, repo=scenario.path) for a in args]
    proc = run(*args)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_ambiguous_prefix_exit_1(tmp_path: Path) -> None:
    b, prefix = ambiguous_repo(tmp_path / "r")
    b.branch("linux-5.10.y", "master")
    proc = run("status", prefix, "-b", "linux-5.10.y", "--repo", str(b.path))
    assert proc.returncode == 1
    assert "ambiguous" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_shallow_clone_exit_1(scenario: RepoBuilder, tmp_path: Path) -> None:
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--no-single-branch",
        f"file://{scenario.path}",
        "shallow",
    )
    proc = run("status", "HEAD", "-b", "linux-5.10.y", "--repo", str(tmp_path / "shallow"))
    assert proc.returncode == 1
    assert "shallow clone; run git fetch --unshallow" in proc.stderr


def test_unreadable_index_exit_1(scenario: RepoBuilder, tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"garbage" * 500)
    proc = run(
        "status", "HEAD", "-b", "linux-5.10.y", "--repo", str(scenario.path), "--index", str(bad)
    )
    assert proc.returncode == 1
    assert "unreadable" in proc.stderr and "Traceback" not in proc.stderr


def test_usage_errors_exit_2(scenario: RepoBuilder) -> None:
    assert run("status").returncode == 2
    assert run("no-such-command").returncode == 2
    none = run("status", "HEAD", "--repo", str(scenario.path), "--branch-pattern", "nothing-*")
    assert none.returncode == 2 and "--branch" in none.stderr and "nothing-*" in none.stderr
    assert run("-h").returncode == 0 and run("resolve", "-h").returncode == 0


def test_status_defaults_to_every_indexed_branch(scenario: RepoBuilder) -> None:
    proc = run("status", "HEAD", "--repo", str(scenario.path))
    assert proc.returncode == 0, proc.stderr
    assert "linux-5.10.y" in proc.stdout


def test_settings_from_git_config(scenario: RepoBuilder, tmp_path: Path) -> None:
    """Every key from git config, -c over it, git's fallbacks, and `backportr config`."""
    from tests.conftest import git

    repo = tmp_path / "configured"
    git(tmp_path, "clone", "-q", "--bare", str(scenario.path), str(repo))
    for key, value in (
        ("backportr.upstream", "master"),
        ("backportr.branchPattern", "linux-*.y"),
        ("backportr.branches", "linux-5.10.y"),
        ("backportr.lore", "http://127.0.0.1:9/stable/"),
        ("backportr.annotation", "sasha"),
        ("backportr.culprits", "always"),
        ("backportr.commitUrl", "https://git.kernel.org/linus/{commit}"),
        ("sendemail.smtpEncryption", "tls"),
        ("backportr.smtpUser", "bot"),
        ("backportr.smtpPassFile", "~/.config/backportr/smtp-password"),
        ("backportr.botState", str(tmp_path / "bot.sqlite")),
        ("user.name", "Stable Person"),
        ("user.email", "stable@example.org"),
        ("sendemail.smtpServer", "mail.example.org"),
        ("sendemail.smtpServerPort", "587"),
    ):
        git(repo, "config", key, value)
    listed = run("config", "--repo", str(repo))
    assert listed.returncode == 0, listed.stderr
    rows = {line.split("\t")[0]: line.split("\t")[1:3] for line in listed.stdout.splitlines()}
    assert rows["backportr.upstream"][0] == "master"
    assert rows["backportr.upstream"][1].startswith("git config (")
    assert rows["backportr.from"] == [
        "Stable Person <stable@example.org>",
        "fallback: user.name, user.email",
    ]
    assert rows["backportr.smtp"] == ["mail.example.org:587", "fallback: sendemail.smtpServer"]
    assert rows["backportr.annotation"][0] == "sasha" and rows["backportr.culprits"][0] == "always"
    assert rows["backportr.botstate"][0] == str(tmp_path / "bot.sqlite")
    assert rows["backportr.lore"][0] == "http://127.0.0.1:9/stable/"
    assert rows["backportr.commiturl"][0] == "https://git.kernel.org/linus/{commit}"
    assert rows["backportr.branchpattern"][0] == "linux-*.y"
    assert rows["backportr.branches"][0] == "linux-5.10.y"
    assert rows["backportr.smtpencryption"] == ["tls", "fallback: sendemail.smtpEncryption"]
    assert rows["backportr.smtpuser"][0] == "bot"
    assert rows["backportr.smtppassfile"][0] == "~/.config/backportr/smtp-password"
    version = merge_tree_version()  # which engine answers a trial, and why
    assert rows["trial"] == (["in-memory+merge-ort", f"git {version}"] if version else
                             ["in-memory", git_version()])  # fmt: skip
    overridden = run("-c", "backportr.smtp=localhost:2525", "config", "--repo", str(repo))
    assert "backportr.smtp\tlocalhost:2525\t-c" in overridden.stdout
    status = run("status", "HEAD", "--repo", str(repo))  # branches from backportr.branches
    assert status.returncode == 0 and "linux-5.10.y" in status.stdout, status.stderr
    bad = run("-c", "backportr.culprits=sometimes", "resolve", "HEAD", "--repo", str(repo))
    assert bad.returncode == 2 and "evidence" in bad.stderr
    bogus = run("-c", "backportr.annotation=bogus", "resolve", "HEAD", "--repo", str(repo),
                "-f", "mbox")  # fmt: skip
    assert bogus.returncode == 2 and "one of greg, sasha, dpdk" in bogus.stderr, bogus.stderr
    assert len(bogus.stderr.strip().splitlines()) == 1 and "crash" not in bogus.stderr
    bot = run(
        "bot", "--repo", str(repo), "--once", "--dry-run", "--retries", "0"
    )  # lore unreachable
    assert bot.returncode == 1 and "127.0.0.1:9" in bot.stderr


def test_internal_error_exit_3_with_crash_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scenario: RepoBuilder
) -> None:
    from backportr import cli
    from backportr.app import repository

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(repository, "open_workspace", explode)  # status's, a bug in disguise
    code = cli.main(["status", "HEAD", "-b", "linux-5.10.y", "--repo", str(scenario.path)])
    err = capsys.readouterr().err
    assert code == 3
    assert "internal error" in err and "boom" in err and "Traceback" not in err
    log = err.rsplit("details in ", 1)[1].strip()
    text = Path(log).read_text()
    assert "RuntimeError: boom" in text
    assert "python 3." in text and "pygit2 " in text and "libgit2 " in text
    assert "git version" in text


def test_a_key_error_that_looks_like_an_object_id_is_a_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scenario: RepoBuilder
) -> None:
    """An internal dict missing a commit id is a bug (exit 3), never "the repository lacks
    an object": the git layer says that itself (`MissingObjectError`)."""
    from backportr import cli
    from backportr.app import repository

    def lookup(*args: object, **kwargs: object) -> None:
        raise KeyError("0" * 40)

    monkeypatch.setattr(repository, "open_workspace", lookup)
    code = cli.main(["status", "HEAD", "-b", "linux-5.10.y", "--repo", str(scenario.path)])
    err = capsys.readouterr().err
    assert code == 3 and "internal error (KeyError" in err and "lacks" not in err, err


def test_the_error_line_shows_data_escaped(scenario: RepoBuilder) -> None:
    """The boundary's one line quotes data (here a commit name a user pasted from a mail):
    an escape sequence or a bidi override in it is shown escaped, never sent to the
    terminal (it printed them raw)."""
    hostile = "x\x1b[31my\u202e"
    proc = run("status", hostile, "-b", "linux-5.10.y", "--repo", str(scenario.path))
    assert proc.returncode == 1, proc.stderr  # an unknown commit (docs/cli.md)
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr
    assert "x\\x1b[31my\\u202e" in proc.stderr, proc.stderr


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("backportr ")


def test_progress_draws_only_on_a_terminal() -> None:
    import io

    from backportr.cli.progress import TerminalProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown = Terminal()
    progress = TerminalProgress(shown)
    progress("indexing upstream", 5000, None)
    progress("patch-ids linux-5.10.y", 10, 10)
    progress.finish()
    assert "indexing upstream: 5000 commits" in shown.getvalue()
    assert "[" + "#" * 30 + "] 10/10" in shown.getvalue()
    piped = io.StringIO()
    quiet = TerminalProgress(piped)
    quiet("indexing upstream", 5000, None)
    quiet.finish()
    assert piped.getvalue() == ""


def test_quiet_for_scripts_and_cron(scenario: RepoBuilder) -> None:
    """`-q`: nothing printed on success; `status -q` answers with its exit code alone."""
    where = ["--repo", str(scenario.path), "-b", "linux-5.10.y"]
    indexed = run("index", *where, "-q")
    assert (indexed.returncode, indexed.stdout, indexed.stderr) == (0, "", "")
    present = run("status", scenario.ids["fix"], *where, "-q")
    assert (present.returncode, present.stdout, present.stderr) == (0, "", "")
    both = run("status", scenario.ids["fix"], scenario.ids["absent"], *where, "--quiet")
    assert (both.returncode, both.stdout, both.stderr) == (4, "", "")
    missing = run("status", "deadbeefdead", *where, "-q")
    assert missing.returncode == 1 and "unknown commit" in missing.stderr  # errors still said


@pytest.mark.parametrize("command", ["index", "status", "resolve", "scan", "bot", "mail check"])
def test_help_is_plain_when_piped(command: str) -> None:
    """Piped help: no boxes, no `<bool>`/`<list[str]>` type names after options."""
    proc = run(*command.split(), "-h")
    assert proc.returncode == 0, proc.stderr
    assert "╭" not in proc.stdout and "│" not in proc.stdout
    options = [ln for ln in proc.stdout.splitlines() if ln.lstrip().startswith("-")]
    for bad in ("<bool>", "<list[str]>", "<str>", "<path>", "<int"):
        assert not any(bad in ln for ln in options), (bad, proc.stdout)


def test_shell_completion_is_offered() -> None:
    """--show-completion prints the script for the shell it runs under (detected from the
    process tree, so the test runs it under bash, as a user's terminal would)."""
    command = f"'{sys.executable}' -m backportr --show-completion; exit $?"  # no exec
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "complete" in proc.stdout and "backportr" in proc.stdout


def test_verbose_says_what_is_done(scenario: RepoBuilder) -> None:
    proc = run(
        "-v", "resolve", scenario.ids["fix"], "-b", "linux-5.10.y", "--repo", str(scenario.path)
    )
    assert proc.returncode == 0, proc.stderr
    assert "backportr: index " in proc.stderr and "backportr: resolved " in proc.stderr
    assert "warning" not in proc.stderr


def test_quiet_and_verbose_on_the_other_commands(scenario: RepoBuilder, tmp_path: Path) -> None:
    """`-q` on resolve and scan: nothing printed, the exit code answers (a file given with -o
    is still written); `-v` may follow the command too."""
    where = ["--repo", str(scenario.path), "-b", "linux-5.10.y"]
    resolved = run("resolve", scenario.ids["absent"], *where, "-q")
    assert (resolved.stdout, resolved.stderr) == ("", "") and resolved.returncode == 0
    report = tmp_path / "scan.json"
    scanned = run("scan", *where, "-q", "--format", "json", "-o", str(report))
    assert (scanned.stdout, scanned.stderr) == ("", "") and scanned.returncode == 4
    assert json.loads(report.read_text())["schema"] == 1
    verbose = run("scan", *where, "-v", "--format", "json")
    assert "backportr: scanned linux-5.10.y:" in verbose.stderr


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is missing")
@pytest.mark.parametrize("command", ["resolve", "scan"])
def test_quiet_draws_no_progress_on_a_terminal(tmp_path: Path, command: str) -> None:
    """On a terminal (a pseudo-terminal made by `script`) progress is drawn on stderr; with
    `-q` nothing is: neither results nor the progress bar."""
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "r")
    target = k.edit_fn("target", "drv_fn1", "y += 100;", trailers="Cc: stable@vger.kernel.org\n")
    args = [target] if command == "resolve" else []
    line = " ".join(
        [sys.executable, "-m", "backportr", command, *args, "--repo", str(k.b.path), "-b", BRANCH]
    )
    for quiet, shown in (("-q", False), ("", True)):
        shutil.rmtree(k.b.path / ".git" / "backportr", ignore_errors=True)  # index anew
        on_tty = subprocess.run(
            ["script", "-qec", f"{line} {quiet}", "/dev/null"], capture_output=True
        )
        assert (b"indexing upstream" in on_tty.stdout) is shown, (quiet, on_tty.stdout)
