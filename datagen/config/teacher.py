"""The ``teacher:`` recipe block, shared by every build that calls a teacher model.

Embed ``TeacherConfig`` in a build recipe as ``teacher: TeacherConfig``; ``TeacherRecipe`` is
the stand-alone recipe of ``datagen teacher run`` (``pipelines/teacher.yaml``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field

from datagen.config.base import StrictModel, apply_overrides, resolve_recipe_path, validate
from datagen.errors import UserError
from datagen.resources import cache_root


class Sampling(StrictModel):
    """Default sampling parameters; a request's own values win."""

    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(1024, ge=1)
    stop: list[str] = Field(default_factory=list)


class VllmOptions(StrictModel):
    """Engine options of the offline ``vllm`` backend and of ``vllm serve`` in Slurm jobs."""

    tensor_parallel_size: int = Field(1, ge=1)
    max_model_len: int | None = Field(None, ge=1)
    gpu_memory_utilization: float = Field(0.9, gt=0.0, le=1.0)
    enable_prefix_caching: bool = True
    dtype: str = "auto"
    trust_remote_code: bool = False
    chat_template: str | None = Field(None, description="path to a Jinja chat template")


class TransformersOptions(StrictModel):
    """Options of the local Hugging Face ``transformers`` backend."""

    device: str = Field("auto", description="'auto' (cuda if available), 'cpu', 'cuda', 'cuda:1'")
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "auto"
    batch_size: int = Field(8, ge=1, description="requests per static batch")
    batching: Literal["auto", "continuous", "static"] = Field(
        "auto",
        description="'continuous': transformers' generate_batch (paged attention, transformers "
        ">= 5) where the model supports it; 'static': padded batches of batch_size sorted by "
        "length; 'auto': continuous on CUDA, static elsewhere",
    )


class TeacherConfig(StrictModel):
    """Which teacher answers, how hard to try, and where answers are cached."""

    backend: Literal["openai", "vllm", "transformers"] = "openai"
    model: str = Field(..., min_length=1, description="served model name, HF id or local path")
    model_id: str | None = Field(
        None,
        description="backend-independent name used in cache keys (default: model), so a "
        "model served by vLLM and loaded offline shares one cache",
    )
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. .../v1")
    base_urls: list[str] = Field(default_factory=list, description="more endpoints serving the same model "
                                 "(replicas): requests are spread over base_url and these")
    api_key_env: str | None = Field(
        "OPENAI_API_KEY", description="environment variable holding the API key (never stored)"
    )
    max_concurrency: int = Field(64, ge=1)
    timeout_s: float = Field(600.0, gt=0, description="per-request deadline, per attempt")
    max_retries: int = Field(6, ge=0, description="retries after the first attempt")
    backoff_base_s: float = Field(1.0, ge=0)
    backoff_max_s: float = Field(60.0, ge=0, description="cap on one wait, Retry-After included")
    structured_output: Literal["auto", "response_format", "prompt"] = Field(
        "auto",
        description="JSON schema requests: 'response_format' sends the schema to the server, "
        "'prompt' only validates the answer, 'auto' falls back to 'prompt' if the server refuses",
    )
    max_reasks: int = Field(2, ge=0, description="re-asks when an answer fails its JSON schema")
    reask_template: str = Field(
        "Your answer is not valid: {error}. Reply again with only the JSON value, nothing else.",
        description="the user turn of a re-ask; {error} is the parse or schema error",
    )
    cache_dir: str | None = Field(
        default_factory=lambda: str(cache_root() / "teacher"),
        description="request cache folder (default: $DATAGEN_CACHE/teacher, else "
        "~/.cache/datagen/teacher; a relative path is taken from the working directory); "
        "null turns the cache off",
    )
    sampling: Sampling = Field(default_factory=Sampling)
    vllm: VllmOptions = Field(default_factory=VllmOptions)
    transformers: TransformersOptions = Field(default_factory=TransformersOptions)

    @property
    def cache_model_id(self) -> str:
        return self.model_id or self.model


class TeacherRecipe(StrictModel):
    """Recipe of ``datagen teacher run``: only the teacher block."""

    teacher: TeacherConfig


def load_teacher_block(
    recipe: str | Path | None, overrides: list[str] | None = None, default_name: str = "teacher",
    block: str = "teacher",
) -> tuple[TeacherConfig, Path]:
    """The ``teacher:`` block (or another block of the same model, e.g. the pool's
    ``policy:``) of any recipe, after ``--set <block>.x=v`` overrides; other sections are
    left to their build."""
    path = resolve_recipe_path(recipe, default_name)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(f"cannot read recipe {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get(block), dict | None):
        raise UserError(f"recipe {path.name}: '{block}' must be a mapping")
    data = apply_overrides({block: data.get(block) or {}}, overrides)
    if not data[block].get("model"):
        raise UserError(f"recipe {path.name}: no {block} model (set {block}.model or --model)")
    return validate(TeacherRecipe, {"teacher": data[block]}, f"recipe {path.name}").teacher, path
