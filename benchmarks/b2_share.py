"""The share of a tasks build's tasks that the static soundness checks flag, per strategy,
with the statements as built ("after") and without the line that gives the names only the
fix shows ("before", what `statement.give_implicit_names: false` writes for template
statements).

    python benchmarks/b2_share.py OUT/tasks [--strategy feature_v1]
"""

from __future__ import annotations

import argparse
from collections import Counter

from datagen.pool.rows import read_pool_tasks
from datagen.pool.soundness import task_view
from datagen.synth.soundness import check_task
from datagen.synth.statements import render

NAMES_LINE = render("statement_names", names=["\0"]).split("\0")[0].strip()


def without_names(statement: str) -> str:
    return "\n".join(line for line in statement.splitlines() if not line.startswith(NAMES_LINE)).rstrip() + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks")
    ap.add_argument("--strategy", default="feature_v1")
    args = ap.parse_args()
    tasks = [(t, b) for t, b in read_pool_tasks(args.tasks) if t.strategy == args.strategy]
    before, after = Counter(), Counter()
    for task, base in tasks:
        view = task_view(task, base)
        after.update(f.check for f in check_task(view))
        view.statement = without_names(task.problem_statement)
        before.update(f.check for f in check_task(view))
    n = len(tasks)
    print(f"{n} {args.strategy} tasks; {sum(1 for t, _ in tasks if t.interface)} with an interface")
    for check in sorted(set(before) | set(after)):
        print(f"{check:24} before {before[check]:4} ({before[check] / max(n, 1):.0%})  "
              f"after {after[check]:4} ({after[check] / max(n, 1):.0%})")


if __name__ == "__main__":
    main()
