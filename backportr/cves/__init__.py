"""Which published CVEs a branch still lacks: CVE JSON 5 records in (the kernel CVE team's
`vulns` layout), one outcome per record and branch out, built on presence and resolve.

`records` reads and parses records (pure, bounded: records are untrusted input);
`classify` decides each outcome with the workspace. Imports: model, errors, presence,
resolve, repo; never cli or output.
"""
