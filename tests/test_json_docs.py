"""Machine output is documented: every key the JSON of `resolve`, `scan`, `status` and
`mail check` holds is named in the schema sketches of docs/json.md, docs/scan.md and
docs/bot.md, so that a field added to the code without its documentation fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from backportr.examples.ima import B836C, ImaFixture
from tests.conftest import backportr

DOCS = Path(__file__).resolve().parent.parent / "docs"
GOLDEN = Path(__file__).resolve().parent / "golden"


def _documented(*names: str) -> set[str]:
    """The keys the ```json sketches of the given docs name."""
    text = "\n".join((DOCS / name).read_text() for name in names)
    sketches = "\n".join(re.findall(r"```json\n(.*?)```", text, re.S))
    return set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:', sketches))


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_the_golden_resolve_and_scan_outputs_hold_only_documented_keys() -> None:
    for golden in sorted(GOLDEN.glob("*.json")):
        doc = "scan.md" if golden.name.startswith("scan-") else "json.md"
        undocumented = _keys(json.loads(golden.read_text())) - _documented(doc)
        assert not undocumented, f"{golden.name}: {sorted(undocumented)} not in docs/{doc}"


def test_status_and_mail_check_json_hold_only_documented_keys(
    ima: ImaFixture, mails: dict[str, str], tmp_path: Path
) -> None:
    status = backportr(
        "status", ima.ids[B836C], "--branch", "linux-5.10.y", "--repo", str(ima.path),
        "--format", "json",
    )  # fmt: skip
    assert status.returncode == 0, status.stderr
    assert _keys(json.loads(status.stdout)) - _documented("json.md") == set()
    mail = tmp_path / "failed.eml"
    mail.write_text(mails["failed-b836c4d29f27-5.10"])
    check = backportr("mail", "check", str(mail), "--repo", str(ima.path), "--format", "json")
    assert check.returncode == 4, check.stderr
    data = json.loads(check.stdout)
    assert data["branches"] and data["branches"][0]["series"]  # the keys below were seen
    assert _keys(data) - _documented("bot.md", "json.md") == set()


def test_the_sketches_are_read() -> None:
    """The reader of the docs finds what they say (a guard against a test that passes
    because it reads nothing)."""
    assert {"schema", "series", "conflict_files", "posting"} <= _documented("json.md")
    assert {"findings", "evidence", "tagged", "scanned"} <= _documented("scan.md")
    assert {"verdict", "pending", "missing"} <= _documented("bot.md")
