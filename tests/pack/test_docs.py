"""Tokenizer loading and repo documents: decode(document ids) == document text."""

from __future__ import annotations

import json

import numpy as np
import pytest

from datagen.config.pack import PackConfig
from datagen.errors import UserError
from datagen.pack.corpus import _repo_docs
from datagen.pack.docs import SourceRow, build_docs, repo_pieces
from datagen.pack.tokenize import load_tokenizer


def rows_of(texts: list[str], repo: str = "acme/tool") -> list[SourceRow]:
    return [SourceRow(f"id{i}", repo, f"src/f{i}.py", "python", t) for i, t in enumerate(texts)]


def tokenize_repo(tok, rows, header="<repo_name>{repo}\n", file_header="<file_sep>{path}\n"):
    pieces = repo_pieces(rows[0].repo, rows, header, file_header)
    (ids,) = tok.encode_pieces([pieces])
    return pieces, ids


def test_load_from_file_and_folder_finds_eos(tokenizer_dir, tokenizer_file):
    a = load_tokenizer(tokenizer_dir)
    b = load_tokenizer(tokenizer_file)
    assert a.eos_id == b.eos_id == a.tokenizer.token_to_id("<|endoftext|>")
    assert a.pad_id == a.eos_id and a.token_size == 2
    assert load_tokenizer(tokenizer_file, pad_token="<pad>").pad_id == a.tokenizer.token_to_id("<pad>")


def test_bad_tokenizer_paths_are_user_errors(tmp_path, tokenizer_file):
    with pytest.raises(UserError, match="no tokenizer"):
        load_tokenizer(tmp_path / "nope")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="cannot read"):
        load_tokenizer(bad)
    with pytest.raises(UserError, match="pack.eos_token"):
        load_tokenizer(tokenizer_file, eos_token="<nope>")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": {"content": "<x>"}}))
    (tmp_path / "tokenizer.json").write_bytes(tokenizer_file.read_bytes())
    with pytest.raises(UserError, match="'<x>' is not"):
        load_tokenizer(tmp_path)


def test_document_ids_decode_to_document_text(any_tokenizer_dir, sample_code):
    tok = load_tokenizer(any_tokenizer_dir)
    rows = rows_of(sample_code(6) + ["no trailing newline", ""])
    pieces, ids = tokenize_repo(tok, rows)
    (doc,) = build_docs("acme/tool", "train", rows, ids, tok.eos_id, 10**6, keep_text=True,
                        pieces=pieces)
    assert doc.tokens[-1] == tok.eos_id
    assert tok.decode(doc.tokens[:-1]) == doc.text
    assert doc.text.startswith("<repo_name>acme/tool\n<file_sep>src/f0.py\ndef handler_0")
    assert "no trailing newline\n<file_sep>src/f7.py\n" in doc.text
    assert sum(doc.lang_tokens.values()) == len(doc.tokens)
    assert doc.file_ids == [r.id for r in rows]


def test_large_repo_is_cut_between_files_and_big_file_inside(any_tokenizer_dir, sample_code):
    tok = load_tokenizer(any_tokenizer_dir)
    texts = sample_code(12)
    texts[5] = "".join(sample_code(30))  # one file bigger than a document
    rows = rows_of(texts)
    pieces, ids = tokenize_repo(tok, rows)
    limit = len(ids[0]) + len(ids[6]) // 4  # the big file spans several documents
    docs = build_docs("acme/tool", "train", rows, ids, tok.eos_id, limit, keep_text=True,
                      pieces=pieces)
    assert all(len(d.tokens) <= limit for d in docs) and len(docs) > 3
    assert [d.part for d in docs] == list(range(len(docs)))
    assert len({d.doc_id for d in docs}) == len(docs)
    header = ids[0]
    # every file appears whole and in order, except the big one which spans documents
    seen = [fid for d in docs for fid in d.file_ids]
    assert [f for i, f in enumerate(seen) if i == 0 or f != seen[i - 1]] == [r.id for r in rows]
    spans = [d for d in docs if "id5" in d.file_ids]
    assert len(spans) > 2
    big = np.concatenate([d.tokens[len(header) : -1] for d in spans if d.file_ids == ["id5"]])
    assert tok.decode(big) in pieces[6]
    for d in docs:  # documents holding whole files decode to their text
        if "id5" not in d.file_ids:
            assert tok.decode(d.tokens[:-1]) == d.text


def test_corpus_documents_decode_exactly_with_prefixing_tokenizers(any_tokenizer_dir, sample_code):
    """The packing path (many repos per encode call): every document decodes to the doc
    header plus its files' pieces, with no space a SentencePiece-style prefix would add."""
    tok = load_tokenizer(any_tokenizer_dir)
    cfg = PackConfig(tokenizer=str(any_tokenizer_dir), seq_lens=[100_000])
    repos = [(f"org/r{k}", rows_of(sample_code(3 + k) + ["x = 1"], repo=f"org/r{k}")) for k in range(3)]
    docs = [d for ds in _repo_docs(iter(repos), "train", cfg, tok, None) for d in ds]
    assert [d.repo for d in docs] == ["org/r0", "org/r1", "org/r2"]
    for doc, (repo, rows) in zip(docs, repos, strict=True):
        text = "".join(repo_pieces(repo, rows, cfg.doc_header, cfg.file_header))
        assert tok.decode(doc.tokens[:-1]) == text
        assert doc.tokens[-1] == tok.eos_id


@pytest.mark.parametrize("headers", [("<repo_name>{repo}\n", "<file_sep>{path}\n"),
                                     ("", "{path}:\n"), ("{repo} ", "return {path}\n")])
def test_pieces_decode_exactly_whatever_the_headers(any_tokenizer_dir, sample_code, headers, monkeypatch):
    """Pieces whose context character merges into their first token take the joined-text
    path (the last headers, with the byte-level BPE: " return" is one token); both paths
    decode to the exact text and cut it in order."""
    from datagen.pack.tokenize import LoadedTokenizer

    tok = load_tokenizer(any_tokenizer_dir)
    rows = rows_of(sample_code(4) + ["tail"])
    pieces = repo_pieces("acme/tool", rows, *headers)
    joined = []
    monkeypatch.setattr(LoadedTokenizer, "_joined",
                        lambda self, p, real=LoadedTokenizer._joined: joined.append(1) or real(self, p))
    (ids,) = tok.encode_pieces([pieces])
    text = "".join(pieces)
    assert len(ids) == len(pieces) and tok.decode(np.concatenate(ids)) == text
    for i in range(1, len(pieces)):  # every cut between pieces decodes to a prefix of the text
        head = tok.decode(np.concatenate(ids[:i]))
        assert text.startswith(head)
        if not joined:  # per piece: exactly the pieces before the cut
            assert head == "".join(pieces[:i])
    if any_tokenizer_dir.name.startswith("tok"):  # the byte-level fixture
        assert bool(joined) == headers[0].endswith(" ")
    direct = tok._joined(pieces)  # the joined path on every tokenizer and header
    assert tok.decode(np.concatenate(direct)) == text
    for i in range(1, len(pieces)):
        assert text.startswith(tok.decode(np.concatenate(direct[:i])))


def test_encoding_in_small_calls_gives_the_same_ids(tokenizer_dir, monkeypatch):
    """Texts go to the tokenizer in calls of about ``ENCODE_CHARS`` characters (bounded
    memory); the ids must not depend on where the calls are cut."""
    import datagen.pack.tokenize as tokenize

    tok = load_tokenizer(tokenizer_dir)
    groups = [repo_pieces(f"r{g}", rows_of([f"x_{g}_{i} = {i}\n" * (i + 1) for i in range(7)], f"r{g}"),
                          "<repo_name>{repo}\n", "<file_sep>{path}\n") for g in range(3)]
    whole = tok.encode_pieces(groups)
    monkeypatch.setattr(tokenize, "ENCODE_CHARS", 5)
    cut = tok.encode_pieces(groups)
    assert [[a.tolist() for a in g] for g in cut] == [[a.tolist() for a in g] for g in whole]
    assert all(a.dtype == np.int32 for g in cut for a in g)
