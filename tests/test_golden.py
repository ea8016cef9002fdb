"""Golden answers: resolve's and scan's JSON on the IMA example, with commit ids replaced by
the fixture's names, must stay what they were (a redesign keeps behaviour). After an
intended change, regenerate with BACKPORTR_UPDATE_GOLDEN=1: the changed files are rewritten
and their tests still fail, once, so that the diff is reviewed before anything passes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from backportr.examples.ima import B836C, ImaFixture
from tests.conftest import backportr

GOLDEN = Path(__file__).parent / "golden"


def _named(text: str, ima: ImaFixture) -> str:
    """Full and 12-hex ids as the fixture's names: stable across machines and fixture edits."""
    names: dict[str, str] = {oid: name for name, oid in ima.ids.items()}
    text = re.sub(r"\b[0-9a-f]{40}\b", lambda m: f"<{names.get(m.group(0), '?')}>", text)
    short = {oid[:12]: f"<{name}>" for oid, name in names.items()}
    return re.sub(r"(?<!<)\b[0-9a-f]{12}\b", lambda m: short.get(m.group(0), m.group(0)), text)


def _check(name: str, data: object, ima: ImaFixture) -> None:
    text = _named(json.dumps(data, indent=2, sort_keys=True), ima) + "\n"
    path = GOLDEN / name
    kept = path.read_text() if path.exists() else None
    if text == kept:
        return
    if os.environ.get("BACKPORTR_UPDATE_GOLDEN"):
        path.write_text(text)  # and still a failure: a rewritten answer is reviewed, never passed
        pytest.fail(f"{name} rewritten; review the diff (git diff tests/golden) and run again")
    assert kept is not None, f"{path} missing: run with BACKPORTR_UPDATE_GOLDEN=1"
    pytest.fail(f"{name} changed; if intended, regenerate with BACKPORTR_UPDATE_GOLDEN=1")


@pytest.mark.parametrize(
    ("branches", "code"),
    [(["v5.10.194"], 0), (["linux-5.10.y"], 4)],  # ready; the backport there conflicts
)
def test_resolve_json_is_golden(ima: ImaFixture, branches: list[str], code: int) -> None:
    args = [a for b in branches for a in ("-b", b)]
    proc = backportr("resolve", ima.ids[B836C], "--repo", str(ima.path), "--format", "json", *args)
    assert proc.returncode == code, proc.stderr
    _check(f"resolve-{'-'.join(branches)}.json", json.loads(proc.stdout), ima)


def test_scan_json_is_golden(ima: ImaFixture) -> None:
    proc = backportr(
        "scan", "--repo", str(ima.path), "-b", "linux-5.10.y", "-b", "v5.10.194",
        "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 4, proc.stderr
    data = json.loads(proc.stdout)
    del data["run"]  # when, how long, where
    for branch in data["branches"]:
        del branch["resolved"], branch["reused"], branch["kept"]  # how much an earlier run saved
    _check("scan-linux-5.10.y-v5.10.194.json", data, ima)
