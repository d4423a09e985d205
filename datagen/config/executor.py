"""The ``executor:`` block of a recipe: which datatrove executor runs a build's pipeline stages.

``local`` runs them in processes on this machine; ``slurm`` submits each stage as a Slurm
array job (datatrove's ``SlurmPipelineExecutor``) and the rest of the build as a job that
depends on it; ``ray`` runs them on a Ray cluster (datatrove's ``RayPipelineExecutor``).
Where a build runs does not change what it makes: the block is not part of the run id.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from datagen.config.base import StrictModel


class ExecutorConfig(StrictModel):
    kind: Literal["local", "slurm", "ray"] = Field("local", description="local, slurm or ray (--executor)")
    tasks_per_job: int = Field(1, ge=1, description="slurm: datatrove tasks run by one array task")
    partition: str | None = Field(None, description="slurm: partition of every job")
    time: str = Field("04:00:00", description="slurm: time limit of every job")
    cpus_per_task: int = Field(1, ge=1, description="slurm / ray: CPUs of one task")
    mem_per_cpu_gb: int = Field(2, ge=1, description="slurm / ray: memory per CPU, GB")
    qos: str | None = Field(None, description="slurm: quality of service")
    env_command: str | None = Field(None, description="slurm: shell line that activates the environment in a job")
    sbatch_args: dict[str, str] = Field(default_factory=dict, description="slurm: more #SBATCH options")
    max_array_size: int = Field(1001, ge=1, description="slurm: the cluster's MaxArraySize")
    resubmits: int = Field(2, ge=0, description="slurm: times a stage with failed tasks is resubmitted")
    ray_address: str | None = Field(None, description="ray: cluster address (null: the running or a local one)")


__all__ = ["ExecutorConfig"]
