"""Infrastructure every floor may use: files read whole or refused, directories changed
under a lock, all or nothing. It imports nothing of backportr but `errors`."""
