"""Helpers shared by the benchmark scripts (run as ``python benchmarks/<script>.py``, so
this folder is on ``sys.path``). Importing it loads neither polars nor tokenizers: a
script may set thread-count variables before those are first imported."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from datatrove.utils.word_tokenizers import WordTokenizer


class WhitespaceTokenizer(WordTokenizer):
    """A datatrove word tokenizer that splits on whitespace, as datagen's shingles do
    (datatrove's default English tokenizer needs spaCy). Module level, so datatrove's
    executors can pickle it."""

    def word_tokenize(self, text: str) -> list[str]:
        return text.split()

    def sent_tokenize(self, text: str) -> list[str]:
        return text.splitlines()

    def span_tokenize(self, text: str) -> list[tuple[int, int]]:
        raise NotImplementedError


def train_bpe(texts: Iterable[str], folder: Path, vocab_size: int = 16384) -> Path:
    """A byte-level BPE with datagen's special tokens trained on ``texts``; saved as
    ``folder/tokenizer.json`` (the path returned)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>", "<repo_name>", "<file_sep>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return path
