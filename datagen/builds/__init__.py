"""The builds: one module per ``datagen build X`` (``cpt_corpus``), the driver they all
subclass (``base.Build``), the run lifecycle they share (``run.BuildRun``), and the
commands that record a run like a build (``commands``: ``teacher run``, ``validate``,
``sandbox run``)."""
