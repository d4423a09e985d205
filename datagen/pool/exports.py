"""Write a pool folder: shards, dataset card and the exports trainers read unchanged.

``write_pool(rows, dropped, out, card_info)`` is the one entry point a build calls::

    OUT/README.md                                   dataset card (Hub YAML header, statistics)
    OUT/data/{train,validation}-0000i-of-0000N.parquet   pool rows (PoolRow columns)
    OUT/exports/verl/{train,validation}.parquet     verl RL rows
    OUT/exports/skyrl/{train,validation}.parquet    SkyRL (mini-swe-agent) rows
    OUT/exports/swebench.jsonl                      SWE-bench instances, both splits
    OUT/exports/harbor/<task>/                      Harbor task folders (``write_harbor``, on
                                                    demand: ``datagen pool export-harbor``)
    OUT/ledger/journal.jsonl, OUT/ledger/lock       written by `datagen pool take`, never here

Rows are sorted by (split, instruction_id) and written with fixed parquet options and no
timestamps, so the same rows give byte-identical files. A split without rows gets no
files (``train`` always gets at least one shard, so the folder stays loadable).

Formats (see FORMATS.md):

- verl: ``data_source, prompt, ability, reward_model, extra_info``; ``prompt`` a list of
  ``{role, content}``; ``reward_model = {style: "rule", ground_truth: <JSON string of the
  reward spec: tests, test patch, runner, auxiliary checks>}``; ``extra_info`` has the same
  keys in every row, the per-policy difficulty among them (``policy_id, pass_rate,
  difficulty_band, scorer``).
- SkyRL: ``data_source, prompt, env_class, instance`` with ``instance`` a full SWE-bench row
  (test lists as real lists, as SWE-Gym stores them) plus ``image_name`` (null unless the
  card info names one: SkyRL's mini-swe-agent uses an image whenever it is not None),
  ``eval_script`` (exit 0 = resolved) and ``instruction_id``.
- SWE-bench JSONL: the official fields; ``FAIL_TO_PASS`` / ``PASS_TO_PASS`` are
  JSON-encoded strings, as in the official dataset; ``patch`` is the fix.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from datagen.errors import UserError
from datagen.pool import harbor_env
from datagen.pool.card import CardInfo, write_card
from datagen.pool.harbor_env import BASE_TAG
from datagen.pool.rows import PROMPTS, eval_script, reward_spec
from datagen.records import ShardRow
from datagen.records.base import arrow_schema
from datagen.records.pool import PoolDropRow, PoolRow
from datagen.runtime.atomic import atomic_path, atomic_write
from datagen.sandbox.harness.profiles.registry import get_profile

SPLITS = ("train", "validation")
_MSG = pa.list_(pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())]))
_PARQUET = {"compression": "zstd", "compression_level": 3, "use_dictionary": True, "write_statistics": True,
            "row_group_size": 1024, "store_schema": True}
SWEBENCH_FIELDS = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement", "hints_text",
                   "created_at", "version", "environment_setup_commit", "FAIL_TO_PASS", "PASS_TO_PASS", "interface")


def _write_parquet(table: pa.Table, path: Path) -> Path:
    with atomic_path(path, mkdir=True) as tmp:
        pq.write_table(table, tmp, **_PARQUET)
    return path


def _by_split(rows: list[PoolRow]) -> dict[str, list[PoolRow]]:
    out: dict[str, list[PoolRow]] = {s: [] for s in SPLITS}
    for row in sorted(rows, key=lambda r: r.instruction_id):
        out[row.split].append(row)
    return out


def _check_unique(rows: list[PoolRow]) -> None:
    twice = [i for i, c in Counter(r.instruction_id for r in rows).items() if c > 1]
    if twice:
        raise UserError(f"instruction ids appear more than once: {sorted(twice)[:5]}")


def _clear(out: Path) -> None:
    """Remove what an earlier write left (the ledger stays)."""
    for pattern in ("data/*.parquet", "exports/verl/*.parquet", "exports/skyrl/*.parquet", "exports/swebench.jsonl"):
        for old in out.glob(pattern):
            old.unlink()


def write_shards(by_split: dict[str, list[PoolRow]], out: Path, max_rows: int) -> list[Path]:
    """``data/<split>-0000i-of-0000N.parquet`` with at most ``max_rows`` rows each."""
    schema = arrow_schema(PoolRow)
    paths = []
    for split, rows in by_split.items():
        if not rows and split != "train":
            continue
        chunks = [rows[i: i + max_rows] for i in range(0, len(rows), max_rows)] or [[]]
        for i, chunk in enumerate(chunks):
            table = pa.Table.from_pylist([r.model_dump() for r in chunk], schema=schema)
            paths.append(_write_parquet(table, out / "data" / f"{split}-{i:05d}-of-{len(chunks):05d}.parquet"))
    return paths


def _prompt(row: PoolRow) -> list[dict]:
    return [m.model_dump() for m in row.prompt]


def verl_row(row: PoolRow, index: int, info: CardInfo) -> dict:
    """One verl RL row; ``extra_info`` keys are the same for every row."""
    return {
        "data_source": info.data_source, "prompt": _prompt(row), "ability": info.ability,
        "reward_model": {"style": "rule", "ground_truth": reward_spec(row)},
        "extra_info": {
            "index": index, "split": row.split, "instruction_id": row.instruction_id, "task_id": row.task_id,
            "repo": row.repo, "base_commit": row.base_commit, "repo_path": row.repo_path, "runner": row.runner,
            "group_size": row.group_size, "policy_id": row.policy_id, "pass_rate": row.pass_rate,
            "difficulty_band": row.difficulty_band, "scorer": row.scorer, "perplexity": row.perplexity,
        },
    }


_VERL = pa.schema([
    ("data_source", pa.string()), ("prompt", _MSG), ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
    ("extra_info", pa.struct([
        ("index", pa.int64()), ("split", pa.string()), ("instruction_id", pa.string()), ("task_id", pa.string()),
        ("repo", pa.string()), ("base_commit", pa.string()), ("repo_path", pa.string()), ("runner", pa.string()),
        ("group_size", pa.int64()), ("policy_id", pa.string()), ("pass_rate", pa.float64()),
        ("difficulty_band", pa.string()), ("scorer", pa.string()), ("perplexity", pa.float64()),
    ])),
])


def swebench_row(row: PoolRow, lists_as_json: bool) -> dict:
    """A SWE-bench instance; test lists JSON-encoded (official) or real lists (SWE-Gym)."""
    f2p, p2p = row.fail_to_pass, row.pass_to_pass
    return {
        "instance_id": row.task_id, "repo": row.repo, "base_commit": row.base_commit, "patch": row.patch,
        "test_patch": row.test_patch, "problem_statement": row.problem_statement, "hints_text": row.hints_text,
        "created_at": row.created_at, "version": row.version,
        "environment_setup_commit": row.environment_setup_commit or row.base_commit,
        "FAIL_TO_PASS": json.dumps(f2p) if lists_as_json else f2p,
        "PASS_TO_PASS": json.dumps(p2p) if lists_as_json else p2p, "interface": row.interface,
    }


def skyrl_row(row: PoolRow, info: CardInfo, prompts: Path = PROMPTS) -> dict:
    instance = {**swebench_row(row, lists_as_json=False), "image_name": info.skyrl_image,
                "eval_script": eval_script(row, prompts),
                "instruction_id": row.instruction_id}
    return {"data_source": info.data_source, "prompt": _prompt(row), "env_class": info.env_class,
            "instance": instance}


_SKYRL = pa.schema([
    ("data_source", pa.string()), ("prompt", _MSG), ("env_class", pa.string()),
    ("instance", pa.struct([*((f, pa.list_(pa.string()) if f.endswith("_PASS") else pa.string())
                              for f in SWEBENCH_FIELDS),
                            ("image_name", pa.string()), ("eval_script", pa.string()),
                            ("instruction_id", pa.string())])),
])


def write_exports(by_split: dict[str, list[PoolRow]], out: Path, info: CardInfo) -> list[Path]:
    """verl and SkyRL parquet per split, and one SWE-bench JSONL of both splits."""
    paths = []
    for split, rows in by_split.items():
        if not rows and split != "train":
            continue
        verl = pa.Table.from_pylist([verl_row(r, i, info) for i, r in enumerate(rows)], schema=_VERL)
        paths.append(_write_parquet(verl, out / "exports" / "verl" / f"{split}.parquet"))
        sky = pa.Table.from_pylist([skyrl_row(r, info) for r in rows], schema=_SKYRL)
        paths.append(_write_parquet(sky, out / "exports" / "skyrl" / f"{split}.parquet"))
    lines = [json.dumps(swebench_row(r, lists_as_json=True), ensure_ascii=False) + "\n"
             for split in SPLITS for r in by_split[split]]
    target = out / "exports" / "swebench.jsonl"
    atomic_write(target, "".join(lines), mkdir=True)
    return [*paths, target]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shard_row(out: Path, path: Path, rows: int) -> ShardRow:
    return ShardRow(run_id="", path=path.relative_to(out).as_posix(), rows=rows, bytes=path.stat().st_size,
                    sha256=_sha256(path))


def write_pool(rows: list[PoolRow], dropped: list[PoolDropRow], out: str | Path,
               card_info: CardInfo | dict | None = None) -> list[ShardRow]:
    """Write the pool folder (see the module docstring) and return one ``ShardRow`` per
    file written (``run_id`` empty: the build sets it). The build only produces rows."""
    info = card_info if isinstance(card_info, CardInfo) else CardInfo.model_validate(card_info or {})
    out = Path(out)
    _check_unique(rows)
    out.mkdir(parents=True, exist_ok=True)
    _clear(out)
    by_split = _by_split(rows)
    written = [*write_shards(by_split, out, info.max_rows_per_shard), *write_exports(by_split, out, info)]
    shards = [shard_row(out, p, _count_rows(p)) for p in written]
    write_card(out, info, by_split, dropped, shards)
    return shards


def _count_rows(path: Path) -> int:
    if path.suffix == ".jsonl":
        return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line)
    return pq.ParquetFile(path).metadata.num_rows


# -- Harbor task folders ---------------------------------------------------------------
HARBOR_DIR = Path("exports") / "harbor"


def harbor_name(row: PoolRow) -> str:
    """The task folder's name: the task id with anything but ``[A-Za-z0-9._-]`` as ``-``."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in row.task_id)


def harbor_dockerfile(row: PoolRow, source: bytes, base_image: str | None = None) -> str | None:
    """The task's environment as a Dockerfile, rendered from the task's own ``EnvPlan``
    (``datagen.pool.harbor_env``): the runner profile's image or ``base_image``, the source
    at ``base_commit`` in ``/testbed`` as a git checkout tagged ``datagen-base``, the plan's
    install, a non-root agent. None when the profile names no image and none is given."""
    profile = get_profile(row.runner)
    plan = harbor_env.task_plan(profile, source)
    if row.env_pins:
        plan = plan.model_copy(update={"pins": row.env_pins})
    image = base_image or harbor_env.image_of(profile, plan)
    return harbor_env.render(profile, plan, image) if image else None


def harbor_image(prefix: str, row: PoolRow, dockerfile: str, source: bytes) -> str:
    """The image a task runs in when a trainer pulls instead of building:
    ``<prefix>/<repo>:env-<key>``, the key a hash of the build context (the Dockerfile
    and ``source.tar``), so tasks whose environments are the same bytes share one image."""
    digest = hashlib.sha256()
    for part in (dockerfile.encode(), source):
        digest.update(len(part).to_bytes(8, "big") + part)
    repo = re.sub(r"[^a-z0-9]+", "-", row.repo.lower()).strip("-") or "task"  # a valid path component
    return f"{prefix.rstrip('/')}/{repo}:env-{digest.hexdigest()[:16]}"


def _harbor_toml(row: PoolRow, docker_image: str | None = None) -> str:
    def q(value: str) -> str:
        return json.dumps(value, ensure_ascii=False)

    tags = ", ".join(q(t) for t in ["swe", row.runner, row.repo])
    return "\n".join([
        'version = "1.0"', "", "[metadata]", 'author_name = "datagen"', f"difficulty = {q(row.difficulty_band)}",
        'category = "software-engineering"', f"tags = [{tags}]", f"task_id = {q(row.task_id)}",
        f"instruction_id = {q(row.instruction_id)}", f"group_size = {row.group_size}", "",
        # the verifier in an environment of its own: what the agent did to its sandbox cannot reach it
        "[verifier]", "timeout_sec = 600.0", 'environment_mode = "separate"', "",
        # the Dockerfile's last USER: Harbor runs the agent as the user named here
        "[agent]", "timeout_sec = 1800.0", f"user = {q(harbor_env.AGENT_USER)}", "",
        "[environment]", *([f"docker_image = {q(docker_image)}"] if docker_image else []),
        "build_timeout_sec = 1200.0", "cpus = 1", "memory_mb = 4096", "storage_mb = 10240", "",
    ])


_HARBOR_TEST = """#!/bin/bash
# Harbor verifier: write the reward, 1 (resolved) or 0, to $LOGS_DIR/verifier/reward.txt.
# 1. a checkout whose test files or test config differ from the task's base state (edited,
#    added or deleted) is 0; 2. test files git does not show (ignored ones) are removed and
#    the tracked ones restored from the base state; 3. the graded tests run (eval.sh).
LOGS_DIR="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS_DIR/verifier"
export REPO_DIR="${REPO_DIR:-/testbed}"
here="$(cd "$(dirname "$0")" && pwd)"
reward() { echo "$1" > "$LOGS_DIR/verifier/reward.txt"; exit 0; }
cd "$REPO_DIR" || reward 0
if ! ( {guard}
); then reward 0; fi
if git rev-parse --verify -q "{base}^{commit}" >/dev/null 2>&1; then
  git ls-files -z --others --ignored --exclude-standard | grep -zE {ere} | grep -zEv {setup} \\
    | grep -zE {added} | xargs -0 -r rm -f --
  git ls-files -z | grep -zE {ere} | xargs -0 -r git checkout -q "{base}" --
fi
if bash "$here/eval.sh"; then reward 1; else reward 0; fi
"""


def harbor_test_script() -> str:
    """``tests/test.sh`` (see its comments): the test-file rule is ``sandbox.protect``'s."""
    import shlex

    from datagen.sandbox.harness.protect import ADDED_ERE, SETUP_DIRS, TEST_PATH_ERE, guard_lines

    setup = "(^|/)(" + "|".join(re.escape(d) for d in SETUP_DIRS) + ")/"
    guard = "\n".join("  " + line for line in guard_lines(BASE_TAG))
    return (_HARBOR_TEST.replace("{guard}", guard.lstrip()).replace("{base}", BASE_TAG)
            .replace("{ere}", shlex.quote(TEST_PATH_ERE)).replace("{setup}", shlex.quote(setup))
            .replace("{added}", shlex.quote(ADDED_ERE)))


_HARBOR_SOLVE = """#!/bin/bash
# The reference fix (the oracle agent): applies it to the checkout.
set -euo pipefail
cd "${REPO_DIR:-/testbed}"
git apply --whitespace=nowarn - <<'DATAGEN_PATCH_EOF'
{patch}
DATAGEN_PATCH_EOF
"""


def _source_tar(row: PoolRow) -> bytes | None:
    """The source at ``base_commit`` as a tar (``git archive``; a snapshot folder is
    tarred as it is); None when the source is not there."""
    import io
    import subprocess
    import tarfile

    src = Path(row.repo_path)
    if not src.is_dir():
        return None
    if row.base_commit:
        proc = subprocess.run(["git", "-C", str(src), "archive", "--format=tar", row.base_commit],
                              capture_output=True)
        if proc.returncode == 0:
            return proc.stdout
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(p for p in src.rglob("*") if ".git" not in p.relative_to(src).parts):
            info = tar.gettarinfo(str(path), arcname=path.relative_to(src).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if path.is_file():
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
            else:
                tar.addfile(info)
    return buf.getvalue()


def harbor_task(row: PoolRow, folder: Path, prompts: Path = PROMPTS, base_image: str | None = None,
                image_prefix: str | None = None) -> str | None:
    """Write one Harbor task folder; returns why it was skipped (no source, no image for
    its runner, a runner datagen does not know), else None. With ``image_prefix`` the
    task names its image (``harbor_image``) in ``[environment].docker_image``."""
    source = _source_tar(row)
    if source is None:
        return f"source not found: {row.repo_path}"
    try:
        dockerfile = harbor_dockerfile(row, source, base_image)
    except UserError as exc:  # a runner no profile knows
        return f"runner {row.runner!r}: {exc}"
    if dockerfile is None:
        return f"no container image for runner {row.runner!r} (its profile names none; give --base-image)"
    user = next((m.content for m in row.prompt if m.role == "user"), row.problem_statement)
    files = {
        "instruction.md": user.rstrip("\n") + "\n",
        "task.toml": _harbor_toml(row, harbor_image(image_prefix, row, dockerfile, source) if image_prefix else None),
        "environment/Dockerfile": dockerfile,
        "tests/test.sh": harbor_test_script(),
        "tests/eval.sh": eval_script(row, prompts),
        "solution/solve.sh": _HARBOR_SOLVE.replace("{patch}", row.patch.rstrip("\n")),
    }
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if rel.endswith(".sh"):
            path.chmod(0o755)
    (folder / "environment" / "source.tar").write_bytes(source)
    return None


def write_harbor(pool_dir: str | Path, out: str | Path | None = None, base_image: str | None = None,
                 image_prefix: str | None = None) -> tuple[list[Path], dict[str, str]]:
    """``exports/harbor/<task>/`` (``instruction.md``, ``task.toml``,
    ``environment/Dockerfile`` + ``source.tar``, ``tests/test.sh``, ``solution/solve.sh``)
    for every instruction of a pool folder, as SkyRL, prime-rl (verifiers) and rLLM read
    Harbor tasks; ``base_image`` (pin it by digest) replaces every runner's toolchain
    image; ``image_prefix`` (a registry and path, e.g. ``ghcr.io/org/tasks``) names each
    task's image in ``[environment].docker_image`` for trainers that pull instead of
    building (``datagen pool build-images`` builds and pushes them). Returns the folders
    written and ``{task: reason}`` of those skipped."""
    import shutil

    pool_dir = Path(pool_dir)
    root = Path(out) if out is not None else pool_dir / HARBOR_DIR
    if root.exists():
        shutil.rmtree(root)
    written, skipped, names = [], {}, set()
    for shard in sorted((pool_dir / "data").glob("*.parquet")):
        for d in pq.read_table(shard).to_pylist():
            row = PoolRow.model_validate(d)
            name = harbor_name(row)
            if name in names:
                name = f"{name}-{row.instruction_id}"
            names.add(name)
            reason = harbor_task(row, root / name, base_image=base_image, image_prefix=image_prefix)
            if reason is None:
                written.append(root / name)
            else:
                skipped[name] = reason
    return written, skipped
