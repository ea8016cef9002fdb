"""Fault injection against real processes: two bots at once, a kill -9 during a send, an SMTP
outage and its recovery (the real public-inbox-httpd and an aiosmtpd server that delivers
into the archive with public-inbox-mda, as a list does), and hostile HTTP servers (a drip, a
gzip bomb, HTML for Atom, a feed entry whose message is gone)."""

from __future__ import annotations

import contextlib
import email
import email.policy
import errno
import gzip
import http.server
import json
import os
import resource
import shutil
import signal
import socketserver
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2
import pytest

from backportr.errors import BackportrError
from backportr.examples.ima import ImaFixture
from backportr.mail.lore import Lore, LoreError
from backportr.output import write_atomically
from tests.inbox import Archive, free_port, needs_public_inbox, start_archive

ACTIONABLE = {
    "<2023112013-failed-b836c-5.10@gregkh>",
    "<20231212004005.1-submission@google.com>",
    "<20231213100000.3-series@google.com>",
    "<20231220-patch-1@example.org>",
}


class ListServer:
    """An SMTP server that delivers what it accepts into the archive (public-inbox-mda), as
    the list would; `hold` makes it wait before accepting the first message."""

    def __init__(self, archive: Archive, hold: threading.Event | None = None) -> None:
        from aiosmtpd.controller import Controller

        self.archive = archive
        self.accepted: list[email.message.EmailMessage] = []
        self.arrived = threading.Event()
        self.hold = hold
        outer = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
                import asyncio

                outer.arrived.set()
                if outer.hold is not None and not outer.accepted:
                    await asyncio.get_running_loop().run_in_executor(None, outer.hold.wait, 30)
                subprocess.run(
                    ["public-inbox-mda", "--no-precheck"],
                    input=envelope.content,
                    env={**outer.archive.env, "ORIGINAL_RECIPIENT": "stable@vger.kernel.org"},
                    check=True,
                    capture_output=True,
                )
                outer.accepted.append(
                    email.message_from_bytes(envelope.content, policy=email.policy.default)
                )
                return "250 OK"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def replies_to(self) -> list[str]:
        return sorted(str(m["In-Reply-To"]) for m in self.accepted)

    def stop(self) -> None:
        self.controller.stop()


def bot_args(ima: ImaFixture, archive: Archive, state: Path, smtp_port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "backportr",
        "bot",
        "--lore",
        archive.url,
        "--repo",
        str(ima.path),
        "--once",
        "--state",
        str(state),
        "--smtp",
        f"127.0.0.1:{smtp_port}",
        "--from",
        "backportr <bot@example.org>",
        "--pending-grace",
        "0",
    ]


def run_bot(
    ima: ImaFixture, archive: Archive, state: Path, smtp_port: int, *extra: str
) -> subprocess.CompletedProcess[str]:
    """One `bot --once` to the end."""
    return subprocess.run(
        [*bot_args(ima, archive, state, smtp_port), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def fresh_archive(tmp_path: Path, mails: dict[str, str]) -> Iterator[Archive]:
    pytest.importorskip("aiosmtpd.controller")
    started = start_archive(tmp_path / "public-inbox", mails)
    yield started
    started.stop()


@needs_public_inbox
def test_two_bots_at_once_answer_each_mail_once(
    ima: ImaFixture, fresh_archive: Archive, tmp_path: Path
) -> None:
    hold = threading.Event()
    server = ListServer(fresh_archive, hold)
    state = tmp_path / "bot.sqlite"
    try:
        first = subprocess.Popen(
            bot_args(ima, fresh_archive, state, server.port), stderr=subprocess.PIPE, text=True
        )
        assert server.arrived.wait(60)  # the first bot is sending: it holds the state
        second = run_bot(ima, fresh_archive, state, server.port)
        assert second.returncode == 1 and "another bot is running" in second.stderr
        assert "Traceback" not in second.stderr
        hold.set()
        assert first.wait(120) == 0, first.stderr.read() if first.stderr else ""
        again = run_bot(ima, fresh_archive, state, server.port)
        assert again.returncode == 0, again.stderr
        assert server.replies_to() == sorted(ACTIONABLE)
    finally:
        hold.set()
        server.stop()


@needs_public_inbox
def test_kill_during_a_send_then_restart_answers_each_mail_once(
    ima: ImaFixture, fresh_archive: Archive, tmp_path: Path
) -> None:
    """kill -9 while the server holds the first reply (recorded pending, never confirmed).
    The restarted bot does not find it in the archive: it is possibly sent, reported, and
    never sent again by itself; the rest are answered once. `bot --status` lists it (exit
    4) and `bot --resend MSGID` sends it, once."""
    hold = threading.Event()
    server = ListServer(fresh_archive, hold)
    state = tmp_path / "bot.sqlite"
    try:
        bot = subprocess.Popen(bot_args(ima, fresh_archive, state, server.port))
        assert server.arrived.wait(60)
        os.kill(bot.pid, signal.SIGKILL)
        bot.wait(10)
        hold.set()
        restart = run_bot(ima, fresh_archive, state, server.port)
        assert restart.returncode == 0, restart.stderr
        first = "2023112013-failed-b836c-5.10@gregkh"
        assert f"the reply to <{first}> was possibly sent; not sent again" in restart.stderr
        assert server.replies_to() == sorted(ACTIONABLE - {f"<{first}>"})
        again = run_bot(ima, fresh_archive, state, server.port)
        assert server.replies_to() == sorted(ACTIONABLE - {f"<{first}>"}), again.stderr
        status = subprocess.run(
            [*bot_args(ima, fresh_archive, state, server.port), "--status"],
            capture_output=True,
            text=True,
        )
        assert status.returncode == 4, status.stderr
        assert status.stdout.startswith(f"possibly-sent\t<{first}>\treply <")
        resend = subprocess.run(
            [*bot_args(ima, fresh_archive, state, server.port), "--resend", first],
            capture_output=True,
            text=True,
        )
        assert resend.returncode == 0, resend.stderr
        assert server.replies_to() == sorted(ACTIONABLE)
        last = run_bot(ima, fresh_archive, state, server.port)
        assert last.returncode == 0 and "possibly sent" not in last.stderr
        assert server.replies_to() == sorted(ACTIONABLE)
    finally:
        hold.set()
        server.stop()


@needs_public_inbox
def test_smtp_outage_then_recovery(ima: ImaFixture, fresh_archive: Archive, tmp_path: Path) -> None:
    state = tmp_path / "bot.sqlite"
    down = subprocess.run(
        bot_args(ima, fresh_archive, state, free_port()), capture_output=True, text=True
    )
    assert down.returncode == 1 and "cannot send through" in down.stderr
    assert "Traceback" not in down.stderr
    server = ListServer(fresh_archive)
    try:
        up = run_bot(ima, fresh_archive, state, server.port, "--quiet")
        assert (up.returncode, up.stderr) == (0, ""), up.stderr  # quiet for cron
        assert server.replies_to() == sorted(ACTIONABLE)
    finally:
        server.stop()


# -- hostile HTTP servers ---------------------------------------------------------------------


class Hostile(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(routes: dict[str, tuple[int, bytes, float]]) -> tuple[str, Hostile]:
    """path -> (status, body, seconds between bytes: a drip when > 0)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body, drip = routes.get(self.path, (404, b"not found", 0.0))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                if drip:
                    for byte in body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(drip)
                else:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = Hostile(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/inbox/", server


def test_a_dripping_server_meets_the_deadline() -> None:
    url, server = serve({"/inbox/x@y/raw": (200, b"x" * 200, 0.1)})  # 20 s to drip
    try:
        begin = time.monotonic()
        with pytest.raises(LoreError, match="no complete answer within"):
            Lore(url, timeout=1).raw("x@y")
        assert time.monotonic() - begin < 10  # the deadline, not the drip, ended it
    finally:
        server.shutdown()


def test_a_gzip_bomb_is_refused_without_inflating_it() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB of zeros in about 64 KiB
    url, server = serve({"/inbox/x@y/t.mbox.gz": (200, bomb, 0.0)})
    try:
        with pytest.raises(LoreError, match="decompresses to more than"):
            Lore(url, max_bytes=1 << 20).thread("x@y")
    finally:
        server.shutdown()


def test_html_instead_of_an_atom_feed_is_an_error(ima: ImaFixture, tmp_path: Path) -> None:
    url, server = serve({"/inbox/new.atom": (200, b"<html><body>login</body></html>", 0.0)})
    try:
        with pytest.raises(LoreError, match="not an Atom feed"):
            Lore(url).new()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "backportr",
                "bot",
                "--lore",
                url,
                "--repo",
                str(ima.path),
                "--once",
                "--dry-run",
                "--state",
                str(tmp_path / "s.sqlite"),
                "--retries",
                "0",
            ],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 1 and "not an Atom feed" in proc.stderr
        wrong = subprocess.run(
            [
                sys.executable,
                "-m",
                "backportr",
                "bot",
                "--lore",
                url + "nothing/",
                "--repo",
                str(ima.path),
                "--once",
                "--dry-run",
                "--state",
                str(tmp_path / "t.sqlite"),
                "--retries",
                "0",
            ],
            capture_output=True,
            text=True,
        )
        assert wrong.returncode == 1 and "404" in wrong.stderr
    finally:
        server.shutdown()


def test_a_feed_entry_whose_message_is_gone_is_skipped(ima: ImaFixture, tmp_path: Path) -> None:
    """A permanent 404 on one message is recorded and skipped (not an outage that stops every
    later run at that message); a link without '/' does not crash the bot."""
    feed = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">'
        '<entry><title>gone</title><link href="{url}gone@example.org/"/>'
        "<updated>x</updated></entry>"
        '<entry><title>odd</title><link href="no-slash-here"/><updated>x</updated></entry>'
        "</feed>"
    )
    routes: dict[str, tuple[int, bytes, float]] = {}
    url, server = serve(routes)
    routes["/inbox/new.atom"] = (200, feed.replace("{url}", url).encode(), 0.0)
    try:
        state = tmp_path / "s.sqlite"
        args = [
            sys.executable,
            "-m",
            "backportr",
            "bot",
            "--lore",
            url,
            "--repo",
            str(ima.path),
            "--once",
            "--dry-run",
            "--state",
            str(state),
        ]
        first = subprocess.run(args, capture_output=True, text=True)
        assert first.returncode == 0, first.stderr
        import sqlite3

        rows = dict(sqlite3.connect(state).execute("SELECT message_id, verdict FROM messages"))
        assert rows == {"gone@example.org": "missing"}
    finally:
        server.shutdown()


# -- files, the index and the scan state ------------------------------------------------------


def test_index_rebuild_works_and_recovers_a_corrupt_index(ima: ImaFixture, tmp_path: Path) -> None:
    from tests.conftest import backportr

    index = tmp_path / "index.sqlite"
    first = backportr("index", "--repo", str(ima.path), "--index", str(index))
    assert first.returncode == 0, first.stderr
    rebuilt = backportr("index", "--repo", str(ima.path), "--index", str(index), "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr  # was exit 3: no transaction is active
    from backportr.examples.ima import B836C

    status = backportr(
        "status", ima.ids[B836C], "--repo", str(ima.path), "--index", str(index), "-b", "v5.10.194"
    )
    assert status.returncode == 0, status.stderr
    index.write_bytes(b"this is not a database" * 100)
    broken = backportr("index", "--repo", str(ima.path), "--index", str(index))
    assert broken.returncode == 1 and "--rebuild" in broken.stderr
    recovered = backportr("index", "--repo", str(ima.path), "--index", str(index), "--rebuild")
    assert recovered.returncode == 0, recovered.stderr
    assert list(tmp_path.glob("index.sqlite.corrupt-*"))  # kept aside, not deleted


def test_dev_stdout_redirected_to_a_file_is_written_through(
    ima: ImaFixture, tmp_path: Path
) -> None:
    """`-o /dev/stdout > report.json`: /dev/stdout then resolves to a regular file; it is
    written through, never replaced (as root, a replace would swap the /dev/stdout link for a
    file). A report file that is a symlink keeps its link; the file it names is replaced."""
    from backportr.examples.ima import B836C
    from tests.conftest import backportr

    args = ("resolve", ima.ids[B836C], "--repo", str(ima.path), "-b", "v5.10.194", "-f", "json")
    report = tmp_path / "report.json"
    with open(report, "w") as handle:
        proc = subprocess.run(
            [sys.executable, "-m", "backportr", *args, "-o", "/dev/stdout"],
            stdout=handle,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert proc.returncode == 0, proc.stderr
    assert Path("/dev/stdout").is_symlink() or not Path("/dev/stdout").is_file()
    assert json.loads(report.read_text())["schema"] == 1
    real = tmp_path / "reports" / "today.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    linked = backportr(*args, "-o", str(link))
    assert linked.returncode == 0, linked.stderr
    assert link.is_symlink() and json.loads(real.read_text())["schema"] == 1


def test_output_to_special_files_and_directories(ima: ImaFixture, tmp_path: Path) -> None:
    from backportr.examples.ima import B836C
    from tests.conftest import backportr

    target = ima.ids[B836C]
    args = ("resolve", target, "--repo", str(ima.path), "-b", "v5.10.194", "-f", "json")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    proc = backportr(*args, "-o", str(fifo))
    if proc.returncode != 0:
        reader.kill()
    out, _ = reader.communicate(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert fifo.is_fifo() and '"schema"' in out  # written through, not replaced
    stdout = backportr(*args, "-o", "/dev/stdout", process=True)  # the real fd 1
    assert stdout.returncode == 0 and '"schema"' in stdout.stdout
    directory = backportr(*args, "-o", str(tmp_path))
    assert directory.returncode == 1 and "is a directory" in directory.stderr
    # A mistyped path makes no tree of directories: one level is made, no more.
    missing = tmp_path / "nonexistent" / "dir" / "x.json"
    typo = backportr(*args, "-o", str(missing))
    assert typo.returncode == 1 and "no such directory" in typo.stderr
    assert not (tmp_path / "nonexistent").exists()
    one_level = backportr(*args, "-o", str(tmp_path / "new" / "x.json"))
    assert one_level.returncode == 0 and (tmp_path / "new" / "x.json").is_file()
    if Path("/dev/full").exists():
        full = backportr(*args, "-o", "/dev/full")
        assert full.returncode == 1 and "No space left" in full.stderr
        assert Path("/dev/full").is_char_device()
    if Path("/proc/self").is_dir():  # a directory no file can be made in
        unwritable = backportr(*args, "-o", "/proc/backportr-x.json")
        assert unwritable.returncode == 1, unwritable.stderr
        assert unwritable.stderr.startswith("backportr: error: cannot write /proc/backportr-x.json")
        assert ".tmp" not in unwritable.stderr and len(unwritable.stderr.splitlines()) == 1


def test_a_report_that_fails_midway_names_its_file_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk that fills while a report is written: one line naming the report (not the
    temporary file beside it), the earlier report as it was, no temporary file left."""
    report = tmp_path / "report.json"
    report.write_text("the earlier report\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(BackportrError, match=r"no space left to write .*report\.json; nothing"):
        write_atomically(report, "the new report\n")
    assert report.read_text() == "the earlier report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_new_only_state_waits_for_the_report(tmp_path: Path) -> None:
    """A report that cannot be written leaves the findings unreported: the next run says them."""
    from tests.conftest import backportr
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("missing", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    state = tmp_path / "state.sqlite"
    args = ("scan", "--repo", str(k.b.path), "-b", BRANCH, "--state", str(state), "--new-only")
    failed = backportr(*args, "-o", str(tmp_path))  # a directory: the report cannot be written
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    if Path("/dev/full").exists():
        full = backportr(*args, "-o", "/dev/full")
        assert full.returncode == 1
    second = backportr(*args, "--format", "json")
    assert second.returncode == 4 and k.b.ids["missing"] in second.stdout
    third = backportr(*args, "--format", "json")
    assert third.returncode == 0
    assert [f for b in json.loads(third.stdout)["branches"] for f in b["findings"]] == []


def test_stray_refs_bad_policy_files_and_absurd_jobs(tmp_path: Path) -> None:
    """A dangling ref matching the branch pattern is skipped with a warning (it broke every
    command); a tag naming a blob as --branch, a policy file that is not UTF-8: one line,
    exit 1; --jobs beyond the work or the cores is bounded."""
    from tests.conftest import backportr
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("missing", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    repo = str(k.b.path)
    subprocess.run(
        ["git", "-C", repo, "symbolic-ref", "refs/heads/linux-9.9.y", "refs/heads/nothing"],
        check=True,
    )
    blob = subprocess.run(
        ["git", "-C", repo, "hash-object", "-w", "--stdin"],
        input="x\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    subprocess.run(["git", "-C", repo, "tag", "blobtag", blob], check=True)

    status = backportr("status", k.b.ids["missing"], "--repo", repo)
    assert status.returncode == 0, status.stderr
    assert "warning: skipped a branch: refs/heads/linux-9.9.y" in status.stderr
    assert status.stderr.count("skipped a branch") == 1 and BRANCH in status.stdout
    tag = backportr("status", k.b.ids["missing"], "--repo", repo, "-b", "blobtag")
    assert tag.returncode == 1 and "does not name a commit" in tag.stderr
    assert "Traceback" not in tag.stderr + status.stderr
    bad = tmp_path / "ignore"
    bad.write_bytes(b"fs/\xff\xfe*\n")
    policy = backportr("scan", "--repo", repo, "-b", BRANCH, "--ignore", str(bad))
    assert policy.returncode == 1 and "not UTF-8" in policy.stderr
    many = backportr("scan", "--repo", repo, "-b", BRANCH, "--jobs", "1000", "-f", "json")
    assert many.returncode == 4, many.stderr
    assert k.b.ids["missing"] in many.stdout


def test_no_reply_for_a_skipped_mail(ima: ImaFixture, tmp_path: Path) -> None:
    from tests.conftest import backportr

    note = tmp_path / "note.eml"
    note.write_text(
        "From: Dev <dev@example.org>\nTo: stable@vger.kernel.org\nSubject: a question\n"
        "Message-ID: <q-1@example.org>\n\nIs 5.10 still maintained?\n"
    )
    proc = backportr("mail", "check", str(note), "--repo", str(ima.path), "--format", "reply")
    assert proc.returncode == 0 and proc.stdout == ""  # no reply, no Cc: stable
    assert "no reply: skipped" in proc.stderr


def test_a_missing_object_is_exit_1(tmp_path: Path) -> None:
    """A repository that lacks an object one of its commits needs (a damaged clone)."""
    from tests.conftest import backportr
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("missing", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    tree = subprocess.run(
        ["git", "-C", str(k.b.path), "rev-parse", f"{k.b.ids['missing']}:drivers/drv.c"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    loose = k.b.path / ".git" / "objects" / tree[:2] / tree[2:]
    loose.unlink()  # the builder writes loose objects: remove one blob
    proc = backportr("resolve", k.b.ids["missing"], "--repo", str(k.b.path), "-b", BRANCH)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert tree in proc.stderr, proc.stderr  # it names the object


def test_an_object_libgit2_cannot_find_is_a_missing_object_never_a_guess(
    tmp_path: Path,
) -> None:
    """A blob the trial reads through libgit2 is gone: `MissingObjectError` naming it and
    what needed it (the boundary took any `KeyError` whose text looked like an id for one,
    and any other for a bug)."""
    from backportr.errors import MissingObjectError
    from backportr.git.repo import Repo
    from backportr.git.trial import TreeState, TrialApplier
    from tests.resolve_scenarios import Kernel

    k = Kernel(tmp_path / "repo")
    tip = k.edit_fn("change", "drv_fn2", "y += 2;")
    repo = Repo(k.b.path)
    blob = str(repo.git[tip].peel(pygit2.Commit).tree["drivers/drv.c"].id)
    (k.b.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(MissingObjectError) as missing:
        TrialApplier(Repo(k.b.path)).file_text(TreeState(tip), "drivers/drv.c")
    assert missing.value.oid == blob and "drivers/drv.c" in missing.value.needed_by
    assert blob in str(missing.value)


# -- read-only and full filesystems -----------------------------------------------------------


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make one file unwritable for this process: `chattr +i` as root (root ignores file
    modes), mode 0444 otherwise; skip where neither can be arranged."""
    if os.geteuid() == 0:
        made = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if made.returncode != 0:
            pytest.skip(f"cannot make a file read-only as root here: {made.stderr!r}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(mode)


@needs_public_inbox
def test_read_only_state_sends_nothing_and_is_exit_1(
    ima: ImaFixture, fresh_archive: Archive, tmp_path: Path
) -> None:
    """The reply is recorded before it is sent: a state that cannot be written stops the bot
    before any mail leaves (it sent, crashed with exit 3, and sent again on every run)."""
    state = tmp_path / "bot.sqlite"
    down = run_bot(ima, fresh_archive, state, free_port())  # creates the state, sends nothing
    assert down.returncode == 1 and state.exists(), down.stderr
    server = ListServer(fresh_archive)
    try:
        with read_only(state):
            for _ in range(2):
                stuck = run_bot(ima, fresh_archive, state, server.port)
                assert stuck.returncode == 1, stuck.stderr
                assert len(stuck.stderr.strip().splitlines()) == 1, stuck.stderr
                assert "Traceback" not in stuck.stderr and "internal error" not in stuck.stderr
                assert server.accepted == []
        up = run_bot(ima, fresh_archive, state, server.port)
        assert up.returncode == 0, up.stderr
        assert server.replies_to() == sorted(ACTIONABLE)
    finally:
        server.stop()


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:  # in the child: writes past `limit` bytes fail as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_full_disk_while_indexing_is_exit_1_and_keeps_the_index(tmp_path: Path) -> None:
    """The index outgrows the space left (a file size limit stands for a full disk), when
    created and when updated: exit 1 naming the cause, never "cannot rollback" nor "run
    --rebuild"; an update leaves the index as it was, and a later run with room completes
    it."""
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    index = tmp_path / "index.sqlite"
    args = [sys.executable, "-m", "backportr", "index", "--repo", str(k.b.path)]
    args += ["--index", str(index), "-b", BRANCH]

    def index_with(limit: int | None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args,
            capture_output=True,
            text=True,
            preexec_fn=None if limit is None else _file_size_limit(limit),
            timeout=300,
        )

    def assert_full(proc: subprocess.CompletedProcess[str]) -> None:
        assert proc.returncode == 1, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "disk full?" in proc.stderr, proc.stderr
        assert "rollback" not in proc.stderr and "--rebuild" not in proc.stderr

    assert_full(index_with(16 * 1024))  # creating it
    assert index_with(None).returncode == 0
    before = sqlite3.connect(index).execute("SELECT COUNT(*) FROM commits").fetchone()[0]
    for number in range(400):  # a busy upstream day (long subjects: rows past the room left)
        subject = f"drv: work {number} " + "on a long subject line " * 8
        k.edit_fn(f"work{number}", f"drv_fn{number % 8}", f"y += {number + 200};", subject=subject)
    room = max(f.stat().st_size for f in tmp_path.glob("index.sqlite*")) + 4096
    assert_full(index_with(room))  # updating it
    kept = sqlite3.connect(index).execute("SELECT COUNT(*) FROM commits").fetchone()[0]
    assert kept == before  # the old index, whole
    done = index_with(None)
    assert done.returncode == 0, done.stderr
    assert sqlite3.connect(index).execute("SELECT COUNT(*) FROM commits").fetchone()[0] == (
        before + 400
    )


def test_a_scan_beside_index_rebuilds_sees_the_old_index_or_the_new(tmp_path: Path) -> None:
    """Rebuilds drop and refill the index in one transaction: a scan running beside them
    reports every finding, every time (it reported 40 of 45 with exit 4 and no error)."""
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo", functions=24)
    k.edit_fn("culprit", "drv_fn0", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    for number in range(1, 24):
        k.edit_fn(f"fix{number}", f"drv_fn{number}", f"y += {number};", trailers=k.fixes("culprit"))
    base = [sys.executable, "-m", "backportr"]
    where = ["--repo", str(k.b.path), "--index", str(tmp_path / "index.sqlite")]
    scan = [*base, "scan", *where, "-b", BRANCH, "--format", "json"]

    def found() -> set[str]:
        proc = subprocess.run(scan, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 4, proc.stderr
        return {f["commit"] for b in json.loads(proc.stdout)["branches"] for f in b["findings"]}

    expected = found()
    assert len(expected) == 23
    stop = threading.Event()
    failures: list[str] = []

    def rebuild() -> None:
        while not stop.is_set():
            proc = subprocess.run(
                [*base, "index", *where, "-b", BRANCH, "--rebuild"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            if proc.returncode != 0:
                failures.append(proc.stderr)

    rebuilder = threading.Thread(target=rebuild)
    rebuilder.start()
    try:
        for _ in range(4):
            assert found() == expected
    finally:
        stop.set()
        rebuilder.join(300)
    assert failures == []


def test_a_repository_owned_by_another_user_is_exit_1(tmp_path: Path) -> None:
    """git's safe.directory check (a service user over the maintainer's clone): one line that
    says what to do, not an internal error."""
    from tests.resolve_scenarios import BRANCH, Kernel

    if os.geteuid() != 0:
        pytest.skip("giving a repository to another user needs root")
    k = Kernel(tmp_path / "repo")
    k.edit_fn("fix", "drv_fn1", "y += 1;")
    made = subprocess.run(["chown", "-R", "nobody", str(k.b.path)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot chown here: {made.stderr!r}")
    where = ["--repo", str(k.b.path), "-b", BRANCH, "--index", str(tmp_path / "index.sqlite")]
    proc = subprocess.run(
        [sys.executable, "-m", "backportr", "resolve", k.b.ids["fix"], *where],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HOME": str(tmp_path)},  # no safe.directory of the user's
    )
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "safe.directory" in proc.stderr


def test_messages_say_what_is_wrong(tmp_path: Path) -> None:
    """A pattern that matches no branch says so (it said "give at least one --branch"); a valid
    index that cannot be written is not called unreadable or damaged."""
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    k.edit_fn("fix", "drv_fn1", "y += 1;")
    base = [sys.executable, "-m", "backportr"]
    index = tmp_path / "index.sqlite"
    where = ["--repo", str(k.b.path), "--index", str(index)]
    nothing = subprocess.run(
        [*base, "status", k.b.ids["fix"], *where, "--branch-pattern", "linux-9.*"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert nothing.returncode == 2, nothing.stderr
    assert "no branch matches 'linux-9.*'" in nothing.stderr
    built = subprocess.run([*base, "index", *where, "-b", BRANCH], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    k.edit_fn("more", "drv_fn2", "y += 2;")  # the next run must write to the index
    with read_only(index):
        stuck = subprocess.run(
            [*base, "status", k.b.ids["more"], *where, "-b", BRANCH],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert stuck.returncode == 1, stuck.stderr
    assert "cannot be written" in stuck.stderr and "writable" in stuck.stderr
    assert "unreadable" not in stuck.stderr and "--rebuild" not in stuck.stderr


def test_index_pages_damaged_after_the_header_is_exit_1(tmp_path: Path) -> None:
    """The header and schema read fine, the pages a query needs do not: one line, exit 1."""
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    for number in range(60):
        k.edit_fn(f"work{number}", f"drv_fn{number % 8}", f"y += {number + 2};")
    base = [sys.executable, "-m", "backportr"]
    index = tmp_path / "index.sqlite"
    where = ["--repo", str(k.b.path), "--index", str(index), "-b", BRANCH]
    assert subprocess.run([*base, "index", *where], capture_output=True).returncode == 0
    with sqlite3.connect(index) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(index.read_bytes())
    page = 4096
    for start in range(2 * page, len(data), page):  # every page after the schema's
        data[start + 8 : start + page] = bytes([0xA5]) * (page - 8)
    index.write_bytes(bytes(data))
    proc = subprocess.run(
        [*base, "status", k.b.ids["work30"], *where], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_polling_bot_reads_the_branches_again(tmp_path: Path) -> None:
    """Between polls the repository moves (a stable release, upstream work): the next poll
    answers against the new tips, with the index brought up to date."""
    from backportr.mail.bot import Bot, BotSettings, BotState
    from backportr.resolve.workspace import open_workspace
    from backportr.settings import Settings
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    empty = b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"></feed>'
    url, server = serve({"/inbox/new.atom": (200, empty, 0.0)})
    settings = Settings(repo=k.b.path, branches=(BRANCH,), index_path=tmp_path / "i.sqlite")
    seen: list[tuple[str, str, bool]] = []

    def between_polls(seconds: float) -> None:  # the night's work lands, once
        if "upstream-work" not in k.b.ids:
            k.edit_fn("upstream-work", "drv_fn1", "y += 11;")
            k.b.cherry_pick("upstream-work", BRANCH, name="release")

    state = BotState(tmp_path / "bot.sqlite")
    bot = Bot(
        open_workspace(settings),
        Lore(url),
        state,
        BotSettings(dry_run=True),
        sleep=between_polls,
        reopen=lambda: open_workspace(settings),
    )
    original_run_once = bot.run_once

    def run_once():  # type: ignore[no-untyped-def]
        branch = next(b for b in bot.ws.branches if b.name == BRANCH)
        indexed = bot.ws.index.reader.info(k.b.ids["upstream-work"]) is not None if seen else False
        seen.append((bot.ws.upstream.tip, branch.tip, indexed))
        return original_run_once()

    bot.run_once = run_once  # type: ignore[method-assign]
    try:
        bot.run(0.5, rounds=2)
    finally:
        bot.ws.close()
        state.close()
        server.shutdown()
    (first_up, first_branch, _), (second_up, second_branch, indexed) = seen
    assert second_up == k.b.ids["upstream-work"] != first_up
    assert second_branch == k.b.ids["release"] != first_branch
    assert indexed


def test_a_scan_goes_on_past_a_target_it_cannot_read(tmp_path: Path) -> None:
    """One target whose objects are missing is an error of that target: the scan reports
    the others, lists the error, and exits 1 (it stopped the whole scan before)."""
    from tests.resolve_scenarios import BRANCH, Kernel

    k = Kernel(tmp_path / "repo")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("readable", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    k.edit_fn("damaged", "core_fn3", "y += 3;", path="fs/core.c", trailers=k.fixes("culprit"))
    blob = subprocess.run(
        ["git", "-C", str(k.b.path), "rev-parse", f"{k.b.ids['damaged']}:fs/core.c"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (k.b.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "backportr", "scan", "--repo", str(k.b.path), "-b", BRANCH,
         "--format", "json", "--index", str(tmp_path / "index.sqlite")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    data = json.loads(proc.stdout)
    found = {f["commit"] for b in data["branches"] for f in b["findings"]}
    assert k.b.ids["readable"] in found and k.b.ids["damaged"] not in found
    assert any(k.b.ids["damaged"][:12] in e for b in data["branches"] for e in b["errors"])


@pytest.mark.parametrize("kind", ["commit", "tree", "blob"])
def test_an_object_the_answer_needs_is_missing_and_no_answer_is_printed(
    tmp_path: Path, kind: str
) -> None:
    """The IMA target on linux-5.10.y, whose answer needs a1175d6b1bda ("vfs: plumb i_version
    handling into struct kstat"), with that commit, its tree or a blob it writes gone from
    the object database (a damaged copy, a partial clone offline): the question cannot be
    answered, so none is printed: one line naming what git cannot read, exit 1 (the whole
    repository answers `incomplete`, exit 4; without the mend it said "already present",
    exit 0)."""
    from backportr.examples.ima import A1175, B836C, build
    from tests.conftest import backportr

    fixture = build(tmp_path / "linux")
    commit = fixture.ids[A1175]
    git_dir = fixture.path / ".git"
    spec = {
        "commit": commit,
        "tree": f"{commit}^{{tree}}",
        "blob": f"{commit}:include/linux/stat.h",
    }
    oid = subprocess.run(
        ["git", "-C", str(fixture.path), "rev-parse", spec[kind]],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (git_dir / "objects" / oid[:2] / oid[2:]).unlink()  # the builder writes loose objects
    shutil.rmtree(git_dir / "backportr", ignore_errors=True)
    proc = backportr(
        "resolve", fixture.ids[B836C], "--repo", str(fixture.path), "-b", "linux-5.10.y"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_feed_entry_whose_link_names_no_message_is_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An Atom entry whose link is not `<inbox>/<message-id>/` (no `/`, no `@`) cannot be
    fetched: it is skipped with a warning naming it, not dropped without a word."""
    feed = (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">'
        b'<entry><title>odd</title><link href="no-slash-here"/></entry>'
        b'<entry><title>good</title><link href="{url}1@example.org/"/></entry></feed>'
    )
    url, server = serve({"/inbox/new.atom": (200, feed, 0.0)})
    server_feed = feed.replace(b"{url}", url.encode())
    server.shutdown()
    url, server = serve({"/inbox/new.atom": (200, server_feed, 0.0)})
    try:
        with caplog.at_level("WARNING", logger="backportr"):
            entries = Lore(url).new()
        assert [e.message_id for e in entries] == ["1@example.org"]
        assert "link names no message ('no-slash-here'): skipped" in caplog.text
    finally:
        server.shutdown()


def test_a_thread_past_the_size_cap_is_no_answer(
    ima: ImaFixture, mails: dict[str, str], tmp_path: Path
) -> None:
    """The last part of a series is answered from its whole thread; a thread that is a
    gzip bomb cannot be read: the bot says so (exit 1) and records nothing, where it used to
    answer from the part alone and record "no upstream commit found"."""
    import sqlite3

    message_id = "20231213100000.3-series@google.com"
    routes: dict[str, tuple[int, bytes, float]] = {}
    url, server = serve(routes)
    feed = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        f'<title>part 3</title><link href="{url}{message_id}/"/><updated>x</updated>'
        "</entry></feed>"
    )
    routes["/inbox/new.atom"] = (200, feed.encode(), 0.0)
    routes[f"/inbox/{message_id}/raw"] = (200, mails["series-3"].encode(), 0.0)
    routes[f"/inbox/{message_id}/t.mbox.gz"] = (200, gzip.compress(b"\0" * (300 << 20)), 0.0)
    try:
        state = tmp_path / "s.sqlite"
        args = [sys.executable, "-m", "backportr", "bot", "--lore", url, "--repo", str(ima.path),
                "--once", "--dry-run", "--state", str(state), "--retries", "0"]  # fmt: skip
        proc = subprocess.run(args, capture_output=True, text=True)
        assert proc.returncode == 1, proc.stderr
        assert "decompresses to more than" in proc.stderr
        rows = dict(sqlite3.connect(state).execute("SELECT message_id, verdict FROM messages"))
        assert message_id not in rows
    finally:
        server.shutdown()


def test_status_scan_and_the_index_say_which_object_git_cannot_read(tmp_path: Path) -> None:
    """A commit of upstream's history gone: `status`, `scan` and `index` each stop with one
    line that says git cannot read an object (exit 1), none answers."""
    from backportr.examples.ima import A1175, B836C, build
    from tests.conftest import backportr

    fixture = build(tmp_path / "linux")
    oid = fixture.ids[A1175]
    (fixture.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    repo = str(fixture.path)
    for args in (
        ("status", fixture.ids[B836C], "-b", "linux-5.10.y"),
        ("scan", "-b", "linux-5.10.y"),
        ("index", "--rebuild"),
    ):
        proc = backportr(*args, "--repo", repo)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert proc.stdout == "" and "cannot read an object" in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@contextlib.contextmanager
def _immutable(directory: Path) -> Iterator[None]:
    """`directory` and its files made immutable (chattr +i): nothing can be created in it or
    written to it, even by root, as on a read-only file system; undone after."""
    paths = [directory, *directory.iterdir()]
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True)
    if done.returncode != 0:
        subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True)
        pytest.skip(f"chattr +i is not possible here: {done.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=True)


def test_a_read_only_index_is_read_as_it_is(tmp_path: Path) -> None:
    """Where nothing can be written (a read-only file system), `status`, `resolve` and `scan`
    answer from the index as it is, the same answers as a writable copy gives; an index
    behind a ref it is asked about is one line and exit 1, never a guess."""
    from tests.conftest import backportr

    for name in ("ro", "rw"):
        built = backportr("demo", "--keep", str(tmp_path / name), process=True)
        assert built.returncode == 0, built.stderr
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    branches = ("-b", "linux-5.10.y", "-b", "v5.10.194")
    assert backportr("index", "--repo", str(ro), *branches).returncode == 0
    target = "30b49e2"
    asks = [  # and the exit status each answers with
        (0, ("status", target, *branches)),
        (4, ("resolve", target, *branches, "-f", "json")),
        (0, ("resolve", target, "-b", "v5.10.194", "-f", "mbox")),
        (4, ("scan", "-b", "linux-5.10.y", "-f", "json")),
    ]
    with _immutable(ro / ".git" / "backportr"):
        for code, ask in asks:
            mine = backportr(*ask, "--repo", str(ro))
            theirs = backportr(*ask, "--repo", str(rw))
            assert mine.returncode == theirs.returncode, mine.stderr
            assert mine.returncode == code and "error" not in mine.stderr, mine.stderr
            if ask[0] == "scan":
                one, two = json.loads(mine.stdout), json.loads(theirs.stdout)
                assert one["branches"][0]["findings"] == two["branches"][0]["findings"]
            elif ask[-1] == "mbox":  # the same mails but for their Message-IDs' stamps
                assert mine.stdout.count("\nSubject: ") == theirs.stdout.count("\nSubject: ") == 4
            else:
                assert mine.stdout == theirs.stdout.replace(str(rw), str(ro))
        subprocess.run(["git", "-C", str(ro), "branch", "-f", "moved", "master~1"], check=True)
        behind = backportr("status", target, "-b", "moved", "--repo", str(ro))
        assert behind.returncode == 1 and len(behind.stderr.strip().splitlines()) == 1
        assert "is behind moved" in behind.stderr and "read-only" in behind.stderr


class DroppingServer:
    """An SMTP server that takes a message's data whole and then fails: `mode` "drop"
    closes the connection before answering, "error" answers 451."""

    def __init__(self, mode: str) -> None:
        from aiosmtpd.controller import Controller

        self.received: list[bytes] = []
        outer = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
                outer.received.append(envelope.content)
                if mode == "drop":
                    server.transport.close()
                return "451 4.3.0 local error after the data"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()


@needs_public_inbox
@pytest.mark.parametrize("mode", ["drop", "error"])
def test_a_send_that_fails_after_data_is_never_repeated(
    ima: ImaFixture, fresh_archive: Archive, tmp_path: Path, mode: str
) -> None:
    """The server took the data, then dropped the connection or answered an error: the
    reply is possibly sent. The run ends with exit 1 and says so; the next runs, with a
    working server, answer the other mails and never send that reply again."""
    state = tmp_path / "bot.sqlite"
    failing = DroppingServer(mode)
    try:
        first = run_bot(ima, fresh_archive, state, failing.port)
    finally:
        failing.stop()
    assert first.returncode == 1, first.stderr
    assert "may have been sent" in first.stderr and "Traceback" not in first.stderr
    assert len(failing.received) == 1
    taken = email.message_from_bytes(failing.received[0], policy=email.policy.default)
    server = ListServer(fresh_archive)
    try:
        for _ in range(2):
            later = run_bot(ima, fresh_archive, state, server.port)
            assert later.returncode == 0, later.stderr
            assert "possibly sent" in later.stderr
        assert str(taken["In-Reply-To"]) not in server.replies_to()
        assert server.replies_to() == sorted(ACTIONABLE - {str(taken["In-Reply-To"])})
    finally:
        server.stop()


@needs_public_inbox
def test_a_mail_dressed_as_the_bots_own_is_answered(
    ima: ImaFixture, mails: dict[str, str], tmp_path: Path
) -> None:
    """A list mail whose Message-ID carries the bot's `.backportr@` part and whose From: is
    the bot's address is still someone else's: the bot knows its own replies by the
    Message-IDs it recorded, so it answers this one (and anyone can no longer silence it)."""
    forged = (
        mails["patch"]
        .replace("From: Dev <dev@example.org>", "From: backportr <bot@example.org>")
        .replace("<20231220-patch-1@example.org>", "<1703239200.1.1.backportr@example.org>")
    )
    archive = start_archive(tmp_path / "inbox", {"forged": forged})
    server = ListServer(archive)
    try:
        ran = run_bot(ima, archive, tmp_path / "bot.sqlite", server.port)
        assert ran.returncode == 0, ran.stderr
        assert server.replies_to() == ["<1703239200.1.1.backportr@example.org>"]
        again = run_bot(ima, archive, tmp_path / "bot.sqlite", server.port)  # its own reply
        assert again.returncode == 0, again.stderr
        assert server.replies_to() == ["<1703239200.1.1.backportr@example.org>"]
    finally:
        server.stop()
        archive.stop()
