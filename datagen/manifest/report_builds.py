"""More report charts: corpus licenses and histograms, the tasks and pool builds' funnels
and distributions, teacher cost and the ledger's progress. One ``ChartSpec`` each, query
next to drawing, as in ``report_charts``; ``MORE_CHARTS`` lists them by where they go."""

from __future__ import annotations

from typing import TYPE_CHECKING

from datagen.manifest.report_charts import (
    CLUSTER_SIZES,
    DROPPED,
    FILES_BY_OUTCOME,
    KEPT,
    KEPT_BYTES_BY_LANG,
    SYNTAX_ERROR_RATIO,
    TEACHER_CALLS,
    TOKEN_COUNTS,
    Chart,
    ChartSpec,
    Db,
    _hbars,
)
from datagen.manifest.report_hist import histogram

if TYPE_CHECKING:
    from matplotlib.figure import Figure

KIB = 1024


def _stacked(fig: Figure, labels: list[str], parts: list[tuple[str, list[float], str]], xlabel: str) -> None:
    """Horizontal bars, one per label, stacked from ``parts`` (name, values, color)."""
    from matplotlib.ticker import EngFormatter

    ax = fig.add_subplot()
    left = [0.0] * len(labels)
    for name, values, color in parts:
        ax.barh(range(len(labels)), values, left=left, label=name, color=color)
        left = [a + b for a, b in zip(left, values)]
    for y, total in enumerate(left):
        ax.annotate(EngFormatter(sep=" ")(total), (total, y), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=8)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, max(left) * 1.18 if left and max(left) > 0 else 1)
    ax.set_xlabel(xlabel)
    ax.xaxis.set_major_formatter(EngFormatter(sep=" "))
    ax.legend(fontsize=8, loc="lower right")
    ax.spines[["top", "right"]].set_visible(False)


# corpus --------------------------------------------------------------------------------
def _licenses_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("files", "license", "decision", "bytes"):
        return skip
    return db.rows(
        "SELECT coalesce(license, '(none found)') AS license, count(*) FILTER (decision = 'kept') AS kept, "
        "count(*) FILTER (decision <> 'kept') AS dropped, "
        "coalesce(sum(bytes) FILTER (decision = 'kept'), 0)::BIGINT AS kept_bytes "
        f"FROM files WHERE {db.where('files')} GROUP BY ALL ORDER BY kept DESC, dropped DESC, license")


def _licenses_draw(fig: Figure, chart: Chart) -> None:
    _stacked(fig, [r[0] for r in chart.rows], [("kept", [r[1] for r in chart.rows], KEPT),
                                               ("dropped", [r[2] for r in chart.rows], DROPPED)], "files")


LICENSES = ChartSpec(
    "licenses", "Files by repository license",
    "The license detected for each file's repository (SPDX id from LICENSE/COPYING), kept and dropped.",
    ["license", "kept", "dropped", "kept_bytes"], query=_licenses_rows, draw=_licenses_draw)

FILE_SIZES = histogram(
    "file_sizes", "File sizes", "Bytes of every file seen, kept and dropped (`files.bytes`).", "files", "bytes",
    [("<1 KiB", None, KIB), ("1-4 KiB", KIB, 4 * KIB), ("4-16 KiB", 4 * KIB, 16 * KIB),
     ("16-64 KiB", 16 * KIB, 64 * KIB), ("64-256 KiB", 64 * KIB, 256 * KIB), ("≥256 KiB", 256 * KIB, None)],
    "file size", group=("decision", ["kept", "dropped"]), ylabel="files")

DOC_TOKENS = histogram(
    "doc_tokens", "Tokens per repository document",
    "Tokens of each packed repo document (`repo_docs.tokens`, EOS included; a long repo is cut into parts).",
    "repo_docs", "tokens",
    [("<1k", None, 1e3), ("1k-4k", 1e3, 4e3), ("4k-16k", 4e3, 16e3), ("16k-64k", 16e3, 64e3),
     ("64k-256k", 64e3, 256e3), ("≥256k", 256e3, None)], "tokens", ylabel="documents")



def _language_mix_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("language_mix", "lang", "weight", "bytes_before", "bytes_after", "tokens_before"):
        return skip
    return db.rows(
        "SELECT lang, weight, files_before, files_after, "
        "CASE WHEN tokens_before IS NULL THEN 'bytes' ELSE 'tokens' END AS unit, "
        "coalesce(tokens_before, bytes_before) AS before, coalesce(tokens_after, bytes_after) AS after "
        f"FROM language_mix WHERE {db.where('language_mix')} ORDER BY before DESC, lang")


def _language_mix_draw(fig: Figure, chart: Chart) -> None:
    from matplotlib.ticker import EngFormatter

    ax = fig.add_subplot()
    labels = [f"{r[0] or '(none)'} ×{r[1]:g}" for r in chart.rows]
    ys = range(len(labels))
    ax.barh([y - 0.2 for y in ys], [r[5] for r in chart.rows], height=0.4, label="before", color=DROPPED)
    ax.barh([y + 0.2 for y in ys], [r[6] for r in chart.rows], height=0.4, label="after", color=KEPT)
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    ax.set_xlabel(chart.rows[0][4] if chart.rows else "tokens")
    ax.xaxis.set_major_formatter(EngFormatter(sep=" "))
    ax.legend(fontsize=8, loc="lower right")
    ax.spines[["top", "right"]].set_visible(False)


LANGUAGE_MIX = ChartSpec(
    "language_mix", "Language mix: before and after `mix.weights`",
    "Per language (label: its weight), the train split's file tokens (bytes without a tokenizer) after dedup "
    "and after the mix's down-sampling and repeats (`language_mix`).",
    ["lang", "weight", "files_before", "files_after", "unit", "before", "after"],
    query=_language_mix_rows, draw=_language_mix_draw)


def _long_buckets_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("long_buckets", "split", "bucket", "tokens", "selected_tokens"):
        return skip
    return db.rows(
        "SELECT split, bucket, long, documents, tokens, selected_documents, selected_tokens "
        f"FROM long_buckets WHERE {db.where('long_buckets')} AND documents > 0 ORDER BY split, min_tokens")


def _long_buckets_draw(fig: Figure, chart: Chart) -> None:
    labels = [f"{r[0]} {r[1]}" for r in chart.rows]
    _stacked(fig, labels, [("in the longest output", [r[6] for r in chart.rows], KEPT),
                           ("left out", [r[4] - r[6] for r in chart.rows], DROPPED)], "tokens")


LONG_BUCKETS = ChartSpec(
    "long_buckets", "Long-context buckets",
    "Repo documents by their repo's token length (`long_buckets`, `pack.long.edges`): tokens, and those the "
    "longest sequence length's output took (`pack.long.share`).",
    ["split", "bucket", "long", "documents", "tokens", "selected_documents", "selected_tokens"],
    query=_long_buckets_rows, draw=_long_buckets_draw)


# tasks -----------------------------------------------------------------------------------
def _outcomes(db: Db, table: str, status: str) -> list[tuple] | str:
    if skip := db.missing(table, "status", "reason"):
        return skip
    return db.rows(
        f"SELECT CASE WHEN status = 'kept' THEN 'kept' ELSE coalesce(reason, '(no reason)') END AS outcome, "
        f"count(*) AS {status} FROM {table} WHERE {db.where(table)} GROUP BY ALL ORDER BY {status} DESC, outcome")


def _outcomes_draw(fig: Figure, chart: Chart) -> None:
    values = [r[1] for r in chart.rows]
    _hbars(fig, [r[0] for r in chart.rows], values, [KEPT if r[0] in ("kept", "pooled") else DROPPED
                                                     for r in chart.rows], [str(v) for v in values],
           chart.columns[1])


CANDIDATE_OUTCOMES = ChartSpec(
    "candidate_outcomes", "Task candidates kept and dropped, by reason",
    "Every candidate patch the strategies proposed (`candidates`): kept as a task, or why not.",
    ["outcome", "candidates"], query=lambda db: _outcomes(db, "candidates", "candidates"), draw=_outcomes_draw)


def _task_yield_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("candidates", "strategy", "status"):
        return skip
    return db.rows(
        "SELECT strategy, count(*) AS candidates, count(*) FILTER (status = 'kept') AS kept, "
        "round(count(*) FILTER (status = 'kept') / count(*), 3) AS yield "
        f"FROM candidates WHERE {db.where('candidates')} GROUP BY strategy ORDER BY kept DESC, strategy")


def _task_yield_draw(fig: Figure, chart: Chart) -> None:
    _stacked(fig, [r[0] for r in chart.rows], [("kept", [r[2] for r in chart.rows], KEPT),
                                               ("dropped", [r[1] - r[2] for r in chart.rows], DROPPED)],
             "candidates")


TASK_YIELD = ChartSpec(
    "task_yield", "Task yield per strategy",
    "Candidates per strategy and how many became tasks (yield = kept / candidates).",
    ["strategy", "candidates", "kept", "yield"], query=_task_yield_rows, draw=_task_yield_draw)

def _repo_outcome_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("repo_envs", "outcome", "failed_step"):
        return skip
    return db.rows(
        "SELECT CASE WHEN outcome = 'env_failed' AND failed_step <> '' THEN 'env failed at ' || "
        "regexp_replace(failed_step, ' \\(.*', '') ELSE outcome END AS outcome, count(*) AS repos, "
        "string_agg(repo, ', ' ORDER BY repo) AS examples "
        f"FROM repo_envs WHERE {db.where('repo_envs')} GROUP BY ALL ORDER BY repos DESC, outcome")


def _repo_outcome_draw(fig: Figure, chart: Chart) -> None:
    values = [r[1] for r in chart.rows]
    _hbars(fig, [r[0] for r in chart.rows], values, [KEPT if r[0] == "yielded" else DROPPED for r in chart.rows],
           [str(v) for v in values], "repos")


REPO_OUTCOMES = ChartSpec(
    "repo_outcomes", "Input repos by outcome",
    "Every input repo of the tasks build (`repo_envs`): yielded tasks, or why not (env failed at which "
    "install step, no tests, no passing tests, ...).",
    ["outcome", "repos", "examples"], query=_repo_outcome_rows, draw=_repo_outcome_draw)

TASK_SIZES = histogram(
    "task_sizes", "Fix size of the tasks", "Changed lines of each task's fix (`tasks.changed_lines`); "
    "SWE-bench fixes change ~7-10 lines.", "tasks", "changed_lines",
    [("1", None, 2), ("2-3", 2, 4), ("4-10", 4, 11), ("11-30", 11, 31), ("31-100", 31, 101), (">100", 101, None)],
    "changed lines", ylabel="tasks")


# pool ------------------------------------------------------------------------------------
def _pool_outcomes_rows(db: Db) -> list[tuple] | str:
    if "pool" not in db.columns or "pool_drops" not in db.columns:
        return "the manifest has no `pool` and `pool_drops` tables"
    rows = [("pooled", db.rows("SELECT count(*) FROM pool")[0][0]),
            *db.rows("SELECT reason, count(*) FROM pool_drops GROUP BY reason")]
    rows = sorted(rows, key=lambda r: (-r[1], r[0]))
    return rows if any(n for _, n in rows) else "`pool` and `pool_drops` have no rows"


POOL_OUTCOMES = ChartSpec(
    "pool_outcomes", "Instructions pooled and dropped, by reason",
    "Every task offered to the pool: pooled, or dropped with the reason in `pool_drops`.",
    ["outcome", "instructions"], query=_pool_outcomes_rows, draw=_outcomes_draw)

PASS_RATES = histogram(
    "pass_rates", "Policy pass rates", "passes / K of the policy's attempts per task (`difficulty.pass_rate`), "
    "before the band decides; 0 and 1 carry no RL signal.", "difficulty", "pass_rate",
    [("0", None, 1e-9), ("(0, ¼)", 1e-9, 0.25), ("[¼, ½)", 0.25, 0.5), ("[½, ¾)", 0.5, 0.75),
     ("[¾, 1)", 0.75, 1 - 1e-9), ("1", 1 - 1e-9, None)], "pass rate", ylabel="tasks")


# teacher cost and ledger -------------------------------------------------------------------
def _teacher_cost_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("teacher_calls", "model", "cached", "prompt_tokens", "completion_tokens", "latency_s"):
        return skip
    return db.rows(
        "SELECT model, count(*) FILTER (NOT cached) AS paid_calls, count(*) FILTER (cached) AS cached_calls, "
        "sum(prompt_tokens) FILTER (NOT cached)::BIGINT AS prompt_tokens, "
        "sum(completion_tokens) FILTER (NOT cached)::BIGINT AS completion_tokens, "
        "round(sum(latency_s), 1) AS latency_s "
        f"FROM teacher_calls WHERE {db.where('teacher_calls')} GROUP BY model ORDER BY model")


def _teacher_cost_draw(fig: Figure, chart: Chart) -> None:
    _stacked(fig, [r[0] for r in chart.rows], [("prompt", [r[3] or 0 for r in chart.rows], "#1565c0"),
                                               ("completion", [r[4] or 0 for r in chart.rows], "#ef6c00")],
             "paid tokens")


TEACHER_COST = ChartSpec(
    "teacher_cost", "Teacher cost per model",
    "Paid tokens per model (cached answers cost nothing) and the summed wall time of the calls.",
    ["model", "paid_calls", "cached_calls", "prompt_tokens", "completion_tokens", "latency_s"],
    query=_teacher_cost_rows, draw=_teacher_cost_draw)


def _ledger_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("pool", "split") or db.missing("ledger", "instruction_id", "returned_at"):
        return skip
    return db.rows(
        "WITH held AS (SELECT DISTINCT instruction_id FROM ledger WHERE returned_at IS NULL) "
        "SELECT p.split, count(*) AS pooled, count(h.instruction_id) AS taken, "
        "count(*) - count(h.instruction_id) AS left_ "
        "FROM pool p LEFT JOIN held h USING (instruction_id) GROUP BY p.split ORDER BY p.split")


def _ledger_draw(fig: Figure, chart: Chart) -> None:
    _stacked(fig, [r[0] for r in chart.rows], [("taken", [r[2] for r in chart.rows], "#1565c0"),
                                               ("left", [r[3] for r in chart.rows], DROPPED)], "instructions")


LEDGER = ChartSpec(
    "ledger", "Ledger progress",
    "Instructions handed out (`ledger`, mirrored by `datagen pool status`) and left, per split.",
    ["split", "pooled", "taken", "left"], query=_ledger_rows, draw=_ledger_draw)

# every chart of the report, in page order
ALL_CHARTS: list[ChartSpec] = [
    FILES_BY_OUTCOME, KEPT_BYTES_BY_LANG, LICENSES, FILE_SIZES, CLUSTER_SIZES, SYNTAX_ERROR_RATIO, TOKEN_COUNTS,
    DOC_TOKENS, LANGUAGE_MIX, LONG_BUCKETS, REPO_OUTCOMES, CANDIDATE_OUTCOMES, TASK_YIELD, TASK_SIZES, POOL_OUTCOMES,
    PASS_RATES, TEACHER_CALLS, TEACHER_COST,
    LEDGER,
]
