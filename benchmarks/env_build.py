"""Env build time of the same repos with uv (shared wheel cache) vs pip (today's path), one run.

Each side builds every repo's env from the same rules plan (``python_plan``), in the
sandbox with the network on, into its own empty env cache: pip as datagen did before
(``python -m venv`` + ``ensurepip`` + ``pip install`` per step, a cache per env that is
dropped after it), uv as now (``uv venv`` + ``uv pip install``, one wheel cache shared by
all the envs of the run, starting empty). The ratio is pip seconds / uv seconds (goal > 1).
Run by hand (needs PyPI):
  PYTHONPATH=. python benchmarks/env_build.py /tmp/pyenv-repos/* [--pythons python3.12,python3.11]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.envs.python.manager import EnvManager, EnvSetupError
from datagen.sandbox.isolation.select import untrusted_sandbox


def build_all(installer: str, repos: list[Path], root: Path, pythons: list[str]) -> tuple[float, dict[str, str]]:
    """Seconds to build every repo's env with ``installer``, and each repo's outcome."""
    cfg = EnvConfig(cache_dir=str(root / installer), installer=installer, pythons=pythons,
                    test_requirements=["pytest", "coverage"])
    manager = EnvManager(cfg, untrusted_sandbox("auto"), SandboxLimits())
    outcomes = {}
    start = time.monotonic()
    for repo in repos:
        t = time.monotonic()
        try:
            manager.ensure(repo)
            outcomes[repo.name] = f"ok {time.monotonic() - t:.1f}s"
        except EnvSetupError as exc:
            outcomes[repo.name] = f"failed {time.monotonic() - t:.1f}s: {str(exc)[:80]}"
    return time.monotonic() - start, outcomes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repos", nargs="+", type=Path)
    ap.add_argument("--pythons", default="", help="comma-separated env.pythons (default: this interpreter)")
    args = ap.parse_args()
    pythons = [p for p in args.pythons.split(",") if p]
    repos = [r.resolve() for r in args.repos if r.is_dir()]
    with tempfile.TemporaryDirectory(prefix="env-bench-", dir="/tmp") as tmp:
        pip_s, pip_out = build_all("pip", repos, Path(tmp), pythons)
        uv_s, uv_out = build_all("uv", repos, Path(tmp), pythons)
    print(f"{'repo':<28} {'pip':<40} uv")
    for r in repos:
        print(f"{r.name:<28} {pip_out[r.name]:<40} {uv_out[r.name]}")
    print(f"\n{len(repos)} repos: pip {pip_s:.1f} s, uv {uv_s:.1f} s, ratio pip/uv {pip_s / uv_s:.2f}x")


if __name__ == "__main__":
    main()
