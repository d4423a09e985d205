"""What every build and service runs on, one floor below them: the run lifecycle
(``run.BuildRun``: run id, ``runs`` row, resume), the output lock, process reaping
(``procs``), faults (disk full, interrupts), the output switch (``switch``: a build's new
outputs replace the old ones at once), progress bars, atomic writes (``atomic``), the
datatrove executors (``executors``) and the per-repo stage (``repo_stage``).

Nothing here imports a build, a room that builds use (crawl, curate, sandbox, ...) or the CLI.
"""
