"""``datagen build tasks``: ``build`` (recipe, stages, publication), ``stages`` (the
in-process stages: candidates, statements, evolve, emit), ``sandboxed`` (the stages that run
tests: baselines, validation), ``env_repair`` (the teacher's repair of failed env plans) and
``output`` (tasks.jsonl, the sealed environments, the manifest)."""
