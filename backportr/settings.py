"""Settings: what a run works on, built by a front-end from its arguments.

Frozen and keyword-only; the core receives them and never reads the environment itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backportr.git.repo import DEFAULT_BRANCH_PATTERN
from backportr.model import CulpritPolicy

DEFAULT_MAX_COMMITS = 50
DEFAULT_CONFLICT_DEPTH = 2
"""The target's conflict prerequisites, and theirs when one conflicts itself; what the second
level finds is retained only when the series then applies (`Resolver.resolve_branch`)."""
SCAN_CONFLICT_DEPTH = 1
"""A scan's: one level. On DPDK 23.11 the second level changed one finding's series of 562
and cost 87 s of 308 (docs/performance.md); `resolve` of that finding searches deeper."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Settings:
    repo: Path = Path(".")
    upstream: str | None = None
    branches: tuple[str, ...] = ()
    branch_pattern: str = DEFAULT_BRANCH_PATTERN
    index_path: Path | None = None
    max_commits: int = DEFAULT_MAX_COMMITS
    culprits: CulpritPolicy = "auto"
    fixes_patterns: tuple[str, ...] = ()
    """The project's own ways of naming a culprit (`backportr.fixesPattern`), beside the
    default forms of `relation_forms.FORMS` and those learned (`index/vocabulary.py`)."""
    ignored_forms: tuple[str, ...] = ()
    """Learned phrases not to read as fixes (`backportr.ignoreForm`: `amends:`, `since`)."""
