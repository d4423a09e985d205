"""Environments: how a repo's dependencies are installed before its tests run. ``cache`` is the
one env cache of every profile (one folder per key, built once under a lock, its build record
``attempt.json`` / ``ok.json`` / ``failed.json``, the leak guard); ``tools`` is the part of a key
that records the tools that built the env. Python has a package of its own (``python/``: rules
that read the repo's files into an ``EnvPlan``, the uv/pip builder, its image's pip lines); the
other ecosystems' plans and builds are a few lines in their profiles (``harness/profiles/``).
``docker`` is the one Dockerfile renderer (plain values in, for every export), ``mirrors``
writes the recipe's package mirrors into each environment. The teacher's repair of a plan that
rules could not make work is ``synth/env_repair.py`` (it calls a teacher and the suite runner,
a floor above)."""
