"""The grader as it runs on a cluster (`--host 0.0.0.0` and a token), reached on
127.0.0.1 only, by each framework's own request code where it installs here and by its
request shapes, quoted from its source, where it does not:

- OpenRLHF 0.11.2 (installed): ``openrlhf.utils.agent.SingleTurnAgentExecutor.
  _fetch_rewards_via_http``, aiohttp, ``ClientTimeout(total=180)``, 5 tries 1 s apart;
- slime (not on PyPI): ``slime/rollout/rm_hub/__init__.py`` ``remote_rm``: aiohttp POST of
  ``{prompt, response, label}``, ``ClientTimeout(total=120)``, ``raise_for_status``;
- NeMo-Gym: its request shapes here, beside the other clients (POST ``/seed_session``,
  ``/verify``, ``/aggregate_metrics`` ``{verify_responses}``); its own ``ServerClient``
  (nemo-gym 0.4.0 on PyPI, Python >= 3.12) drives the grader in ``test_nemo_gym.py``. Its
  client sends no auth header and does not retry a 503.

None of them sends an Authorization header: the token goes in the path, ``/t/<token>/``.
A client that closes its socket mid-grade frees the worker within 2 s; an identical
request in flight joins the running grade; the adapters wait for a place instead of 503
(a native ``/v1/grade`` is still 503 with ``Retry-After``: datagen's client retries).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import pyarrow.parquet as pq
import pytest

from tests.serve.conftest import Server, request
from tests.serve.test_grader_server import hostile
from tests.sitekit import SITE

aiohttp = pytest.importorskip("aiohttp")
pytestmark = pytest.mark.slow  # real servers and sandboxes: seconds each

TOKEN = "cluster-t0ken-7f3a"  # noqa: S105 - a test token


@pytest.fixture(scope="module")
def cluster(calc_pool, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cluster-cache")
    server = Server("grader", str(calc_pool), "--host", "0.0.0.0", "-w", "1", "--queue", "1", "--timeout-s", "30",
                    "--queue-wait-s", "120", "--set", f"env.inherit_site_packages=[{SITE}]",
                    "--set", f"env.cache_dir={cache / 'envs'}", "--set", "sandbox.limits.processes=64",
                    "--set", "sandbox.limits.memory_mb=1024",
                    extra_env={"DATAGEN_CACHE": str(cache), "DATAGEN_SERVE_TOKEN": TOKEN})
    with server:
        yield server


@pytest.fixture(scope="module")
def verl_rows(calc_pool) -> dict[str, dict]:
    return {r["extra_info"]["task_id"]: r for r in pq.read_table(calc_pool / "exports/verl/train.parquet").to_pylist()}


def base(server: Server) -> str:
    return f"http://127.0.0.1:{server.port}/t/{TOKEN}"


def health(server: Server) -> dict:
    return request(server.port, "/health")[1]


def fenced(patch: str) -> str:
    return f"Here is the fix.\n```diff\n{patch}```\n"


async def slime_remote_rm(url: str, sample: dict) -> object:
    """slime's ``remote_rm`` request, as its source does it."""
    payload = {"prompt": sample["prompt"], "response": sample["response"], "label": sample["label"]}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        async with session.post(url, json=payload) as resp:
            resp.raise_for_status()
            return await resp.json()


def test_every_client_gets_rewards_with_the_token_in_the_path(cluster, verl_rows, calc_pool):
    add, mul = verl_rows["calc__add"], verl_rows["calc__mul"]
    gold = {r["task_id"]: r["patch"] for r in pq.read_table(next((calc_pool / "data").glob("train-*"))).to_pylist()}
    # who may call: no token, a wrong one, the right one in the path or as a bearer header
    assert request(cluster.port, "/slime/remote_rm", {"label": "calc__add", "response": ""})[0] == 401
    assert request(cluster.port, f"/t/{TOKEN}x/slime/remote_rm", {"label": "calc__add", "response": ""})[0] == 401
    native = request(cluster.port, "/v1/grade", {"instance_id": "calc__add", "patch": ""}, token=TOKEN)
    assert native[0] == 200, native

    # slime, its label the pool's verl reward_model column ({style, ground_truth})
    reward = asyncio.run(slime_remote_rm(f"{base(cluster)}/slime/remote_rm", {
        "prompt": "p", "response": fenced(gold["calc__add"]), "label": add["reward_model"]}))
    assert reward == 1.0

    # OpenRLHF's own request function, the reward URL carrying the token
    try:
        from openrlhf.utils.agent import SingleTurnAgentExecutor
    except ImportError:
        pytest.skip("openrlhf not installed (.ci/run installs openrlhf==0.11.2 --no-deps)")
    executor = SingleTurnAgentExecutor(f"{base(cluster)}/openrlhf/reward")
    (answer,) = asyncio.run(executor._fetch_rewards_via_http(
        ["PROMPT" + fenced(gold["calc__mul"]), "PROMPT no diff"], ["PROMPT", "PROMPT"],
        [mul["reward_model"]["ground_truth"], "calc__add"]))
    assert answer["rewards"] == [1.0, 0.0]

    # NeMo-Gym: seed, verify, aggregate, as its resources-server protocol has them
    nemo = f"/t/{TOKEN}"
    assert request(cluster.port, f"{nemo}/seed_session", {})[:2] == (200, {})
    verified = []
    answers = ((fenced(gold["calc__add"]), {"instance_id": "calc__add"}), ("no diff", {"instance_id": "calc__mul"}))
    for text, meta in answers:
        body = {"responses_create_params": {"input": [{"role": "user", "content": "fix it"}], "metadata": meta},
                "response": {"output": [{"type": "message", "role": "assistant",
                                         "content": [{"type": "output_text", "text": text}]}]},
                "_ng_task_index": len(verified)}
        code, out, _ = request(cluster.port, f"{nemo}/verify", body, timeout=120)
        assert code == 200 and out["response"] == body["response"] and isinstance(out["reward"], float)
        verified.append(out)
    assert [(v["reward"], v["resolved"]) for v in verified] == [(1.0, True), (0.0, False)]
    code, metrics, _ = request(cluster.port, f"{nemo}/aggregate_metrics", {"verify_responses": verified})
    assert code == 200 and metrics["key_metrics"]["pass_rate"] == 0.5 and len(metrics["group_level_metrics"]) == 2
    assert TOKEN not in cluster.output()  # the token never reaches the server's log


def send_and_close(port: int, path: str, body: dict, after_s: float) -> float:
    """A client that sends a request and closes its socket ``after_s`` later, unanswered;
    returns when it closed it (``time.monotonic()``)."""
    data = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        time.sleep(after_s)
    return time.monotonic()


def wait_idle(server: Server, within_s: float, start: float) -> float:
    """Seconds from ``start`` until the server has no grade running (fails past ``within_s``)."""
    while time.monotonic() - start < within_s:
        if health(server)["active"] == 0:
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"worker still busy after {within_s} s: {health(server)}")


def test_a_client_that_hangs_up_frees_its_worker_and_identical_requests_join(cluster, calc_pool):
    slow = hostile("import time\ntime.sleep(25)\nreturn a + b")  # a grade that would take 25 s
    before = health(cluster)
    # 3 s in, the sandbox is running the tests (the environment is warm from the test before)
    closed = send_and_close(cluster.port, f"/t/{TOKEN}/slime/remote_rm", {"label": "calc__add", "response": slow},
                            3.0)
    freed = wait_idle(cluster, 2.0, closed)
    after = health(cluster)
    assert after["cancelled"] == before["cancelled"] + 1 and freed < 2.0, (after, freed)
    print(f"worker freed {freed:.2f} s after the client hung up")
    gold = pq.read_table(next((calc_pool / "data").glob("train-*"))).to_pylist()
    fix = next(r["patch"] for r in gold if r["task_id"] == "calc__add")
    code, body, _ = request(cluster.port, f"/t/{TOKEN}/v1/grade", {"instance_id": "calc__add", "patch": fix},
                            timeout=120)
    assert (code, body["status"]) == (200, "resolved")  # the task still grades (a cut-short build is not kept)

    # two identical requests at once: one grade, both answered (the patch applies to calc__add's
    # tree, so its tests run add() and the grade takes 2 s or more: the second request, 0.5 s
    # later, finds it in flight. On calc__mul's tree the patch did not apply, and that grade
    # ended in 0.4 s once the env was warm, before the second request came)
    results: list[tuple[int, object]] = []

    def call() -> None:
        code, body, _ = request(cluster.port, f"/t/{TOKEN}/slime/remote_rm",
                                {"label": "calc__add", "response": hostile("import time\ntime.sleep(2)\nreturn 0")},
                                timeout=120)
        results.append((code, body))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.5)
    for t in threads:
        t.join(120)
    assert results == [(200, 0.0), (200, 0.0)] and health(cluster)["joined"] == after["joined"] + 1


def test_adapters_wait_for_a_place_instead_of_503(cluster):
    # -w 1 --queue 1: two slow grades fill it; a native request is 503, a slime one waits its turn
    slow = [{"label": "calc__add", "response": hostile(f"import time\ntime.sleep(3)\nreturn a - b - {n}")}
            for n in range(2)]
    busy = [threading.Thread(target=request, args=(cluster.port, f"/t/{TOKEN}/slime/remote_rm", body),
                             kwargs={"timeout": 120}) for body in slow]
    for t in busy:
        t.start()
    deadline = time.monotonic() + 30
    while health(cluster)["active"] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    code, _, headers = request(cluster.port, f"/t/{TOKEN}/v1/grade", {"instance_id": "calc__mul", "patch": ""})
    assert code == 503 and int(headers["retry-after"]) >= 1
    code, body, _ = request(cluster.port, f"/t/{TOKEN}/slime/remote_rm", {"label": "calc__mul", "response": ""},
                            timeout=120)
    for t in busy:
        t.join(120)
    assert (code, body) == (200, 0.0) and health(cluster)["active"] == 0


class ByteTokenizer:
    """The policy's tokenizer, which cannot exist here (no model): ids are the UTF-8 bytes."""

    @staticmethod
    def encode(text: str) -> list[int]:
        return list(text.encode())

    @staticmethod
    def decode(ids, skip_special_tokens: bool = True) -> str:
        return bytes(int(i) for i in ids).decode()


def test_verl_reward_manager_scores_through_compute_score(cluster, verl_rows, calc_pool, monkeypatch):
    """verl 0.7.1's own reward path: ``get_custom_reward_fn`` loads ``clients.compute_score``
    by file path and ``NaiveRewardManager`` calls it on a decoded batch, as verl's trainer
    does; the grader is reached with the token in the URL."""
    pytest.importorskip("verl.workers.reward_manager.naive", reason="verl 0.7.1 (.ci/run installs it --no-deps)")
    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager.naive import NaiveRewardManager

    from datagen.serve import clients

    monkeypatch.setenv(clients.GRADER_URL_ENV, base(cluster))
    score_fn = get_custom_reward_fn(OmegaConf.create(
        {"reward": {"custom_reward_function": {"path": clients.__file__, "name": "compute_score"}}}))
    gold = {r["task_id"]: r["patch"] for r in pq.read_table(next((calc_pool / "data").glob("train-*"))).to_pylist()}
    rows = [verl_rows["calc__add"], verl_rows["calc__mul"]]
    answers = [fenced(gold["calc__add"]), "I could not find the bug."]
    prompts = [ByteTokenizer.encode("fix it: ") for _ in rows]
    responses = [ByteTokenizer.encode(a) for a in answers]
    width_p, width_r = max(map(len, prompts)), max(map(len, responses))
    p = torch.tensor([[0] * (width_p - len(x)) + x for x in prompts])  # prompts left-padded, responses right
    r = torch.tensor([x + [0] * (width_r - len(x)) for x in responses])
    mask = torch.tensor([[0] * (width_p - len(a)) + [1] * len(a) + [1] * len(b) + [0] * (width_r - len(b))
                         for a, b in zip(prompts, responses, strict=True)])
    batch = DataProto.from_dict(
        tensors={"prompts": p, "responses": r, "attention_mask": mask},
        non_tensors={"data_source": np.array([x["data_source"] for x in rows], dtype=object),
                     "reward_model": np.array([x["reward_model"] for x in rows], dtype=object),
                     "extra_info": np.array([dict(x["extra_info"]) for x in rows], dtype=object)})
    out = NaiveRewardManager(ByteTokenizer(), num_examine=0, compute_score=score_fn)(batch, return_dict=True)
    rewards = out["reward_tensor"].sum(dim=-1).tolist()
    assert rewards == [1.0, 0.0] and out["reward_extra_info"]["status"] == ["resolved", "patch_failed"]
