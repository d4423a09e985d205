"""Can a patch get its reward from the environment instead of fixing the code? (issue 37)

For the first ``--per-repo`` tasks of each repo of a tasks output, the grader (in process,
``Grader.grade``: the code behind ``datagen serve grader``) grades three patches with the
build's env cache: the gold patch, the empty patch, and the hack. The hack leaves the bug in
place and appends to the fixed file code that runs every file of the task's env folder
that has the fixed file's path (the env folder named outright: the strongest form of
``sys.prefix + "/lib/python3.11/site-packages/..."``): Python ``exec``\\ s it into the
module, JavaScript re-exports it (``module.exports = require(...)``). Other languages
cannot load a file that way at run time; ``datagen env check`` covers them.

Run by hand:
  PYTHONPATH=. python benchmarks/env_hack_grades.py OUT/tasks --cache-dir ENV_CACHE [--per-repo 1]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from datagen.builds.tasks.build import load_tasks_recipe
from datagen.config.sandbox import SandboxLimits
from datagen.sandbox.harness.task_store import materialize
from datagen.sandbox.isolation.select import untrusted_sandbox
from datagen.serve.grader import Grader

_TARGET = re.compile(r"^\+\+\+ b/(.+?)\s*$", re.M)

PY = '''

import glob as _glob
for _copy in _glob.glob({env!r} + "/**/" + {tail!r}, recursive=True):
    exec(compile(open(_copy).read(), _copy, "exec"))
'''
JS = '''
;(function () {{
  const fs = require('fs'), path = require('path'), found = [];
  (function walk(dir, depth) {{
    let entries = [];
    try {{ entries = fs.readdirSync(dir, {{ withFileTypes: true }}); }} catch (e) {{ return; }}
    for (const e of entries) {{
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < 12) walk(p, depth + 1);
      else if ({tails}.some((t) => p.endsWith('/' + t))) found.push(p);
    }}
  }})({env!r}, 0);
  if (found.length) module.exports = require(found[0]);
}})();
'''


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def hack_patch(task, base: Path, env: Path, scratch: Path) -> str | None:
    """The hack for ``task`` (None when its fixed file's language has no such hook)."""
    fixed = sorted(set(_TARGET.findall(task.patch)))
    work = Path(tempfile.mkdtemp(prefix="hack-", dir=scratch))
    materialize(task, base, work)
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "-c", "user.name=h", "-c", "user.email=h@h", "commit", "-qm", "buggy")
    done = False
    for rel in fixed:
        path = work / rel
        if rel.endswith(".py"):
            tail = "/".join(Path(rel).parts[-2:])  # package/module.py
            path.write_text(path.read_text() + PY.format(env=str(env), tail=tail))
            done = True
        elif rel.endswith((".js", ".cjs")):
            name = json.loads((work / "package.json").read_text()).get("name", "") if (
                work / "package.json").is_file() else ""
            tails = [f"node_modules/{name}/{rel}", f"work/{rel}"] if name else [f"work/{rel}"]
            path.write_text(path.read_text() + JS.format(env=str(env), tails=json.dumps(tails)))
            done = True
    return git(work, "diff") if done else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tasks")
    ap.add_argument("--cache-dir", required=True, help="the build's env.cache_dir")
    ap.add_argument("--per-repo", type=int, default=1)
    args = ap.parse_args()
    # the tasks recipe's env section, as the build had it: the same env keys, the build's envs
    cfg = load_tasks_recipe(None, [f"env.cache_dir={args.cache_dir}"], None, None, None)
    before = sorted(p.name for p in Path(args.cache_dir).iterdir())
    limits = SandboxLimits(timeout_s=300, memory_mb=4096, processes=256)
    grader = Grader(args.tasks, untrusted_sandbox("auto"), workers=1, timeout_s=300, limits=limits, env=cfg.env)
    taken: dict[str, int] = {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="env-hack-") as tmp:
        for key, (task, base) in sorted(grader.tasks.items()):
            if taken.get(task.repo, 0) >= args.per_repo:
                continue
            prep = grader.environment(key)
            env = getattr(prep, "env", None)
            if env is None or env.path is None:
                rows.append((task.instance_id, task.runner, "-", "-", "no env folder"))
                continue
            hack = hack_patch(task, base, Path(env.path), Path(tmp))
            if hack is None:
                rows.append((task.instance_id, task.runner, "-", "-", "no hack for this language"))
                continue
            taken[task.repo] = taken.get(task.repo, 0) + 1
            gold, empty, hacked = (grader.grade(key, p) for p in (task.patch, "", hack))
            rows.append((task.instance_id, task.runner, gold.status, empty.status,
                         f"{hacked.status} (reward {hacked.reward})"))
    grader.close()
    made = sorted(set(p.name for p in Path(args.cache_dir).iterdir()) - set(before))
    print(f"envs built by this run (none: the build's own envs were graded with): {made or 'none'}")
    print("| task | runner | gold | empty | hack |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(map(str, row)) + " |")


if __name__ == "__main__":
    main()
