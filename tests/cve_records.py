"""CVE JSON 5 records in the kernel CVE team's layout, written by code for the tests: the
shape of the real records (`containers.cna.affected[].versions[]` with `versionType: git`,
`programFiles`, a `.sha1` beside), with the commit ids a test repository has."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path


def write_record(
    directory: Path,
    cve: str,
    title: str,
    pairs: Sequence[tuple[str, str | None]],
    mainline: str | None,
    files: Sequence[str] = (),
) -> Path:
    """`cve/published/<year>/<cve>.json` (and `.sha1`) under `directory`; `pairs` are
    (introducing commit, fixing commit or None)."""
    versions: list[dict[str, str]] = []
    for introduced, fixed in pairs:
        version = {"version": introduced, "status": "affected", "versionType": "git"}
        if fixed:
            version["lessThan"] = fixed
        versions.append(version)
    record = {
        "containers": {
            "cna": {
                "providerMetadata": {"orgId": "f4215fc3-5b6b-47ff-a258-f7189bd81038"},
                "descriptions": [{"lang": "en", "value": f"In the Linux kernel: {title}"}],
                "affected": [
                    {
                        "product": "Linux",
                        "vendor": "Linux",
                        "defaultStatus": "unaffected",
                        "programFiles": list(files),
                        "versions": versions,
                    },
                    {
                        "product": "Linux",
                        "vendor": "Linux",
                        "defaultStatus": "affected",
                        "versions": [{"version": "6.5", "status": "affected"}],
                    },
                ],
                "title": title,
            }
        },
        "cveMetadata": {"cveId": cve, "state": "PUBLISHED"},
        "dataType": "CVE_RECORD",
        "dataVersion": "5.1.1",
    }
    year = cve.split("-")[1]
    folder = directory / "cve" / "published" / year
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{cve}.json"
    path.write_text(json.dumps(record, indent=3) + "\n", encoding="utf-8")
    if mainline:
        (folder / f"{cve}.sha1").write_text(mainline + "\n", encoding="utf-8")
    return path
