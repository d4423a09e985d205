"""``datagen build cpt-corpus``: ``build`` (the stages: list, crawl with the file steps of
``curate/file_steps.py``, exact and near dedup, ordering, shards, pack), ``manifest`` (its
tables) and ``shards`` (the parquet text shards)."""
