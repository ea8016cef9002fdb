"""Kernel-shaped scenarios for resolve, each a real repository built commit by commit.

Every scenario forks `linux-5.10.y` from master at tag v5.10 and names its commits, so tests
can say "the series is [culprit, target, fix]" in words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from backportr.git.builder import DEFAULT_AUTHOR, Person, RepoBuilder
from backportr.model import Oid
from tests.scenarios import c_file

BRANCH = "linux-5.10.y"


@dataclass
class Scenario:
    builder: RepoBuilder
    target: str
    expected: list[str] = field(default_factory=list)
    status: str = "ready"
    branch: str = BRANCH

    @property
    def ids(self) -> dict[str, Oid]:
        return self.builder.ids

    @property
    def path(self) -> Path:
        return self.builder.path


class Kernel:
    """Helpers to write kernel-like commits by editing function bodies."""

    def __init__(self, path: Path, functions: int = 8) -> None:
        self.b = RepoBuilder(path)
        names = [f"drv_fn{i}" for i in range(functions)]
        self.b.commit(
            "Linux 5.10",
            {
                "drivers/drv.c": c_file(*names),
                "fs/core.c": c_file(*[f"core_fn{i}" for i in range(functions)]),
            },
            name="v5.10",
        )
        self.b.tag("v5.10", "master")
        self.b.branch(BRANCH, "master")

    def change(
        self,
        name: str,
        path: str,
        old: str,
        new: str,
        *,
        branch: str = "master",
        trailers: str = "",
        subject: str | None = None,
        author: Person = DEFAULT_AUTHOR,
    ) -> Oid:
        text = self.b.files(branch)[path]
        assert old in text, (name, old)
        message = (subject or f"drv: {name}") + "\n\nSome explanation.\n\n"
        message += trailers + "Signed-off-by: Dev <dev@example.org>\n"
        return self.b.commit(
            message, {path: text.replace(old, new, 1)}, branch=branch, name=name, author=author
        )

    def edit_fn(
        self,
        name: str,
        fn: str,
        value: str,
        *,
        line: str = "y += 1;",
        trailers: str = "",
        branch: str = "master",
        subject: str | None = None,
        path: str = "drivers/drv.c",
    ) -> Oid:
        text = self.b.files(branch)[path]
        start = text.index(f"int {fn}(int x)")
        end = text.index("}\n", start)
        body = text[start:end]
        key = line.split()[0]
        current = next(ln for ln in body.splitlines() if ln.strip().startswith(key))
        new_body = body.replace(current, f"\t{value}", 1)
        return self.change(
            name, path, body, new_body, trailers=trailers, branch=branch, subject=subject
        )

    def edit_in(
        self,
        name: str,
        fn: str,
        old: str,
        new: str,
        *,
        author: Person = DEFAULT_AUTHOR,
        trailers: str = "",
    ) -> str:
        """Commit `name` replacing `old` by `new` inside function `fn` of drivers/drv.c."""
        text = self.b.files("master")["drivers/drv.c"]
        body = text[text.index(f"int {fn}(int x)") :]
        body = body[: body.index("}\n") + 2]
        return self.change(
            name,
            "drivers/drv.c",
            body,
            body.replace(old, new, 1),
            author=author,
            trailers=trailers,
        )

    def fixes(self, name: str) -> str:
        oid = self.b.ids[name]
        subject = self.b.repo[oid].peel(pygit2.Commit).message.split("\n", 1)[0]
        return f'Fixes: {oid[:12]} ("{subject}")\n'


def follow_up_chain(path: Path) -> Scenario:
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.edit_fn("noise", "drv_fn5", "y += 5;")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("target"))
    k.edit_fn("fix-of-fix", "drv_fn3", "y += 3;", trailers=k.fixes("fix"))
    return Scenario(k.b, "target", ["target", "fix", "fix-of-fix"])


def wrong_id_follow_up(path: Path) -> Scenario:
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers='Fixes: 0badc0ffee00 ("drv: target")\n')
    return Scenario(k.b, "target", ["target", "fix"])


def culprit_absent(path: Path) -> Scenario:
    """A project that tags fixes for stable (as the kernel does): an untagged absent culprit
    has no evidence, so its fix is not needed."""
    k = Kernel(path)
    k.edit_fn("tagged", "drv_fn6", "y += 6;", trailers="Cc: stable@vger.kernel.org\n")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", [], status="not-needed")


def culprit_absent_in_a_project_that_never_tags(path: Path) -> Scenario:
    """Rule 2, `auto`: no upstream commit carries a stable tag (NetworkManager, OVN), so a
    missing tag says nothing: the absent culprit goes with its fix."""
    k = Kernel(path)
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", ["culprit", "target"])


def culprit_absent_where_tags_are_only_quoted(path: Path) -> Scenario:
    """Rule 2, `auto`: the project's only `Cc: stable@...` lines are indented, inside another
    project's commit message quoted in a port of it (Xen quoting Linux): quoted text is no
    trailer, so the project never tags, and the absent culprit goes with its fix."""
    k = Kernel(path)
    quoted = (
        "This ports Linux commit 0123456789ab:\n\n"
        "    drv: clamp the value\n\n"
        "    Cc: stable@vger.kernel.org\n"
        "    Signed-off-by: Linux Dev <ldev@kernel.org>\n\n"
    )
    k.edit_fn("port", "drv_fn6", "y += 6;", trailers=quoted)
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", ["culprit", "target"])


def culprit_absent_where_one_fix_in_a_hundred_is_tagged(path: Path) -> Scenario:
    """Rule 2, `auto`: one stray stable tag among 120 upstream fixes (a message copied in
    whole) is no practice of tagging: the absent culprit goes with its fix."""
    k = Kernel(path)
    for n in range(120):
        tag = "Cc: stable@vger.kernel.org\n" if n == 0 else ""
        k.edit_fn(f"fix{n}", "drv_fn6", f"y += {n + 6};", trailers=tag + k.fixes("v5.10"))
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", ["culprit", "target"])


def culprit_tagged_for_project_stable(path: Path) -> Scenario:
    """Rule 2/5: the absent culprit carries `Cc: stable@<the project's list>` (not the
    kernel's): evidence the stable team wants it, so it joins before the target."""
    k = Kernel(path)
    k.edit_fn("culprit", "drv_fn1", "y += 100;", trailers="Cc: <stable@linux-rdma.org> # v42+\n")
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", ["culprit", "target"])


def culprit_in_sibling_branch(path: Path) -> Scenario:
    """Rule 2: the absent culprit, untagged, was backported to another stable branch of the
    repository: evidence, so it joins before the target."""
    k = Kernel(path)
    k.b.branch("linux-5.15.y", "master")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", "linux-5.15.y", name="culprit-5.15", annotation="sasha")
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", ["culprit", "target"])


def culprit_in_sibling_branch_by_patch_id(path: Path) -> Scenario:
    """As above, but the sibling's backport names nothing (a plain cherry-pick): found by its
    patch-id, which the sibling, indexed beside the branch worked on, gets only when asked."""
    k = Kernel(path)
    k.b.branch("linux-5.15.y", "master")
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", "linux-5.15.y", name="culprit-5.15", annotation=None)
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", ["culprit", "target"])


def follow_up_of_present_follow_up(path: Path) -> Scenario:
    """Rule 4: X and its fix Y are in the branch, Z (Fixes: Y) is not: X is incomplete."""
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.b.cherry_pick("target", BRANCH, name="target-bp")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("target"))
    k.b.cherry_pick("fix", BRANCH, name="fix-bp")
    k.edit_fn("fix-of-fix", "drv_fn3", "y += 3;", trailers=k.fixes("fix"))
    return Scenario(k.b, "target", ["fix-of-fix"], status="incomplete")


def short_fixes_id(path: Path) -> Scenario:
    """Rule 5: a follow-up names the target by a 6-digit id (unambiguous here)."""
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    short = k.b.ids["target"][:6]
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=f"Fixes: {short}\n")
    return Scenario(k.b, "target", ["target", "fix"])


def deleted_context(path: Path) -> Scenario:
    """Rule 3: an absent clean-up deleted lines inside the target's hunk; blame of the
    target's lines at its parent cannot see a deletion, the file's history can."""
    k = Kernel(path)
    k.edit_in("cleanup", "drv_fn4", "\ty *= 2;\n", "", author=OTHER)
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["cleanup", "target"])


def kconfig_symbol(path: Path) -> Scenario:
    """Rule 6: the target tests CONFIG_DRV_TURBO, which a Kconfig entry introduced; an
    earlier commit merely used it in C. The Kconfig commit is the prerequisite."""
    k = Kernel(path)
    k.b.commit(
        "drv: add the turbo option\n\nSigned-off-by: Dev <dev@example.org>\n",
        {"drivers/Kconfig": 'config DRV_TURBO\n\tbool "Turbo mode"\n'},
        name="kconfig",
    )
    k.edit_fn("user", "drv_fn5", "y += CONFIG_DRV_TURBO;")
    k.edit_fn("target", "drv_fn2", "y += CONFIG_DRV_TURBO * 2;")
    return Scenario(k.b, "target", ["kconfig", "target"])


def revert_that_names_its_target(path: Path) -> Scenario:
    """A revert whose Fixes: names the target it reverts: upstream declared it a follow-up,
    so the series is the pair (with a warning that it nets to nothing), as stable takes it."""
    k = Kernel(path)
    k.edit_fn("culprit", "drv_fn3", "y += 300;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("target", "drv_fn1", "y += 100;", trailers=k.fixes("culprit"))
    k.b.revert("target", "master", name="revert", body=k.fixes("target"))
    return Scenario(k.b, "target", ["target", "revert"])


def other_authors_step(path: Path) -> Scenario:
    """Rule 1 with two levels: the target's same-author step conflicts without another
    author's earlier refactor; the second level finds it, and the three apply: the series is
    complete. (With one level, `--conflict-depth 1`, the refactor is not searched for: the
    step stays, of the target's own posting, and the series needs a human.)"""
    k = Kernel(path)
    k.edit_in("refactor", "drv_fn4", "\ty += 1;", "\ty += 10;", author=OTHER)
    k.b._clock += 3 * 86400  # a posting three days later
    k.edit_in("step", "drv_fn4", "\ty *= 2;", "\ty *= 4;")
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["refactor", "step", "target"])


def another_authors_batch(path: Path, first: Person | None = None) -> Scenario:
    """Three steps of another author's series, applied upstream in one `git am` run (a
    second apart, OVN's northd refactor), each editing what the one before wrote; the
    target, days later, edits what the last wrote. The target conflicts without step 3,
    step 3 without step 2 (the second level), step 2 without step 1: past the conflict
    depth, the earlier steps of the same upstream batch are searched, and the four apply.
    The maintainers took the whole batch (issue 61: six of eleven prerequisite misses)."""
    k = Kernel(path)
    k.edit_in("step1", "drv_fn5", "\ty += 1;", "\ty += 10;", author=first or OTHER)
    k.b._clock -= 59  # the next patch of the same `git am` run
    k.edit_in("step2", "drv_fn5", "\ty += 10;", "\ty += 100;", author=OTHER)
    k.b._clock -= 59
    k.edit_in("step3", "drv_fn5", "\ty += 100;", "\ty += 1000;", author=OTHER)
    k.b._clock += 3 * 86400
    k.edit_in("target", "drv_fn5", "\ty += 1000;", "\ty += 1001;", trailers=k.fixes("v5.10"))
    return Scenario(k.b, "target", ["step1", "step2", "step3", "target"])


def another_authors_batch_from_two_addresses(path: Path) -> Scenario:
    """As `another_authors_batch`, but the batch's author wrote step 1 from another address
    (their company's): one person's batch all the same, taken whole."""
    return another_authors_batch(path, Person(OTHER.name, "other.dev@corp.example"))


def another_authors_old_batch(path: Path) -> Scenario:
    """As `another_authors_batch`, but the target comes two years after the batch: a
    feature the branch skipped on purpose long ago, which its maintainers adapt fixes
    around (DPDK 23.11's axgbe 10 Mbps series, 2024, and its fixes of 2026): not searched,
    and the target needs a human."""
    k = Kernel(path)
    k.edit_in("step1", "drv_fn5", "\ty += 1;", "\ty += 10;", author=OTHER)
    k.b._clock -= 59
    k.edit_in("step2", "drv_fn5", "\ty += 10;", "\ty += 100;", author=OTHER)
    k.b._clock -= 59
    k.edit_in("step3", "drv_fn5", "\ty += 100;", "\ty += 1000;", author=OTHER)
    k.b._clock += 2 * 365 * 86400
    k.edit_in("target", "drv_fn5", "\ty += 1000;", "\ty += 1001;", trailers=k.fixes("v5.10"))
    return Scenario(k.b, "target", ["target"], status="conflict")


def symbol_from_a_rename(path: Path) -> Scenario:
    """The target calls names a rename refactor introduced (its changed lines differ from the
    old ones only in names): maintainers adapt the target to the old names rather than take
    the rename, so it is a suggestion and the target needs a manual backport."""
    k = Kernel(path)
    old_api = "".join(f"int drv_old_call_{i}(int x);\n" for i in range(12))
    k.b.commit(
        "drv: add the helper API\n\nSigned-off-by: Dev <dev@example.org>\n",
        {"include/linux/drv_api.h": old_api},
        name="api",
    )
    k.b.cherry_pick("api", BRANCH, name="api-bp")
    new_api = old_api.replace("drv_old_call_", "drv_new_call_")
    k.b.commit(
        "drv: rename the helper API\n\nSigned-off-by: Other <other@example.org>\n",
        {"include/linux/drv_api.h": new_api},
        name="rename",
        author=OTHER,
    )
    k.edit_fn("target", "drv_fn2", "y += drv_new_call_3(y);")
    return Scenario(k.b, "target", ["target"], status="conflict")


def helper_when_a_follow_up_conflicts(path: Path) -> Scenario:
    """The target uses a helper another author added (a symbol prerequisite), and its
    follow-up conflicts: the series needs a human anyway, who adapts it rather than take the
    helper; the helper is suggested, not pulled."""
    k = Kernel(path)
    k.b.commit(
        "drv: add a clamp helper\n\nSigned-off-by: Other <other@example.org>\n",
        {"include/linux/drv_clamp.h": "int drv_clamp_helper(int x);\n"},
        name="helper",
        author=OTHER,
    )
    k.edit_fn("target", "drv_fn1", "y += drv_clamp_helper(y);")
    k.edit_in("refactor", "drv_fn6", "\ty *= 2;", "\ty *= 3;", author=OTHER)
    k.edit_in("fix", "drv_fn6", "\ty -= 3;", "\ty -= 4;", trailers=k.fixes("target"), author=OTHER)
    return Scenario(k.b, "target", ["target", "fix"], status="conflict")


def culprit_present(path: Path) -> Scenario:
    """The `single` case: the culprit was backported; exactly the target."""
    k = Kernel(path)
    k.edit_fn("culprit", "drv_fn1", "y += 100;")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", ["target"])


def fixes_chain(path: Path) -> Scenario:
    """The target's culprit is absent but is itself a fix of something the branch has."""
    k = Kernel(path)
    k.edit_fn("middle", "drv_fn1", "y += 100;", trailers=k.fixes("v5.10"))
    k.edit_fn("target", "drv_fn2", "y += 2;", trailers=k.fixes("middle"))
    return Scenario(k.b, "target", ["middle", "target"])


def two_culprits_one_absent(path: Path) -> Scenario:
    """One culprit is in the branch, the other is absent but a needed fix: it joins."""
    k = Kernel(path)
    k.edit_fn("old", "drv_fn1", "y += 100;")
    k.b.cherry_pick("old", BRANCH, name="old-bp")
    k.edit_fn("middle", "drv_fn2", "y += 2;", trailers=k.fixes("old"))
    k.edit_fn("target", "drv_fn3", "y += 3;", trailers=k.fixes("old") + k.fixes("middle"))
    return Scenario(k.b, "target", ["middle", "target"])


def tagged_culprit_fixing_what_the_branch_never_had(path: Path) -> Scenario:
    """The absent culprit is tagged for stable, but it fixes a feature the branch never had:
    its tag speaks for the branches that have the feature (the stable rules drop such a fix),
    so nothing says this branch wants it, and its fix is not needed."""
    k = Kernel(path)
    k.edit_fn("feature", "drv_fn1", "y += 100;")
    k.edit_fn(
        "culprit",
        "drv_fn2",
        "y += 2;",
        trailers=k.fixes("feature") + "Cc: stable@vger.kernel.org\n",
    )
    k.edit_fn("target", "drv_fn3", "y += 3;", trailers=k.fixes("culprit"))
    return Scenario(k.b, "target", [], status="not-needed")


def culprit_fixing_what_the_branch_never_had(path: Path) -> Scenario:
    """Rule 2, `auto`, in a project that never tags: the target fixes two absent culprits.
    One is a change of its own and goes with its fix; the other fixes a feature this branch
    never had, and another stable branch, which has the feature, took it: that backport
    speaks for that branch only, so the fix of a fix of what was never here stays out (OVN's
    `f4478d59ea` on branch-24.03, which fixes `e457633d30`, a fix of a feature of 25.03)."""
    k = Kernel(path)
    k.edit_fn("feature", "drv_fn1", "y += 100;")
    k.b.branch("linux-5.15.y", "master")
    k.edit_fn("change", "drv_fn4", "y += 4;")
    k.edit_fn("culprit", "drv_fn2", "y += 2;", trailers=k.fixes("feature"))
    k.b.cherry_pick("culprit", "linux-5.15.y", name="culprit-5.15", annotation="sasha")
    k.edit_fn("target", "drv_fn3", "y += 3;", trailers=k.fixes("change") + k.fixes("culprit"))
    return Scenario(k.b, "target", ["change", "target"])


def present_by_annotation(path: Path) -> Scenario:
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.b.cherry_pick("target", BRANCH, annotation="upstream", name="target-bp")
    return Scenario(k.b, "target", [], status="already-present")


def present_by_patch(path: Path) -> Scenario:
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.b.cherry_pick("target", BRANCH, annotation=None, name="target-bp")
    return Scenario(k.b, "target", [], status="already-present")


def incomplete_follow_up(path: Path) -> Scenario:
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.b.cherry_pick("target", BRANCH, annotation="sasha", name="target-bp")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("target"))
    return Scenario(k.b, "target", ["fix"], status="incomplete")


def newer_branch_stable_dep(path: Path) -> Scenario:
    """Only linux-6.1.y's Stable-dep-of: trailer reveals that the target needs `prep`."""
    k = Kernel(path)
    k.edit_fn("churn", "drv_fn7", "y += 7;")
    k.b.tag("v6.1", "master")
    k.b.branch("linux-6.1.y", "master")
    k.edit_fn("prep", "drv_fn1", "y += 100;")
    k.edit_fn("target", "drv_fn3", "y += 3;")
    target = k.b.ids["target"]
    prep = k.b.ids["prep"]
    k.b.cherry_pick(
        "prep",
        "linux-6.1.y",
        name="prep-61",
        message=(
            f"drv: prep\n\n[ Upstream commit {prep} ]\n\nSome explanation.\n\n"
            "Signed-off-by: Dev <dev@example.org>\n"
            f'Stable-dep-of: {target[:12]} ("drv: target")\n'
            "Signed-off-by: Sasha Levin <sashal@kernel.org>\n"
        ),
    )
    k.b.cherry_pick("target", "linux-6.1.y", annotation="sasha", name="target-61")
    return Scenario(k.b, "target", ["prep", "target"])


def conflict_resolved_by_one(path: Path) -> Scenario:
    """The target conflicts; `enabler` resolves it; `context` only touched nearby lines."""
    k = Kernel(path)
    # context changes `int y = x;` (3 lines above the target's line): in its hunk's context,
    # but apart from it; enabler changes `y *= 2;`, right next to the target's `y -= 3;`
    k.edit_in("context", "drv_fn4", "\tint y = x;", "\tint y = x; /* c */")
    k.edit_in("enabler", "drv_fn4", "\ty *= 2;", "\ty *= 4;")
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["enabler", "target"])


def branch_only_conflict(path: Path) -> Scenario:
    """A stable-only change to the same line: nothing upstream helps, a manual backport."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn1", "y += 55;", branch=BRANCH)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    return Scenario(k.b, "target", ["target"], status="conflict")


def reverted_upstream(path: Path) -> Scenario:
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.edit_fn("noise", "drv_fn5", "y += 5;")
    k.b.revert("target", "master", name="revert")
    return Scenario(k.b, "target", [], status="reverted-upstream")


def upstream_merges(path: Path) -> Scenario:
    """The target lands through a merged topic branch; its fix comes after the merge."""
    k = Kernel(path)
    k.b.branch("topic", "master")
    k.edit_fn("unrelated", "drv_fn6", "y += 6;")
    k.edit_fn("target", "drv_fn1", "y += 100;", branch="topic")
    k.edit_fn("topic-2", "drv_fn2", "y += 2;", branch="topic")
    k.b.merge("master", "topic", "Merge branch 'topic'", name="merge")
    k.edit_fn("fix", "drv_fn3", "y += 3;", trailers=k.fixes("target"))
    return Scenario(k.b, "target", ["target", "fix"])


def declared_prerequisite(path: Path) -> Scenario:
    k = Kernel(path)
    k.edit_fn("prep", "drv_fn1", "y += 100;")
    k.edit_fn("other", "drv_fn2", "y += 2;")
    prep = k.b.ids["prep"]
    other = k.b.ids["other"]
    k.edit_fn(
        "target",
        "drv_fn3",
        "y += 3;",
        trailers=(
            f"Cc: <stable@vger.kernel.org> # 5.10.x: {prep[:7]}: drv: prep\n"
            f"Cc: <stable@vger.kernel.org> # 6.6.x: {other[:7]}: drv: other\n"
            "Cc: <stable@vger.kernel.org> # 5.10.x\n"
        ),
    )
    return Scenario(k.b, "target", ["prep", "target"])


def long_chain(path: Path, length: int = 6) -> Scenario:
    k = Kernel(path, functions=length + 2)
    k.edit_fn("c0", "drv_fn0", "y += 100;")
    for i in range(1, length):
        k.edit_fn(f"c{i}", f"drv_fn{i}", f"y += {i + 10};", trailers=k.fixes(f"c{i - 1}"))
    return Scenario(k.b, "c0", [f"c{i}" for i in range(length)])


def symbol_helper(path: Path) -> Scenario:
    """The target applies cleanly but calls a helper only upstream has: the helper's commit
    joins, and so does that commit's own follow-up."""
    k = Kernel(path)
    k.b.commit(
        "lib: add drv_clamp_value helper\n\nSigned-off-by: Dev <dev@example.org>\n",
        {
            "include/linux/drv_util.h": "int drv_clamp_value(int x, int max);\n",
            "lib/drv_util.c": (
                "int drv_clamp_value(int x, int max)\n{\n\treturn x > max ? max : x;\n}\n"
            ),
        },
        name="helper",
    )
    k.edit_fn("noise", "drv_fn6", "y += 66;")
    k.edit_fn("target", "drv_fn1", "y = drv_clamp_value(y, 100);")
    text = k.b.files("master")["lib/drv_util.c"]
    k.b.commit(
        "lib: drv_clamp_value: handle negative values\n\n"
        + k.fixes("helper")
        + "Signed-off-by: Dev <dev@example.org>\n",
        {
            "lib/drv_util.c": text.replace(
                "return x > max ? max : x;", "return x < 0 ? 0 : (x > max ? max : x);"
            )
        },
        name="helper-fix",
    )
    return Scenario(k.b, "target", ["helper", "target", "helper-fix"])


def symbol_of_a_library(path: Path) -> Scenario:
    """The target calls a library's function that no file of the tree defines (MSVC's
    `wcscpy_s` on OpenVPN's `release/2.5`); a commit of another directory started to use it
    after the fork. That commit is no prerequisite: the target alone."""
    k = Kernel(path)
    k.edit_fn("other-user", "core_fn2", "wcscpy_s(buf, sizeof(buf), src);", path="fs/core.c")
    k.edit_fn("target", "drv_fn3", "wcscpy_s(name, sizeof(name), given);")
    return Scenario(k.b, "target", ["target"])


def symbol_defined_in_other_forms(path: Path) -> Scenario:
    """What the target uses is defined in forms the first two patterns miss: a function in
    GNU style (its name at the start of the line), an enumerator, a file-level variable. The
    commit that added them joins."""
    k = Kernel(path)
    k.b.commit(
        "lib: add drv_limits\n\nSigned-off-by: Dev <dev@example.org>\n",
        {
            "include/linux/drv_limits.h": (
                "enum drv_limit_kind {\n\tDRV_LIMIT_SOFT,\n\tDRV_LIMIT_HARD = 2,\n};\n"
            ),
            "lib/drv_limits.c": (
                "int drv_limit_default = 10;\n\nint\ndrv_limit_of (int kind)\n{\n"
                "\treturn kind * drv_limit_default;\n}\n"
            ),
        },
        name="helper",
    )
    k.edit_fn("target", "drv_fn1", "y = drv_limit_of(DRV_LIMIT_HARD) + drv_limit_default;")
    return Scenario(k.b, "target", ["helper", "target"])


def symbol_the_build_defines(path: Path) -> Scenario:
    """The target tests a name the build defines (meson's `conf.set`), which another part's
    code began to test first: the commit that defines it joins, not that first user."""
    k = Kernel(path)
    k.b.commit(
        "build: detect the fast path\n\nSigned-off-by: Dev <dev@example.org>\n",
        {"meson.build": "conf = configuration_data()\nconf.set('HAVE_DRV_FAST', 1)\n"},
        name="build",
    )
    k.edit_fn("core-user", "core_fn2", "y += HAVE_DRV_FAST;", path="fs/core.c")
    k.edit_fn("target", "drv_fn3", "y += HAVE_DRV_FAST * 2;")
    return Scenario(k.b, "target", ["build", "target"])


def symbol_present(path: Path) -> Scenario:
    """Identifiers the branch already has (and new local variables) pull nothing."""
    k = Kernel(path)
    k.edit_fn("decoy", "core_fn2", "y += drv_fn1(x); /* uses drv_fn1 */", path="fs/core.c")
    k.edit_fn("target", "drv_fn3", "int local_total = drv_fn1(x) + core_fn1(y); y += local_total;")
    return Scenario(k.b, "target", ["target"])


def symbol_from_conflicting_commit(path: Path) -> Scenario:
    """The macro the target uses comes with a commit that itself conflicts on the branch."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn2", "y += 22;", branch=BRANCH)
    text = k.b.files("master")["drivers/drv.c"]
    start = text.index("int drv_fn2(int x)")
    body = text[start : text.index("}\n", start)]
    k.b.commit(
        "drv: add DRV_FLAG_FAST and use it\n\nSigned-off-by: Dev <dev@example.org>\n",
        {
            "include/linux/drv.h": "#define DRV_FLAG_FAST 0x4\n",
            "drivers/drv.c": text.replace(body, body.replace("y += 1;", "y |= DRV_FLAG_FAST;")),
        },
        name="macro",
    )
    k.b.commit(
        "fs: core: honour DRV_FLAG_FAST\n\nSigned-off-by: Dev <dev@example.org>\n",
        {
            "fs/core.c": k.b.files("master")["fs/core.c"].replace(
                "int core_fn5(int x)\n{\n\tint y = x;",
                "int core_fn5(int x)\n{\n\tint y = x | DRV_FLAG_FAST;",
            )
        },
        name="target",
    )
    return Scenario(k.b, "target", ["macro", "target"], status="conflict")


OTHER = Person("Other Dev", "other@example.org")
REFACTORER = Person("Re Factorer", "refactorer@example.org")


def conflict_chain(path: Path) -> Scenario:
    """The target needs `enabler`, which itself needs `deeper` (each by another author): the
    second level finds `deeper`, the three apply, so the series is complete (with one level
    the enabler would conflict and the target need a human)."""
    k = Kernel(path)
    k.edit_in("deeper", "drv_fn4", "\ty += 1;", "\ty += 10;", author=OTHER)
    k.b._clock += 86400  # each applied upstream on a day of its own
    k.edit_in("enabler", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=REFACTORER)
    k.b._clock += 86400
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["deeper", "enabler", "target"])


def conflict_chain_behind_a_conflicting_follow_up(path: Path) -> Scenario:
    """As `conflict_chain`, the enabler and `deeper` fixes of what the branch has, and the
    target's follow-up conflicts with a change only the branch has: two levels make the
    target apply, but the series needs a human for the follow-up anyway, who adapts the
    target too. The answer is one level's: the target and its follow-up, the enabler a
    suggestion (two levels would have kept both fixes in a series that does not apply)."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn6", "y += 7;", branch=BRANCH)
    fixes = k.fixes("v5.10")
    k.edit_in("deeper", "drv_fn4", "\ty += 1;", "\ty += 10;", author=OTHER, trailers=fixes)
    k.edit_in("enabler", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER, trailers=fixes)
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    k.edit_fn("follow-up", "drv_fn6", "y += 8;", trailers=k.fixes("target"))
    return Scenario(k.b, "target", ["target", "follow-up"], status="conflict")


def own_series_chain(path: Path) -> Scenario:
    """Rule 1 (depth within the target's own series): the target is the last of three
    consecutive steps by one author, each conflicting without the one before; the search goes
    as deep as the author's own steps, so the whole series is found and applies."""
    k = Kernel(path)
    k.edit_in("step1", "drv_fn4", "\ty += 1;", "\ty += 10;")
    k.edit_in("step2", "drv_fn4", "\ty *= 2;", "\ty *= 4;")
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["step1", "step2", "target"])


def _authors_earlier_posting(path: Path, deepest_author: Person) -> Kernel:
    """The target needs another author's `enabler`, which needs `step`, the target's author's
    patch of an earlier posting (two days before), which needs `first`, that posting's
    earlier patch: each edits the line the one before it edited."""
    k = Kernel(path)
    k.edit_in("first", "drv_fn4", "\ty += 1;", "\ty += 2;", author=deepest_author)
    k.edit_in("step", "drv_fn4", "\ty += 2;", "\ty += 3;")
    k.b._clock += 2 * 86400  # the target's posting, two days later
    k.edit_in("enabler", "drv_fn4", "\ty += 3;", "\ty += 4;", author=OTHER)
    k.edit_in("target", "drv_fn4", "\ty += 4;", "\ty += 5;")
    return k


def authors_earlier_posting(path: Path) -> Scenario:
    """Past the conflict depth, a conflicting member by the target's author is searched
    among that author's commits (an earlier posting of theirs, not only the target's own):
    `first` makes `step` apply, the four apply, and the series is complete."""
    k = _authors_earlier_posting(path, DEFAULT_AUTHOR)
    return Scenario(k.b, "target", ["first", "step", "enabler", "target"])


def authors_earlier_posting_on_anothers_work(path: Path) -> Scenario:
    """As `authors_earlier_posting`, but what `step` needs is another author's: the search
    past the depth stays within the target's author's commits, finds nothing, and the
    first level's answer stands: the target needs a human, `enabler` a suggestion."""
    k = _authors_earlier_posting(path, OTHER)
    return Scenario(k.b, "target", ["target"], status="conflict")


def posting_filled_in_between(path: Path) -> Scenario:
    """The target needs `first`, an earlier patch of its posting (blame of its conflict);
    `middle`, the posting's patch between them, changes the target's file elsewhere and is
    not needed for the target to apply, yet it joins: a posting is taken in order. Its
    patch to another file (`other-file`) and another author's commit between them to the
    same file (`other-author`) stay out."""
    k = Kernel(path)
    k.edit_in("first", "drv_fn4", "\ty += 1;", "\ty += 10;")
    k.edit_in("other-author", "drv_fn2", "\ty += 1;", "\ty += 20;", author=OTHER)
    k.edit_in("middle", "drv_fn6", "\ty *= 2;", "\ty *= 6;")
    k.change("other-file", "fs/core.c", "\ty += 1;", "\ty += 5;")
    k.edit_in("target", "drv_fn4", "\ty *= 2;", "\ty *= 4;")
    return Scenario(k.b, "target", ["first", "middle", "target"])


def posting_step_that_needs_a_human(path: Path) -> Scenario:
    """Rule 3, the target's own posting: the target applies only after `step`, an earlier
    patch of its posting, which conflicts with a change only the branch has; nothing makes
    `step` apply, so a human adapts it, and takes the posting's earlier patch to the same
    file (`first`) with it, as maintainers take a posting together."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn4", "y += 7;", branch=BRANCH)
    k.edit_in("first", "drv_fn5", "\ty += 1;", "\ty += 50;")
    k.edit_in("step", "drv_fn4", "\ty += 1;\n\ty *= 2;", "\ty += 10;\n\ty *= 4;")
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["first", "step", "target"], status="conflict")


def conflicting_follow_up(path: Path) -> Scenario:
    """Rule 1: a follow-up that conflicts is kept, marked conflict; no refactor is pulled for
    it (its conflict is a human's job), and the branch status says so."""
    k = Kernel(path)
    k.edit_in("target", "drv_fn1", "\ty += 1;", "\ty += 100;")
    k.edit_in("refactor", "drv_fn6", "\ty *= 2;", "\ty *= 3;", author=OTHER)
    k.edit_in("fix", "drv_fn6", "\ty -= 3;", "\ty -= 4;", trailers=k.fixes("target"), author=OTHER)
    return Scenario(k.b, "target", ["target", "fix"], status="conflict")


def helper_hiding_a_conflicting_one(path: Path) -> Scenario:
    """Two helpers by another author make the target apply: `first`, which conflicts itself
    (the branch changed its line), and `second`, which applies. Without `first` the target
    conflicts again, and then `second` spares nothing either: both are suggestions, the
    target a manual backport (pruning runs to a fixpoint)."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn4", "y += 7;", branch=BRANCH)
    k.edit_in("first", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER)
    k.edit_in("second", "drv_fn4", "\ty -= 3;\n", "\ty -= 3;\n\ty ^= 1;\n", author=OTHER)
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["target"], status="conflict")


def helper_that_conflicts_too(path: Path) -> Scenario:
    """The target changes two files: in one it builds on `helper`'s line, in the other it
    changes a line the branch changed too. `helper` conflicts with the branch itself, and
    the target conflicts with or without it: nothing joins. Four absent commits of another
    author last changed lines of the target's hunk in the first file; the three newest
    (`blank`, `tail`, `helper`) are named as its possible dependencies, `head` is not."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn4", "y += 7;", branch=BRANCH)
    k.change("stable-only-2", "fs/core.c", "\ty -= 3;", "\ty -= 5;", branch=BRANCH)
    k.edit_in("head", "drv_fn4", "\tint y = x;", "\tint y = x + 0;", author=OTHER)
    k.edit_in("blank", "drv_fn4", "\ty -= 3;\n\n", "\ty -= 3;\n\t/* y */\n", author=OTHER)
    k.edit_in("tail", "drv_fn4", "\treturn y;", "\treturn y + 0;", author=OTHER)
    k.edit_in("helper", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER)
    files = k.b.files("master")
    drv = files["drivers/drv.c"]
    start = drv.index("\ty -= 3;", drv.index("int drv_fn4(int x)"))
    drv = drv[:start] + "\ty -= 30;" + drv[start + len("\ty -= 3;") :]
    core = files["fs/core.c"].replace("\ty -= 3;", "\ty -= 30;", 1)  # the branch's line
    k.b.commit("drv: target\n\nBoth.\n", {"drivers/drv.c": drv, "fs/core.c": core}, name="target")
    return Scenario(k.b, "target", ["target"], status="conflict")


def helper_beyond_the_targets_files(
    path: Path, author: Person = OTHER, trailers: str = ""
) -> Scenario:
    """The target conflicts; another author's `enabler` resolves it, but also changes a file
    the target does not touch (a feature with a hunk next to the fix): more than the
    backport needs, so it is suggested and the target adapted by hand."""
    k = Kernel(path)
    drv, core = k.b.files("master")["drivers/drv.c"], k.b.files("master")["fs/core.c"]
    k.b.commit(
        f"drv: add a tunable\n\n{trailers}Signed-off-by: Other Dev <other@example.org>\n",
        {
            "drivers/drv.c": drv.replace("\ty *= 2;", "\ty *= 4;", 1),
            "fs/core.c": core.replace("\ty += 1;", "\ty += 11;", 1),
        },
        author=author,
        name="enabler",
    )
    k.edit_in("target", "drv_fn0", "\ty -= 3;", "\ty -= 30;")
    if author.name == DEFAULT_AUTHOR.name or trailers:
        return Scenario(k.b, "target", ["enabler", "target"])
    return Scenario(k.b, "target", ["target"], status="conflict")


def helper_beyond_by_the_authors_other_address(path: Path) -> Scenario:
    """As above, but `enabler` is the target's author's, written from another address (a
    company's and their own, fwupd's Mario Limonciello): the author's own work, taken."""
    return helper_beyond_the_targets_files(path, Person(DEFAULT_AUTHOR.name, "a.thor@corp.example"))


def helper_beyond_co_written_by_the_targets_author(path: Path) -> Scenario:
    """As above, but the target's author is `enabler`'s `Co-authored-by:` (Suricata's
    "dcerpc: add upper limit on stub data", co-written by the author of the fix that builds
    on it): their own work too, taken."""
    co_author = f"Co-authored-by: {DEFAULT_AUTHOR.name} <{DEFAULT_AUTHOR.email}>\n"
    return helper_beyond_the_targets_files(path, trailers=co_author)


def helper_creating_the_targets_files(path: Path) -> Scenario:
    """Another author's `enabler` adds a driver the branch lacks (its file, and a line in a
    file the target does not touch); the target changes only that driver's file: nothing
    of it lands without `enabler`, so there is nothing to adapt it onto, and `enabler` is
    taken (fwupd's "Add a new plugin to update PixArt Touchpads" for a quirk of it)."""
    k = Kernel(path)
    core = k.b.files("master")["fs/core.c"]
    k.b.commit(
        "drv: add the new driver\n\nSigned-off-by: Other Dev <other@example.org>\n",
        {
            "drivers/new.c": c_file("new_fn0", "new_fn1"),
            "fs/core.c": core.replace("\ty += 1;", "\ty += 11;", 1),
        },
        author=OTHER,
        name="enabler",
    )
    k.change("target", "drivers/new.c", "\ty -= 3;", "\ty -= 30;", subject="new: fix a quirk")
    return Scenario(k.b, "target", ["enabler", "target"])


def helper_within_the_targets_files(path: Path) -> Scenario:
    """As above, but the other author's `enabler` changes only the target's own file: a
    context prerequisite, taken."""
    k = Kernel(path)
    k.edit_in("enabler", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER)
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["enabler", "target"])


def _refactor_before_a_fix(
    path: Path, *, carried_fixes: bool, records_deps: bool = False
) -> Kernel:
    """The branch carries 20 backports, fixes (`Fixes:` of the fork) or features by
    `carried_fixes`; upstream, another author's `refactor` (not a fix, five changed lines)
    reworks the target's context, and `target`, a two-line fix, applies only after it. With
    `records_deps`, a branch commit says which fix it was taken for (`Stable-dep-of:`)."""
    k = Kernel(path, functions=20)
    for i in range(20):
        k.edit_fn(
            f"carried{i}",
            f"core_fn{i}",
            f"y += 1{i};",
            path="fs/core.c",
            trailers=k.fixes("v5.10") if carried_fixes else "",
        )
        k.b.cherry_pick(k.b.ids[f"carried{i}"], BRANCH)
    if records_deps:
        dep = f'Stable-dep-of: {k.b.ids["carried1"][:12]} ("drv: carried1")\n'
        k.edit_fn("dep", "core_fn0", "y += 99;", path="fs/core.c", branch=BRANCH, trailers=dep)
    k.edit_in(
        "refactor",
        "drv_fn4",
        "\ty *= 2;\n",
        "\ty <<= 1;\n\ty += 0;\n\ty |= 0;\n\ty &= ~0;\n",
        author=OTHER,
    )
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;", trailers=k.fixes("v5.10"))
    return k


def batch_refactor_in_a_fixes_only_project(path: Path) -> Scenario:
    """As below (a branch that takes fixes), but what makes the target apply is the last
    step of another author's two-step refactor applied upstream in one run, days before:
    a batch is a refactor all the same, larger than the fix, and the maintainers adapt the
    fix around it (rdma-core's `039fe91d6a`, a seven-line overflow fix, after five steps
    of a cmtime rework committed the same day; NetworkManager's `a8329587c8` after a
    16-file rename): pruned, the target adapted by hand."""
    k = Kernel(path, functions=20)
    for i in range(20):
        k.edit_fn(f"carried{i}", f"core_fn{i}", f"y += 1{i};", path="fs/core.c",
                  trailers=k.fixes("v5.10"))  # fmt: skip
        k.b.cherry_pick(k.b.ids[f"carried{i}"], BRANCH)
    k.edit_in("step1", "drv_fn4", "\ty *= 2;\n", "\ty <<= 1;\n", author=OTHER)
    k.b._clock -= 59  # the next patch of the same `git am` run
    k.edit_in(
        "step2", "drv_fn4", "\ty <<= 1;\n", "\ty <<= 1;\n\ty += 0;\n\ty |= 0;\n\ty &= ~0;\n",
        author=OTHER,
    )  # fmt: skip
    k.b._clock += 3 * 86400
    k.edit_in("target", "drv_fn4", "\ty |= 0;", "\ty |= 1;", trailers=k.fixes("v5.10"))
    return Scenario(k.b, "target", ["target"], status="conflict")


def _hand_adapted_mailmap(k: Kernel) -> list[str]:
    """A `.mailmap` the branch's backports always change otherwise: its own entries beside
    every line upstream adds (other context), six upstream additions each backported by
    hand. Upstream's lines as they are now."""
    people = [f"Person {n} <p{n}@example.org>\n" for n in range(40)]
    k.b.commit("add .mailmap", {".mailmap": "".join(people)})
    k.b.cherry_pick("master", BRANCH, name="mailmap-bp")
    ours = list(people)
    for n in range(6):  # the branch's own entries, one beside each spot upstream adds to
        ours.insert(6 * n + 3 + n, f"Stable {n} <s{n}@example.org>\n")
    k.b.commit("mailmap: stable-only entries", {".mailmap": "".join(ours)}, branch=BRANCH)
    theirs = list(people)
    for n in range(6):  # six contributors added upstream, each backported by hand
        entry = f"New {n} <n{n}@example.org>\n"
        theirs.insert(theirs.index(people[6 * n + 3]), entry)
        ours.insert(ours.index(people[6 * n + 3]), entry)
        k.b.commit(f"mailmap: add New {n}", {".mailmap": "".join(theirs)}, name=f"mm{n}")
        k.b.cherry_pick(f"mm{n}", BRANCH, name=f"mm{n}-bp", files={".mailmap": "".join(ours)})
    return theirs


def _target_with(k: Kernel, mailmap: list[str]) -> None:
    code = k.b.files("master")["drivers/drv.c"].replace("y += 1;", "y += 61;", 1)
    k.b.commit(
        f"drv: the target\n\nFixes: {k.b.ids['v5.10'][:12]}\n",
        {".mailmap": "".join(mailmap), "drivers/drv.c": code},
        name="target",
    )


def mailmap_adapted_by_hand(path: Path) -> Scenario:
    """A file the branch's backports always change otherwise (its `.mailmap` has its own
    entries beside every line upstream adds: other context): the target adds an entry
    next to lines another author's `.mailmap` change rewrote, and conflicts there only.
    No prerequisite is looked for in such a file (DPDK's `.mailmap`): the target alone,
    `conflict`, with a warning naming the file (issue 61)."""
    k = Kernel(path)
    theirs = _hand_adapted_mailmap(k)
    rewritten = [line.replace("Person 30 ", "Person Thirty ") for line in theirs]
    k.b.commit(
        "mailmap: fold an alias", {".mailmap": "".join(rewritten)}, name="alias", author=OTHER
    )
    at = rewritten.index("Person Thirty <p30@example.org>\n")
    _target_with(k, [*rewritten[: at + 1], "Newest <nn@example.org>\n", *rewritten[at + 1 :]])
    return Scenario(k.b, "target", ["target"], status="conflict")


def hand_adapted_file_line_the_target_changes(path: Path) -> Scenario:
    """As `mailmap_adapted_by_hand`, but the target changes a line of that file (not only
    adds beside it) that an absent commit wrote: the line it replaces exists only after
    that commit, which is a prerequisite as anywhere else (containerd's `ci.yml`, adapted by
    hand, where a version bump needs the bump before it: `7f5d9c25bf` for `7053b5cd10`)."""
    k = Kernel(path)
    theirs = _hand_adapted_mailmap(k)
    moved = [line.replace("<p39@example.org>", "<p39@new.example.org>") for line in theirs]
    k.b.commit("mailmap: a new address", {".mailmap": "".join(moved)}, name="moved", author=OTHER)
    _target_with(k, [line.replace("@new.example.org", "@newer.example.org") for line in moved])
    return Scenario(k.b, "target", ["moved", "target"])


def refactor_in_a_fixes_only_project(path: Path) -> Scenario:
    """A branch that takes fixes (every backport is one): the target conflicts, and what
    makes it apply is a refactor larger than the fix, so it is suggested and the target
    adapted by hand, as a maintainer of such a branch does."""
    k = _refactor_before_a_fix(path, carried_fixes=True)
    return Scenario(k.b, "target", ["target"], status="conflict")


def refactor_in_a_project_recording_stable_deps(path: Path) -> Scenario:
    """A branch of fixes that records `Stable-dep-of:` (as the kernel's do) takes the
    prerequisites its fixes need: the refactor is taken."""
    k = _refactor_before_a_fix(path, carried_fixes=True, records_deps=True)
    return Scenario(k.b, "target", ["refactor", "target"])


def refactor_in_a_project_taking_refactors(path: Path) -> Scenario:
    """As above, but the branch's backports are features too: the refactor is taken."""
    k = _refactor_before_a_fix(path, carried_fixes=False)
    return Scenario(k.b, "target", ["refactor", "target"])


_NEWS = "Overview of changes since 1.48\n\n* first item\n* second item\n"


def _news_before_a_fix(path: Path) -> Kernel:
    """Upstream updated the release notes (`news-update`, only NEWS) after the branch forked;
    the target fixes code and adds a line to those notes, next to the updated lines."""
    k = _forked_with("NEWS", _NEWS, path)
    updated = _NEWS.replace("* second item\n", "* second item, reworded\n* third item\n")
    _signed(k, "NEWS: update for 1.50", {"NEWS": updated}, "news-update")
    code = k.b.files("master")["drivers/drv.c"]
    _signed(
        k,
        'drv: fix drv_fn4\n\nSome explanation.\n\nFixes: 000000000000 ("none")',
        {
            "drivers/drv.c": code.replace("\ty -= 3;", "\ty -= 30;", 1),
            "NEWS": updated + "* drv_fn4 fixed\n",
        },
        "target",
    )
    return k


def _signed(k: Kernel, message: str, files: dict[str, str | None], name: str) -> str:
    """Commit `files` on master as `name`, the message signed off."""
    return k.b.commit(f"{message}\n\nSigned-off-by: Dev <dev@example.org>\n", files, name=name)


def _forked_with(path_in_repo: str, text: str, path: Path) -> Kernel:
    """A kernel whose branch forks after `path_in_repo` was added with `text`."""
    k = Kernel(path)
    _signed(k, f"add {path_in_repo}", {path_in_repo: text}, "added")
    k.b.branch(BRANCH, "master")
    return k


def release_notes_conflict(path: Path) -> Scenario:
    """The target conflicts only in the release notes, which a notes-only commit upstream
    would make apply: no code needs such a commit, and maintainers adapt the notes by hand
    (on real history they did), so the target is reported as needing a manual backport."""
    k = _news_before_a_fix(path)
    return Scenario(k.b, "target", ["target"], status="conflict")


def adapted_without_its_release_notes(path: Path) -> Scenario:
    """The branch took the target adapted (its code, not its release-notes line): what the
    upstream patch lacks there is only a notes-only commit, so nothing is missing."""
    k = _news_before_a_fix(path)
    code = k.b.files(BRANCH)["drivers/drv.c"]
    k.b.cherry_pick(
        "target", BRANCH, files={"drivers/drv.c": code.replace("\ty -= 3;", "\ty -= 30;", 1)}
    )
    return Scenario(k.b, "target", [], status="already-present")


def documentation_fix_after_another(path: Path) -> Scenario:
    """A fix of the documentation that conflicts without an earlier documentation fix: for
    a member that changes only documentation, documentation is what it needs."""
    guide = "Guide\n=====\n\n* option a\n* option b\n* option c\n"
    k = _forked_with("doc/guide.rst", guide, path)
    fixed = guide.replace("* option b\n", "* option b (fixed)\n")
    _signed(k, "doc: fix option b", {"doc/guide.rst": fixed}, "doc-helper")
    new = fixed.replace("* option c\n", "* option c (fixed)\n")
    _signed(k, "doc: fix option c", {"doc/guide.rst": new}, "target")
    return Scenario(k.b, "target", ["doc-helper", "target"])


def manual_rewritten_by_the_targets_posting(path: Path) -> Scenario:
    """The target changes code and documents it in the manual, whose section the patch
    before it in the same posting rewrapped (applied in one run, by one author): that
    documentation-only patch is what the target needs there (Suricata's pgsql manual)."""
    manual = (
        "Messages\n========\n\n"
        "* startup: a message a client sends to start a connection to the server\n"
        "* query: a command the client issues during the simple query subprotocol\n"
    )
    k = _forked_with("doc/manual.rst", manual, path)
    wrapped = manual.replace(
        "* startup: a message a client sends to start a connection to the server\n",
        "* startup: a message a client sends to start\n  a connection to the server\n",
    ).replace(
        "* query: a command the client issues during the simple query subprotocol\n",
        "* query: a command the client issues during\n  the simple query subprotocol\n",
    )
    k.b.commit("doc: wrap the messages section", {"doc/manual.rst": wrapped}, name="doc-helper")
    code = k.b.files("master")["drivers/drv.c"]
    k.b.commit(
        "drv: log the cancel message",
        {
            "drivers/drv.c": code.replace("\ty -= 3;", "\ty -= 30;", 1),
            "doc/manual.rst": wrapped + "* cancel: sent to cancel\n  a query\n",
        },
        name="target",
        gap=1,
    )
    return Scenario(k.b, "target", ["doc-helper", "target"])


def helper_fixing_an_absent_commit(path: Path) -> Scenario:
    """The target applies only after `helper`, another author's fix of a commit the branch
    lacks, which conflicts itself: for this branch that fix is a helper like any other, so it
    is suggested and the target adapted by hand."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn4", "y += 7;", branch=BRANCH)
    k.edit_in("feature", "drv_fn7", "\ty += 1;", "\ty += 70;", author=OTHER)
    k.edit_in(
        "helper", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER, trailers=k.fixes("feature")
    )
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["target"], status="conflict")


def helper_fixing_a_feature_that_leaves(path: Path) -> Scenario:
    """The target changes a line another author's `feature` wrote and one its `fix` (a
    `Fixes:` of the feature) wrote, and conflicts: the search finds both. The feature
    conflicts with the branch and leaves as no help; the target conflicts still, so the
    series needs a human, and `fix`, a follow-up of the feature only while the feature was
    in the series, is a helper like any other: it leaves too (OVN's `24c432d2be` on
    branch-24.03 held `d03d194407`, a fix of the spine-leaf feature `a2db2b2f26`, after the
    feature left)."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn4", "y += 7;", branch=BRANCH)
    k.edit_in("feature", "drv_fn4", "\ty += 1;", "\ty += 100;", author=OTHER)
    k.edit_in("fix", "drv_fn4", "\ty -= 3;", "\ty -= 4;", author=OTHER, trailers=k.fixes("feature"))
    k.edit_in(
        "target",
        "drv_fn4",
        "\ty += 100;\n\ty *= 2;\n\ty -= 4;",
        "\ty += 101;\n\ty *= 2;\n\ty -= 41;",
    )
    return Scenario(k.b, "target", ["target"], status="conflict")


def helper_fixing_a_present_commit(path: Path) -> Scenario:
    """As above, but `helper` fixes a commit the branch has: a fix the branch needs in its own
    right (a scan reports it as a missing fix); as it conflicts itself it spares nothing here,
    so it is suggested too and the target adapted by hand."""
    k = Kernel(path)
    k.edit_fn("stable-only", "drv_fn4", "y += 7;", branch=BRANCH)
    k.edit_in(
        "helper", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER, trailers=k.fixes("v5.10")
    )
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["target"], status="conflict")


def fix_helper_when_a_follow_up_conflicts(path: Path) -> Scenario:
    """The target applies after `helper`, another author's fix of a commit the branch has,
    which applies; the target's follow-up conflicts, so the series needs a human anyway. A
    helper that is only a helper would be suggested then; a fix the branch needs in its own
    right stays."""
    k = Kernel(path)
    k.edit_in(
        "helper", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=OTHER, trailers=k.fixes("v5.10")
    )
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    k.edit_in("refactor", "drv_fn6", "\ty *= 2;", "\ty *= 3;", author=OTHER)
    k.edit_in("fix", "drv_fn6", "\ty -= 3;", "\ty -= 4;", trailers=k.fixes("target"), author=OTHER)
    return Scenario(k.b, "target", ["helper", "target", "fix"], status="conflict")


def reapplied_after_revert(path: Path) -> Scenario:
    """The target reverts a commit the branch carries; upstream later re-applied it (the same
    patch, the same subject) with `Fixes:` naming both. The branch's backport of the original
    says nothing about the re-application, which is the revert's follow-up."""
    k = Kernel(path)
    k.edit_fn("original", "drv_fn1", "y += 100;")
    k.b.cherry_pick("original", BRANCH, annotation="cherry-pick", name="original-bp")
    k.b.revert("original", "master", name="target")
    message = "drv: original\n\nSome explanation, and what changed since.\n\n"
    message += k.fixes("original") + k.fixes("target") + "Signed-off-by: Dev <dev@example.org>\n"
    k.b.cherry_pick("original", "master", message=message, name="reapply")
    return Scenario(k.b, "target", ["target", "reapply"])


def relanded_after_revert(path: Path) -> Scenario:
    """Upstream reverted the target (committed without an ack, say) and later committed the
    same change again as a new commit, not a revert of the revert (real: Xen's
    `a6dba2761e`, reverted by `7a88871aac`, re-landed as `41c8049608`). The change stands
    at upstream's tip: the revert is not in force, and the target is backported as usual."""
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.edit_fn("noise", "drv_fn5", "y += 5;")
    k.b.revert("target", "master", name="revert")
    message = "drv: target again, now with the acks\n\nSigned-off-by: Dev <dev@example.org>\n"
    k.b.cherry_pick("target", "master", message=message, name="reland")
    return Scenario(k.b, "target", ["target"])


def follow_up_reverted_upstream(path: Path) -> Scenario:
    """The target's follow-up was reverted upstream (a plain revert, which names nothing in
    `Fixes:`): upstream took it back, and the follow-up with its revert is nothing to take.
    The series is the target alone, as a resolve of the follow-up says `reverted-upstream`."""
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("target"))
    k.b.revert("fix", "master", name="revert")
    return Scenario(k.b, "target", ["target"])


def follow_up_and_its_revert_naming_it(path: Path) -> Scenario:
    """The target's follow-up was reverted upstream by a revert that names it in `Fixes:`
    (a follow-up of the follow-up, as DPDK writes them): the pair cancels, and neither is
    proposed beside the target (issue 61's DPDK report)."""
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("target"))
    k.b.revert("fix", "master", name="revert", body=k.fixes("fix"))
    return Scenario(k.b, "target", ["target"])


def present_follow_up_reverted_upstream(path: Path) -> Scenario:
    """The branch took the target and its follow-up; upstream then reverted the follow-up
    (a plain revert). The branch lacks the revert: the target's closure is incomplete
    without it (real: NetworkManager's `a1c05d2ce6`, on nm-1-48 and nm-1-50, reverted
    upstream by `ba86c208e0`). A reverted follow-up is left out only where it is absent."""
    k = Kernel(path)
    k.edit_fn("target", "drv_fn1", "y += 100;")
    k.b.cherry_pick("target", BRANCH, name="target-bp")
    k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=k.fixes("target"))
    k.b.cherry_pick("fix", BRANCH, name="fix-bp")
    k.b.revert("fix", "master", name="revert")
    return Scenario(k.b, "target", ["revert"], status="incomplete")


def fix_cherry_picked_onto_mainline(path: Path) -> Scenario:
    """Projects that develop a fix on its own branch and cherry-pick it onto the mainline
    (NetworkManager): the maintainer asks for the branch's commit, which is not upstream;
    upstream has its copy (`cherry picked from` it), and the follow-up's copy, whose `Fixes:`
    names the original id. The follow-up of the copy is the target's follow-up."""
    k = Kernel(path)
    k.b.branch("fix-branch", "master")
    k.edit_fn("target", "drv_fn1", "y += 100;", branch="fix-branch")
    k.b.cherry_pick("target", "master", annotation="cherry-pick", name="target-copy")
    k.edit_fn("noise", "drv_fn5", "y += 5;")
    k.edit_fn("fix", "drv_fn2", "y += 2;", branch="fix-branch", trailers=k.fixes("target"))
    k.b.cherry_pick("fix", "master", annotation="cherry-pick", name="fix-copy")
    return Scenario(k.b, "target", ["target", "fix-copy"])


def context_suggestion(path: Path) -> Scenario:
    """The target applies cleanly, but an absent commit changed the logic of the code around
    its change (suggested), and another only changed a comment there (not suggested)."""
    k = Kernel(path)
    k.edit_in("logic", "drv_fn4", "\tint y = x;", "\tint y = x * 2;")
    k.edit_in("comment", "drv_fn4", "\treturn y;", "\treturn y; /* done */")
    k.edit_in("target", "drv_fn4", "\ty *= 2;", "\ty *= 8;")
    return Scenario(k.b, "target", ["target"])


def symbol_from_big_feature(path: Path) -> Scenario:
    """A one-line fix calls a lock helper that only a large feature introduced: stable would
    adapt the fix rather than take the feature, so the fix needs a manual backport and the
    feature is a suggestion."""
    k = Kernel(path)
    body = "".join(f"\tqp->feature_field_{i} = {i};\n" for i in range(80))
    k.b.commit(
        "drv: add thread domains (a feature)\n\nSigned-off-by: Dev <dev@example.org>\n",
        {
            "include/linux/drv_td.h": "void drv_td_lock(struct drv_qp *qp);\n",
            "drivers/drv_td.c": "void drv_td_lock(struct drv_qp *qp)\n{\n" + body + "}\n",
        },
        name="feature",
    )
    k.edit_fn("target", "drv_fn1", "drv_td_lock(qp);", trailers=k.fixes("v5.10"))
    return Scenario(k.b, "target", ["target"], status="conflict")


def smb_client_moved_after_the_fork(path: Path) -> Scenario:
    """The kernel's `fs/cifs` -> `fs/smb/client` (6.4) shape. After the branch forked,
    upstream wrote the culprit (backported to the branch) and a prerequisite at
    fs/cifs/connect.c, then moved the directory; the fix lands at the new path, conflicts
    without the prerequisite, and has a follow-up. The series is [prerequisite, fix,
    follow-up], each applying at the branch's fs/cifs path, as `git cherry-pick` puts it;
    the move is no member."""
    old, new = "fs/cifs/connect.c", "fs/smb/client/connect.c"
    k = _forked_with(old, c_file(*[f"cifs_fn{i}" for i in range(6)]), path)
    k.edit_fn("culprit", "cifs_fn1", "y += 100;", path=old, subject="cifs: culprit")
    k.b.cherry_pick("culprit", BRANCH, name="culprit-bp")
    body = k.b.files("master")[old]
    start = body.index("int cifs_fn3(int x)")
    k.change("prerequisite", old, body[start:], body[start:].replace("\ty *= 2;", "\ty *= 4;", 1),
             author=OTHER, subject="cifs: prepare cifs_fn3")  # fmt: skip
    _signed(k, "smb: move the client to fs/smb/client",
            {old: None, new: k.b.files("master")[old]}, "move")  # fmt: skip
    body = k.b.files("master")[new]
    start = body.index("int cifs_fn3(int x)")
    k.change("fix", new, body[start:], body[start:].replace("\ty -= 3;", "\ty -= 30;", 1),
             subject="smb: client: fix cifs_fn3", trailers=k.fixes("culprit"))  # fmt: skip
    k.edit_fn("follow-up", "cifs_fn5", "y += 5;", path=new, subject="smb: client: fix the fix",
              trailers=k.fixes("fix"))  # fmt: skip
    return Scenario(k.b, "fix", ["prerequisite", "fix", "follow-up"])


def _follow_up_in_a_new_driver(path: Path, also: dict[str, str]) -> Kernel:
    """Upstream adds a second driver after the fork (`new-driver`, never backported); the
    target fixes the old one, and its follow-up brings the same fix to the new driver:
    `drivers/new.c` and whatever `also` changes besides."""
    k = Kernel(path)
    k.b.commit(
        "drv: add the new driver\n",
        {
            "drivers/new.c": c_file("new_fn0", "new_fn1"),
            "tests/test-new.c": "int main(void) { return 0; }\n",
        },
        name="new-driver",
    )
    k.edit_in("target", "drv_fn1", "\ty += 1;", "\ty += 100;")
    files = k.b.files("master")
    changed = {"drivers/new.c": files["drivers/new.c"].replace("y += 1;", "y += 100;", 1)}
    changed.update(also)
    k.b.commit(
        "drv: the same fix for the new driver\n\n" + k.fixes("target"),
        changed,
        name="follow-up",
    )
    return k


def follow_up_of_a_part_never_had(path: Path) -> Scenario:
    """A follow-up of the target that changes only a driver the branch never had (and that
    driver's test): optional, a suggestion, not a member; the target alone is ready."""
    k = _follow_up_in_a_new_driver(path, {"tests/test-new.c": "int main(void) { return 1; }\n"})
    return Scenario(k.b, "target", ["target"])


def follow_up_of_a_part_never_had_and_of_code_there(path: Path) -> Scenario:
    """The same follow-up changing the old driver's code too: a member (it conflicts on the
    new driver, which a human leaves out), the series `conflict`."""
    k = _follow_up_in_a_new_driver(path, {})
    files = k.b.files("master")
    k.b.commit(
        "drv: the fix in both drivers, again\n\n" + k.fixes("target"),
        {
            "drivers/new.c": files["drivers/new.c"].replace("y *= 2;", "y *= 3;", 1),
            "drivers/drv.c": files["drivers/drv.c"].replace("y *= 2;", "y *= 3;", 1),
        },
        name="both",
    )
    return Scenario(k.b, "target", ["target", "both"], status="conflict")


def conflict_resolved_beside_anothers_change(path: Path) -> Scenario:
    """As `conflict_resolved_by_one`, `context` another author's change of a day before:
    the target needs `enabler` alone."""
    k = Kernel(path)
    k.edit_in("context", "drv_fn4", "\tint y = x;", "\tint y = x; /* c */", author=OTHER)
    k.b._clock += 86400
    k.edit_in("enabler", "drv_fn4", "\ty *= 2;", "\ty *= 4;", author=REFACTORER)
    k.b._clock += 86400
    k.edit_in("target", "drv_fn4", "\ty -= 3;", "\ty -= 30;")
    return Scenario(k.b, "target", ["enabler", "target"])


def _cosmetic_follow_ups(path: Path, *, taken: bool) -> Scenario:
    """Six fixes backported, each with a comment-typo follow-up upstream (`taken`: the
    branch backported those too, else it left them), months before the branch's tip; the
    target has such a follow-up too."""
    k = Kernel(path)
    for i in range(6):
        k.edit_in(f"fix{i}", f"drv_fn{i}", "\ty += 1;", f"\t/* fix {i}: hadnle x */\n\ty += 1{i};")
        k.b.cherry_pick(f"fix{i}", BRANCH, name=f"fix{i}-bp")
        k.edit_in(f"typo{i}", f"drv_fn{i}", "hadnle", "handle", trailers=k.fixes(f"fix{i}"))
        if taken:
            k.b.cherry_pick(f"typo{i}", BRANCH, name=f"typo{i}-bp")
    k.b._clock += 90 * 86400
    k.edit_fn("stable-only", "drv_fn7", "y += 55;", branch=BRANCH)
    k.edit_in("target", "drv_fn6", "\ty += 1;", "\t/* target: hadnle x */\n\ty += 100;")
    k.edit_in("typo", "drv_fn6", "hadnle", "handle", trailers=k.fixes("target"))
    return Scenario(k.b, "target", ["target", "typo"] if taken else ["target"])


def cosmetic_follow_up_on_a_branch_that_leaves_them(path: Path) -> Scenario:
    """The branch left the six comment fixes: the target's own is optional, a suggestion."""
    return _cosmetic_follow_ups(path, taken=False)


def cosmetic_follow_up_on_a_branch_that_takes_them(path: Path) -> Scenario:
    """The branch took the six: the target's comment fix is a member."""
    return _cosmetic_follow_ups(path, taken=True)


ALL: dict[str, Callable[[Path], Scenario]] = {
    "smb_client_moved_after_the_fork": smb_client_moved_after_the_fork,
    "release_notes_conflict": release_notes_conflict,
    "documentation_fix_after_another": documentation_fix_after_another,
    "manual_rewritten_by_the_targets_posting": manual_rewritten_by_the_targets_posting,
    "adapted_without_its_release_notes": adapted_without_its_release_notes,
    "follow_up_chain": follow_up_chain,
    "wrong_id_follow_up": wrong_id_follow_up,
    "culprit_absent": culprit_absent,
    "culprit_absent_in_a_project_that_never_tags": culprit_absent_in_a_project_that_never_tags,
    "culprit_absent_where_tags_are_only_quoted": culprit_absent_where_tags_are_only_quoted,
    "culprit_absent_where_one_fix_in_a_hundred_is_tagged": (
        culprit_absent_where_one_fix_in_a_hundred_is_tagged
    ),
    "culprit_present": culprit_present,
    "fixes_chain": fixes_chain,
    "two_culprits_one_absent": two_culprits_one_absent,
    "tagged_culprit_fixing_what_the_branch_never_had": (
        tagged_culprit_fixing_what_the_branch_never_had
    ),
    "culprit_fixing_what_the_branch_never_had": culprit_fixing_what_the_branch_never_had,
    "present_by_annotation": present_by_annotation,
    "follow_up_and_its_revert_naming_it": follow_up_and_its_revert_naming_it,
    "another_authors_batch": another_authors_batch,
    "another_authors_batch_from_two_addresses": another_authors_batch_from_two_addresses,
    "another_authors_old_batch": another_authors_old_batch,
    "mailmap_adapted_by_hand": mailmap_adapted_by_hand,
    "hand_adapted_file_line_the_target_changes": hand_adapted_file_line_the_target_changes,
    "batch_refactor_in_a_fixes_only_project": batch_refactor_in_a_fixes_only_project,
    "present_by_patch": present_by_patch,
    "incomplete_follow_up": incomplete_follow_up,
    "newer_branch_stable_dep": newer_branch_stable_dep,
    "conflict_resolved_by_one": conflict_resolved_by_one,
    "cosmetic_follow_up_on_a_branch_that_leaves_them": (
        cosmetic_follow_up_on_a_branch_that_leaves_them
    ),
    "cosmetic_follow_up_on_a_branch_that_takes_them": (
        cosmetic_follow_up_on_a_branch_that_takes_them
    ),
    "conflict_resolved_beside_anothers_change": conflict_resolved_beside_anothers_change,
    "follow_up_of_a_part_never_had": follow_up_of_a_part_never_had,
    "follow_up_of_a_part_never_had_and_of_code_there": (
        follow_up_of_a_part_never_had_and_of_code_there
    ),
    "branch_only_conflict": branch_only_conflict,
    "reverted_upstream": reverted_upstream,
    "upstream_merges": upstream_merges,
    "declared_prerequisite": declared_prerequisite,
    "long_chain": long_chain,
    "conflict_chain": conflict_chain,
    "conflict_chain_behind_a_conflicting_follow_up": conflict_chain_behind_a_conflicting_follow_up,
    "helper_when_a_follow_up_conflicts": helper_when_a_follow_up_conflicts,
    "symbol_from_a_rename": symbol_from_a_rename,
    "revert_that_names_its_target": revert_that_names_its_target,
    "other_authors_step": other_authors_step,
    "culprit_tagged_for_project_stable": culprit_tagged_for_project_stable,
    "culprit_in_sibling_branch": culprit_in_sibling_branch,
    "culprit_in_sibling_branch_by_patch_id": culprit_in_sibling_branch_by_patch_id,
    "follow_up_of_present_follow_up": follow_up_of_present_follow_up,
    "short_fixes_id": short_fixes_id,
    "fix_cherry_picked_onto_mainline": fix_cherry_picked_onto_mainline,
    "deleted_context": deleted_context,
    "kconfig_symbol": kconfig_symbol,
    "own_series_chain": own_series_chain,
    "conflicting_follow_up": conflicting_follow_up,
    "helper_hiding_a_conflicting_one": helper_hiding_a_conflicting_one,
    "helper_that_conflicts_too": helper_that_conflicts_too,
    "helper_fixing_an_absent_commit": helper_fixing_an_absent_commit,
    "helper_beyond_the_targets_files": helper_beyond_the_targets_files,
    "helper_beyond_by_the_authors_other_address": helper_beyond_by_the_authors_other_address,
    "helper_beyond_co_written_by_the_targets_author": (
        helper_beyond_co_written_by_the_targets_author
    ),
    "posting_step_that_needs_a_human": posting_step_that_needs_a_human,
    "authors_earlier_posting": authors_earlier_posting,
    "posting_filled_in_between": posting_filled_in_between,
    "authors_earlier_posting_on_anothers_work": authors_earlier_posting_on_anothers_work,
    "helper_within_the_targets_files": helper_within_the_targets_files,
    "helper_creating_the_targets_files": helper_creating_the_targets_files,
    "refactor_in_a_fixes_only_project": refactor_in_a_fixes_only_project,
    "refactor_in_a_project_taking_refactors": refactor_in_a_project_taking_refactors,
    "refactor_in_a_project_recording_stable_deps": refactor_in_a_project_recording_stable_deps,
    "helper_fixing_a_present_commit": helper_fixing_a_present_commit,
    "helper_fixing_a_feature_that_leaves": helper_fixing_a_feature_that_leaves,
    "reapplied_after_revert": reapplied_after_revert,
    "relanded_after_revert": relanded_after_revert,
    "follow_up_reverted_upstream": follow_up_reverted_upstream,
    "present_follow_up_reverted_upstream": present_follow_up_reverted_upstream,
    "fix_helper_when_a_follow_up_conflicts": fix_helper_when_a_follow_up_conflicts,
    "context_suggestion": context_suggestion,
    "symbol_helper": symbol_helper,
    "symbol_from_big_feature": symbol_from_big_feature,
    "symbol_present": symbol_present,
    "symbol_of_a_library": symbol_of_a_library,
    "symbol_the_build_defines": symbol_the_build_defines,
    "symbol_defined_in_other_forms": symbol_defined_in_other_forms,
    "symbol_from_conflicting_commit": symbol_from_conflicting_commit,
}


# A follow-up written in each form of relation_forms.FORMS ({id}: the target's 12-digit id).
FOLLOW_UP_LINES = {
    "Follow-up for": "Follow-up for {id}.\n",
    "Fixup for": "Fixup for {id}, as requested in review.\n",
    "Fixes commit": "The driver stalled when the queue was full (fixes commit {id}).\n",
    "This fixes": "This fixes {id}, which passed the wrong length.\n",
    "Regression from": "It is a regression from {id}.\n",
    "Introduced by": "Fixes a bug introduced by {id}.\n",
    "Caused by": "The stall was caused by recent commit {id}.\n",
    "Broken by": "The queue length was broken by {id}.\n",
    "Part of": "This was meant to be part of commit {id}.\n",
    "Backported where": "This must be backported wherever {id} is.\n",
    'Commit <id> ("...") introduced': 'Commit {id} ("{subject}") introduced a bug in drv_fn2.\n',
    "Fixes:": 'Fixes: {id} ("{subject}")\n',
}


def follow_up_in_form(form: str) -> Callable[[Path], Scenario]:
    """The target's follow-up names it in `form`, not in a `Fixes:` line (a project such as
    systemd writes `Follow-up for <id>`): it is a follow-up all the same."""

    def build(path: Path) -> Scenario:
        k = Kernel(path)
        target = k.edit_fn("target", "drv_fn1", "y += 100;")
        line = FOLLOW_UP_LINES[form].format(id=target[:12], subject="drv: target")
        k.edit_fn("noise", "drv_fn5", "y += 5;")
        k.edit_fn("fix", "drv_fn2", "y += 2;", trailers=line)
        return Scenario(k.b, "target", ["target", "fix"])

    return build
