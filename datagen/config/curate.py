"""Recipe sections of the CPT curation steps (quality, near-dedup, syntax, secrets, decontamination)."""

from __future__ import annotations

from pydantic import Field, model_validator

from datagen.config.base import StrictModel


class QualityConfig(StrictModel):
    """StarCoder-style quality heuristics with thresholds per language."""

    enabled: bool = True
    rules: str = Field("quality.yaml", description="rule pack in filters/ (thresholds per language)")


class NearDedupConfig(StrictModel):
    """MinHash + LSH near-duplicate removal. ``bands * rows`` permutations; pairs that
    share a band are verified by their estimated Jaccard before they are merged."""

    enabled: bool = True
    ngram: int = Field(5, ge=1, description="shingle size in whitespace-separated tokens")
    bands: int = Field(14, ge=1)
    rows: int = Field(8, ge=1, description="signature rows per band")
    threshold: float = Field(0.75, gt=0, le=1, description="min estimated Jaccard to merge")
    rep_threshold: float = Field(
        0.7, ge=0, le=1, description="min estimated Jaccard of a duplicate to its representative (0: components)"
    )
    seed: int = 42
    partitions: int = Field(4, ge=1, description="hash-range files per band (bounds memory)")
    batch_bytes: int = Field(4 << 20, ge=1 << 16, description="text per signature batch (small: cache friendly)")

    @property
    def num_perm(self) -> int:
        return self.bands * self.rows


class SyntaxConfig(StrictModel):
    """tree-sitter parse check: score ``syntax_error_ratio``, drop above the cut."""

    enabled: bool = True
    max_error_ratio: float = Field(0.05, ge=0, le=1, description="drop when this share of lines or more holds errors")
    lang_max_error_ratio: dict[str, float] = Field(
        default_factory=lambda: {"c": 0.3, "cpp": 0.3},
        description="per-language cuts (tree-sitter C/C++ has no preprocessor: macros cost lines)",
    )
    max_bytes: int = Field(2 << 20, description="files larger than this are not parsed")


class SecretsConfig(StrictModel):
    """Redact credentials and PII with typed placeholders (patterns in a rule pack)."""

    enabled: bool = True
    pack: str = "secrets.yaml"


class BenchmarkSource(StrictModel):
    """One evaluation set to decontaminate against: JSONL, parquet or plain text."""

    name: str
    path: str
    fields: list[str] = Field(default_factory=list, description="JSONL/parquet fields holding text (empty: all str)")
    id_field: str | None = Field(None, description="field naming each row (e.g. task_id)")


class DecontamConfig(StrictModel):
    """Drop files overlapping evaluation benchmarks, and whole eval repositories."""

    enabled: bool = True
    ngram: int = Field(13, ge=4, description="n-gram size in word tokens")
    min_matches: int = Field(1, ge=1, description="shared n-grams needed to drop a file")
    benchmarks: list[BenchmarkSource] = Field(default_factory=list)
    eval_repos: str | None = Field("eval_repos.yaml", description="rule pack of eval repos")

    @model_validator(mode="after")
    def _unique_names(self) -> DecontamConfig:
        names = [b.name for b in self.benchmarks]
        if len(names) != len(set(names)):
            raise ValueError("benchmark names must be unique")
        return self
