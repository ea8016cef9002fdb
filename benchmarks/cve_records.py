"""Read and parse every CVE record of a records repository: counts per outcome of the parse
and the time it took (docs/cves.md).

    python benchmarks/cve_records.py <records repository (bare or checkout)> [REF]
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

from backportr.cves.records import BadRecord, parse_record, read_records


def main() -> None:
    path = Path(sys.argv[1])
    ref = sys.argv[2] if len(sys.argv) > 2 else None
    began = time.monotonic()
    counts: collections.Counter[str] = collections.Counter()
    for file in read_records(path, ref):
        text, sha1 = file.load()
        try:
            record = parse_record(text, file.name, sha1)
        except BadRecord as error:
            counts["unreadable"] += 1
            print(f"unreadable: {error}", file=sys.stderr)
            continue
        counts["parsed"] += 1
        counts["several mainline fixes"] += len(record.mainline) > 1
        counts["since the beginning"] += record.since_the_beginning
        counts["no git ranges"] += not record.pairs
    for key, value in counts.items():
        print(f"{key}: {value}")
    print(f"{time.monotonic() - began:.1f} s")


if __name__ == "__main__":
    main()
