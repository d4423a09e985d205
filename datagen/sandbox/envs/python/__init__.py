"""Python environments: ``plan`` (rules from the repo's own files, no network), ``sources``
(readers of its dependency files), ``manager`` (the builder of one venv per plan with uv, in the
env cache of ``envs/cache.py``), ``docker`` (the plan's image: pip steps one by one)."""
