"""Facts about the whole project, counted over every indexed commit and cached: does it tag
its fixes for stable, do its stable branches take fixes only. The rules read them
(`resolve/rules.py`): a missing stable tag or a commit that is no fix means something only
where the project's practice says so."""

from __future__ import annotations

import math
from collections.abc import Callable

from backportr import __version__
from backportr.index.cache import AnswerCache, result_key
from backportr.index.part import IndexFile, StorePart
from backportr.index.reader import IndexReader

FIXES_ONLY_SHARE = 0.8  # takes_fixes_only: the share of fixes among what branches carry
FIXES_ONLY_FLOOR = 20  # and how many carried commits it needs to say so
TAGGING_SHARE = 0.01  # has_stable_tags: the share of upstream fixes tagged for stable


class ProjectFacts(StorePart):
    """The project's practice, as its index shows it."""

    _tagging: bool | None = None  # has_stable_tags, until the next update
    _fixes_only: bool | None = None  # takes_fixes_only, until the next update

    def __init__(self, file: IndexFile, reader: IndexReader, cache: AnswerCache) -> None:
        super().__init__(file)
        self.reader = reader
        self.cache = cache

    def forget(self) -> None:
        self._tagging = None
        self._fixes_only = None

    def has_stable_tags(self) -> bool:
        """Does the project tag fixes for stable? Upstream commits carrying a stable tag
        number at least `TAGGING_SHARE` of its upstream commits with a `Fixes:` (and at
        least one): a few tags in a long history that never tags (another project's
        messages copied in) are no practice a missing tag could be read against."""
        if self._tagging is None:
            rule = f"has-stable-tags {TAGGING_SHARE}"
            self._tagging = self._project_fact(rule, self._count_tagging)
        return self._tagging

    def _count_tagging(self) -> bool:
        fixes = self.db.execute(
            "SELECT COUNT(DISTINCT f.commit_id) FROM fixes f JOIN commits c "
            "ON c.id=f.commit_id WHERE c.upstream_seq IS NOT NULL"
        ).fetchone()[0]
        needed = max(1, math.ceil(fixes * TAGGING_SHARE))
        tagged = self.db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM commits WHERE stable_tags IS NOT NULL "
            "AND upstream_seq IS NOT NULL LIMIT ?)",
            (needed,),
        ).fetchone()[0]
        return bool(tagged >= needed)

    def takes_fixes_only(self) -> bool:
        """Do the indexed stable branches take fixes only? At least `FIXES_ONLY_SHARE` of the
        upstream commits their backports name are fixes (a `Fixes:`, a stable tag, or a
        revert), out of at least `FIXES_ONLY_FLOOR`; and no backport says `Stable-dep-of:`
        (a project whose branches record that takes prerequisites as a matter of course)."""
        if self._fixes_only is None:
            rule = f"takes-fixes-only {FIXES_ONLY_SHARE} {FIXES_ONLY_FLOOR}"
            self._fixes_only = self._project_fact(rule, self._count_fixes_only)
        return self._fixes_only

    def _count_fixes_only(self) -> bool:
        carried, fixes = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(fix), 0) FROM (SELECT DISTINCT u.upstream, "
            "(c.stable_tags IS NOT NULL OR EXISTS(SELECT 1 FROM fixes f WHERE "
            "f.commit_id=c.id) OR EXISTS(SELECT 1 FROM reverts r WHERE r.commit_id=c.id))"
            " AS fix FROM branch_commits b CROSS JOIN upstream_refs u "
            "ON u.commit_id=b.commit_id CROSS JOIN commits c ON c.oid=u.upstream "
            "WHERE c.upstream_seq IS NOT NULL)"
        ).fetchone()
        records_deps = self.db.execute("SELECT 1 FROM stable_deps LIMIT 1").fetchone()
        return bool(
            carried >= FIXES_ONLY_FLOOR
            and fixes >= FIXES_ONLY_SHARE * carried
            and records_deps is None
        )

    def _project_fact(self, rule: str, count: Callable[[], bool]) -> bool:
        """A fact about the whole project (does it tag for stable, do its branches take
        fixes only), counted over every indexed commit (a fifth of a second at kernel
        scale) once per state of the indexed refs: every index update derives from them
        alone, so the next process reads the answer. `rule` names the fact and its
        thresholds: another rule counts anew."""
        if self.db.in_transaction:
            return count()  # an update is writing: the refs are not yet what they will be
        tips = ",".join(f"{r.refname}={r.tip}" for r in self.reader.refs())
        key = result_key("project-fact-v1", __version__, rule, tips)
        cached = self.cache.cached_result(key)
        if cached is not None:
            return cached == "yes"
        fact = count()
        self.cache.cache_result(key, "yes" if fact else "no")
        return fact
