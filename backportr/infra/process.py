"""A backportr module's `main` run in a child interpreter, as a process of its own.

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
from typing import Any

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
    return subprocess.Popen([sys.executable, "-c", entry, *argv], env=env, **popen)


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system says, else all)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1
