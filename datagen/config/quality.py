"""Recipe blocks of the learned quality scorer: ``quality_model:`` in the corpus build (the
file step that applies a trained model) and ``pipelines/quality.yaml``, the recipe of
``datagen quality annotate`` (a teacher rates a sample of kept files) and ``datagen quality
train`` (a linear model per language over hashed byte n-grams is fitted to those ratings)."""

from __future__ import annotations

from pydantic import Field, model_validator

from datagen.config.base import StrictModel
from datagen.config.teacher import TeacherConfig


class QualityModelConfig(StrictModel):
    """The corpus build's learned-quality step: a score per kept file (``files.quality_score``,
    0-5 on the teacher's rubric) and a per-language cut (reason ``quality_model``)."""

    enabled: bool = Field(False, description="score every kept file (needs quality_model.path)")
    path: str | None = Field(None, description="model file written by `datagen quality train` (quality_v1)")
    threshold: float | None = Field(
        None, ge=0, le=5, description="drop files scoring below this (null: the model's own per-language cut)")
    lang_thresholds: dict[str, float] = Field(
        default_factory=dict, description="per-language cuts over `threshold` and the model's, e.g. {html: 2.5}")
    batch_docs: int = Field(256, ge=1, description="kept files scored in one call")

    @model_validator(mode="after")
    def _needs_a_model(self) -> QualityModelConfig:
        if self.enabled and not self.path:
            raise ValueError("quality_model.path is required when quality_model is enabled")
        return self


class AnnotateConfig(StrictModel):
    """Which kept files the teacher rates: a seeded sample of up to ``per_lang`` per language."""

    per_lang: int = Field(500, ge=1, description="files rated per language (all of them when fewer)")
    langs: list[str] = Field(default_factory=list, description="only these languages (empty: all)")
    seed: int = Field(0, description="the sample is the per_lang files with the smallest hash(seed, id)")
    max_chars: int = Field(8000, ge=256, description="the teacher sees the first N characters of a file")
    max_tokens: int = Field(256, ge=16, description="max_tokens of one rating answer")


class TrainConfig(StrictModel):
    """A linear regression per language on hashed byte 4- and 8-grams, fitted by full-batch
    Adam on the squared error (one thread of numpy: the same labels give the same model)."""

    threshold: float = Field(3.0, ge=0, le=5, description="keep files scoring at least this (Stack-Edu used 3)")
    lang_thresholds: dict[str, float] = Field(default_factory=dict, description="per-language cuts")
    holdout: float = Field(0.2, gt=0, lt=1, description="share of each language's labels held out (by id hash)")
    min_labels: int = Field(40, ge=2, description="fewer labels than this: the language uses the pooled model")
    max_chars: int = Field(8000, ge=256, description="the model reads the first N characters of a file")
    bits: int = Field(18, ge=10, le=24, description="2**bits hashed n-gram buckets (4 bytes of model each)")
    steps: int = Field(100, ge=1, description="full-batch Adam steps")
    lr: float = Field(0.1, gt=0, description="Adam step size")
    l2: float = Field(1e-6, ge=0, description="L2 penalty on the n-gram weights")


class QualityRecipe(StrictModel):
    """Recipe of ``datagen quality annotate`` and ``datagen quality train``."""

    teacher: TeacherConfig
    annotate: AnnotateConfig = AnnotateConfig()
    train: TrainConfig = TrainConfig()
