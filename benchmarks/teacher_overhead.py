"""Client overhead of the openai teacher backend against raw ``openai.AsyncOpenAI`` calls.

Both clients send the same N chat requests with the same concurrency to the local fake
server (its own process, instant answers), so the difference is what datagen adds per
request: request keys, retry plumbing, result records, accounting; and, in the cached
rows, the request cache (cold: every answer written; warm: every answer read, no calls).

    python benchmarks/teacher_overhead.py [--requests 2000] [--concurrency 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openai

from datagen.config.teacher import TeacherConfig
from datagen.teachers import TeacherRequest, make_teacher

SERVER = Path(__file__).resolve().parent.parent / "tests" / "teachers" / "fake_server.py"
MODEL = "tiny-teacher"


def prompts(n: int) -> list[str]:
    return [f"write a docstring for function number {i}" for i in range(n)]


def clocked(fn, *args) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) of one call: the server runs elsewhere,
    so CPU time is the client's own cost even when the server is the bottleneck."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


async def raw_openai(base_url: str, texts: list[str], concurrency: int) -> None:
    """The baseline: what a hand-written asyncio loop over the openai client costs."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
    sem = asyncio.Semaphore(concurrency)

    async def one(text: str) -> str:
        async with sem:
            resp = await client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": text}], max_tokens=64,
                temperature=0.0)
            return resp.choices[0].message.content or ""

    answers = await asyncio.gather(*(one(t) for t in texts))
    await client.close()
    assert len(answers) == len(texts)


def run_raw(base_url: str, texts: list[str], concurrency: int) -> None:
    asyncio.run(raw_openai(base_url, texts, concurrency))


def datagen_teacher(base_url: str, texts: list[str], concurrency: int, cache: str | None) -> None:
    cfg = TeacherConfig(model=MODEL, base_url=base_url, max_concurrency=concurrency,
                        cache_dir=cache, sampling={"max_tokens": 64})
    reqs = [TeacherRequest(messages=[{"role": "user", "content": t}]) for t in texts]
    results = make_teacher(cfg).generate(reqs)
    assert all(r.status == "ok" for r in results), "benchmark server must not fail"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per row")
    args = parser.parse_args()

    server = subprocess.Popen([sys.executable, str(SERVER), "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        base_url = f"http://127.0.0.1:{int(server.stdout.readline())}/v1"
        texts = prompts(args.requests)
        asyncio.run(raw_openai(base_url, texts[:200], args.concurrency))  # warm up both sides
        rows: dict[str, tuple[float, float]] = {}
        c = args.concurrency
        for _ in range(args.repeat):
            measured = [("raw openai.AsyncOpenAI (baseline)", clocked(run_raw, base_url, texts, c)),
                        ("datagen teacher, cache off",
                         clocked(datagen_teacher, base_url, texts, c, None))]
            with tempfile.TemporaryDirectory() as tmp:
                measured += [("datagen teacher, cache cold (writes)",
                              clocked(datagen_teacher, base_url, texts, c, tmp)),
                             ("datagen teacher, cache warm (no calls)",
                              clocked(datagen_teacher, base_url, texts, c, tmp))]
            for name, t in measured:
                rows[name] = min(rows.get(name, (float("inf"), 0.0)), t)
    finally:
        server.terminate()
        server.wait()

    base_wall, base_cpu = rows["raw openai.AsyncOpenAI (baseline)"]
    n = args.requests
    print(f"{n} chat requests, concurrency {args.concurrency}, best of {args.repeat}; "
          "local fake server in its own process")
    print(f"{'client':40} {'wall s':>7} {'req/s':>7} {'wall/base':>9} "
          f"{'client CPU ms/req':>17} {'CPU/base':>8}")
    for name, (wall, cpu) in rows.items():
        print(f"{name:40} {wall:7.3f} {n / wall:7.0f} {wall / base_wall:8.2f}x "
              f"{1000 * cpu / n:17.3f} {cpu / base_cpu:7.2f}x")


if __name__ == "__main__":
    main()
