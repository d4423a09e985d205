"""The RL instruction pool: rows from tasks, hygiene, the once-only ledger, exports.

Library entry points (the build calls these; the ``datagen pool`` CLI only the ledger):

- ``rows.rows_from_tasks(tasks, group_size)`` -> ``PoolRow``s
- ``hygiene.clean(rows, decontam, dedup, eval_fraction, eval_repos)`` -> (kept, dropped)
- ``exports.write_pool(rows, dropped, out, card_info)`` -> ``ShardRow``s
- ``ledger.take / give_back / status / mirror_ledger``
- ``leases.LeaseIndex(pool_dir)``: claim / commit / release / status (``datagen serve pool``)
- ``exports.write_harbor(pool_dir)``: Harbor task folders (``datagen pool export-harbor``)
- ``images.build_images(folder, tool)``: build / push the images those folders name
  (``datagen pool build-images``)
- ``manifest.record_pool(db, run_id, rows, dropped, shards, pool_dir)``
"""
