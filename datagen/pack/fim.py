"""Fill-in-the-middle (FIM) for packing: which files or documents, where they are cut, and
how their token ids are rearranged.

Formats (the FIM transformation of Bavarian et al. 2022, "Efficient Training of Language
Models to Fill in the Middle", as StarCoder and Qwen2.5-Coder train it; token names from
their tokenizers):

- PSM: ``<PRE> prefix <SUF> suffix <MID> middle``
- SPM: ``<PRE> <SUF> suffix <MID> prefix middle`` (the paper's SPM variant that keeps
  prefix and middle adjacent, as StarCoder's training code writes it)

``level: file``: the text of a file (after its ``file_header``) is cut, inside the repo
document; the model sees the other files as plain context. ``level: repo``: one whole
file of a document is cut, and the prefix holds the document's earlier files, the suffix
its later ones (Qwen2.5-Coder's repo-level FIM puts the file last; here it stays in its
place, so prefix and suffix both carry cross-file context).

Every choice comes from a ``random.Random`` seeded by a hash of the content (the file's
text, or the texts of a document's files) and ``pack.fim.seed``: the same document is
rearranged the same way on every run, whatever the workers or batch sizes. Cut points are
code-point offsets (``split: char``) or line starts (``split: line``), so never inside a
multi-byte character; prefix, middle and suffix are tokenized as separate pieces, so no
token spans a cut.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

import numpy as np

from datagen.config.pack import FIM_SLOTS, FimConfig
from datagen.errors import UserError

# (prefix, middle, suffix) names, StarCoder's then Qwen2.5-Coder's
KNOWN_TOKENS = (("<fim_prefix>", "<fim_middle>", "<fim_suffix>"),
                ("<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"))


@dataclass(frozen=True)
class FimIds:
    """The ids of the three FIM tokens."""

    prefix: int
    middle: int
    suffix: int
    names: tuple[str, str, str]
    added: bool = False  # appended to the tokenizer by this build


@dataclass(frozen=True)
class FimChoice:
    """One rearrangement: cut points in the text and the order."""

    spm: bool
    start: int  # code-point offset where the middle starts
    end: int  # ... and ends


def fim_ids(tokenizer, cfg: FimConfig, where: str) -> FimIds:
    """The FIM token ids of ``tokenizer`` (a ``tokenizers.Tokenizer``): the recipe's
    ``pack.fim.tokens`` or a known set it has. Named tokens it lacks are appended with
    ``pack.fim.add_tokens`` (ids after the vocabulary), else a one-line UserError."""
    if cfg.tokens:
        names = tuple(cfg.tokens[s] for s in FIM_SLOTS)
    else:
        names = next((n for n in KNOWN_TOKENS if all(tokenizer.token_to_id(t) is not None for t in n)), None)
        if names is None:
            raise UserError(f"pack.fim: the tokenizer at {where} has no FIM tokens ({', '.join(KNOWN_TOKENS[0])} "
                            "or <|fim_...|>); name them in pack.fim.tokens (with pack.fim.add_tokens=true to "
                            "append missing ones)")
    missing = [t for t in names if tokenizer.token_to_id(t) is None]
    added = False
    if missing:
        if not cfg.add_tokens:
            raise UserError(f"pack.fim.tokens: {', '.join(missing)} not in the tokenizer at {where}; "
                            "set pack.fim.add_tokens=true to append them (tokens/tokenizer.json is written)")
        from tokenizers import AddedToken

        tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in missing])
        added = True
    ids = [tokenizer.token_to_id(t) for t in names]
    return FimIds(ids[0], ids[1], ids[2], names, added)  # type: ignore[arg-type]


def _rng(key: bytes, seed: int) -> random.Random:
    digest = hashlib.blake2b(key, digest_size=16, key=str(seed).encode()[:64]).digest()
    return random.Random(int.from_bytes(digest, "little"))


def text_key(text: str) -> bytes:
    """The content hash a FIM choice is seeded by."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def choose(key: bytes, text: str, cfg: FimConfig) -> FimChoice | None:
    """Whether (rate), how (spm_rate) and where (split) to cut ``text``; None = left as is."""
    rng = _rng(key, cfg.seed)
    if rng.random() >= cfg.rate:
        return None
    return _cut(rng, text, cfg)


def choose_in(key: bytes, texts: list[str], cfg: FimConfig) -> tuple[int, FimChoice] | None:
    """For a document (``key``: its files' content hashes): whether to rearrange it, which
    of ``texts`` (its whole files) holds the middle, and the cut; None = left as is."""
    rng = _rng(key, cfg.seed)
    if rng.random() >= cfg.rate or not texts:
        return None
    j = rng.randrange(len(texts))
    return j, _cut(rng, texts[j], cfg)


def _cut(rng: random.Random, text: str, cfg: FimConfig) -> FimChoice:
    spm = rng.random() < cfg.spm_rate
    a, b = sorted(_cut_points(text, cfg.split, rng))
    return FimChoice(spm, a, b)


def _cut_points(text: str, split: str, rng: random.Random) -> tuple[int, int]:
    if split == "char":
        return rng.randint(0, len(text)), rng.randint(0, len(text))
    starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n" and i + 1 < len(text)), len(text)]
    return rng.choice(starts), rng.choice(starts)


def parts(text: str, choice: FimChoice) -> tuple[str, str, str]:
    """(prefix, middle, suffix) of ``text``."""
    return text[: choice.start], text[choice.start : choice.end], text[choice.end :]


def arrange(ids: FimIds, spm: bool, pre: np.ndarray, mid: np.ndarray, suf: np.ndarray) -> np.ndarray:
    """PSM or SPM token order of the three parts' ids."""
    t = np.array([ids.prefix, ids.suffix, ids.middle], dtype=pre.dtype if len(pre) else np.int32)
    if spm:
        return np.concatenate([t[:2], suf, t[2:], pre, mid]).astype(np.int32)
    return np.concatenate([t[:1], pre, t[1:2], suf, t[2:], mid]).astype(np.int32)


def unarrange(ids: FimIds, tokens: list[int]) -> tuple[bool, list[int], list[int], list[int], int]:
    """Inverse of ``arrange`` on one FIM span (tests, inspection): (spm, prefix, middle,
    suffix, tokens consumed). ``tokens`` starts at the prefix token; the middle runs to
    the end of ``tokens``."""
    assert tokens[0] == ids.prefix
    if tokens[1] == ids.suffix:  # SPM: the prefix and the middle are one run after <MID>
        m = tokens.index(ids.middle, 2)
        return True, [], tokens[m + 1 :], tokens[2:m], len(tokens)
    s = tokens.index(ids.suffix, 1)
    m = tokens.index(ids.middle, s + 1)
    return False, tokens[1:s], tokens[m + 1 :], tokens[s + 1 : m], len(tokens)


def copy_key(body: str, copy: int) -> bytes:
    """The key of one copy of a file: its content hash, then the copy number for the
    mix's repeats (so repeated copies are not rearranged alike)."""
    key = text_key(body)
    return key if copy == 0 else key + copy.to_bytes(4, "little")


def file_level_pieces(headers: list[str], bodies: list[str], copies: list[int],
                      cfg: FimConfig) -> tuple[list[str], list[FimChoice | None], list[tuple[str, str]]]:
    """For one repo's files under ``level: file``: the pieces for ``encode_pieces`` (a file
    left as is: header + body; a rearranged one: its header), each file's choice, and the
    (text, context) of every FIM part (prefix, middle, suffix of each rearranged file, in
    order) for ``encode_parts``: parts are tokenized on their own, never across a cut."""
    flat: list[str] = []
    plans: list[FimChoice | None] = []
    fim_parts: list[tuple[str, str]] = []
    for header, body, copy in zip(headers, bodies, copies, strict=True):
        choice = choose(copy_key(body, copy), body, cfg)
        plans.append(choice)
        if choice is None:
            flat.append(header + body)
            continue
        flat.append(header)
        before = header[-1:]
        for part in parts(body, choice):
            fim_parts.append((part, before))
            before = part[-1:] or before
    return flat, plans, fim_parts


def file_level_ids(piece_ids: list[np.ndarray], part_ids: list[np.ndarray], plans: list[FimChoice | None],
                   ids: FimIds, room: int) -> tuple[list[np.ndarray], list[bool]]:
    """Each file's ids: ``piece_ids`` (one per file: whole, or the header of a rearranged
    one) with the FIM parts' ids, rearranged when the file fits a document whole (``room``
    tokens), else in text order. Returns (ids, rearranged?)."""
    out: list[np.ndarray] = []
    done: list[bool] = []
    k = 0
    for plan, head in zip(plans, piece_ids, strict=True):
        if plan is None:
            out.append(head)
            done.append(False)
            continue
        hdr = head
        pre, mid, suf = part_ids[k : k + 3]
        k += 3
        fim = np.concatenate([hdr.astype(np.int32), arrange(ids, plan.spm, pre, mid, suf)])
        fits = len(fim) <= room
        out.append(fim if fits else np.concatenate([hdr, pre, mid, suf]).astype(np.int32))
        done.append(fits)
    return out, done


def doc_key(bodies: list[str]) -> bytes:
    """A document's key: the content hashes of its files, in order."""
    return hashlib.blake2b(b"".join(text_key(b) for b in bodies), digest_size=16).digest()


def rearrange_doc(tokens: np.ndarray, span: tuple[int, int], header_len: int, file_ids: list[np.ndarray],
                  ids: FimIds, spm: bool) -> np.ndarray:
    """A repo-level FIM document: ``tokens`` (doc header ... EOS) with the file at ``span``
    re-tokenized as ``file_ids`` = (file header, prefix, middle, suffix); the prefix runs
    from the first file to the cut, the suffix from the cut to the last file."""
    a, b = span
    hdr, pre, mid, suf = file_ids
    prefix = np.concatenate([tokens[header_len:a], hdr, pre]).astype(np.int32)
    suffix = np.concatenate([suf, tokens[b:-1]]).astype(np.int32)
    return np.concatenate([tokens[:header_len].astype(np.int32), arrange(ids, spm, prefix, mid, suffix),
                           tokens[-1:].astype(np.int32)]).astype(tokens.dtype)
