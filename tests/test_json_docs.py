"""Machine output is documented: every key the JSON of `resolve`, `scan`, `status` and
`mail check` holds is named in the schema sketches of docs/json.md and docs/bot.md, so that
a field added to the code without its documentation fails here."""

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
        undocumented = _keys(json.loads(golden.read_text())) - _documented("json.md")
        assert not undocumented, f"{golden.name}: {sorted(undocumented)} not in docs/json.md"


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
    assert {"findings", "evidence", "tagged", "scanned"} <= _documented("json.md")
    assert {"verdict", "pending", "missing"} <= _documented("bot.md")


def _table_rows(doc: str, heading: str) -> list[list[str]]:
    """The cells of the first table after `heading` in `docs/<doc>`."""
    text = (Path(__file__).resolve().parent.parent / "docs" / doc).read_text(encoding="utf-8")
    after = text[text.index(heading) :].split("\n")
    start = next(i for i, line in enumerate(after) if line.startswith("|"))
    rows = []
    for line in after[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _first_code(cell: str) -> str:
    return cell.split("`")[1]


def test_the_docs_list_the_output_formats_of_the_table() -> None:
    """docs/cli.md lists every format of the table, with what it is and who offers it."""
    from backportr.app.formats import FORMATS

    documented = {
        _first_code(row[0]): (row[1].strip("`"), row[2].strip("`"), row[3].replace("`", ""))
        for row in _table_rows("cli.md", "## Output formats")
    }
    commands = ("status", "resolve", "scan", "cves", "mail check")
    table = {
        name: (f.extension, f.mime, ", ".join(c for c in f.writers))
        for name in {n for c in commands for n in FORMATS.offered(c)}
        for f in [FORMATS[name]]
    }
    assert documented == table


def test_the_docs_list_the_annotation_and_relation_forms_of_the_tables() -> None:
    """The annotation forms of docs/cli.md and the relation forms of docs/algorithm.md are
    the tables' own, no more and no fewer."""
    from backportr.text.annotations import ANNOTATIONS
    from backportr.text.relation_forms import FORMS

    annotations = [_first_code(r[0]) for r in _table_rows("cli.md", "### Annotation forms")]
    assert annotations == ANNOTATIONS.names()
    relations = [_first_code(r[0]) for r in _table_rows("algorithm.md", "## How a commit names")]
    assert relations == [f.name for f in FORMS]
