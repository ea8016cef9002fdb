"""The bulk read of a long history in a second process.

On two cores a full build was one core of git and one of Python, the Python side three times
git's time. So past its first slice a long walk is read by a worker process: it runs the
bounded `git log` processes, splits the records and prepares each batch (keyword scans,
posting keys, the rows of every commit that names no relation); the indexing process parses
the rest and inserts. Batches come back in walk order on a pipe of their own, pickled, each
prefixed by its length; a zero length says the walk is done. The worker is `main` of this
module, given GIT_DIR, PER_PROCESS, that pipe's descriptor, `every` or `-` (`prepare_batch`'s
`every`) and the learned phrases' words, comma-separated, or `-` as arguments, the walk's
starting points (with `^`-prefixed exclusions, and `=`-prefixed the commits the indexing
process read already, left out) on stdin; its stdout and stderr go to a file read only when
it fails.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, BinaryIO, NoReturn

from backportr.errors import BackportrError, ExitCode
from backportr.git.walk import Walk, walk_all
from backportr.index.preparing import BATCH, PreparedBatch, batches, prepare_batch
from backportr.infra.process import start_main

_LENGTH = 8  # bytes of a frame's length prefix
_EXIT_GRACE = 10.0  # seconds a worker whose pipe ended is given to exit
_STOP_GRACE = 5.0  # seconds a worker sent SIGTERM is given to remove what it made


class BulkWorker:
    """The indexing process's side: start the worker early (it imports while the first
    slice is parsed here), hand it the walk's frontier, read its batches."""

    def __init__(
        self,
        git_dir: Path,
        per_process: int,
        *,
        every: bool = False,
        words: tuple[bytes, ...] = (),
    ) -> None:
        self._errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        # The batches come on a pipe of their own: whatever the worker's interpreter, a site
        # hook or a library prints goes with its errors and cannot corrupt a frame.
        read_end, write_end = os.pipe()
        with contextlib.suppress(AttributeError, OSError):  # a larger pipe where there is one
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 1 << 20)
        try:
            self._proc = start_main(  # it imports as this process does
                "backportr.index.worker",
                [
                    str(git_dir),
                    str(per_process),
                    str(write_end),
                    "every" if every else "-",
                    b",".join(words).decode("ascii") or "-",
                ],
                stdin=subprocess.PIPE,
                stdout=self._errors,
                stderr=self._errors,
                pass_fds=(write_end,),
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        self._batches: IO[bytes] = os.fdopen(read_end, "rb")

    def walk_on(self, walk: Walk) -> None:
        """Hand the worker the rest of the walk: its git process starts now, while this
        process parses what it read itself."""
        assert self._proc.stdin is not None
        feed = "".join(f"{s}\n" for s in walk.starts) + "".join(f"^{e}\n" for e in walk.exclude)
        feed += "".join(f"={seen.decode('ascii')}\n" for seen in walk.seen)
        try:
            self._proc.stdin.write(feed.encode("ascii"))
            self._proc.stdin.close()
        except BrokenPipeError:
            pass  # the worker failed to start: its error is read by `batches`

    def batches(self, walk: Walk | None = None) -> Iterator[PreparedBatch]:
        """The prepared batches of the rest of the walk, in walk order (`walk`: handed over
        first, unless `walk_on` did)."""
        if walk is not None:
            self.walk_on(walk)
        while True:
            head = _read_exactly(self._batches, _LENGTH)
            size = int.from_bytes(head, "big") if len(head) == _LENGTH else -1
            if size == 0:
                break
            data = _read_exactly(self._batches, size) if size > 0 else b""
            if size < 0 or len(data) != size:
                self._fail()
            try:
                fields = pickle.loads(data)
                batch = PreparedBatch(*fields)
            except Exception:  # any frame that does not decode is the same fault
                self._fail("it sent a batch that cannot be read")
            yield batch
        if self._proc.wait() != 0:
            self._fail()

    def _fail(self, why: str | None = None) -> NoReturn:
        """The worker stopped short or sent what cannot be read: its error (its last line,
        or `why`) raised here, as a fault of the environment (exit 1), or as a bug when the
        worker met one (exit 3)."""
        if why is None:  # its pipe ended: it is exiting, let it finish saying why
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=_EXIT_GRACE)
        if self._proc.poll() is None:
            self._proc.kill()
        status = self._proc.wait()
        self._errors.seek(0)
        lines = self._errors.read().decode("utf-8", "replace").strip().splitlines()
        cause = why or (lines[-1] if lines else f"exit status {status}")
        message = f"the index's reader process failed: {cause.removeprefix('backportr: ')}"
        if status == ExitCode.INTERNAL:
            raise RuntimeError(message)
        raise BackportrError(message)

    def close(self) -> None:
        """Stop the worker if it still runs (the build ended early, failed or was stopped):
        SIGTERM, which it ends by as by an interrupt, its scratch directory removed
        (`signals_exit`), and past `_STOP_GRACE` SIGKILL. Its batches' pipe is closed
        first: a worker blocked writing to it then fails there rather than wait."""
        for stream in (self._proc.stdin, self._batches):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(_STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._proc.wait()
        self._errors.close()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def serve(
    git_dir: Path,
    per_process: int,
    lines: Sequence[str],
    out: BinaryIO,
    *,
    every: bool = False,
    words: tuple[bytes, ...] = (),
) -> None:
    """The worker's side: read the walk from `lines`, write its prepared batches to `out`
    (`every`: each record left for the full parse; `words`: the learned phrases' words;
    `prepare_batch`)."""
    starts = [line for line in lines if line[:1] not in ("^", "=")]
    exclude = [line[1:] for line in lines if line.startswith("^")]
    walk = Walk(starts, exclude, done=not starts)
    walk.seen.update(line[1:].encode("ascii") for line in lines if line.startswith("="))
    for batch in batches(walk_all(git_dir, walk, per_process), BATCH):
        # Plain values: a named tuple pickles as a call of its class, four times slower.
        prepared = prepare_batch(batch, every=every, words=words)
        data = pickle.dumps(tuple(prepared), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(len(data).to_bytes(_LENGTH, "big"))
        out.write(data)
    out.write((0).to_bytes(_LENGTH, "big"))
    out.flush()


def main(argv: Sequence[str]) -> int:
    from backportr.infra.signals import signals_exit

    # SIGTERM (the indexing process stopping it) and SIGHUP end it by SystemExit: its git
    # process stopped with it, its exit handlers remove its scratch directory.
    signals_exit()
    git_dir, per_process, batches_fd, every, listed = argv
    words = () if listed == "-" else tuple(w.encode("ascii") for w in listed.split(","))
    try:
        with os.fdopen(int(batches_fd), "wb") as out:
            lines = sys.stdin.read().split()
            serve(Path(git_dir), int(per_process), lines, out, every=every == "every", words=words)
    except BackportrError as error:
        print(f"backportr: {error}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    except BrokenPipeError:
        return ExitCode.BAD_INPUT  # the indexing process went away
    except Exception:  # a bug: its traceback for the record, its last line for the user
        traceback.print_exc()
        return ExitCode.INTERNAL
    return ExitCode.OK
