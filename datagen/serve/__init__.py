"""Long-running HTTP services over a built output, and the trainer-side clients.

- ``pool.pool_app(pool_dir)``: the pool's sampler (claim / commit / release / status) on
  the once-only ledger (``datagen.pool.leases``);
- ``grader.grader_app(tasks)``: a policy's patch in, a reward out, graded in the sandbox;
- ``http``: what both share (bearer token, body cap, loopback-only default, uvicorn);
- ``clients``: stdlib-only clients a trainer imports (verl ``compute_score``, a pool data
  source), so a trainer's environment needs nothing of datagen's server stack.
"""
