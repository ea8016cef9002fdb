"""What a scan reads first, read beside the index update: each branch tip's identifier set and
the history since each branch's fork.

A scan's symbol finder reads the tip's whole identifier set at its first question
(`resolve/finders/words.py`: 0.6-0.9 s on FRR), and its conflict search the history since
the fork at its first blame (`repo.search.remember_history`: 0.6 s on FRR), every `--jobs`
worker at once. The index update leaves a core partly idle (FRR's 27 branches: 1.4 of 2
cores), so a process of its own reads both then and keeps them under the index directory,
where the scan's first questions find them (or wait for them: one process reads each at a
time, `filecache`). What is cached makes the read-ahead a lookup; a scan that ends first stops
it, and nothing half-written stays.

It is only a cache: the process's failures are its own (the scan reads the set itself). Once
a scan has updated the index, what no branch asks for any more goes (`prune_cache`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Set as AbstractSet
from pathlib import Path
from types import TracebackType

from backportr.infra.filecache import prune
from backportr.infra.process import start_main
from backportr.settings import Settings

_STOP_GRACE = 5.0  # seconds a stopped read-ahead is given to remove its temporary file


class ReadAhead:
    """The read-ahead process of one scan, for `with`: started on entry (where it can be),
    stopped on exit if it is still reading."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ReadAhead:
        settings = self._settings
        if settings.branches:
            args = [str(settings.repo), str(settings.index_path or ""), settings.upstream or ""]
            args += settings.branches
            try:
                self._proc = start_main(
                    "backportr.scan.prefetch",
                    args,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            except OSError:
                self._proc = None  # no second process here: the scan reads the set itself
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(_STOP_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def prune_cache(cache_dir: Path, trees: AbstractSet[str], upstream_tip: str) -> int:
    """Forget what the index directory `cached` holds for no indexed branch: the identifier
    sets (`words/<tree>.words.gz`) of trees no branch tip has now, the histories
    (`ranges/<fork>-<upstream tip>.range`) of earlier upstream tips. Each night's scan of a
    moved branch would otherwise leave one set behind (a few MB for a large tree). Returns
    how many files went."""
    removed = prune(cache_dir / "words", lambda name: name.split(".", 1)[0] in trees)
    tail = f"-{upstream_tip}.range"
    return removed + prune(cache_dir / "ranges", lambda name: name.endswith(tail))


def main(argv: list[str]) -> int:
    """The read-ahead process: REPO INDEX-PATH UPSTREAM ('' for the defaults) BRANCH..."""
    from backportr.errors import BackportrError
    from backportr.git.repo import GitError, Repo
    from backportr.git.search import range_file
    from backportr.index.peeking import stored_forks
    from backportr.index.store import default_index_path
    from backportr.infra.signals import signals_exit
    from backportr.resolve.finders.symbols import SEARCHED
    from backportr.resolve.finders.words import cache_identifier_set

    # SIGTERM (the scan ending early) and SIGHUP (a terminal closed on the whole group) end
    # it by SystemExit: through the set's writer, which removes its temporary file, and the
    # exit handlers, which remove its scratch directories (`infra/scratch.py`)
    signals_exit()
    repo_path, index_path, upstream_name, *branches = argv
    try:
        repo = Repo(Path(repo_path))
        index = Path(index_path) if index_path else default_index_path(repo)
        cache_dir = index.parent
        refs = [repo.branch(name) for name in branches]
        for ref in refs:
            cache_identifier_set(repo, ref.tip, SEARCHED, cache_dir / "words")
        upstream = repo.upstream(upstream_name or None)
        repo.search.remember_history(upstream.tip, cache_dir=cache_dir / "ranges")
        forks = stored_forks(index, upstream, refs)
        for ref in refs:
            # the fork the index keeps for a branch: libgit2's merge base (seconds at kernel
            # scale, in which this process cannot be stopped), or the one stored for it
            fork = forks.get(ref.refname) or repo.merge_base(ref.tip, upstream.tip)
            if fork and not range_file(cache_dir / "ranges", fork, upstream.tip).exists():
                repo.search.range_history(fork, upstream.tip)
    except (BackportrError, GitError, OSError):
        return 1  # the scan reads what it needs itself, and says what is wrong
    return 0
