"""``datagen teacher ping|run`` and ``datagen job slurm`` against the real local server."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from datagen.cli.app import app
from tests import tools
from tests.teachers.helpers import MODEL

FAKE_SERVER = Path(__file__).with_name("fake_server.py")


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def teacher_flags(s, tmp_path) -> list[str]:
    return ["--base-url", s.base_url, "--model", MODEL,
            "--set", f"teacher.cache_dir={tmp_path / 'cache'}",
            "--set", "teacher.api_key_env=DATAGEN_TEST_KEY",
            "--set", "teacher.backoff_base_s=0.001", "--set", "teacher.timeout_s=2"]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_ping_ok_and_failures(server):
    with server() as s:
        res = cli("teacher", "ping", "--base-url", s.base_url, "--model", MODEL)
        assert res.exit_code == 0 and "ok:" in res.output and MODEL in res.output
        res = cli("teacher", "ping", "--base-url", s.base_url, "--model", "other")
        assert res.exit_code == 1 and "does not serve 'other'" in res.output
        port = s.port
    res = cli("teacher", "ping", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", MODEL,
              "--timeout", "1")
    assert res.exit_code == 1 and "connection error" in res.output


def test_run_native_lines_in_order_with_errors_inline(server, tmp_path):
    schema = {"type": "object", "required": ["a"]}
    src = write_jsonl(tmp_path / "in.jsonl", [
        {"id": "q1", "messages": [{"role": "user", "content": "one"}], "metadata": {"k": 1}},
        "{not json",
        {"id": "q3", "messages": [{"role": "user", "content": "three"}], "tools": []},
        {"id": "q4", "messages": [{"role": "user", "content": "four"}], "json_schema": schema},
        {"id": "q5", "messages": [{"role": "user", "content": "five"}], "n": 2, "seed": 9},
        {"id": "q6", "messages": [{"role": "user", "content": "six"}]},
    ])
    out = tmp_path / "res" / "out.jsonl"
    with server(script={"four": '{"a": 4}'}, faults={"six": ["500"] * 9}) as s:
        res = cli("teacher", "run", str(src), "--out", str(out), *teacher_flags(s, tmp_path),
                  "--set", "teacher.max_retries=1")
        assert res.exit_code == 1, res.output  # lines failed: like `datagen validate`
        assert "3 of 6 lines failed" in res.output
    rows = read_jsonl(out)
    assert [r["line"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert rows[0]["texts"] == ["answer to: one"] and rows[0]["metadata"] == {"k": 1}
    assert rows[1]["status"] == "error" and "bad input line 2" in rows[1]["error"]
    assert rows[2]["status"] == "error" and rows[2]["id"] == "q3"  # readable: keeps its id
    assert "unsupported field(s) in line: tools" in rows[2]["error"]
    assert rows[3]["parsed"] == [{"a": 4}]
    assert len(rows[4]["texts"]) == 2 and rows[4]["id"] == "q5"
    assert rows[5]["status"] == "error" and "http 500" in rows[5]["error"]
    con = duckdb.connect(str(out.parent / "manifest.duckdb"), read_only=True)
    calls = con.execute("SELECT custom_id, status, attempts, cached FROM teacher_calls "
                        "ORDER BY custom_id").fetchall()
    assert calls == [("q1", "ok", 1, False), ("q4", "ok", 1, False), ("q5", "ok", 1, False),
                     ("q6", "error", 2, False)]
    assert con.execute("SELECT command, status FROM runs").fetchall() == [
        ("teacher run", "finished")]


def test_batch_api_lines_round_trip_and_rerun_is_free(server, tmp_path, monkeypatch):
    monkeypatch.setenv("DATAGEN_TEST_KEY", "sk-never-written-42")
    body = {"model": "whatever-the-file-says", "max_completion_tokens": 50,
            "messages": [{"role": "user", "content": "hi"}]}
    src = write_jsonl(tmp_path / "batch.jsonl", [
        {"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": body},
        {"custom_id": "b", "method": "POST", "url": "/v1/embeddings", "body": {"input": "x"}},
        {"custom_id": "c", "method": "POST", "url": "/v1/completions",
         "body": {"prompt": "p q", "max_tokens": 5, "logprobs": 1}},
    ])
    out = tmp_path / "out.jsonl"
    with server() as s:
        assert cli("teacher", "run", str(src), "-o", str(out), *teacher_flags(s, tmp_path)
                   ).exit_code == 1  # line b cannot be served
        first = out.read_bytes()
        s.reset_counts()
        assert cli("teacher", "run", str(src), "-o", str(out), *teacher_flags(s, tmp_path)
                   ).exit_code == 1
        assert s.total_calls == 0 and out.read_bytes() == first  # same bytes, from the cache
    a, b, c = read_jsonl(out)
    assert set(a) == {"id", "custom_id", "response", "error"} and a["error"] is None
    assert a["custom_id"] == "a" and a["response"]["status_code"] == 200
    resp = a["response"]["body"]
    assert resp["object"] == "chat.completion" and resp["model"] == MODEL
    assert resp["choices"][0]["message"] == {"role": "assistant", "content": "answer to: hi"}
    assert resp["usage"]["total_tokens"] == sum(resp["usage"][k] for k in
                                                ("prompt_tokens", "completion_tokens"))
    assert b["response"] is None and "/v1/embeddings" in b["error"]["message"]
    assert b["custom_id"] == "b"
    assert c["response"]["body"]["choices"][0]["logprobs"]["tokens"] == ["answer", "to:", "p", "q"]
    leaked = [p for p in tmp_path.rglob("*") if p.is_file()
              and b"sk-never-written-42" in p.read_bytes()]
    assert leaked == []


def test_run_needs_an_existing_file(tmp_path):
    res = cli("teacher", "run", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o.jsonl"))
    assert res.exit_code != 0


def test_run_refuses_to_overwrite_its_input(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [{"messages": [{"role": "user", "content": "x"}]}])
    before = src.read_bytes()
    proc = subprocess.run(  # through main(): a user error exits 2 with one line
        [sys.executable, "-m", "datagen.cli.app", "teacher", "run", str(src),
         "-o", str(tmp_path / "." / "in.jsonl"), "--base-url", "http://127.0.0.1:9/v1",
         "-m", MODEL], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "is the input file" in proc.stderr
    assert src.read_bytes() == before


def test_run_empty_file_says_so(server, tmp_path):
    src = tmp_path / "e.jsonl"
    src.write_text("\n")
    out = tmp_path / "out" / "e.jsonl"
    with server() as s:
        res = cli("teacher", "run", str(src), "-o", str(out), *teacher_flags(s, tmp_path))
        assert s.total_calls == 0
    assert res.exit_code == 0 and "has no request lines" in res.output and "()" not in res.output
    assert out.read_text() == ""


def test_unseeded_samples_stay_independent_seeded_ones_share(server, tmp_path):
    def line(i, **kw):
        return {"id": f"s{i}", "messages": [{"role": "user", "content": "same"}], **kw}

    src = write_jsonl(tmp_path / "in.jsonl", [
        *(line(i, temperature=0.8) for i in range(3)),      # 3 independent samples
        *(line(i, temperature=0.8, seed=7) for i in range(3, 5)),  # one seeded answer, shared
        *(line(i) for i in range(5, 7)),                    # greedy: one answer, shared
    ])
    out = tmp_path / "out.jsonl"
    with server() as s:
        res = cli("teacher", "run", str(src), "-o", str(out), *teacher_flags(s, tmp_path))
        assert res.exit_code == 0, res.output
        assert s.total_calls == 3 + 1 + 1
        s.reset_counts()
        assert cli("teacher", "run", str(src), "-o", str(out), *teacher_flags(s, tmp_path)
                   ).exit_code == 0
        assert s.total_calls == 0  # each sample found again under its own id
    rows = read_jsonl(out)
    assert [r["cached"] for r in rows[:5]] == [True] * 5
    assert [r["id"] for r in rows] == [f"s{i}" for i in range(7)]


def test_slurm_script_shape():
    res = cli("job", "slurm", "--gpus", "4", "-p", "gpu", "--set", "teacher.model=org/Model-7B",
              "--set", "teacher.vllm.max_model_len=32768", "--",
              "datagen", "build", "tasks", "--recipe", "r.yaml")
    assert res.exit_code == 0, res.output
    script = res.output
    assert script.startswith("#!/bin/bash\n#SBATCH ")
    for line in ("#SBATCH --gpus-per-node=4", "#SBATCH --partition=gpu", "trap stop_servers EXIT"):
        assert line in script
    assert "vllm serve org/Model-7B" in script and "--tensor-parallel-size 4" in script
    assert "--max-model-len 32768" in script and "--enable-prefix-caching" in script
    assert 'datagen build tasks --recipe r.yaml --set teacher.backend=openai' in script
    assert '--set "teacher.base_url=http://127.0.0.1:${PORT}/v1" --set "teacher.base_urls=[]"' in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    assert cli("job", "slurm", "--gpus", "2").exit_code != 0  # no command given


@tools.needs("curl")  # the script polls /health with curl
@pytest.mark.slow
def test_slurm_script_runs_end_to_end(tmp_path):
    """Run the printed script with bash: a stand-in `vllm` (vLLM cannot run here) serves the
    fake server; the build command really runs; the trap stops the server."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    vllm = bin_dir / "vllm"
    vllm.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import os, sys
        args = sys.argv[1:]
        open({str(tmp_path / "vllm.args")!r}, "w").write(" ".join(args))
        open({str(tmp_path / "vllm.pid")!r}, "w").write(str(os.getpid()))
        port = args[args.index("--port") + 1]
        os.execv(sys.executable, [sys.executable, {str(FAKE_SERVER)!r}, "--port", port,
                                  "--model", args[1]])
        """))
    datagen = bin_dir / "datagen"
    datagen.write_text(f"#!/bin/sh\nexec {sys.executable} -m datagen.cli.app \"$@\"\n")
    for f in (vllm, datagen):
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    src = write_jsonl(tmp_path / "in.jsonl",
                      [{"id": "x", "messages": [{"role": "user", "content": "hello"}]}])
    res = cli("job", "slurm", "--gpus", "2", "--set", f"teacher.model={MODEL}", "--",
              "datagen", "teacher", "run", str(src), "--out", str(tmp_path / "out.jsonl"),
              "--set", f"teacher.cache_dir={tmp_path / 'cache'}")
    assert res.exit_code == 0, res.output
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "DATAGEN_HEALTH_POLL": "0.2",
           "DATAGEN_VLLM_PORT": str(_free_port()), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(["bash", "-c", res.output], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "ok: http://127.0.0.1:" in proc.stdout
    assert read_jsonl(tmp_path / "out.jsonl")[0]["texts"] == ["answer to: hello"]
    assert "--tensor-parallel-size 2" in (tmp_path / "vllm.args").read_text()
    pid = int((tmp_path / "vllm.pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def _free_port(span: int = 1) -> int:
    """A port P with P .. P+span-1 all free now (the script's replica k listens on P+k: a
    port the OS picked alone may have a busy neighbour, and replica 1 then died at start)."""
    import socket

    for _ in range(200):
        socks = [socket.socket()]
        try:
            socks[0].bind(("127.0.0.1", 0))
            port = socks[0].getsockname()[1]
            if port + span - 1 > 65535:
                continue
            for k in range(1, span):
                socks.append(socket.socket())
                socks[-1].bind(("127.0.0.1", port + k))
            return port
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError(f"no {span} free ports in a row")


@tools.needs("curl")  # the script polls /health with curl
@pytest.mark.slow
def test_slurm_replicas_split_the_gpus_and_the_requests(tmp_path):
    """--gpus 2 --tp 1: two stand-in `vllm serve` replicas, one GPU each, on two ports; the
    command's requests are spread over both."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    root = Path(__file__).resolve().parents[2]
    vllm = bin_dir / "vllm"
    vllm.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import os, signal, sys, time
        sys.path.insert(0, {str(root)!r})
        from tests.teachers.fake_server import FakeOpenAI
        args = sys.argv[1:]
        port = int(args[args.index("--port") + 1])
        with open({str(tmp_path / "vllm.args")!r}, "a") as f:
            f.write(os.environ.get("CUDA_VISIBLE_DEVICES", "") + " " + " ".join(args) + "\\n")
        server = FakeOpenAI(port=port, models=(args[1],)).__enter__()
        def stop(*_):
            open({str(tmp_path)!r} + f"/calls.{{port}}", "w").write(str(server.total_calls))
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        while True:
            time.sleep(0.1)
        """))
    datagen = bin_dir / "datagen"
    datagen.write_text(f"#!/bin/sh\nexec {sys.executable} -m datagen.cli.app \"$@\"\n")
    for f in (vllm, datagen):
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    src = write_jsonl(tmp_path / "in.jsonl", [{"id": f"p{i}", "messages": [{"role": "user", "content": f"q{i}"}]}
                                              for i in range(16)])
    res = cli("job", "slurm", "--gpus", "2", "--tp", "1", "--set", f"teacher.model={MODEL}", "--",
              "datagen", "teacher", "run", str(src), "--out", str(tmp_path / "out.jsonl"),
              "--set", f"teacher.cache_dir={tmp_path / 'cache'}")
    assert res.exit_code == 0, res.output
    port = _free_port(2)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "DATAGEN_HEALTH_POLL": "0.2",
           "DATAGEN_VLLM_PORT": str(port), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(["bash", "-c", res.output], cwd=tmp_path, env=env, text=True, capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert len(read_jsonl(tmp_path / "out.jsonl")) == 16
    launched = sorted((tmp_path / "vllm.args").read_text().splitlines())
    assert [line.split()[0] for line in launched] == ["0", "1"]
    assert all("--tensor-parallel-size 1" in line for line in launched)
    calls = {p: int((tmp_path / f"calls.{p}").read_text()) for p in (port, port + 1)}
    assert sum(calls.values()) >= 16 and all(n > 0 for n in calls.values()), calls
    assert cli("job", "slurm", "--gpus", "4", "--tp", "3", "--", "true").exit_code != 0
