"""Load a Hugging Face tokenizer from a local path and encode text batches into numpy.

A ``tokenizer.json`` file or a folder holding one is read with ``tokenizers`` directly;
a folder without it (slow-only formats) goes through ``transformers.AutoTokenizer`` with
``local_files_only=True`` and must convert to a fast tokenizer. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from datagen.errors import UserError, install_hint

# Characters per tokenizer call (``LoadedTokenizer._encode_ids``): enough texts for every
# core, few enough that the call's Encoding objects stay small next to the memory budget.
ENCODE_CHARS = 1 << 20
EOS_CANDIDATES = ("<|endoftext|>", "</s>", "<eos>", "<|end_of_text|>", "<|im_end|>", "<EOS>")


@dataclass
class LoadedTokenizer:
    """A ``tokenizers.Tokenizer`` plus the ids packing needs."""

    tokenizer: Any
    name: str
    eos_id: int
    pad_id: int
    vocab_size: int
    _context_cache: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _prefix_probe: bool | None = field(default=None, repr=False)

    @property
    def token_size(self) -> int:
        """Bytes per token on disk: 2 while ids fit uint16 (datatrove's rule), else 4."""
        return 4 if self.vocab_size > 2**16 else 2

    def encode_pieces(self, groups: list[list[str]]) -> list[list[np.ndarray]]:
        """Token ids of each piece of each group (a repo: doc header, then file pieces),
        such that decoding a group's concatenated ids gives back its joined text.

        Tokenizers that prefix every text they encode (SentencePiece/Llama
        ``Prepend("▁")``, ``Metaspace``) would add a space before each piece encoded on
        its own. So a piece is encoded after its context, the last character before it
        (a newline, usually), and the ids of that character are cut off again: the
        piece's ids are then those it has inside the document. Pieces stay separate texts
        of large ``encode_batch(_fast)`` calls (Rust, all cores, parallel over files). Where
        the context's ids are not a prefix (the character merged into the piece's first
        token), that group is encoded joined and split at the offsets instead.
        """
        texts: list[str] = []
        contexts: list[list[str]] = []
        for group in groups:
            ctx, last = [], ""
            for piece in group:
                ctx.append(last)
                texts.append(last + piece)
                last = piece[-1:] or last
            contexts.append(ctx)
        if not texts:
            return []
        encoded = self._encode_ids(texts)
        out, k = [], 0
        for group, ctx in zip(groups, contexts, strict=True):
            piece_ids = []
            for c, ids in zip(ctx, encoded[k : k + len(group)], strict=True):
                head = self._context_ids(c)
                if ids[: len(head)].tolist() != head:
                    break
                piece_ids.append(ids[len(head) :])
            k += len(group)
            out.append(piece_ids if len(piece_ids) == len(group) else self._joined(group))
        return out

    def encode_parts(self, texts: list[str], contexts: list[str]) -> list[np.ndarray]:
        """Ids of each text tokenized on its own, so that no token spans into a neighbour
        (fill-in-the-middle parts). A text is encoded after its context (the character
        before it), whose ids are cut off again, so tokenizers that prefix every text
        (SentencePiece ``▁``) give the ids it has in place; where the context merges into
        the text's first token (a cut inside a word), the text is encoded alone. Tokenizers
        that encode a text alone as they do in place (byte-level BPE) skip the context."""
        if not self._prefixes():
            return self._encode_ids(texts)
        out = self._encode_ids([c + t for c, t in zip(contexts, texts, strict=True)])
        alone: list[int] = []
        for k, (ctx, ids) in enumerate(zip(contexts, out, strict=True)):
            head = self._context_ids(ctx)
            if ids[: len(head)].tolist() == head:
                out[k] = ids[len(head):]
            else:
                alone.append(k)
        for k, ids in zip(alone, self._encode_ids([texts[k] for k in alone]), strict=True):
            out[k] = ids
        return out

    def _prefixes(self) -> bool:
        """Whether a text encoded alone gets other ids than in place (a SentencePiece ``▁``
        prefix, a Metaspace first-word marker): probed once on a few texts."""
        if self._prefix_probe is None:
            probes = ["x = 1", "def f", "y"]
            self._prefix_probe = any(
                self._context_ids("\n" + t)[len(self._context_ids("\n")):] != self._context_ids(t) for t in probes)
        return self._prefix_probe

    def _encode_ids(self, texts: list[str]) -> list[np.ndarray]:
        """The ids of each text (int32), encoded in calls of about ``ENCODE_CHARS``
        characters: the tokenizer's per-token objects (~100 bytes a token) then exist for
        one call's texts only, whatever the batch size."""
        fn = getattr(self.tokenizer, "encode_batch_fast", None) or self.tokenizer.encode_batch
        out: list[np.ndarray] = []
        start = 0
        while start < len(texts):
            end, size = start + 1, len(texts[start])
            while end < len(texts) and size < ENCODE_CHARS:
                size += len(texts[end])
                end += 1
            out.extend(np.array(e.ids, dtype=np.int32) for e in fn(texts[start:end], add_special_tokens=False))
            start = end
        return out

    def _context_ids(self, ctx: str) -> list[int]:
        if ctx not in self._context_cache:
            self._context_cache[ctx] = self.tokenizer.encode(ctx, add_special_tokens=False).ids if ctx else []
        return self._context_cache[ctx]

    def _joined(self, pieces: list[str]) -> list[np.ndarray]:
        """The pieces encoded as one text, split where each piece's first token starts."""
        text = "".join(pieces)
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        ids = np.fromiter(enc.ids, np.int32)
        starts, char = [0], 0
        for piece in pieces[:-1]:
            char += len(piece)
            starts.append(max(starts[-1], _first_token_at(enc, char, len(text), len(ids))))
        starts.append(len(ids))
        return [ids[a:b] for a, b in itertools.pairwise(starts)]

    def decode(self, ids: np.ndarray | list[int]) -> str:
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=False)


def _first_token_at(enc: Any, char: int, n_chars: int, n_tokens: int) -> int:
    """Index of the first token of ``enc`` that starts at or after character ``char``."""
    for c in range(char, n_chars):
        k = enc.char_to_token(c)
        if k is not None:  # None: the normalizer removed this character
            return k if enc.token_to_chars(k)[0] >= char else k + 1  # k straddles: earlier piece
    return n_tokens


def tokenizer_digest(path: str | Path) -> str:
    """sha256 of the tokenizer's files (names the build: same path, new tokenizer = new run)."""
    p = Path(path).expanduser()
    if p.is_file():
        files = [p]
    elif p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in (".json", ".model", ".txt"))
    else:
        raise UserError(f"pack.tokenizer: no tokenizer at {path} (give tokenizer.json or its folder)")
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def _special(value: Any) -> str | None:
    if isinstance(value, dict):
        return value.get("content")
    return value if isinstance(value, str) else None


def _config_eos(folder: Path) -> str | None:
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        cfg = folder / name
        if cfg.is_file():
            try:
                eos = _special(json.loads(cfg.read_text("utf-8")).get("eos_token"))
            except (OSError, ValueError):
                continue
            if eos:
                return eos
    return None


def _from_transformers(folder: Path) -> Any:
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise UserError(
            f"{folder} has no tokenizer.json; " + install_hint("transformers", "ppl")
        ) from None
    try:
        tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load a tokenizer from {folder}: {exc}") from None
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None:
        raise UserError(f"tokenizer at {folder} has no fast (tokenizers) version")
    return backend


def load_tokenizer(
    path: str | Path, eos_token: str | None = None, pad_token: str | None = None
) -> LoadedTokenizer:
    """Load the tokenizer at ``path`` (file or folder) and find its EOS and pad ids."""
    from tokenizers import Tokenizer

    p = Path(path).expanduser()
    folder = p if p.is_dir() else p.parent
    if p.is_file():
        file = p
    elif p.is_dir() and (p / "tokenizer.json").is_file():
        file = p / "tokenizer.json"
    elif p.is_dir():
        file = None
    else:
        raise UserError(f"pack.tokenizer: no tokenizer at {path} (give tokenizer.json or its folder)")
    if file is not None:
        try:
            tok = Tokenizer.from_file(str(file))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise UserError(f"pack.tokenizer: cannot read {file}: {exc}") from None
    else:
        tok = _from_transformers(p)
    eos_name = eos_token or _config_eos(folder)
    if eos_name is None:
        eos_name = next((c for c in EOS_CANDIDATES if tok.token_to_id(c) is not None), None)
    eos_id = tok.token_to_id(eos_name) if eos_name else None
    if eos_id is None:
        raise UserError(
            f"pack.eos_token: {'token ' + repr(eos_name) + ' is not' if eos_name else 'no EOS token'}"
            f" in the tokenizer at {path}; set pack.eos_token"
        )
    pad_id = eos_id
    if pad_token is not None:
        pad_id = tok.token_to_id(pad_token)
        if pad_id is None:
            raise UserError(f"pack.pad_token: token {pad_token!r} is not in the tokenizer at {path}")
    return LoadedTokenizer(tok, str(path), eos_id, pad_id, tok.get_vocab_size(with_added_tokens=True))
