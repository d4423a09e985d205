#!/usr/bin/env python3
"""Send a burst of SET/GET commands to a running kvstore and report latency.

Usage: scripts/loadgen.py [HOST:PORT] [COUNT]
"""

from __future__ import annotations

import socket
import statistics
import sys
import time

from textfmt import indent, split_csv, truncate


def run(address: tuple[str, int], count: int) -> list[float]:
    timings = []
    with socket.create_connection(address) as conn:
        reader = conn.makefile("r", encoding="utf-8")
        for i in range(count):
            command = f"SET key{i} value{i}\n" if i % 2 == 0 else f"GET key{i - 1}\n"
            started = time.perf_counter()
            conn.sendall(command.encode("utf-8"))
            reply = reader.readline().strip()
            timings.append(time.perf_counter() - started)
            if reply.startswith("ERR"):
                raise SystemExit(f"server error: {truncate(reply, 80)}")
    return timings


def report(timings: list[float]) -> str:
    ms = sorted(t * 1000 for t in timings)
    lines = [
        f"requests: {len(ms)}",
        f"mean:     {statistics.fmean(ms):.3f} ms",
        f"p50:      {ms[len(ms) // 2]:.3f} ms",
        f"p99:      {ms[int(len(ms) * 0.99) - 1]:.3f} ms",
    ]
    return indent("\n".join(lines))


def main(argv: list[str]) -> int:
    host, _, port = (argv[1] if len(argv) > 1 else "127.0.0.1:7070").partition(":")
    count = int(argv[2]) if len(argv) > 2 else 1000
    print(f"target: {', '.join(split_csv(host))}:{port}")
    print(report(run((host, int(port)), count)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
