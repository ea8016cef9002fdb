"""Which published CVEs a branch still lacks: CVE JSON 5 records in (the kernel CVE team's
`vulns` layout), one outcome per record and branch out, built on presence and resolve.

`records` reads and parses records (pure, bounded: records are untrusted input);
`classify` decides each outcome with the workspace, `run` is the workflow, `state` what it
keeps between runs. It builds on the scan's answers, the resolver and the git layer, never on
output, mail or the command line (`tests/test_lint.py`).
"""
