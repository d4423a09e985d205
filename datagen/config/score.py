"""Recipe blocks of the scorers that ``datagen build rl-pool`` runs: ``perplexity:`` and
``difficulty:``. The policy that attempts tasks is a ``TeacherConfig`` under ``policy:``
in the build's recipe (any teacher back end)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from datagen.config.base import StrictModel
from datagen.config.teacher import VllmOptions


class PerplexityConfig(StrictModel):
    """Perplexity of instructions (and optionally fixes) under one scorer model."""

    enabled: bool = Field(True, description="false: no perplexity scores are computed")
    backend: Literal["transformers", "vllm", "endpoint"] = Field(
        "transformers",
        description="'transformers' (local causal LM), 'vllm' (offline prompt_logprobs), "
        "'endpoint' (OpenAI-compatible /v1/completions with echo + logprobs)",
    )
    model: str | None = Field(
        None, description="local path or HF id (transformers, vllm); served name (endpoint)")
    model_id: str | None = Field(
        None, description="name of the model in the scorer name (default: the model's last "
        "path component), so one model scored by two back ends is recognisably the same")
    score_fix: bool = Field(False, description="also score each task's reference fix")
    base_url: str | None = Field(None, description="endpoint back end: the server, e.g. .../v1")
    api_key_env: str | None = Field(
        "OPENAI_API_KEY", description="endpoint back end: environment variable with the key")
    batch_tokens: int | None = Field(
        None, ge=1, description="transformers: padded tokens per forward pass (texts are "
        "sorted by length and bucketed so padding stays inside a bucket); default 16384 on "
        "CUDA, 2048 on CPU (larger CPU batches fall out of the caches)")
    max_length: int | None = Field(
        2048, ge=2, description="score only the first N tokens of a text (null: all)")
    device: str = Field("auto", description="transformers: 'auto' (cuda if available), 'cpu', 'cuda:1'")
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = Field(
        "auto", description="weights dtype; 'auto' is bfloat16 on CUDA and float32 on CPU")
    name_version: str = Field(
        "ppl_v1", pattern=r"^[a-z0-9_]+$",
        description="version prefix of the scorer name; bump it when the convention changes")
    max_concurrency: int = Field(16, ge=1, description="endpoint: requests in flight")
    timeout_s: float = Field(600.0, gt=0, description="endpoint: per-request deadline")
    max_retries: int = Field(6, ge=0, description="endpoint: retries after the first attempt")
    cache_dir: str | None = Field(
        None, description="endpoint: request cache folder (null: no cache)")
    vllm: VllmOptions = Field(default_factory=VllmOptions, description="vllm back end: engine options")

    @model_validator(mode="after")
    def _needs_a_model(self) -> PerplexityConfig:
        if self.enabled and not self.model:
            raise ValueError("perplexity.model is required when perplexity is enabled")
        if self.enabled and self.backend == "endpoint" and not self.base_url:
            raise ValueError("perplexity.base_url is required by the 'endpoint' back end")
        return self


class AgentRunConfig(StrictModel):
    """``difficulty.mode: agent``: each attempt is a run of mini-swe-agent in the sandbox.

    The policy explores the task's working copy with shell commands (each one a sandboxed
    run on the repo's environment, no network), edits it and submits; the working copy's
    diff is graded like any attempt. Limits stop a run; infrastructure failures are masked."""

    step_limit: int = Field(50, ge=1, description="model calls per run (mini-swe-agent's step_limit)")
    wall_time_s: float = Field(1800.0, gt=0, description="wall-clock limit of one run")
    token_limit: int = Field(
        2_000_000, ge=1, description="prompt plus completion tokens one run may spend (summaries included)")
    max_tokens: int = Field(4096, ge=1, description="max_tokens of one model reply")
    command_timeout_s: float = Field(120.0, gt=0, description="wall-clock limit of one shell command")
    max_observation_chars: int = Field(
        10_000, ge=100, description="a command's output shown to the model is cut to this (head and tail)")
    context_limit: int | None = Field(
        None, ge=1, description="the policy's context window in tokens: a run whose prompt passes it "
        "(and cannot be summarized) ends with exit status context_limit; null: no check")
    context_budget: int | None = Field(
        None, ge=1, description="self-summarization: past this many prompt tokens the agent is asked "
        "for a summary and continues from the task and the summary in a new segment; null: off")
    summary_max_tokens: int = Field(1024, ge=1, description="max_tokens of a summary")
    max_segments: int = Field(4, ge=1, description="segments per run (summaries + 1); past it: context_limit")
    max_reruns: int = Field(
        2, ge=0, description="a masked run (model or sandbox error) is run again up to this many times")
    mask_limits: bool = Field(
        False, description="also mask runs that hit the step, time or context limit (DeepSWE's choice); "
        "default: such runs count as failures")
    workers: int = Field(0, ge=0, description="runs at once (0 = one per core)")
    trajectories: bool = Field(True, description="write every run's .traj.json, ATIF and SFT rows")


class DifficultyConfig(StrictModel):
    """K policy attempts per task, graded in the sandbox, and the pass-rate band kept."""

    enabled: bool = Field(True, description="false: no attempts; pass rates are unknown (null)")
    mode: Literal["single", "agent"] = Field(
        "single", description="'single': one answer from the files the fix touches (oracle retrieval); "
        "'agent': K runs of mini-swe-agent exploring a sandboxed working copy (difficulty.agent)")
    agent: AgentRunConfig = Field(default_factory=AgentRunConfig, description="mode 'agent': the runs")
    k: int = Field(8, ge=1, description="attempts per task (the trainer's group size)")
    band_low: float = Field(0.0, ge=0.0, le=1.0, description="keep pass rates above this (exclusive)")
    band_high: float = Field(1.0, ge=0.0, le=1.0, description="keep pass rates below this (exclusive)")
    wilson: bool = Field(
        False, description="decide on the Wilson interval instead of passes/K: the whole "
        "interval must lie inside the band, so a lucky 1-of-K is not taken as solvable")
    confidence: float = Field(0.95, gt=0.0, lt=1.0, description="confidence of the Wilson interval")
    max_attempt_tokens: int = Field(4096, ge=1, description="max_tokens of one policy answer")
    temperature: float = Field(1.0, ge=0.0, description="sampling temperature of the attempts")
    seed: int = Field(0, description="attempt i of a task is sampled with seed + i")
    workers: int = Field(0, ge=0, description="attempts graded in parallel (0 = one per core)")
    test_timeout_s: float = Field(300.0, gt=0, description="wall-clock limit of one test run")
    max_context_chars: int = Field(
        60_000, ge=0, description="cap on the file contents shown to the policy, in characters")
    forbid_test_edits: bool = Field(
        True, description="fail attempts that edit, delete or skip tests (reward hacking)")

    @model_validator(mode="after")
    def _band_is_open(self) -> DifficultyConfig:
        if self.band_low >= self.band_high:
            raise ValueError("difficulty.band_low must be below difficulty.band_high")
        return self


class CorpusPerplexityConfig(PerplexityConfig):
    """The corpus build's perplexity step: a score per file, and an absolute cut (a file
    step sees one file at a time, so percentiles are left to the rl-pool build)."""

    enabled: bool = Field(False, description="score every kept file (needs perplexity.model)")
    min: float | None = Field(None, description="drop files below (boilerplate, repeated lines)")
    max: float | None = Field(None, description="drop files above (garbled or unnatural text)")
    batch_docs: int = Field(64, ge=1, description="files scored together (sorted by length inside)")
