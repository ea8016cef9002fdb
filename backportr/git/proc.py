"""git processes: their environment, a reader that keeps ahead of a streaming one, the
`git log -p | git patch-id` pipeline, the user's git configuration and credential helpers.

Part of the git layer (`backportr/git/`): nothing else runs git.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import tempfile
import threading
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from backportr.errors import BackportrError, MissingObjectError
from backportr.infra import process
from backportr.model import Oid

if TYPE_CHECKING:
    import pygit2


class GitHandle(Protocol):
    """What a collaborator of `Repo` uses of it: the repository's handle and path, its git
    processes, its commits. (A protocol, so that the collaborators need not import the
    `Repo` that is made of them.)"""

    git: pygit2.Repository
    path: Path

    def run_git(
        self,
        *args: str,
        check: bool = True,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> str: ...

    def run_git_bytes(
        self,
        *args: str,
        check: bool = True,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> bytes: ...

    def commit(self, oid: Oid) -> pygit2.Commit: ...


class GitAccess:
    """A collaborator of `Repo` (its names, streams, searches, diffs), owning its own state;
    it runs git and reads commits through the `Repo` that owns it (`self.repo`)."""

    def __init__(self, repo: GitHandle) -> None:
        self.repo = repo
        self.git: pygit2.Repository = repo.git
        self.path: Path = repo.path


def git_env(*, answers_each_line: bool = False) -> dict[str, str]:
    """The environment of a git process. git flushes its output after every commit when it
    writes to a pipe; a process read to its end is told not to (`GIT_FLUSH=0`): a full
    history's log is a write and a read per commit otherwise, a third of a second of system
    time on 45,000 commits. A process asked one question at a time (`answers_each_line`)
    is told to flush, whatever the user's environment says. glibc's allocator is set as
    git's diffs need it (`_GIT_MALLOC`), unless the user set it. No program a repository's
    configuration names runs (`_read_only_config`)."""
    env = dict(os.environ)
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    env["LC_ALL"] = "C"
    env["GIT_FLUSH"] = "1" if answers_each_line else "0"
    for key, value in _GIT_MALLOC:
        env.setdefault(key, value)
    env.update(_read_only_config(env))
    return env


# backportr is a read-only analysis: its git processes run no program that a repository's
# configuration names, and answer as a fresh clone would. They see no work tree (an empty
# directory stands for it: no `.gitattributes` of a checkout, no fsmonitor hook, no clean
# or smudge filter), diffs are read with `--no-textconv --no-ext-diff`, and every merge
# driver a configuration defines is replaced by git's own file merge (`merge-file`), which
# is what git does for an attribute that names no driver.
_MERGE_FILE = "git merge-file --marker-size=%L %A %O %B"
_DRIVER = re.compile(r"^merge\.(.+)\.driver$")
_neutral_keys: dict[str, str] = {"core.fsmonitor": "false"}
_empty_tree_dir: list[str] = []


def neutralise_programs(config: list[tuple[str, str, str]]) -> None:
    """Replace, in every later git process, the merge drivers `config` (a repository's
    `config_list`) defines."""
    for key, _value, _origin in config:
        if _DRIVER.match(key):
            _neutral_keys[key] = _MERGE_FILE


def _read_only_config(env: dict[str, str]) -> dict[str, str]:
    """`GIT_CONFIG_COUNT` entries after the user's own, and the empty work tree."""
    if not _empty_tree_dir or not os.path.isdir(_empty_tree_dir[0]):  # (a bot runs for weeks:
        # a cleaner of /tmp may have taken it)
        from backportr.infra.scratch import owned_scratch_dir

        _empty_tree_dir[:] = [str(owned_scratch_dir("backportr-no-worktree-"))]  # removed at exit
    try:
        start = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    out = {
        "GIT_WORK_TREE": _empty_tree_dir[0],
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",  # the objects as they are, as libgit2 reads them
    }
    for number, (key, value) in enumerate(_neutral_keys.items(), start):
        out[f"GIT_CONFIG_KEY_{number}"] = key
        out[f"GIT_CONFIG_VALUE_{number}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(_neutral_keys))
    return out


# A diff of two versions of a 600 KB file allocates and frees buffers past glibc's mmap
# threshold: each a fresh mapping whose pages fault in and are returned at once. A higher
# threshold and a padded, rarely trimmed heap keep them: FRR's branch patch-ids took 0.28 s
# of system time, now 0.07 s. Other C libraries ignore these.
_GIT_MALLOC = (
    ("MALLOC_MMAP_THRESHOLD_", str(64 << 20)),
    ("MALLOC_TRIM_THRESHOLD_", str(256 << 20)),
    ("MALLOC_TOP_PAD_", str(64 << 20)),
)


def read_ahead(
    stream: IO[bytes], chunk: int = 1 << 20, depth: int = 16
) -> Generator[bytes, None, None]:
    """The stream's chunks, read by a thread that keeps up to `depth` of them ahead: the
    writer (git) never waits while the caller parses, and memory stays bounded."""
    chunks: queue.Queue[bytes | BaseException] = queue.Queue(maxsize=depth)
    done = threading.Event()

    def pump() -> None:
        try:
            while not done.is_set():
                data = stream.read(chunk)
                chunks.put(data)
                if not data:
                    return
        except BaseException as error:  # handed to the reader, which raises it
            chunks.put(error)

    thread = threading.Thread(target=pump, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = chunks.get()
            if isinstance(item, BaseException):
                raise item
            if not item:
                return
            yield item
    finally:
        done.set()
        while thread.is_alive():  # a reader that stopped early: let the pump finish
            with contextlib.suppress(queue.Empty):
                chunks.get_nowait()
            thread.join(0.01)


_STDERR_READ = 64 * 1024  # of a failed git's stderr, read for its cause
MISSING_OBJECT = re.compile(
    r"unable to read|missing (?:blob|tree|commit|object)|bad object|could not read object"
    r"|[Ff]ailed to traverse parents|unable to parse commit"
)


def stderr_tail(errors: IO[bytes]) -> list[str]:
    """The last lines a failed git wrote to its stderr file (at most `_STDERR_READ` bytes)."""
    errors.seek(max(0, errors.seek(0, os.SEEK_END) - _STDERR_READ))
    return errors.read().decode("utf-8", "replace").splitlines()


def read_object(git: pygit2.Repository, oid: str | pygit2.Oid, needed_by: str) -> pygit2.Object:
    """The object `oid` of `git`, which `needed_by` needs; `MissingObjectError` when the
    repository lacks it (libgit2 says so with a `KeyError`, which the boundary never has
    to interpret)."""
    try:
        return git[oid]
    except KeyError:
        raise MissingObjectError.lacking(str(oid), needed_by) from None


def missing_object(what: str, said: list[str]) -> MissingObjectError | None:
    """The error for a git process (`what`) that stopped at an object it cannot read, when
    a line it said (`said`) says so: no answer may be given from what it did not read."""
    cause = next((ln.strip() for ln in reversed(said) if MISSING_OBJECT.search(ln)), None)
    if cause is None:
        return None
    return MissingObjectError(
        f"{what} cannot read an object the answer needs ({cause}); fetch the repository's "
        "missing objects (a damaged or partial copy)"
    )


def patch_id_pipeline(
    log_args: list[str], feed: bytes | None, where: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[Oid, str]]:
    """`git log -p ... | git patch-id --stable`, streamed; `feed` (the commits for
    `--stdin`) is written from a thread so neither process can block the other. A failure
    names git's own last word; `MissingObjectError` when git could not read an object."""
    with (
        tempfile.TemporaryFile() as errors,
        process.started(
            log_args,
            stdin=subprocess.PIPE if feed is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            env={**git_env(), **(env or {})},
        ) as log,
        process.started(
            ["git", "patch-id", "--stable"],
            stdin=log.stdout,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_env(),
        ) as patch_id,
    ):
        assert log.stdout is not None and patch_id.stdout is not None
        log.stdout.close()
        writer = None
        if feed is not None:
            assert log.stdin is not None
            writer = feed_in_background(log.stdin, feed)
        for line in patch_id.stdout:
            value, commit = line.decode("ascii").split()
            yield Oid(commit), value
        if writer is not None:
            writer.join()
        if log.wait() == 0 and patch_id.wait() == 0:
            return
        said = stderr_tail(errors)
    cause = next((ln.strip() for ln in reversed(said) if ln.strip()), "")
    message = f"git log -p | git patch-id failed in {where}" + (f": {cause}" if cause else "")
    if MISSING_OBJECT.search(cause):
        raise MissingObjectError(message)
    raise BackportrError(message)


def feed_in_background(stdin: IO[bytes], data: bytes) -> threading.Thread:
    """Write `data` to a process's stdin from a thread, then close it, so the process and
    the reader of its output never block each other; join the thread when done reading."""

    def write() -> None:
        with contextlib.suppress(BrokenPipeError):
            stdin.write(data)
        with contextlib.suppress(BrokenPipeError):
            stdin.close()

    writer = threading.Thread(target=write, name="git feed", daemon=True)
    writer.start()
    return writer


def config_list(path: Path) -> list[tuple[str, str, str]]:
    """git config as seen from `path` (a repository's, else the user's and the system's):
    (key lowercased, value, the file defining it), in git's order (the last one wins where
    a key holds one value)."""
    proc = process.run(
        ["git", "-C", str(path), "config", "--list", "--show-origin", "-z"],
        capture_output=True,
        env=git_env(),
    )
    out: list[tuple[str, str, str]] = []
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    for origin, entry in zip(fields[::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        out.append((key.lower(), value, origin.removeprefix("file:")))
    return out


def git_dir_of(path: Path) -> Path | None:
    """The git directory of the repository at `path`, or None outside one."""
    proc = process.run(
        ["git", "-C", str(path), "rev-parse", "--absolute-git-dir"],
        capture_output=True,
        text=True,
        env=git_env(),
    )
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None


def credential_password(protocol: str, host: str, user: str) -> str | None:
    """The password git's credential helpers keep for the service, None when none does
    (never a prompt: GIT_TERMINAL_PROMPT=0)."""
    query = f"protocol={protocol}\nhost={host}\nusername={user}\n\n"
    proc = process.run(
        ["git", "credential", "fill"],
        input=query,
        capture_output=True,
        text=True,
        env={**git_env(), "GIT_TERMINAL_PROMPT": "0"},
        timeout=60,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("password="):
            return line[len("password=") :]
    return None


def git_version() -> str:
    """`git version x.y.z`, or why there is none."""
    try:
        proc = process.run(
            ["git", "version"], capture_output=True, text=True, env=git_env(), timeout=10
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"git: not usable ({error})"
    return proc.stdout.strip() or f"git: exit {proc.returncode}"
