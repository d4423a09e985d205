"""Repo documents: a repository's ordered files joined into one (or more) token documents.

A document is ``doc_header`` then, for each file, ``file_header`` + its text (plus a
newline when the text lacks one, so the next header starts a line), then EOS. A repo
longer than ``max_tokens`` is cut between files along the order; a file alone longer than
a document is cut inside (its later parts carry the doc header only). A repo's pieces
(header, then each file) are tokenized as one joined text and split at the pieces'
offsets (``LoadedTokenizer.encode_pieces``), so a document's ids are the concatenation of
its pieces' ids and decoding them gives back exactly the document's text, also with
tokenizers that prefix every text they encode (SentencePiece ``▁``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class SourceRow:
    """One kept file, in repo order (what the text shards hold)."""

    id: str
    repo: str
    path: str
    lang: str
    text: str


@dataclass
class RepoDoc:
    """One document of a repository: its ids (EOS included) and where they came from."""

    doc_id: str
    repo: str
    split: str
    part: int
    tokens: np.ndarray
    file_ids: list[str] = field(default_factory=list)
    file_langs: list[str] = field(default_factory=list)  # parallel to file_ids
    # tokens per language in this doc (headers of files count to the file's language;
    # the doc header and EOS count to "")
    lang_tokens: dict[str, int] = field(default_factory=dict)
    text: str = ""  # filled only when the caller asks (tests, small runs)
    spans: list[tuple[int, int]] = field(default_factory=list)  # token range of each file_ids entry
    file_rows: list[int] = field(default_factory=list)  # index in the repo's rows of each file_ids entry
    bucket: str | None = None  # length bucket of the repo (pack.long.edges)
    long: bool = False  # the bucket counts as long (pack.long.min_tokens)
    fim: str | None = None  # psm / spm (pack.fim.level=repo)
    fim_files: int = 0  # files rearranged inside (pack.fim.level=file)


def doc_id_of(split: str, repo: str, part: int) -> str:
    return hashlib.sha1(f"{split}\0{repo}\0{part}".encode()).hexdigest()[:16]


def file_piece(row: SourceRow, file_header: str) -> str:
    text = row.text if row.text.endswith("\n") or not row.text else row.text + "\n"
    return file_header.format(repo=row.repo, path=row.path, lang=row.lang) + text


def repo_pieces(repo: str, rows: Sequence[SourceRow], doc_header: str, file_header: str) -> list[str]:
    """The texts to tokenize for one repo: the doc header, then one piece per file."""
    return [doc_header.format(repo=repo)] + [file_piece(r, file_header) for r in rows]


def build_docs(
    repo: str,
    split: str,
    rows: Sequence[SourceRow],
    piece_ids: Sequence[np.ndarray],
    eos_id: int,
    max_tokens: int,
    keep_text: bool = False,
    pieces: Sequence[str] | None = None,
) -> list[RepoDoc]:
    """Cut one repo's tokenized pieces (``piece_ids[0]`` = doc header) into documents."""
    header = piece_ids[0]
    room = max_tokens - len(header) - 1  # tokens left for files in one document
    if room < 1:
        raise ValueError(f"doc header of {repo!r} leaves no room in {max_tokens} tokens")
    docs: list[RepoDoc] = []
    parts: list[np.ndarray] = []
    texts: list[str] = []
    used = 0
    file_ids: list[str] = []
    file_langs: list[str] = []
    lang_tokens: dict[str, int] = {}
    spans: list[tuple[int, int]] = []
    file_rows: list[int] = []

    def close() -> None:
        nonlocal parts, texts, used, file_ids, file_langs, lang_tokens, spans, file_rows
        if not parts:
            return
        tokens = np.concatenate([header, *parts, np.array([eos_id], dtype=header.dtype)])
        lang_tokens[""] = lang_tokens.get("", 0) + len(header) + 1
        part = len(docs)
        text = (pieces[0] + "".join(texts)) if keep_text and pieces is not None else ""
        docs.append(RepoDoc(doc_id_of(split, repo, part), repo, split, part, tokens,
                            file_ids, file_langs, lang_tokens, text, spans, file_rows))
        parts, texts, used, file_ids, file_langs, lang_tokens, spans, file_rows = [], [], 0, [], [], {}, [], []

    def take(chunk: np.ndarray, row: SourceRow, i: int) -> None:
        nonlocal used
        parts.append(chunk)
        file_rows.append(i)
        file_ids.append(row.id)
        file_langs.append(row.lang)
        spans.append((len(header) + used, len(header) + used + len(chunk)))
        lang_tokens[row.lang] = lang_tokens.get(row.lang, 0) + len(chunk)
        used += len(chunk)

    for i, row in enumerate(rows):
        ids = piece_ids[i + 1]
        piece_text = pieces[i + 1] if keep_text and pieces is not None else ""
        if used + len(ids) > room:
            close()
        start = 0
        while len(ids) - start > room:  # a file alone is longer than a document
            take(ids[start : start + room], row, i)
            start += room
            close()
        take(ids[start:], row, i)
        texts.append(piece_text if start == 0 else "")
    close()
    return docs
