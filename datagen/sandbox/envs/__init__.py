"""Environments: how a repo's dependencies are installed before its tests run. Python has a
package of its own (``python/``: rules that read the repo's files into an ``EnvPlan``, the
uv/pip environment manager, the Dockerfile); the other ecosystems' plans are a few lines in
their profiles (``harness/profiles/``). ``docker`` renders any profile's plan as a
Dockerfile, ``mirrors`` writes the recipe's package mirrors into each environment. The
teacher's repair of a plan that rules could not make work is ``synth/env_repair.py`` (it calls a
teacher and the suite runner, a floor above)."""
