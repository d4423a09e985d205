"""Recipe model of ``datagen build rl-pool`` (``pipelines/rl-pool.yaml``)."""

from __future__ import annotations

from pydantic import Field, model_validator

from datagen.config.base import StrictModel
from datagen.config.curate import DecontamConfig, NearDedupConfig
from datagen.config.executor import ExecutorConfig
from datagen.config.sandbox import EnvConfig, SandboxConfig
from datagen.config.score import DifficultyConfig, PerplexityConfig
from datagen.config.teacher import TeacherConfig


class PerplexityCut(StrictModel):
    """Which perplexity scores keep an instruction (absolute, or percentiles of the pool)."""

    min: float | None = Field(None, description="drop below (perplexity_too_low): boilerplate")
    max: float | None = Field(None, description="drop above (perplexity_too_high): garbled text")
    min_percentile: float | None = Field(None, ge=0, le=100, description="drop below this percentile")
    max_percentile: float | None = Field(None, ge=0, le=100, description="drop above this percentile")


class HygieneConfig(StrictModel):
    near_dedup: NearDedupConfig = Field(default_factory=NearDedupConfig,
                                        description="MinHash over statements (curate/ near dedup)")
    decontam: DecontamConfig = Field(default_factory=DecontamConfig,
                                     description="benchmark n-grams and eval repos (curate/decontam)")
    eval_fraction: float = Field(0.0, ge=0, le=1, description="share of repositories held out as 'validation'")
    eval_repos: list[str] = Field(default_factory=list, description="repositories always in 'validation'")


class PoolOptions(StrictModel):
    lint_command: str | None = Field(None, description="auxiliary reward check: a lint command (exit 0 = pass)")
    pretty_name: str = "datagen RL pool"
    data_source: str = Field("datagen/swe", description="verl/SkyRL data_source (selects the reward function)")
    sft: bool = Field(True, description="write the best passing attempt per task as chat SFT JSONL")


class RlPoolRecipe(StrictModel):
    """``datagen build rl-pool``: tasks -> hard-but-solvable RL instructions, handed out once."""

    tasks: str = Field("out/tasks", description="a tasks build's output folder or its tasks.jsonl")
    output: str = "out/rl-pool"
    workers: int = Field(1, ge=1, description="attempts graded in parallel (local); parallel tasks (ray)")
    executor: ExecutorConfig = Field(ExecutorConfig(), description="where the graded attempts run: one "
                                     "datatrove task per repo on slurm or ray")
    seed: int = 0
    hygiene: HygieneConfig = Field(default_factory=HygieneConfig)
    perplexity: PerplexityConfig = Field(default_factory=lambda: PerplexityConfig(enabled=False),
                                         description="scorer of statements (off unless a model is set)")
    perplexity_cut: PerplexityCut = Field(default_factory=PerplexityCut)
    difficulty: DifficultyConfig = Field(default_factory=DifficultyConfig)
    policy: TeacherConfig = Field(
        default_factory=lambda: TeacherConfig(model="Qwen/Qwen2.5-Coder-7B-Instruct"),
        description="the policy whose pass rate is measured; used when policy.base_url is set or "
        "its backend is vllm/transformers (without one, pass rates are unknown)")
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    env: EnvConfig = Field(default_factory=EnvConfig)
    pool: PoolOptions = Field(default_factory=PoolOptions)

    @property
    def has_policy(self) -> bool:
        return self.policy.base_url is not None or self.policy.backend != "openai"

    @model_validator(mode="after")
    def _cut_needs_scores(self) -> RlPoolRecipe:
        cut = self.perplexity_cut
        if any(v is not None for v in cut.model_dump().values()) and not self.perplexity.enabled:
            raise ValueError("perplexity_cut is set but perplexity.enabled is false")
        return self
