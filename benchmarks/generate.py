#!/usr/bin/env python3
"""Generate a large kernel-shaped repository with `git fast-import`.

    python benchmarks/generate.py /tmp/big --upstream 300000 --stable 20000
    python benchmarks/generate.py /tmp/big --append 1000      # N more upstream commits

Upstream (`master`): each commit changes one line of one of many C files; messages carry
Signed-off-by and Link: lines, `Fixes: <12 hex> ("subject")` on ~15% (naming an earlier commit
that touched the same file; ~3% with a wrong id but the right subject), `Cc: stable` on ~8%; a
one-commit topic branch is merged every 100 commits. `linux-5.10.y` forks at tag v5.10 and
carries backports of upstream commits after the fork: `commit <40 hex> upstream.` (80%),
`[ Upstream commit X ]` (15%) or no reference at all (5%), "Linux 5.10.N" release commits, and a
few backports reverted in the branch. Fixes: lines cite real ids: fast-import's `get-mark`
answers with each commit's id as it is written. Deterministic for a given seed.

Prints a JSON summary (ids useful to the benchmarks) on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

LINES_PER_FILE = 40
AREAS = [
    "drivers/net",
    "drivers/gpu",
    "fs/ext4",
    "fs/btrfs",
    "mm",
    "kernel/sched",
    "net/ipv4",
    "security/integrity/ima",
    "sound/soc",
    "arch/x86/kvm",
]
WORDS = [
    "fix",
    "handle",
    "avoid",
    "use",
    "drop",
    "add",
    "rework",
    "simplify",
    "check",
    "free",
    "leak",
    "race",
    "overflow",
    "refcount",
    "lock",
    "error",
    "null",
    "timeout",
]
AUTHORS = [
    ("Alice Dev", "alice@example.org"),
    ("Bob Hacker", "bob@example.org"),
    ("Carol Maintainer", "carol@example.org"),
    ("Dan Fixer", "dan@example.org"),
]
LINUS = ("Linus Torvalds", "torvalds@example.org")
GREG = ("Greg KH", "greg@example.org")


@dataclass(frozen=True)
class Change:
    """One upstream commit's change: line `k` of `path` becomes `text`."""

    path: str
    k: int
    text: str


@dataclass
class Tree:
    """A branch's file contents (loaded lazily) and tip mark or ref."""

    files: dict[str, list[str]]
    tip: str | None = None
    loader: object = None

    def get(self, path: str) -> list[str]:
        if path not in self.files:
            self.files[path] = self.loader(path) if self.loader else _initial(path)  # type: ignore[operator]
        return self.files[path]


def _initial(path: str) -> list[str]:
    stem = path.rsplit("/", 1)[-1][:-2]
    return [f"int {stem}_v{k} = 0;\n" for k in range(LINES_PER_FILE)]


@dataclass
class Generator:
    repo: Path
    rng: random.Random
    paths: list[str]
    clock: int = 1_500_000_000
    mark: int = 0
    proc: subprocess.Popen[bytes] | None = None
    ids: dict[int, str] = field(default_factory=dict)
    subjects: dict[int, str] = field(default_factory=dict)
    changes: dict[int, Change] = field(default_factory=dict)
    touching: dict[str, list[int]] = field(default_factory=dict)
    kernel_messages: bool = False

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "git",
                "-C",
                str(self.repo),
                "fast-import",
                "--quiet",
                "--cat-blob-fd=1",
                "--done",
                "--force",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def write(self, data: bytes) -> None:
        assert self.proc and self.proc.stdin
        self.proc.stdin.write(data)

    def id_of(self, mark: int) -> str:
        if mark not in self.ids:
            assert self.proc and self.proc.stdin and self.proc.stdout
            self.write(f"get-mark :{mark}\n".encode())
            self.proc.stdin.flush()
            self.ids[mark] = self.proc.stdout.readline().decode().strip()
        return self.ids[mark]

    def finish(self) -> None:
        assert self.proc and self.proc.stdin
        self.write(b"done\n")
        self.proc.stdin.close()
        if self.proc.wait() != 0:
            raise SystemExit("git fast-import failed")

    def commit(
        self,
        ref: str,
        tree: Tree,
        message: str,
        files: dict[str, list[str]],
        author: tuple[str, str],
        merge: int | None = None,
    ) -> int:
        self.mark += 1
        self.clock += 60
        body = message.encode()
        parts = [
            f"commit {ref}\nmark :{self.mark}\n"
            f"author {author[0]} <{author[1]}> {self.clock} +0000\n"
            f"committer {author[0]} <{author[1]}> {self.clock} +0000\n"
            f"data {len(body)}\n".encode(),
            body,
            b"\n",
        ]
        if tree.tip is not None:
            parts.append(f"from {tree.tip}\n".encode())
        if merge is not None:
            parts.append(f"merge :{merge}\n".encode())
        for path, lines in files.items():
            data = "".join(lines).encode()
            parts.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
            tree.files[path] = lines
        parts.append(b"\n")
        self.write(b"".join(parts))
        tree.tip = f":{self.mark}"
        return self.mark

    def message(self, subject: str, extra: list[str], author: tuple[str, str]) -> str:
        rng = self.rng
        words = " ".join(rng.choice(WORDS) for _ in range(10))
        lines = [subject, "", f"This change {words}.", "It keeps the old behaviour otherwise.", ""]
        if self.kernel_messages:  # as long as the kernel's (about 1 KB) and its trailer mix
            for _ in range(rng.randint(6, 20)):
                lines.append(" ".join(rng.choice(WORDS) for _ in range(11)).capitalize() + ".")
            lines.append("")
            for trailer in ("Reported-by", "Reviewed-by", "Acked-by", "Tested-by", "Cc"):
                if rng.random() < 0.35:
                    who = rng.choice(AUTHORS)
                    lines.append(f"{trailer}: {who[0]} <{who[1]}>")
        lines += extra
        lines.append(f"Signed-off-by: {author[0]} <{author[1]}>")
        lines.append(f"Link: https://lore.kernel.org/r/{self.clock}.{self.mark}-1-dev@example.org")
        return "\n".join(lines) + "\n"

    def upstream(self, tree: Tree, n: int, ref: str = "refs/heads/master") -> int:
        rng = self.rng
        path = rng.choice(self.paths)
        lines = list(tree.get(path))
        k = rng.randrange(LINES_PER_FILE)
        stem = path.rsplit("/", 1)[-1][:-2]
        lines[k] = f"int {stem}_v{k} = {n + 1};\n"
        author = rng.choice(AUTHORS)
        area = path.split("/")[-2]
        subject = f"{area}: {rng.choice(WORDS)} {rng.choice(WORDS)} in {stem} ({n})"
        extra: list[str] = []
        earlier = self.touching.get(path, [])
        roll = rng.random()
        if earlier and roll < 0.15:
            culprit = rng.choice(earlier[-20:])
            cid = self.id_of(culprit)
            if rng.random() < 0.03:
                cid = "0000" + cid[4:]
            extra.append(f'Fixes: {cid[:12]} ("{self.subjects[culprit]}")')
        if roll > 0.92:
            extra.append("Cc: stable@vger.kernel.org")
        mark = self.commit(ref, tree, self.message(subject, extra, author), {path: lines}, author)
        self.subjects[mark] = subject
        self.changes[mark] = Change(path, k, lines[k])
        self.touching.setdefault(path, []).append(mark)
        return mark

    def merge_topic(self, tree: Tree, n: int) -> list[int]:
        topic = Tree(dict(tree.files), tree.tip, tree.loader)
        side = self.upstream(topic, n, ref=f"refs/heads/topic/{n % 7}")
        main = self.upstream(tree, n + 1)
        change = self.changes[side]
        lines = list(tree.get(change.path))
        lines[change.k] = change.text
        self.commit(
            "refs/heads/master",
            tree,
            f"Merge branch 'topic-{n}'\n",
            {change.path: lines},
            LINUS,
            merge=side,
        )
        return [side, main]


def build(
    repo: Path,
    upstream: int,
    stable: int,
    seed: int,
    files: int,
    branches: int = 1,
    kernel_messages: bool = False,
) -> dict[str, object]:
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    rng = random.Random(seed)
    paths = [f"{AREAS[i % len(AREAS)]}/file{i}.c" for i in range(files)]
    g = Generator(repo, rng, paths, kernel_messages=kernel_messages)
    g.start()
    main = Tree({})
    g.commit("refs/heads/master", main, "Linux 4.0\n", {p: _initial(p) for p in paths}, LINUS)
    names = ["5.10", "5.15", "6.1", "6.6"][:branches]
    # each branch forks `stable * 2` commits after the previous one, the last one that far
    # before the upstream tip
    fork_points = {
        name: max(1, upstream - stable * 2 * (branches - i)) for i, name in enumerate(names)
    }
    forks: dict[str, int] = {}
    fork_trees: dict[str, dict[str, list[str]]] = {}
    afters: dict[str, list[int]] = {name: [] for name in names}
    n = 0
    started = time.monotonic()
    while n < upstream:
        for name in names:
            if name not in forks and n >= fork_points[name]:
                forks[name] = g.mark
                fork_trees[name] = {p: list(v) for p, v in main.files.items()}
                g.write(f"reset refs/tags/v{name}\nfrom :{g.mark}\n\n".encode())
        if n % 100 == 98:
            marks = g.merge_topic(main, n)
            n += 2
        else:
            marks = [g.upstream(main, n)]
            n += 1
        for name in forks:
            afters[name] += marks
        if n % 50000 < 2 and n > 2:
            print(f"  {n} upstream commits ({time.monotonic() - started:.0f}s)", file=sys.stderr)
    summary_backports: list[int] = []
    picked_total = 0
    for name in names:
        picked, backports = _stable_branch(
            g, rng, name, forks[name], fork_trees[name], afters[name], stable
        )
        picked_total += picked
        summary_backports += backports
    after = afters[names[0]]
    fork = forks[names[0]]
    backports = summary_backports
    summary = {
        "fork": g.id_of(fork),
        "backported": [g.id_of(m) for m in backports[:50]],
        "absent": [g.id_of(m) for m in after if m not in set(backports)][:50],
        "upstream_commits": n,
        "stable_commits": picked_total,
        "branches": [f"linux-{name}.y" for name in names],
    }
    g.finish()
    return summary


def _stable_branch(
    g: Generator,
    rng: random.Random,
    name: str,
    fork: int,
    fork_files: dict[str, list[str]],
    after: list[int],
    stable: int,
) -> tuple[int, list[int]]:
    """Backports of upstream commits after the fork onto linux-<name>.y, with release
    commits and a few reverted backports; returns how many commits and which upstream."""
    ref = f"refs/heads/linux-{name}.y"
    branch = Tree(fork_files, f":{fork}")
    probability = min(1.0, stable / max(1, len(after)))
    picked = releases = 0
    backports: list[int] = []
    for mark in after:
        if picked >= stable or rng.random() > probability:
            continue
        change = g.changes[mark]
        lines = list(branch.get(change.path))
        lines[change.k] = change.text
        full = g.id_of(mark)
        form = rng.random()
        annotation = (
            f"commit {full} upstream.\n\n"
            if form < 0.8
            else f"[ Upstream commit {full} ]\n\n"
            if form < 0.95
            else ""
        )
        message = (
            f"{g.subjects[mark]}\n\n{annotation}Backported to {name}.\n\n"
            f"Signed-off-by: {GREG[0]} <{GREG[1]}>\n"
        )
        bp = g.commit(ref, branch, message, {change.path: lines}, GREG)
        backports.append(mark)
        picked += 1
        if picked % 400 == 0:
            releases += 1
            g.commit(
                ref,
                branch,
                f"Linux {name}.{releases}\n",
                {"VERSION": [f"{name}.{releases}\n"]},
                GREG,
            )
        if picked % 997 == 0:
            old = list(branch.get(change.path))
            old[change.k] = fork_files.get(change.path, _initial(change.path))[change.k]
            g.commit(
                ref,
                branch,
                f'Revert "{g.subjects[mark]}"\n\nThis reverts commit {g.id_of(bp)}.\n\n'
                f"Signed-off-by: {GREG[0]} <{GREG[1]}>\n",
                {change.path: old},
                GREG,
            )
    return picked + releases, backports


def append(repo: Path, count: int, seed: int, files: int) -> dict[str, object]:
    import pygit2

    git = pygit2.Repository(str(repo))
    tip = git.revparse_single("master").peel(pygit2.Commit)

    def load(path: str) -> list[str]:
        blob = git[tip.tree[path].id].peel(pygit2.Blob)
        return blob.data.decode().splitlines(True)

    rng = random.Random(seed + 1000 + int(tip.commit_time))
    paths = sorted(
        f"{area}/{entry.name}"
        for area in AREAS
        if area in tip.tree
        for entry in git[tip.tree[area].id].peel(pygit2.Tree)
        if (entry.name or "").endswith(".c")
    )
    g = Generator(repo, rng, paths, clock=tip.commit_time + 60)
    g.start()
    tree = Tree({}, str(tip.id), load)
    for i in range(count):
        g.upstream(tree, 10_000_000 + i)
    g.finish()
    return {"appended": count}


def main() -> int:
    parser = argparse.ArgumentParser(description="Generate a large kernel-shaped repository.")
    parser.add_argument("repo", type=Path)
    parser.add_argument("--upstream", type=int, default=300_000)
    parser.add_argument("--stable", type=int, default=20_000)
    parser.add_argument("--files", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--kernel-messages",
        action="store_true",
        help="messages as long as the kernel's (6-20 body lines) with its trailer mix",
    )
    parser.add_argument("--append", type=int, default=0, help="add N upstream commits")
    parser.add_argument(
        "--branches",
        type=int,
        default=1,
        choices=(1, 2, 3, 4),
        help="stable branches: linux-5.10.y, then 5.15, 6.1, 6.6",
    )
    args = parser.parse_args()
    started = time.monotonic()
    if args.append:
        summary = append(args.repo, args.append, args.seed, args.files)
    else:
        if args.repo.exists():
            print(f"{args.repo} exists; give a new path", file=sys.stderr)
            return 1
        summary = build(
            args.repo,
            args.upstream,
            args.stable,
            args.seed,
            args.files,
            args.branches,
            args.kernel_messages,
        )
    summary["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
