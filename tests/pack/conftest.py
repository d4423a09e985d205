"""Fixtures for the pack tests: tiny BPE tokenizers (byte-level, SentencePiece-style) trained on the spot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SPECIALS = ["<|endoftext|>", "<repo_name>", "<file_sep>", "<pad>"]


def make_code(n: int = 40) -> list[str]:
    """Varied code-like lines (Python, JS, Go, C) to train on and to pack."""
    out = []
    for i in range(n):
        out.append(
            f"def handler_{i}(request, limit={i}):\n    total = sum(x * {i} for x in range(limit))\n"
            f"    return {{'status': 'ok', 'value': total, 'name': \"h{i}\"}}\n\n"
            f"export function render{i}(props) {{ return props.items.map(x => x + {i}); }}\n"
            f"func Compute{i}(a int, b int) int {{ return a*b + {i} }}\n"
            f"#include <stdio.h>\nint main_{i}(void) {{ printf(\"%d\\n\", {i}); return 0; }}\n"
            "// ünïcödé ✓ 日本語 emoji 🎉\n"
        )
    return out


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(make_code(), trainer)
    folder = tmp_path_factory.mktemp("tok")
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|endoftext|>"}))
    return folder


@pytest.fixture(scope="session")
def tokenizer_file(tokenizer_dir) -> Path:
    return tokenizer_dir / "tokenizer.json"


@pytest.fixture(scope="session")
def sample_code():
    """``sample_code(n)``: n varied code snippets."""
    return make_code


def _alphabet() -> list[str]:
    """Every character the pack tests encode (code, headers, paths, unicode)."""
    extra = "<>|_/.-\n\r\t abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789{}()[]=:;,'\"*+#%&!?@$^~`\\"
    return sorted(set("".join(make_code()) + extra))


def _save(tok, folder: Path, eos: str) -> Path:
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": eos}))
    return folder


@pytest.fixture(scope="session")
def llama_tokenizer_dir(tmp_path_factory) -> Path:
    """Llama/SentencePiece-style: ``Prepend("▁")`` + ``Replace(" ", "▁")`` normalizer and a
    decoder that strips the one leading space; headers are plain text, EOS is ``</s>``.
    It prefixes every text it encodes, so encoding pieces one by one adds a space each."""
    from tokenizers import Tokenizer, decoders, models, normalizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"],
                                  initial_alphabet=_alphabet() + ["▁"], show_progress=False)
    tok.train_from_iterator(make_code(), trainer)
    return _save(tok, tmp_path_factory.mktemp("llama-tok"), "</s>")


@pytest.fixture(scope="session")
def metaspace_tokenizer_dir(tmp_path_factory) -> Path:
    """BPE with a ``Metaspace`` pre-tokenizer and decoder (prepend "▁" to the first word)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    tok.decoder = decoders.Metaspace(prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=SPECIALS,
                                  initial_alphabet=_alphabet() + ["▁"], show_progress=False)
    tok.train_from_iterator(make_code(), trainer)
    return _save(tok, tmp_path_factory.mktemp("metaspace-tok"), "<|endoftext|>")


@pytest.fixture(scope="session", params=["bytelevel", "llama", "metaspace"])
def any_tokenizer_dir(request) -> Path:
    """Each tokenizer kind in turn."""
    name = {"bytelevel": "tokenizer_dir"}.get(request.param, f"{request.param}_tokenizer_dir")
    return request.getfixturevalue(name)
