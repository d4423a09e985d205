"""``datagen build rl-pool``: ``build`` (hygiene, perplexity, difficulty, band, pool shards,
ledger) and ``grading`` (the policy's attempts graded in the sandbox)."""
