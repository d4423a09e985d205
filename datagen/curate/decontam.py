"""Decontamination: drop files that overlap evaluation benchmarks.

Two checks, both recorded in ``files.contamination_source`` / ``contamination_span``:

- **n-gram overlap** (reason ``contaminated``): every text of every benchmark listed in
  the recipe (JSONL or parquet rows, chosen fields; or plain text files) is cut into
  ``ngram``-word n-grams (words = ``\\w+`` runs, lower-cased, so formatting and
  punctuation do not hide a copy). A file sharing ``min_matches`` n-grams or more is
  dropped; the source names the benchmark and row, the span is the file's first matching
  stretch of text.
- **eval repositories** (reason ``eval_repo``): every file of a repository named on the
  ``filters/eval_repos.yaml`` lists, matched on the repo name and on its git remote URL.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import xxhash
from datatrove.data import Document

from datagen.config import load_yaml_pack
from datagen.config.curate import BenchmarkSource, DecontamConfig
from datagen.curate.base import FileStep, StepContext, drop
from datagen.errors import UserError

WORD = re.compile(r"\w+")
_MULT = np.uint64(0x9E3779B97F4A7C15)
SPAN_CHARS = 300


def word_spans(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hashes, start and end offsets of the lower-cased words of ``text``."""
    matches = list(WORD.finditer(text))
    hashes = np.fromiter((xxhash.xxh3_64_intdigest(m.group().lower()) for m in matches), np.uint64, len(matches))
    starts = np.fromiter((m.start() for m in matches), np.int64, len(matches))
    ends = np.fromiter((m.end() for m in matches), np.int64, len(matches))
    return hashes, starts, ends


def ngram_hashes(word_hashes: np.ndarray, n: int) -> np.ndarray:
    """Order-sensitive hash of every window of ``n`` word hashes."""
    count = len(word_hashes) - n + 1
    if count <= 0:
        return np.zeros(0, np.uint64)
    with np.errstate(over="ignore"):
        h = word_hashes[:count].copy()
        for k in range(1, n):
            h = (h * _MULT) ^ word_hashes[k : k + count]
            h ^= h >> np.uint64(29)
    return h


def _texts(src: BenchmarkSource) -> list[tuple[str, str]]:
    """(row id, text) of a benchmark file: JSONL/parquet rows or a plain text file."""
    path = Path(src.path).expanduser()
    if not path.exists():
        raise UserError(f"decontam benchmark {src.name!r}: file not found: {src.path}")
    if path.is_dir():
        return [
            (str(p.relative_to(path)), p.read_text("utf-8", "replace")) for p in sorted(path.rglob("*")) if p.is_file()
        ]
    suffix = "".join(path.suffixes[-1:]).lower()
    if suffix in (".jsonl", ".json", ".parquet"):
        if suffix == ".parquet":
            rows = pq.read_table(path).to_pylist()
        else:
            try:
                rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
            except json.JSONDecodeError as exc:
                raise UserError(f"decontam benchmark {src.name!r}: bad JSONL: {exc}") from None
        out = []
        for i, row in enumerate(rows):
            rid = str(row.get(src.id_field, i)) if src.id_field else str(i)
            fields = src.fields or [k for k, v in row.items() if isinstance(v, str)]
            missing = [f for f in fields if f not in row]
            if src.fields and len(missing) == len(fields):
                raise UserError(f"decontam benchmark {src.name!r}: row {i} has none of the fields {src.fields}")
            out += [(f"{rid}.{f}", row[f]) for f in fields if isinstance(row.get(f), str)]
        return out
    return [(path.name, path.read_text("utf-8", "replace"))]


@dataclass
class NgramIndex:
    """Sorted n-gram hashes of all benchmark texts, with the text each came from."""

    hashes: np.ndarray
    owner: np.ndarray  # index into ``sources``
    sources: list[str]

    @classmethod
    def build(cls, benchmarks: list[BenchmarkSource], n: int) -> NgramIndex:
        all_h, all_o, sources = [], [], []
        for src in benchmarks:
            for rid, text in _texts(src):
                h = np.unique(ngram_hashes(word_spans(text)[0], n))
                if len(h):
                    all_h.append(h)
                    all_o.append(np.full(len(h), len(sources), np.int32))
                    sources.append(f"{src.name}:{rid}")
        if not all_h:
            return cls(np.zeros(0, np.uint64), np.zeros(0, np.int32), sources)
        h, o = np.concatenate(all_h), np.concatenate(all_o)
        order = np.lexsort((o, h))  # by hash, then by source: the first source wins
        return cls(h[order], o[order], sources)

    def match(self, text: str, n: int) -> tuple[int, str, tuple[int, int]] | None:
        """(matching n-grams, source of the first, char span of the first stretch) or None."""
        if not len(self.hashes):
            return None
        words, starts, ends = word_spans(text)
        grams = ngram_hashes(words, n)
        if not len(grams):
            return None
        pos = np.searchsorted(self.hashes, grams)
        pos_c = np.minimum(pos, len(self.hashes) - 1)
        hit = self.hashes[pos_c] == grams
        idx = np.nonzero(hit)[0]
        if not len(idx):
            return None
        first = int(idx[0])
        last = first  # extend over consecutive matching windows
        while last + 1 < len(hit) and hit[last + 1]:
            last += 1
        span = (int(starts[first]), int(ends[last + n - 1]))
        return len(idx), self.sources[int(self.owner[pos_c[first]])], span


@dataclass(frozen=True)
class EvalRepos:
    """Repo names (owner/name, lower case) per list, from the eval-repo rule pack."""

    by_name: dict[str, str]  # full or bare name -> "list:owner/name"

    @classmethod
    def load(cls, pack: str | None) -> EvalRepos:
        if not pack:
            return cls({})
        data = load_yaml_pack(pack) or {}
        bare = bool(data.get("match_bare_name", True))
        by_name: dict[str, str] = {}
        for list_name, repos in (data.get("lists") or {}).items():
            for full in repos or []:
                full = str(full).lower().strip("/")
                if full.count("/") != 1:
                    raise UserError(f"rule pack {pack}: {full!r} is not owner/name")
                by_name.setdefault(full, f"{list_name}:{full}")
                if bare:
                    by_name.setdefault(full.split("/")[1], f"{list_name}:{full}")
        return cls(by_name)

    def match(self, repo: str, remote: str | None) -> str | None:
        hit = self.by_name.get(repo.lower())
        if hit is None and remote:
            m = re.search(r"[:/]([\w.\-]+)/([\w.\-]+?)(?:\.git)?/?$", remote)
            if m:
                hit = self.by_name.get(f"{m.group(1)}/{m.group(2)}".lower())
        return hit


class DecontamStep(FileStep):
    """Drop files of eval repositories (``eval_repo``) and files overlapping benchmark
    texts (``contaminated``), recording the source and the matching span."""

    name = "decontamination"
    section = "decontam"
    writes = ("contamination_source", "contamination_span")

    @classmethod
    def from_recipe(cls, config: DecontamConfig, context: StepContext) -> DecontamStep:
        return cls(config, context.remotes)

    def __init__(self, cfg: DecontamConfig, remotes: dict[str, str] | None = None):
        super().__init__()
        self.cfg = cfg
        self.remotes = dict(remotes or {})  # repo name -> git remote URL
        self.eval_repos = EvalRepos.load(cfg.eval_repos)
        for b in cfg.benchmarks:  # fail before any work, not in a worker
            if not Path(b.path).expanduser().exists():
                raise UserError(f"decontam benchmark {b.name!r}: file not found: {b.path}")
        self._index: NgramIndex | None = None

    @property
    def index(self) -> NgramIndex:
        if self._index is None:  # built once per worker process
            self._index = NgramIndex.build(list(self.cfg.benchmarks), self.cfg.ngram)
        return self._index

    def process(self, doc: Document) -> None:
        meta = doc.metadata
        hit = self.eval_repos.match(meta.get("repo", ""), self.remotes.get(meta.get("repo", "")))
        if hit:
            meta["contamination_source"] = f"eval_repos:{hit}"
            drop(doc, "eval_repo")
            return
        found = self.index.match(doc.text, self.cfg.ngram)
        if found and found[0] >= self.cfg.min_matches:
            count, source, (start, end) = found
            meta["contamination_source"] = source
            span = doc.text[start:end]
            if len(span) > SPAN_CHARS:
                span = span[:SPAN_CHARS] + "…"
            meta["contamination_span"] = f"{start}:{end} {span}"
            drop(doc, "contaminated")
            self.stat_update("contaminated_ngrams", value=count)
