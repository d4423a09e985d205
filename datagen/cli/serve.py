"""``datagen serve pool|grader``: the pool's sampler and the grader as HTTP services."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from datagen.cli.base import DatagenTyper

app = DatagenTyper(help="Serve a pool (claim / commit / release) or a grader (patch in, reward out) over HTTP.",
                  no_args_is_help=True)

Host = Annotated[str, typer.Option("--host", help="Address to listen on (anything but loopback needs a token).")]
TokenFile = Annotated[Path | None, typer.Option(
    "--token-file", help="File holding the token (else $DATAGEN_SERVE_TOKEN; none: no token). Clients send it as "
    "a bearer header or in the path, /t/<token>/...")]
Trusted = Annotated[bool, typer.Option(
    "--trusted-network", help="Listen beyond loopback without a token: every host that can reach the port may "
    "call. Off by default.")]


@app.command("pool")
def pool_command(
    pool: Annotated[Path, typer.Argument(help="Pool folder (the output of `datagen build rl-pool`).")],
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8766,
    token_file: TokenFile = None,
    max_body_kb: Annotated[int, typer.Option("--max-body-kb", help="Larger request bodies are 413.")] = 64,
    trusted_network: Trusted = False,
) -> None:
    """Hand the pool's instructions out over HTTP, each used once, beside `datagen pool take`.

    POST /v1/claim, /v1/commit, /v1/release; GET /v1/status, /health (see docs/rl.md).

    Examples:

      datagen serve pool out/rl-pool --port 8766

      DATAGEN_SERVE_TOKEN=s3cret datagen serve pool /data/pool --host 0.0.0.0
    """
    from datagen.serve.http import check_bind, read_token, serve
    from datagen.serve.pool import pool_app

    token = read_token(token_file)
    check_bind(host, token, trusted_network)
    serve(pool_app(pool, token=token, max_body_kb=max_body_kb), host, port, token, f"pool {pool}", trusted_network)


@app.command("grader")
def grader_command(
    tasks: Annotated[Path, typer.Argument(help="A tasks build folder, its tasks.jsonl, or a pool folder.")],
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8765,
    workers: Annotated[int, typer.Option("--workers", "-w", help="Sandboxes grading at once.")] = 2,
    queue: Annotated[int, typer.Option("--queue", help="Grades waiting beyond those; more are 503.")] = 8,
    timeout_s: Annotated[float, typer.Option(
        "--timeout-s", help="Longest test run (a request may ask less). With --queue-wait-s it has to fit under the "
        "client's timeout: slime 120 s (e.g. 60 + 45), OpenRLHF 180 s (120 + 50); see docs/rl.md.")] = 300,
    token_file: TokenFile = None,
    max_patch_kb: Annotated[int, typer.Option("--max-patch-kb", help="Larger request bodies are 413.")] = 512,
    recipe: Annotated[str | None, typer.Option("--recipe", "-r", help="Sandbox and env recipe "
                                               "(default pipelines/validate.yaml).")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override: --set sandbox.limits.memory_mb=2048")] = None,
    warm: Annotated[bool, typer.Option("--warm/--lazy", help="Build every task's environment before serving.")] = False,
    queue_wait_s: Annotated[float, typer.Option(
        "--queue-wait-s", help="How long a request on the NeMo-Gym, slime and OpenRLHF routes (whose clients do "
        "not retry a 503) waits for a place before it is 503.")] = 100.0,
    trusted_network: Trusted = False,
) -> None:
    """Grade patches on the tasks in the sandbox: POST /v1/grade, /verify (NeMo-Gym),
    /slime/remote_rm, /openrlhf/reward; GET /health (see docs/rl.md).

    Examples:

      datagen serve grader out/tasks -w 4

      datagen serve grader out/rl-pool -w 8 --queue 32 --timeout-s 120 --token-file ~/.grader-token
    """
    from datagen.config.base import load_recipe
    from datagen.config.sandbox import ValidateRecipe
    from datagen.sandbox.isolation.select import untrusted_sandbox
    from datagen.serve.grader import Grader, grader_app
    from datagen.serve.http import check_bind, read_token, serve

    token = read_token(token_file)
    check_bind(host, token, trusted_network)
    cfg, _ = load_recipe(ValidateRecipe, recipe, "validate", set_ or [])
    grader = Grader(tasks, untrusted_sandbox(cfg.sandbox.backend), workers=workers, queue=queue,
                    timeout_s=timeout_s, limits=cfg.sandbox.limits, env=cfg.env,
                    ro_paths=tuple(Path(p) for p in cfg.sandbox.ro_paths), queue_wait_s=queue_wait_s)
    try:
        if warm:
            grader.warm()
        serve(grader_app(grader, token=token, max_patch_kb=max_patch_kb), host, port, token, f"grader {tasks}",
              trusted_network)
    finally:
        grader.close()
