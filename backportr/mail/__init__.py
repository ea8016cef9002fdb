"""The mailing-list side: reading mails (message.py); the lore client, reply and bot come next."""
