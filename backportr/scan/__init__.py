"""The scan: every fix a branch lacks and every backport that is incomplete, for cron and CI.

`run` spreads a scan over processes, `scanner` asks the questions of one branch, `answers`
keeps them between nights (with `state`, a scan's own state file), `findings` is what a
scan reports and how it is ordered, `prefetch` reads what the scan will ask while the index
updates. It builds on the resolver, the index and the git layer, never on output, mail or
the command line.
"""
