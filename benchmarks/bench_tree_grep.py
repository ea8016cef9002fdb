#!/usr/bin/env python3
"""The symbol finder's tree questions on a large tree: `git grep` against the in-process grep.

    python benchmarks/bench_tree_grep.py /tmp/bigtree.git [--dirs 150 --files 100]

Builds (once) a bare repository whose tree holds dirs x files C files of 400 functions each
(150 x 100: 15,005 files, 491 MB, about 6 million words by file: a kernel tree's order of
size), and five commits each adding a file. Then, for the first four trees: one "which files
mention these names" question by `git grep` and by the in-process grep (`TreeGrep`, forced),
the answers compared; whether `TreeGrep.fits` would leave the tree to git grep; and the
tip's identifier set (`tree_words`) with the process's peak memory.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path

import pygit2

from backportr.git.repo import Repo
from backportr.git.tree_grep import TreeGrep
from backportr.model import Oid
from backportr.resolve.finders.symbols import SEARCHED

NAMES = ["reg_7_7_7", "CONST_42"]


def build(path: Path, dirs: int, files: int) -> None:
    git = pygit2.init_repository(str(path), bare=True)
    rnd = random.Random(1)
    sig = pygit2.Signature("bench", "bench@example.org", 1_700_000_000, 0)
    root = git.TreeBuilder()
    for d in range(dirs):
        sub = git.TreeBuilder()
        for f in range(files):
            text = "".join(
                f"static int drv{d}_fn{f}_{k}(struct dev{d} *p) "
                f"{{ return reg_{d}_{f}_{k} + CONST_{rnd.randrange(5000)}; }}\n"
                for k in range(400)
            )
            sub.insert(f"f{f}.c", git.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
        root.insert(f"d{d}", sub.write(), pygit2.GIT_FILEMODE_TREE)
    commit = git.create_commit("refs/heads/master", sig, sig, "init", root.write(), [])
    for i in range(5):
        tree = git[commit].peel(pygit2.Tree)
        name = f"d{rnd.randrange(dirs)}"
        sub = git.TreeBuilder(git[tree[name].id].peel(pygit2.Tree))
        sub.insert(f"new{i}.c", git.create_blob(b"int added_%d;\n" % i), pygit2.GIT_FILEMODE_BLOB)
        top = git.TreeBuilder(tree)
        top.insert(name, sub.write(), pygit2.GIT_FILEMODE_TREE)
        commit = git.create_commit("refs/heads/master", sig, sig, f"c{i}", top.write(), [commit])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--dirs", type=int, default=150)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    if not args.repo.exists():
        begin = time.perf_counter()
        build(args.repo, args.dirs, args.files)
        print(f"built {args.repo} in {time.perf_counter() - begin:.1f} s")
    repo = Repo(args.repo)
    commits = [Oid(str(c.id)) for c in repo.git.walk(repo.git.revparse_single("master").id)][::-1]
    grep = TreeGrep(repo.git)
    begin = time.perf_counter()
    fits = grep.fits(repo.commit(commits[0]).tree, (".c", ".h"))
    print(f"TreeGrep.fits: {fits} ({time.perf_counter() - begin:.2f} s)")
    for i, commit in enumerate(commits[:4]):
        begin = time.perf_counter()
        by_git = repo.search._git_grep_files(commit, NAMES, (".c", ".h"))
        middle = time.perf_counter()
        in_process = grep.grep(repo.commit(commit).tree, NAMES, (".c", ".h"))
        end = time.perf_counter()
        assert by_git == in_process
        print(f"tree {i}: git grep {middle - begin:.2f} s, in-process {end - middle:.2f} s")
    begin = time.perf_counter()
    words = repo.search.tree_words(commits[-1], SEARCHED)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(
        f"tree_words: {len(words)} identifiers in {time.perf_counter() - begin:.1f} s; "
        f"peak memory of this process {peak} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
