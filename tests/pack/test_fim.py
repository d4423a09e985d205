"""Fill-in-the-middle in packing: packed sequences decoded back reassemble every document."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from datagen.config.pack import FimConfig, PackConfig
from datagen.errors import UserError
from datagen.pack.corpus import pack_corpus
from datagen.pack.docs import SourceRow, file_piece, repo_pieces
from datagen.pack.fim import choose, fim_ids, parts, text_key
from datagen.pack.tokenize import load_tokenizer

from .test_corpus import repo_rows, write_text

NAMES = {"prefix": "<fim_prefix>", "middle": "<fim_middle>", "suffix": "<fim_suffix>"}


@pytest.fixture(scope="module")
def fim_repos(sample_code) -> dict[str, dict[str, str]]:
    """Three repos of multi-byte-heavy code (the fixtures' snippets hold é, ✓, 日本語, 🎉)."""
    code = sample_code(24)
    return {f"r{k}": {f"src/m{i:02d}.py": code[(i + k) % len(code)] + "x = '日本語🎉'\n" for i in range(8)}
            for k in range(3)}


@pytest.fixture(scope="module")
def qwen_tokenizer_dir(tokenizer_dir, tmp_path_factory) -> Path:
    """The byte-level fixture tokenizer with Qwen2.5-Coder's FIM token names added."""
    from tokenizers import AddedToken, Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<|fim_prefix|>", "<|fim_middle|>",
                                                                  "<|fim_suffix|>")])
    folder = tmp_path_factory.mktemp("qwen-tok")
    tok.save(str(folder / "tokenizer.json"))
    shutil.copy(tokenizer_dir / "tokenizer_config.json", folder)
    return folder


def _documents(folder: Path) -> dict[str, list[int]]:
    """Each document's tokens, put back together from the packed sequences by doc_ids and
    cu_seqlens (a document may span sequences); the loss mask is 0 exactly on padding."""
    docs: dict[str, list[int]] = {}
    table = pq.read_table(sorted(folder.glob("train-*.parquet"))).to_pydict()
    for ids, mask, cu, seg in zip(table["input_ids"], table["loss_mask"], table["cu_seqlens"],
                                  table["doc_ids"], strict=True):
        for (a, b), doc in zip(zip(cu, cu[1:], strict=False), seg, strict=True):
            assert set(mask[a:b]) == ({0} if doc is None else {1})
            if doc is not None:
                docs.setdefault(doc, []).extend(ids[a:b])
    return docs


def _reassemble(tok, ids, tokens: list[int], level: str) -> tuple[str, list[tuple]]:
    """The document's text from its FIM layout, and each span's (mode, decoded parts). Every
    part is decoded on its own: a part cut inside a character would not decode to its
    exact text."""
    fim = {ids.prefix, ids.middle, ids.suffix}
    out, modes, i = [], [], 0
    sep = tok.tokenizer.token_to_id("<file_sep>")
    while i < len(tokens):
        if tokens[i] != ids.prefix:
            j = i
            while j < len(tokens) and tokens[j] != ids.prefix:
                j += 1
            out.append(tok.decode(tokens[i:j]))
            i = j
            continue
        # a FIM span: to the next file header (level file) or the EOS (level repo)
        end = len(tokens) if level == "repo" else next(
            (k for k in range(i + 1, len(tokens)) if tokens[k] in (sep, tok.eos_id)), len(tokens))
        span = tokens[i:end]
        m = span.index(ids.middle)
        if span[1] == ids.suffix:  # SPM: <PRE> <SUF> suffix <MID> prefix+middle
            got = (tok.decode(span[m + 1:]), tok.decode(span[2:m]))
            modes.append(("spm", got))
        else:  # PSM: <PRE> prefix <SUF> suffix <MID> middle
            s = span.index(ids.suffix)
            got = (tok.decode(span[1:s]), tok.decode(span[m + 1:]), tok.decode(span[s + 1:m]))
            modes.append(("psm", got))
        out += got
        assert not fim & set(span[1:]) - {ids.suffix, ids.middle} and span.count(ids.middle) == 1
        i = end
    text = "".join(out)
    assert "\ufffd" not in text
    return text, modes


@pytest.mark.parametrize("level,split", [("file", "char"), ("file", "line"), ("repo", "char")])
def test_packed_fim_documents_decode_back_to_the_original(tmp_path, fim_repos, qwen_tokenizer_dir, level, split):
    fim = FimConfig(rate=1.0 if level == "file" else 0.9, spm_rate=0.5, level=level, split=split, seed=3)
    cfg = PackConfig(tokenizer=str(qwen_tokenizer_dir), seq_lens=[64, 512], doc_max_tokens=4096, fim=fim)
    result = pack_corpus(tmp_path, cfg, "run1", write_text(tmp_path / "data", fim_repos, cfg))
    tok = load_tokenizer(qwen_tokenizer_dir)
    ids = fim_ids(tok.tokenizer, fim, "t")
    assert ids.names[0] == "<|fim_prefix|>" and not ids.added
    docs = pq.read_table(result.docs_file).to_pylist()
    by_repo = {d["repo"]: d for d in docs}
    assert len(docs) == len(fim_repos) == len(by_repo)  # one document per repo here
    modes = []
    for S in cfg.seq_lens:
        packed = _documents(tmp_path / "tokens" / str(S))
        assert set(packed) == {d["doc_id"] for d in docs}  # doc ids point at repo_docs
        for repo, tree in fim_repos.items():
            rows = [SourceRow(r["id"], r["repo"], r["path"], r["lang"], r["text"]) for r in repo_rows(repo, tree)]
            tokens = packed[by_repo[repo]["doc_id"]]
            assert tokens[-1] == tok.eos_id and len(tokens) == by_repo[repo]["tokens"]
            text, seen = _reassemble(tok, ids, tokens[:-1], level)
            assert text == "".join(repo_pieces(repo, rows, cfg.doc_header, cfg.file_header))
            modes += [m for m, _ in seen]
            if level == "file":  # every part is exactly its text: no token spans a cut
                for row, (mode, got) in zip(rows, seen, strict=True):
                    body = file_piece(row, cfg.file_header)[len(cfg.file_header.format(path=row.path)):]
                    c = choose(text_key(body), body, fim)
                    pre, mid, suf = parts(body, c)
                    assert (mode, got) == (("spm", (pre + mid, suf)) if c.spm else ("psm", (pre, mid, suf)))
    if level == "file":
        assert sum(d["fim_files"] for d in docs) == sum(len(t) for t in fim_repos.values())
        assert len(modes) == 2 * sum(len(t) for t in fim_repos.values())
    else:
        assert {d["fim"] for d in docs} <= {"psm", "spm", None} and len(modes) == 2 * sum(1 for d in docs if d["fim"])
    assert {"psm", "spm"} <= set(modes) or level == "repo"


def test_cuts_are_seeded_by_content_and_fall_on_code_points_or_lines():
    text = "aé日🎉\n" * 30 + "tail"
    cfg = FimConfig(rate=1.0, split="char", seed=1)
    assert len({choose(text_key(text), text, cfg) for _ in range(3)}) == 1  # same content and seed
    other = cfg.model_copy(update={"seed": 2})
    assert any(choose(text_key(t), t, cfg) != choose(text_key(t), t, other) for t in (text, text + "x", "abc"))
    line = FimConfig(rate=1.0, split="line", seed=0)
    spm = 0
    for k in range(60):
        t = text + str(k)
        starts = {0, len(t)} | {i + 1 for i, c in enumerate(t) if c == "\n"}
        c = choose(text_key(t), t, line)
        assert c.start in starts and c.end in starts and c.start <= c.end
        pre, mid, suf = parts(t, c)
        assert pre + mid + suf == t and all(p.encode("utf-8").decode("utf-8") == p for p in (pre, mid, suf))
        spm += c.spm
    assert 10 < spm < 50  # spm_rate 0.5
    assert choose(text_key(text), text, FimConfig(rate=0.0)) is None
    hits = sum(choose(text_key(str(i)), str(i), FimConfig(rate=0.3)) is not None for i in range(400))
    assert 80 < hits < 160


def test_fim_tokens_from_the_recipe_added_or_refused(tmp_path, tokenizer_dir):
    tok = load_tokenizer(tokenizer_dir)
    with pytest.raises(UserError, match="no FIM tokens"):
        fim_ids(tok.tokenizer, FimConfig(rate=0.5), "tok")
    with pytest.raises(UserError, match="add_tokens=true"):
        fim_ids(tok.tokenizer, FimConfig(rate=0.5, tokens=NAMES), "tok")
    # appended after the vocabulary, and the extended tokenizer written beside the outputs
    cfg = PackConfig(tokenizer=str(tokenizer_dir), seq_lens=[64], doc_max_tokens=4096,
                     fim=FimConfig(rate=1.0, tokens=NAMES, add_tokens=True))
    rows = {"r": {"a.py": "def f():\n    return 1\n", "b.py": "x = 2\n"}}
    result = pack_corpus(tmp_path, cfg, "run1", write_text(tmp_path / "data", rows, cfg))
    saved = json.loads((tmp_path / "tokens" / "tokenizer.json").read_text())
    added = {t["content"]: t["id"] for t in saved["added_tokens"]}
    vocab = tok.tokenizer.get_vocab_size(with_added_tokens=True)
    assert sorted(added[n] for n in NAMES.values()) == [vocab, vocab + 1, vocab + 2]
    assert any(f.path.name == "tokenizer.json" for f in result.files)
    ids = pq.read_table(tmp_path / "tokens" / "64" / "train-00000-of-00001.parquet").column("input_ids").to_pylist()
    assert added["<fim_middle>"] in {i for seq in ids for i in seq}
    with pytest.raises(ValueError, match="give all of"):
        FimConfig(tokens={"prefix": "<p>"})
