"""backportr: the complete, ordered series a Linux stable backport needs.

Public API (no logic here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backportr.errors import BackportrError, ExitCode
from backportr.infra.lazyload import lazy_names

if TYPE_CHECKING:
    from backportr.model import Presence, StatusResult
    from backportr.text.trailers import parse_message

__version__ = "0.1.0"

__all__ = [
    "BackportrError",
    "ExitCode",
    "Presence",
    "StatusResult",
    "__version__",
    "parse_message",
]

# The names below are loaded when first asked for (PEP 562): a child process (the index's
# reader, a scan's read-ahead) imports a module of this package and needs neither the model
# nor the trailer parser at its start.
_HOMES = {
    "Presence": "backportr.model",
    "StatusResult": "backportr.model",
    "parse_message": "backportr.text.trailers",
}


__getattr__ = lazy_names(__name__, _HOMES)
