"""Recipe model of ``datagen build rl-pool`` (``pipelines/rl-pool.yaml``)."""

from __future__ import annotations

from typing import Literal

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


STATIC_CHECKS = ["b2_implicit_naming", "b10_text_files", "statement_names_test", "statement_line_number",
                 "exact_output"]
ISSUES = ["B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10", "B11"]


class JudgeConfig(StrictModel):
    """The teacher judge of soundness (SWE-rebench V2's and SWE-bench Verified's rubric)."""

    enabled: bool = Field(False, description="ask the teacher for a verdict per task (batched, cached)")
    teacher: TeacherConfig = Field(default_factory=lambda: TeacherConfig(model="Qwen/Qwen2.5-Coder-32B-Instruct"))
    max_chars: int = Field(6000, gt=0, description="characters of the fix and of the failing tests shown")
    max_tokens: int = Field(400, gt=0, description="the answer's token budget")
    min_confidence: float = Field(0.0, ge=0, le=1, description="verdicts below this confidence flag nothing")
    drop_issues: list[str] = Field(default_factory=lambda: list(ISSUES),
                                   description="defects (B1..B11) that flag a task as unsound")


class SoundnessConfig(StrictModel):
    """Can an honest agent pass a task from what it is told? Static checks on every task, an
    optional teacher judge, and what to do with a flagged task."""

    enabled: bool = Field(True, description="run the static checks (no teacher needed)")
    action: Literal["drop", "keep"] = Field("drop", description="drop a flagged task (pool_drops reason "
                                            "'unsound'), or keep it with its flags (soundness_flags)")
    checks: list[str] = Field(default_factory=lambda: list(STATIC_CHECKS),
                              description="the static checks whose flag counts as unsound (all run)")
    judge: JudgeConfig = Field(default_factory=JudgeConfig)


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
    soundness: SoundnessConfig = Field(default_factory=SoundnessConfig)

    @property
    def has_policy(self) -> bool:
        return self.policy.base_url is not None or self.policy.backend != "openai"

    @model_validator(mode="after")
    def _cut_needs_scores(self) -> RlPoolRecipe:
        cut = self.perplexity_cut
        if any(v is not None for v in cut.model_dump().values()) and not self.perplexity.enabled:
            raise ValueError("perplexity_cut is set but perplexity.enabled is false")
        return self
