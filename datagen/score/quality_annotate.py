"""The teacher's side of the learned quality scorer: pick a seeded sample of a corpus's
kept files per language, ask the teacher to rate each on a 0-5 rubric under a JSON schema
(``prompts/quality_rubric.jinja``), and turn the answers into ``QualityLabel`` rows.

The sample is stratified by language: each language's ``per_lang`` files with the
smallest ``xxh64(seed:id)``, so it is the same on every run, and a larger ``per_lang``
only adds files to it (their answers already paid come from the request cache).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import jinja2
import pyarrow.compute as pc
import pyarrow.dataset as ds
import xxhash

from datagen.config.quality import AnnotateConfig
from datagen.errors import UserError
from datagen.records import QualityLabel
from datagen.teachers import Message, SamplingParams, TeacherRequest, TeacherResult

PROMPTS = Path(__file__).parent / "prompts"
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPTS)), keep_trailing_newline=True,
                          undefined=jinja2.StrictUndefined, autoescape=False)
SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 400},
        "score": {"type": "integer", "minimum": 0, "maximum": 5},
    },
    "required": ["reason", "score"],
    "additionalProperties": False,
}


def _dataset(corpus: Path) -> ds.Dataset:
    files = sorted((corpus / "data").glob("*.parquet"))
    if not files:
        raise UserError(f"{corpus} has no corpus shards (data/*.parquet): build it with datagen build cpt-corpus")
    return ds.dataset([str(f) for f in files], format="parquet")


def sample_ids(corpus: Path, cfg: AnnotateConfig) -> list[str]:
    """The ids of the sampled kept files, ordered by (language, id)."""
    table = _dataset(corpus).to_table(columns=["id", "lang"])
    wanted = set(cfg.langs)
    by_lang: dict[str, list[tuple[int, str]]] = {}
    for fid, lang in zip(table["id"].to_pylist(), table["lang"].to_pylist(), strict=True):
        if not wanted or lang in wanted:
            by_lang.setdefault(lang, []).append((xxhash.xxh64_intdigest(f"{cfg.seed}:{fid}"), fid))
    picked = []
    for lang in sorted(by_lang):
        picked += sorted((fid for _, fid in sorted(by_lang[lang])[: cfg.per_lang]))
    return picked


def read_files(corpus: Path, ids: Sequence[str]) -> list[dict]:
    """The shard rows (id, repo, path, lang, text) of ``ids``, in the order of ``ids``."""
    table = _dataset(corpus).to_table(columns=["id", "repo", "path", "lang", "text"],
                                      filter=pc.field("id").isin(list(ids)))
    rows = {r["id"]: r for r in table.to_pylist()}
    return [rows[i] for i in ids]


def requests(files: Iterable[dict], cfg: AnnotateConfig) -> list[TeacherRequest]:
    """One rating request per file: the rubric, the file's first ``max_chars`` characters."""
    system = _ENV.get_template("quality_system.jinja").render().strip()
    rubric = _ENV.get_template("quality_rubric.jinja")
    out = []
    for f in files:
        user = rubric.render(lang=f["lang"], path=f["path"], text=f["text"][: cfg.max_chars],
                             max_chars=cfg.max_chars)
        out.append(TeacherRequest(
            id=f["id"], json_schema=SCHEMA, sampling=SamplingParams(max_tokens=cfg.max_tokens),
            messages=[Message(role="system", content=system), Message(role="user", content=user)]))
    return out


def labels(files: Sequence[dict], results: Sequence[TeacherResult], cfg: AnnotateConfig,
           teacher: str) -> list[QualityLabel]:
    """One label per file; a failed or invalid answer keeps its status and no score."""
    out = []
    for f, result in zip(files, results, strict=True):
        parsed = (result.parsed or [None])[0] if result.status == "ok" else None
        out.append(QualityLabel(
            id=f["id"], repo=f["repo"], path=f["path"], lang=f["lang"], text=f["text"][: cfg.max_chars],
            score=parsed["score"] if parsed else None, reason=parsed["reason"] if parsed else result.error,
            status=result.status, teacher=teacher))
    return out
