"""Could CPython's own compiler stand in for tree-sitter in the syntax score of Python?

The crawl's syntax step parses every Python file with tree-sitter (``syntax_error_ratio``).
A cheaper exact check would let clean files skip that parse. This measures, on the same
``.py`` files of this interpreter's site-packages, in one process, interleaved:

- tree-sitter-python ``Parser.parse`` (what the syntax step runs);
- ``compile(text, path, "exec", ast.PyCF_ONLY_AST)`` (CPython's parser, no bytecode);
- ``compile(text, path, "exec")`` (parser + bytecode);

and how often the verdicts agree (clean for tree-sitter = no ERROR or MISSING node; clean
for CPython = no SyntaxError). CPython only helps if it is faster *and* never calls a file
clean that tree-sitter would score above 0.

    python benchmarks/python_parse.py --mb 20
"""

from __future__ import annotations

import argparse
import ast
import site
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datagen.crawl.grammars import ts_parser  # noqa: E402


def corpus(mb: float) -> list[tuple[str, str]]:
    out, total = [], 0
    for sp in site.getsitepackages():
        for f in sorted(Path(sp).rglob("*.py")):
            try:
                text = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            out.append((str(f), text))
            total += len(text)
            if total >= mb * 1e6:
                return out
    return out


def cpython_clean(path: str, text: str, flags: int) -> bool:
    try:
        compile(text, path, "exec", flags, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # invalid escape sequences in old code
    files = corpus(args.mb)
    mb = sum(len(t.encode()) for _, t in files) / 1e6
    parser = ts_parser("python")
    sides = {
        "tree-sitter parse": lambda p, t: not parser.parse(t.encode("utf-8", "surrogatepass")).root_node.has_error,
        "compile (AST only)": lambda p, t: cpython_clean(p, t, ast.PyCF_ONLY_AST),
        "compile (bytecode)": lambda p, t: cpython_clean(p, t, 0),
    }
    best: dict[str, float] = {}
    verdicts: dict[str, list[bool]] = {}
    for _ in range(args.rounds):
        for name, fn in sides.items():
            t0 = time.process_time()
            verdicts[name] = [fn(p, t) for p, t in files]
            best[name] = min(best.get(name, float("inf")), time.process_time() - t0)
    print(f"corpus: {len(files)} files, {mb:.1f} MB; best of {args.rounds} interleaved rounds, CPU seconds")
    ts = verdicts["tree-sitter parse"]
    for name, secs in best.items():
        agree = sum(a == b for a, b in zip(ts, verdicts[name], strict=True))
        only = sum(c and not t for t, c in zip(ts, verdicts[name], strict=True))
        print(f"{name:20s} {secs:6.2f} s  {mb / secs:5.1f} MB/s  verdict agrees with tree-sitter on "
              f"{agree}/{len(files)} files; clean for it but not for tree-sitter: {only}")


if __name__ == "__main__":
    main()
