"""``datagen job slurm``: print a Slurm batch script that serves the teacher and runs a build."""

from __future__ import annotations

from typing import Annotated

import typer

from datagen.cli.base import DatagenTyper

app = DatagenTyper(help="Make batch-job scripts for GPU clusters.", no_args_is_help=True)


@app.command("slurm", context_settings={"allow_extra_args": True,
                                        "ignore_unknown_options": True})
def slurm_command(
    ctx: typer.Context,
    recipe: Annotated[str | None, typer.Option(
        "--recipe", "-r", help="Recipe whose teacher: (or --block) block is served (default: teacher.yaml).")
    ] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override a teacher field first: --set teacher.vllm.max_model_len=32768")
    ] = None,
    gpus: Annotated[int, typer.Option("--gpus", help="GPUs on the node.")] = 8,
    tp: Annotated[int | None, typer.Option(
        "--tp", help="GPUs per replica (tensor parallel); the node runs gpus/tp replicas (default: all GPUs, one).")
    ] = None,
    block: Annotated[str, typer.Option(
        "--block", help="Recipe block served: teacher (tasks build) or policy (rl-pool build).")] = "teacher",
    time: Annotated[str, typer.Option("--time", help="Slurm time limit.")] = "24:00:00",
    partition: Annotated[str | None, typer.Option("--partition", "-p")] = None,
    account: Annotated[str | None, typer.Option("--account", "-A")] = None,
    cpus: Annotated[int, typer.Option("--cpus-per-task")] = 32,
    mem: Annotated[str | None, typer.Option("--mem", help="e.g. 512G")] = None,
    job_name: Annotated[str, typer.Option("--job-name", "-J")] = "datagen",
    port: Annotated[int, typer.Option("--port", help="Port of vllm serve on the node.")] = 8000,
    health_timeout: Annotated[int, typer.Option(
        "--health-timeout", help="Seconds to wait for the server's /health.")] = 1800,
    sbatch: Annotated[list[str] | None, typer.Option(
        "--sbatch", help="Extra #SBATCH option, e.g. --sbatch=--qos=high (repeatable).")] = None,
) -> None:
    """Print a Slurm script: vllm serve the recipe's model, wait for /health, run COMMAND, stop the servers.

    The node's GPUs hold gpus/tp replicas of the model (each tensor parallel over tp GPUs,
    on its own port); everything after `--` is the command run on the node, and it gets
    --set <block>.base_url=... and <block>.base_urls=[...] so its requests are spread over
    the replicas. The job requeues when preempted; the build resumes and its request cache
    answers what was already paid for.

    Examples:

      datagen job slurm -r tasks --gpus 8 --tp 2 -- datagen build tasks -i /data/repos -o /data/tasks > tasks.sh

      datagen job slurm -r rl-pool --block policy --tp 1 -- datagen build rl-pool -t /data/tasks > pool.sh

      sbatch tasks.sh   # then: sbatch --dependency=afterok:<job id> pool.sh

      datagen job slurm --gpus 8 -- datagen teacher run prompts.jsonl -o out/answers.jsonl > job.sh

      datagen job slurm --gpus 4 -p gpu -A myproj -- datagen teacher run prompts.jsonl -o out/answers.jsonl
    """
    from datagen.config.teacher import load_teacher_block
    from datagen.errors import UserError
    from datagen.teachers.slurm import SlurmJob, slurm_script

    command = list(ctx.args)
    if not command:
        raise UserError("give the command to run after `--`, "
                        "e.g. -- datagen teacher run prompts.jsonl -o out/answers.jsonl")
    config, _ = load_teacher_block(recipe, set_, block=block)
    if gpus % (tp or gpus):
        raise UserError(f"--tp {tp} must divide --gpus {gpus}")
    job = SlurmJob(gpus=gpus, tp=tp, block=block, job_name=job_name, time=time, partition=partition,
                   account=account, cpus_per_task=cpus, mem=mem, port=port,
                   health_timeout_s=health_timeout, extra_sbatch=list(sbatch or []))
    typer.echo(slurm_script(config, command, job), nl=False)
