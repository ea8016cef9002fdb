"""backportr: the complete, ordered series a Linux stable backport needs.

Public API (no logic here).
"""

from backportr.errors import BackportrError, ExitCode
from backportr.model import Presence, StatusResult
from backportr.trailers import parse_message

__version__ = "0.1.0"

__all__ = [
    "BackportrError",
    "ExitCode",
    "Presence",
    "StatusResult",
    "__version__",
    "parse_message",
]
