#!/usr/bin/env python3
"""A scan of a real stable branch scored against what its maintainers took next, with the
grep scan and the raw log timed in the same run.

    python benchmarks/scan_key.py MIRROR --branch 23.11 --before v23.11.5 --after v23.11.7 \\
        [--upstream main] [--siblings 22.11,24.11] [--pattern '??.11'] [--jobs 0] \\
        [--out scan.json] [--no-time]

MIRROR is a repository holding upstream and the stable branches (DPDK's `dpdk` mirror). A
scratch bare repository borrows its objects (alternates) and holds the state the maintainer
saw: the branch at `--before`, upstream cut at the date of `--after` (as the issue measuring
it does: the fixes that existed when they chose), each sibling branch at its last commit
before the date of `--before` (absent if it had no commit of its own by then: not yet
created). The answer key: the upstream commits named by the branch's
backports in before..after.

Timed, each in its own process: `git log --format=%H%x00%B` of upstream (the raw log), the
grep scan (benchmarks/naive_scan.py), `backportr index` (cold: the index build), then
`backportr scan --detect` (detection alone: the findings from the index, one process) twice
(the first computes the patch-ids and paths it caches; the second finds the index as a
nightly detection does), then
`backportr scan --format json` with that index (detection and resolution). Peak resident
memory of each backportr process is read from its rusage.

Scored: missing fixes (precision against the key; recall against the key's commits whose
`Fixes:` culprit the branch carried, the ones a scan can find; precision again among those
due, committed upstream by the key's newest commit, and by confidence), the grep scan likewise;
incomplete-backport findings naming a commit of the key; adapted-backport entries (counted
apart) naming one. An upstream commit that says it was cherry-picked from another upstream
commit counts as that original, in the key and in each scan's findings.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from installed import BACKPORTR
from naive_scan import git
from scratchgit import scratch_dir

_UPSTREAM = re.compile(
    r"(?:upstream commit|cherry.picked from commit|master commit:)\s+([0-9a-f]{7,40})\b"
    r"|commit\s+([0-9a-f]{40})",
    re.IGNORECASE,
)
_FIXES = re.compile(r"^\s*fixes:\s*([0-9a-f]{6,40})", re.IGNORECASE | re.MULTILINE)


def prepare(mirror: Path, args: argparse.Namespace) -> Path:
    """The scratch repository: refs as the maintainer saw them, objects borrowed (in
    `--work DIR` when given: kept, with its index, for a warm rerun)."""
    repo = (args.work or scratch_dir("scan-key-")) / "repo.git"
    if (repo / "HEAD").exists():
        return repo
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    objects = Path(git(mirror, "rev-parse", "--git-path", "objects").strip())
    if not objects.is_absolute():
        objects = mirror / objects
    (repo / "objects" / "info" / "alternates").write_text(f"{objects.resolve()}\n")
    before = git(mirror, "rev-parse", f"{args.before}^{{commit}}").strip()
    after_date = git(mirror, "log", "-1", "--format=%cI", args.after).strip()
    before_date = git(mirror, "log", "-1", "--format=%cI", before).strip()
    upstream = git(mirror, "rev-list", "-1", f"--before={after_date}", args.upstream).strip()
    refs = {f"refs/heads/{args.upstream}": upstream, f"refs/heads/{args.branch}": before}
    for sibling in filter(None, args.siblings.split(",")):
        # a branch with no commit of its own by the date (upstream's or the scanned
        # branch's alone) did not exist yet: absent, not an old commit of theirs
        own = ["rev-list", "-1", f"--before={before_date}", sibling]
        if git(mirror, *own, f"^{args.upstream}", f"^{args.branch}").strip():
            refs[f"refs/heads/{sibling}"] = git(mirror, *own).strip()
    for ref, oid in refs.items():
        git(repo, "update-ref", ref, oid)
    print(f"upstream {args.upstream} at {upstream[:12]} (before {after_date})")
    print(f"{args.branch} at {args.before} ({before[:12]}, {before_date}); siblings: "
          + ", ".join(f"{r.removeprefix('refs/heads/')}={o[:12]}" for r, o in refs.items()
                      if r.endswith(tuple(args.siblings.split(",") or ["-"]))))  # fmt: skip
    return repo


def answer_key(mirror: Path, repo: Path, args: argparse.Namespace) -> set[str]:
    """The upstream commits the branch's backports in before..after name (with
    `--by-subject`, also those a backport there has the subject and author of)."""
    out = git(mirror, "log", "--format=%B%x00", f"{args.before}..{args.after}")
    named = _full_ids(mirror, {m.group(1) or m.group(2) for m in _UPSTREAM.finditer(out)})
    if args.by_subject:
        named |= by_subject(mirror, repo, args, f"{args.before}..{args.after}")
    return named


def _full_ids(repo: Path, names: set[str]) -> set[str]:
    """`names` as full commit ids: an abbreviated one ("[ upstream commit 068acf11cec0 ]", a
    form DPDK's backports use now and then) is what it names in `repo`, if one commit."""
    out = {name.lower() for name in names if len(name) == 40}
    for name in names - out:
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "-q", f"{name}^{{commit}}"],
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            out.add(proc.stdout.strip())
    return out


def by_subject(mirror: Path, repo: Path, args: argparse.Namespace, revs: str) -> set[str]:
    """The upstream commits after the branch's fork (upstream as cut in `repo`) with the
    subject and author email of a commit of `revs` (a project that cherry-picks without
    `-x`: its backports name nothing; `extract_cases.py --by-subject` matches them alike)."""
    picked = {
        tuple(line.split("\x00", 1))
        for line in git(mirror, "log", "--no-merges", "--format=%s%x00%ae", revs).splitlines()
    }
    fork = git(repo, "merge-base", args.upstream, args.branch).strip()
    listed = git(repo, "log", "--no-merges", "--format=%H%x00%s%x00%ae", f"{fork}..{args.upstream}")
    found = set()
    for line in listed.splitlines():
        oid, subject, email = line.split("\x00", 2)
        if (subject, email) in picked:
            found.add(oid)
    return found


def findable(repo: Path, args: argparse.Namespace, key: set[str]) -> set[str]:
    """The key's commits a missing-fix scan can find: a `Fixes:` culprit the branch has
    (before the fork, or named by a backport)."""
    fork = git(repo, "merge-base", args.upstream, args.branch).strip()
    carried = _full_ids(
        repo,
        {
            m.group(1) or m.group(2)
            for m in _UPSTREAM.finditer(git(repo, "log", "--format=%B", f"{fork}..{args.branch}"))
        },
    )
    if args.by_subject:
        carried |= by_subject(repo, repo, args, f"{fork}..{args.branch}")
    after_fork = set(git(repo, "rev-list", f"{fork}..{args.upstream}").split())
    every = git(repo, "rev-list", args.upstream).split()
    out = set()
    for commit in key:
        if commit not in after_fork:
            continue
        for ref in _FIXES.findall(git(repo, "log", "-1", "--format=%B", commit)):
            culprit = [c for c in every if c.startswith(ref.lower())]
            if len(culprit) == 1 and (culprit[0] not in after_fork or culprit[0] in carried):
                out.add(commit)
                break
    return out


def timed(argv: list[str]) -> tuple[float, int, str, str]:
    """Wall seconds, peak resident KiB (the process's, and its children's it waited for),
    stdout, stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        begin = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - begin
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}): {stderr[-2000:]}")
    return seconds, usage.ru_maxrss, stdout, stderr


def upstream_copies(repo: Path, upstream: str) -> dict[str, str]:
    """{copy: original} for the upstream commits that say they were cherry-picked from
    another upstream commit (a fix merged from its topic branch and picked onto the mainline
    too, as NetworkManager does): one change, counted once, as its original, in the key and
    in every scan's findings alike."""
    listed = git(repo, "log", "--format=%x00%H%x01%B", upstream)
    bodies = dict(entry.split("\x01", 1) for entry in listed.split("\x00") if "\x01" in entry)
    out = {}
    for commit, body in bodies.items():
        for original in re.findall(r"cherry picked from commit ([0-9a-f]{40})", body):
            if original != commit and original in bodies:
                out[commit] = original
    for commit in out:  # a copy of a copy: its first original
        while out[commit] in out and out[out[commit]] != commit:
            out[commit] = out[out[commit]]
    return out


def _canon(commits: set[str], copies: dict[str, str]) -> set[str]:
    return {copies.get(c, c) for c in commits}


class Due:
    """Which upstream commits were due when the maintainers chose: committed upstream no later
    than the newest commit of the key (their last pick). A fix after it was too new for them
    to have taken, whatever they thought of it; precision among the due ones says how often
    a finding they could have taken was one they took."""

    def __init__(self, repo: Path, upstream: str, key: set[str]) -> None:
        listed = git(repo, "log", "--format=%H %ct", upstream).split()
        self.times = {listed[i]: int(listed[i + 1]) for i in range(0, len(listed), 2)}
        self.horizon = max((self.times[k] for k in key if k in self.times), default=0)

    def of(self, commits: set[str]) -> set[str]:
        return {c for c in commits if self.times.get(c, 0) <= self.horizon}


def _share(found: set[str], key: set[str]) -> dict[str, Any]:
    taken = len(found & key)
    return {
        "findings": len(found),
        "taken": taken,
        "precision": round(taken / len(found), 2) if found else None,
    }


def score(
    report: dict[str, Any],
    key: set[str],
    findable_key: set[str],
    copies: dict[str, str],
    due: Due,
) -> dict[str, Any]:
    """The scan's findings against the key (`key`, `findable_key`: their copies counted as
    their originals already): in all, those due, and by confidence."""
    out: dict[str, Any] = {}
    branch = report["branches"][0]
    fixes = [f for f in branch["findings"] if f["kind"] == "missing-fix"]
    found = _canon({f["commit"] for f in fixes}, copies)
    out["missing-fix"] = {
        **_share(found, key),
        "recall": round(len(found & findable_key) / len(findable_key), 2) if findable_key else None,
        "due": _share(due.of(found), key),
        "by confidence": {
            rank: _share(
                _canon({f["commit"] for f in fixes if f["confidence"] == rank}, copies), key
            )
            for rank in ("high", "normal", "low")
        },
    }
    for kind in ("incomplete-backport", "adapted-backport"):
        entries = [f for f in branch["findings"] if f["kind"] == kind]
        entries += [f for f in branch.get("adapted", []) if kind == "adapted-backport"]
        taken = [f for f in entries if _canon({m["commit"] for m in f["series"]}, copies) & key]
        out[kind] = {"findings": len(entries), "naming a taken commit": len(taken)}
    out["reverted-upstream"] = {
        "findings": sum(1 for f in branch["findings"] if f["kind"] == "reverted-upstream")
    }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", type=Path)
    parser.add_argument("--branch", required=True)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--upstream", default="main")
    parser.add_argument("--siblings", default="")
    parser.add_argument("--pattern", default="??.11")
    parser.add_argument("--jobs", default="0")
    parser.add_argument("--conflict-depth", default=None, help="the scan's --conflict-depth")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--work", type=Path, help="keep the repository and index here")
    parser.add_argument(
        "--by-subject",
        action="store_true",
        help="a branch commit with an upstream commit's subject and author is its backport "
        "(a project that cherry-picks without -x: the answer key and what the branch carries)",
    )
    args = parser.parse_args()
    repo = prepare(args.mirror, args)
    key = answer_key(args.mirror, repo, args)
    can_find = findable(repo, args, key)
    copies = upstream_copies(repo, args.upstream)
    key, can_find = _canon(key, copies), _canon(can_find, copies)
    counted = f" ({len(copies)} upstream copies counted as their originals)" if copies else ""
    print(f"answer key: {len(key)} upstream commits taken in {args.before}..{args.after}, "
          f"{len(can_find)} of them fixes of what the branch had{counted}")  # fmt: skip

    raw, _, _, _ = timed(["git", "--git-dir", str(repo), "log", "--format=%H%x00%B", args.upstream])
    here = str(Path(__file__).parent)
    grep, _, grep_out, _ = timed(
        [sys.executable, f"{here}/naive_scan.py", str(repo), args.upstream, args.branch]
    )
    grep_found = _canon(set(grep_out.split()), copies)
    index = repo.parent / "index.sqlite"
    common = ["--repo", str(repo), "--upstream", args.upstream, "--index", str(index)]
    common += ["--branch-pattern", args.pattern]
    if args.work and index.exists():
        print("(warm: the index and the answers of an earlier run in --work are reused)")
    build, build_peak, _, _ = timed([*BACKPORTR, "index", *common, "-q"])
    detect, detect_peak, detect_out, _ = timed(
        [*BACKPORTR, "scan", *common, "-b", args.branch, "-f", "json", "--detect", "--jobs", "1"]
    )
    due = Due(repo, args.upstream, key)
    detected = score(json.loads(detect_out), key, can_find, copies, due)
    again, again_peak, _, _ = timed(  # the index as a nightly detection finds it
        [*BACKPORTR, "scan", *common, "-b", args.branch, "-f", "json", "--detect", "--jobs", "1"]
    )
    scan, scan_peak, scan_out, _ = timed(
        [*BACKPORTR, "scan", *common, "-b", args.branch, "-f", "json", "--jobs", args.jobs,
         *(["--conflict-depth", args.conflict_depth] if args.conflict_depth else [])]
    )  # fmt: skip
    report = json.loads(scan_out)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(scan_out)
    scored = score(report, key, can_find, copies, due)
    grep_taken = grep_found & key
    print(f"raw log {raw:.2f} s; grep scan {grep:.2f} s; index build {build:.2f} s "
          f"({build / raw:.1f}x the raw log, peak {build_peak >> 10} MiB); detection "
          f"{detect:.2f} s ({detect / grep:.1f}x the grep scan, peak {detect_peak >> 10} MiB), "
          f"again {again:.2f} s ({again / grep:.1f}x, peak {again_peak >> 10} MiB); "
          f"scan {scan:.1f} s "
          f"({scan / grep:.1f}x the grep scan, peak {scan_peak >> 10} MiB)")  # fmt: skip
    print(f"grep scan: {len(grep_found)} missing fixes, {len(grep_taken)} taken "
          f"(precision {len(grep_taken) / max(1, len(grep_found)):.2f}, recall "
          f"{len(grep_found & can_find) / max(1, len(can_find)):.2f})")  # fmt: skip
    grep_due = _share(due.of(grep_found), key)
    print(
        f"grep scan, due (upstream by the maintainers' last pick): {grep_due['findings']} "
        f"missing fixes, {grep_due['taken']} taken (precision {grep_due['precision']})"
    )
    print(json.dumps(scored, indent=1))
    print("detection:", json.dumps(detected))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
