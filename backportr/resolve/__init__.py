"""The resolver: one series per branch for a target, with the evidence for every member.

`resolver` closes the graph around the target (the finders of `backportr.resolve.finders`
asked of each member, the trial asked what applies), `closure` holds one attempt's state,
`rules` the answer's rules (helpers that leave the series, the status, the other way out),
`graph` the series' dependency graph and its order, `batch` several targets in one series.
It builds on the finders, presence, the index and the git layer, never on the scan, output,
mail or the command line.
"""
