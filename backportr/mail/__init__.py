"""The mailing-list side: mails read (`message`), checked against the repository (`check`),
the lore archive's client (`lore`, `source`), each posting's cover letter (`covers`), the
reply written (`reply`) and sent (`sending`), and the bot that ties them (`bot`).

It sits above the resolver, the scan and output (a reply renders a series) and below the
workflows and the command line, which it never imports (`tests/test_lint.py`).
"""
