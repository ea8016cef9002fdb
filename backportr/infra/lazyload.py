"""Names a package exports, loaded when first asked for (PEP 562): a child process that
imports one module of the package (the index's reader, a scan's read-ahead) does not pay
for what the package's `__init__` names."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: each name of `homes` imported from its module when first
    asked for, and bundled in the package."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return getattr_
