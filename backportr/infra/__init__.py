"""Infrastructure every floor may use; it imports nothing of backportr but `errors`.

- `files`: files read whole or refused, directories changed under a lock, all or nothing;
- `filecache`: values cached beside the index, written atomically, read by one process at a time;
- `statefile`: the SQLite state files of scans, CVE runs and the bot, opened under a lock;
- `dbfault`: SQLite's faults said as one line (a full disk, a read-only file, a locked one);
- `process`: every child process started where a stop cannot lose it; a backportr module's
  `main` run in a child interpreter;
- `signals`: SIGTERM and SIGHUP raised as `Terminated`, and passed on to worker processes;
- `stops`: stretches in which a stop waits until what is made there is known;
- `lazyload`: a package's exported names imported when first asked for, so a child imports
  little."""
