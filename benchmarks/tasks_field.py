"""The field numbers of one ``datagen build tasks`` on real repos, from its manifest alone.

A field report (docs/reports/) names repos nobody here picked and asks of one build: which
repos yield tasks (per language and per group: PyPI sdists against repositories), where
feature tasks come from and how large they are, how many tasks change 50+ lines, and why each
repo that yields nothing was skipped. This prints those numbers as markdown tables, and with
``--json`` writes them for a report's figures.

    PYTHONPATH=. python benchmarks/tasks_field.py /work/out --sdists /work/sdists

``--sdists``: a folder whose entries are the PyPI sdists among the inputs (their repo names),
so the two groups read apart; without it every Python repo counts as the sdist group.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

import duckdb


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def field(out: Path, sdists: set[str] | None) -> dict:
    """Per-repo rows and the group, language and size numbers of the build in ``out``."""
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    run = con.execute("SELECT run_id FROM repo_baselines ORDER BY run_id DESC LIMIT 1").fetchone()[0]
    repos = _rows(con, f"SELECT repo, language, runner, status, reason, detail, tests, feature_detail "
                       f"FROM repo_baselines WHERE run_id = '{run}' ORDER BY repo")
    tasks = _rows(con, f"SELECT repo, family, changed_lines, changed_files FROM tasks WHERE run_id = '{run}'")
    cands = _rows(con, f"SELECT repo, reason, count(*) AS n FROM candidates WHERE run_id = '{run}' "
                       f"AND status != 'kept' GROUP BY ALL ORDER BY repo, n DESC, reason")
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for t in tasks:
        by_repo[t["repo"]].append(t)
    dropped: dict[str, list[str]] = defaultdict(list)
    for c in cands:
        dropped[c["repo"]].append(f"{c['reason']} {c['n']}")
    for r in repos:
        ts = by_repo.get(r["repo"], [])
        feats = sorted(t["changed_lines"] for t in ts if t["family"] == "feature")
        r.update(tasks=len(ts), features=feats, dropped=", ".join(dropped.get(r["repo"], [])),
                 group=("sdist" if (r["repo"] in sdists if sdists is not None else r["language"] == "python")
                        else "repo"),
                 licensed=not (r["reason"] or "").startswith("license"))
    summary: dict = {"groups": {}, "languages": {}}
    for key, pick in (("groups", "group"), ("languages", "language")):
        for name in sorted({r[pick] for r in repos}):
            rs = [r for r in repos if r[pick] == name and r["licensed"]]
            yielding = [r for r in rs if r["tasks"]]
            summary[key][name] = {"repos": len(rs), "yielding": len(yielding),
                                  "with_feature": sum(1 for r in yielding if r["features"])}
    yielding = [r for r in repos if r["tasks"]]
    feats = [n for r in repos for n in r["features"]]
    all_lines = [t["changed_lines"] for t in tasks]
    summary.update(
        yielding=len(yielding), licensed=sum(r["licensed"] for r in repos), tasks=len(tasks),
        repos_with_feature=sum(1 for r in yielding if r["features"]),
        feature_languages=sorted({r["language"] for r in yielding if r["features"]}),
        feature_tasks=len(feats), feature_median_lines=statistics.median(feats) if feats else 0,
        tasks_50_lines=sum(n >= 50 for n in all_lines),
        skipped=[{"repo": r["repo"], "reason": r["reason"], "detail": r["detail"]}
                 for r in repos if not r["tasks"]],
    )
    return {"run_id": run, "repos": repos, "summary": summary}


def markdown(report: dict) -> str:
    s = report["summary"]
    lines = ["| repo | group | language | runner | tests | tasks | dropped (reasons) | feature tasks (changed lines) |",
             "|---|---|---|---|---:|---:|---|---|"]
    for r in report["repos"]:
        tasks = str(r["tasks"]) if r["tasks"] else f"0 (`{r['reason'] or 'no_valid_candidates'}`)"
        feats = ", ".join(map(str, r["features"])) or (r["feature_detail"] or "-")
        lines.append(f"| {r['repo']} | {r['group']} | {r['language']} | {r['runner'] or '-'} | {r['tests']} | "
                     f"{tasks} | {r['dropped'] or '-'} | {feats} |")
    lines += ["", "| group / language | licence accepted | yielding | with a feature task |", "|---|---:|---:|---:|"]
    for key in ("groups", "languages"):
        for name, g in s[key].items():
            lines.append(f"| {name} | {g['repos']} | {g['yielding']} | {g['with_feature']} |")
    share = s["repos_with_feature"] / s["yielding"] if s["yielding"] else 0.0
    big = s["tasks_50_lines"] / s["tasks"] if s["tasks"] else 0.0
    lines += ["",
              f"- tasks: {s['tasks']}; repos yielding: {s['yielding']} of {s['licensed']} whose licence is accepted",
              f"- feature tasks from {s['repos_with_feature']} of {s['yielding']} yielding repos ({share:.0%}), "
              f"{len(s['feature_languages'])} languages ({', '.join(s['feature_languages'])}); "
              f"{s['feature_tasks']} feature tasks, median {s['feature_median_lines']} changed lines",
              f"- tasks with 50+ changed lines: {s['tasks_50_lines']} of {s['tasks']} ({big:.0%})"]
    for sk in s["skipped"]:
        lines.append(f"- skipped {sk['repo']}: {sk['reason'] or 'no_valid_candidates'}: {sk['detail'] or '-'}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="a tasks build's output folder (its manifest.duckdb)")
    ap.add_argument("--sdists", type=Path, help="folder whose entries are the sdist inputs")
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    args = ap.parse_args()
    sdists = {p.name for p in args.sdists.iterdir()} if args.sdists else None
    report = field(args.out, sdists)
    print(markdown(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
