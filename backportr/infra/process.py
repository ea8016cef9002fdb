"""Child processes: started so that a stop never leaves one running unseen, and a backportr
module's `main` run in a child interpreter.

Python's `Popen` forks, then waits for the child's exec on a pipe; a SIGTERM or SIGHUP whose
handler raises there (`infra/signals.py`) left `Popen` without a result, and the child ran on
with no one to stop it: a `git merge-tree` of a stopped scan worker wrote its objects into
the scratch directory its worker had just removed, which was there again, with no owner to
remove it. Every process is started by `started` or `run`: a stop that arrives meanwhile
raises once the child is there (`infra/stops.py`), and the child is killed with it.

The index's bulk reader (`index/worker.py`) and a scan's read-ahead (`scan/prefetch.py`) run
beside the process that starts them. The child imports backportr as its parent does: the
parent's module search path goes with it in the environment (a `-c` entry, not `-m`, so
that a site hook or a path the parent set up by hand is not lost), and it runs
`<module>.main(argv)`, exiting with what that returns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, Literal, overload

from backportr.infra.stops import stops_held

_PATH_VARIABLE = "BACKPORTR_SYS_PATH"
_ENTRY = (
    "import json, os, sys; sys.path[:] = json.loads(os.environ[{variable!r}]); "
    "from {module} import main; sys.exit(main(sys.argv[1:]))"
)


def start_main(module: str, argv: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Start `module.main(argv)` in a child interpreter; `popen` is passed to `Popen`
    (its standard streams, descriptors to pass). Raises OSError where it cannot start."""
    entry = _ENTRY.format(variable=_PATH_VARIABLE, module=module)
    env = {**os.environ, _PATH_VARIABLE: json.dumps(sys.path)}
    return started([sys.executable, "-c", entry, *argv], env=env, **popen)


def started(args: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(args, **popen)`; a stop that arrives meanwhile raises once the
    child is there, which is then killed and reaped."""
    proc = None
    try:
        with stops_held():
            proc = subprocess.Popen(args, **popen)
    except BaseException:
        if proc is not None:
            with proc:  # its pipes closed, and reaped
                proc.kill()
        raise
    return proc


@overload
def run(
    args: Sequence[str],
    *,
    input: str | None = None,
    capture_output: bool = False,
    timeout: float | None = None,
    text: Literal[True],
    **popen: Any,
) -> subprocess.CompletedProcess[str]: ...


@overload
def run(
    args: Sequence[str],
    *,
    input: bytes | None = None,
    capture_output: bool = False,
    timeout: float | None = None,
    text: Literal[False] = False,
    **popen: Any,
) -> subprocess.CompletedProcess[bytes]: ...


def run(
    args: Sequence[str],
    *,
    input: bytes | str | None = None,
    capture_output: bool = False,
    timeout: float | None = None,
    text: bool = False,
    **popen: Any,
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(args, ...)` without `check` (every caller reads the exit status),
    its child started by `started`: killed and reaped on a timeout or any exception."""
    if input is not None:
        popen["stdin"] = subprocess.PIPE
    if capture_output:
        popen["stdout"] = popen["stderr"] = subprocess.PIPE
    with started(args, text=text, **popen) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except BaseException:
            proc.kill()  # reaped as the `with` ends
            raise
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system says, else all)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1
