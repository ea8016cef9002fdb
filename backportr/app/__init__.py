"""The workflows: one plain function per thing a user runs (resolve, status, scan, mail
check, bot, cves, index, demo), typed options in and a typed result out. State files,
`--new-only`, what is written where and the exit status are decided here, so a bot, a test
or another program runs a workflow without the command line. It may import every floor
below it; only `cli/` imports it."""
