"""The builds, one package per ``datagen build X`` (``cpt_corpus/``, ``tasks/``, ``rl_pool/``)
and ``all`` (``build all``), on one template (``base.Build``: recipe + flags, fingerprint,
already built, stage runner, Slurm continuation, publication through the output switch);
``commands`` holds the commands recorded like a build (``teacher run``, ``validate``,
``sandbox run``) and ``quality_commands`` ``datagen quality annotate | train``. The run
machinery they share is ``datagen/runtime/``."""
