#!/usr/bin/env python3
"""List the symbol finder's additions in eval_real.py results, with evidence for a judgement.

    python benchmarks/symbol_report.py rdma.json=/path/to/rdma-core.git [nm.json=... ...]

For each commit the symbol finder added (evidence kind `symbol`), print the case, the
identifiers, and what the maintainers did: took that commit too (in their series, or into
the branch later), or backported the target with a patch that differs from upstream (they
adapted it by hand instead of taking the commit that introduced the identifiers).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=False
    ).stdout


def patch_id(repo: Path, commit: str) -> str:
    show = subprocess.run(
        ["git", "--git-dir", str(repo), "show", "--no-renames", commit],
        capture_output=True,
        check=False,
    ).stdout
    out = (
        subprocess.run(
            ["git", "patch-id", "--stable"], input=show, capture_output=True, check=False
        )
        .stdout.decode()
        .split()
    )
    return out[0] if out else ""


def main() -> int:
    seen: set[tuple[str, str, str]] = set()
    for spec in sys.argv[1:]:
        path, _, repo_path = spec.partition("=")
        repo = Path(repo_path)
        data = json.loads(Path(path).read_text())
        for project, body in data.items():
            for row in body["rows"]:
                for commit, (kind, related) in zip(row["predicted"], row["reasons"], strict=False):
                    if kind != "symbol":
                        continue
                    key = (row["branch"], row["target"], commit)
                    if key in seen:
                        continue
                    seen.add(key)
                    subject = git(repo, "log", "-1", "--format=%s", commit).strip()
                    taken = commit in row["expected"] or commit in row["extra_backported_later"]
                    adapted = ""
                    if not taken:
                        backport = git(
                            repo,
                            "log",
                            "-1",
                            "--format=%H",
                            "-F",
                            f"--grep={related}",
                            f"refs/heads/{row['branch']}",
                        ).strip()
                        if backport and patch_id(repo, backport) != patch_id(repo, related):
                            adapted = backport
                    verdict = (
                        "maintainers took it too"
                        if taken
                        else f"target backported adapted as {adapted[:12]}"
                        if adapted
                        else "not taken; the backport matches upstream: check by hand"
                    )
                    print(
                        f"| {project} | {row['branch']} | {row['kind']} | "
                        f"`{row['target'][:12]}` | `{commit[:12]}` {subject} | "
                        f"uses it: `{related[:12]}` | {verdict} |"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
