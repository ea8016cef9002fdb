"""How the benchmarks start backportr: the interpreter they run in, `-P` so that the
installed package is timed, not a checkout in the working directory (which, with
PYTHONDONTWRITEBYTECODE set, would be compiled from source at every start and timed with
it: 0.1-0.2 s a process on the development machine)."""

from __future__ import annotations

import sys

BACKPORTR = [sys.executable, "-P", "-m", "backportr"]
