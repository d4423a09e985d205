"""Recipe section ``pack``: repo-level ordering, held-out repos, tokenization, packing."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from datagen.config.base import StrictModel

Format = Literal["parquet", "datatrove", "megatron"]
MIN_DOC_TOKENS = 64  # a repo document holds its header, EOS and some code
FIM_SLOTS = ("prefix", "middle", "suffix")


class FimConfig(StrictModel):
    """Fill-in-the-middle: a seeded share of files (or repo documents) rearranged into
    prefix / suffix / middle with the tokenizer's FIM tokens (``datagen.pack.fim``)."""

    rate: float = Field(0.0, ge=0.0, le=1.0, description="share of files (level=file) or documents "
                        "(level=repo) rearranged; 0 = off")
    spm_rate: float = Field(0.5, ge=0.0, le=1.0, description="share of the rearranged ones in SPM order "
                            "(the rest PSM)")
    level: Literal["file", "repo"] = Field("file", description="file: within each file; repo: the middle "
                                           "is cut from one file of a document, the prefix and suffix "
                                           "carry the other files")
    split: Literal["char", "line"] = Field("char", description="cut points at code points or line starts")
    seed: int = Field(0, description="salt of the per-document choice (content hash + seed)")
    tokens: dict[str, str] = Field(
        default_factory=dict, description="token names {prefix, middle, suffix}; default: the "
        "tokenizer's <fim_prefix>... or <|fim_prefix|>...",
    )
    add_tokens: bool = Field(False, description="append named tokens the tokenizer lacks (ids after its "
                             "vocabulary; the extended tokenizer is written to tokens/tokenizer.json)")

    @model_validator(mode="after")
    def _check(self) -> FimConfig:
        unknown = sorted(set(self.tokens) - set(FIM_SLOTS))
        if unknown or (self.tokens and len(self.tokens) != len(FIM_SLOTS)):
            raise ValueError(f"tokens: give all of {', '.join(FIM_SLOTS)}"
                             + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
        if self.tokens and len(set(self.tokens.values())) != len(FIM_SLOTS):
            raise ValueError("tokens: the three FIM tokens must differ")
        return self


class LongConfig(StrictModel):
    """Long-context buckets: repo documents by the token length of their repo; the longest
    output takes ``share`` of its tokens from long documents (``datagen.pack.long``)."""

    edges: list[int] = Field(
        default_factory=lambda: [32768, 131072, 262144], min_length=1,
        description="bucket edges in tokens: <e0, e0-e1, ..., >=last",
    )
    min_tokens: int = Field(32768, gt=0, description="documents of repos this long or longer are 'long'")
    share: float | None = Field(
        None, ge=0.0, le=1.0, description="share of long-document tokens in the longest seq_len's "
        "output (the rest short documents, a seeded choice); null = every document",
    )
    seed: int = Field(0, description="salt of the choice of short documents")

    @model_validator(mode="after")
    def _check(self) -> LongConfig:
        if any(b <= a for a, b in zip(self.edges, self.edges[1:])) or self.edges[0] <= 0:
            raise ValueError("edges: positive and strictly increasing")
        return self


class PackConfig(StrictModel):
    order: Literal["imports", "path"] = Field(
        "imports", description="file order inside a repo: dependency order, or by path"
    )
    holdout_repos: list[str] = Field(
        default_factory=list, description="repos held out whole as the validation split"
    )
    holdout_fraction: float = Field(
        0.0, ge=0.0, le=1.0, description="also hold out repos whose name hash falls below this"
    )
    holdout_seed: int = Field(0, description="salt of the repo-name hash for holdout_fraction")
    tokenizer: str | None = Field(
        None, description="local tokenizer.json or folder; unset = no tokenization/packing"
    )
    eos_token: str | None = Field(None, description="default: the tokenizer config's EOS")
    pad_token: str | None = Field(None, description="default: the EOS token")
    seq_lens: list[int] = Field(
        default_factory=lambda: [32768, 262144], min_length=1,
        description="one packed output per sequence length",
    )
    doc_max_tokens: int | None = Field(
        None, gt=1, description="repo documents are cut between files at this size; "
        "default: the largest seq_len",
    )
    doc_header: str = Field("<repo_name>{repo}\n", description="starts each repo document")
    file_header: str = Field("<file_sep>{path}\n", description="before each file ({path} {lang})")
    reset_position_ids: bool = Field(
        True, description="write position_ids restarting at every document"
    )
    remainder: Literal["pad", "drop"] = Field(
        "pad", description="last partial sequence: pad it (loss mask 0) or drop it"
    )
    formats: list[Format] = Field(
        default_factory=lambda: ["parquet", "datatrove", "megatron"], min_length=1
    )
    shard_tokens: int = Field(1 << 25, gt=0, description="tokens per token parquet shard")
    batch_bytes: int = Field(8 << 20, gt=0, description="text bytes per encode_batch call")
    fim: FimConfig = FimConfig()
    long: LongConfig = LongConfig()

    @model_validator(mode="after")
    def _check(self) -> PackConfig:
        if any(s < 2 for s in self.seq_lens):
            raise ValueError("seq_lens: every sequence length must be at least 2")
        if self.max_doc_tokens < MIN_DOC_TOKENS:
            name = "doc_max_tokens" if self.doc_max_tokens else "seq_lens"
            raise ValueError(
                f"{name}: repo documents of {self.max_doc_tokens} tokens are too small "
                f"(at least {MIN_DOC_TOKENS}: a document holds its header, EOS and code)")
        if len(set(self.seq_lens)) != len(self.seq_lens):
            raise ValueError("seq_lens: duplicate sequence length")
        for name in ("doc_header", "file_header"):
            try:
                getattr(self, name).format(repo="r", path="p", lang="l")
            except (KeyError, IndexError, ValueError) as exc:
                raise ValueError(f"{name}: bad placeholder {exc}") from None
        return self

    @property
    def max_doc_tokens(self) -> int:
        return self.doc_max_tokens or max(self.seq_lens)
