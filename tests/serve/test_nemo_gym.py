"""NeMo-Gym's own client code drives `datagen serve grader`: ``nemo_gym.server_utils.
ServerClient`` (nemo-gym 0.4.0, in ``.venv-trainers/nemo-gym``: Python >= 3.12) posts
``/seed_session``, ``/verify`` and ``/aggregate_metrics`` with its request models
(``BaseSeedSessionRequest``, ``BaseVerifyRequest``, ``AggregateMetricsRequest``) and reads
the answers with its response models (``BaseVerifyResponse``, ``AggregateMetrics``), on a
real grader on 127.0.0.1 that requires a token (in the path: its client sends no header)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from datagen.pool.exports import write_pool
from datagen.pool.rows import rows_from_tasks
from tests.serve.conftest import Server, calc_tasks
from tests.sitekit import SITE
from tests.trainer_venvs import run_script, trainer_python, version_of

pytestmark = pytest.mark.slow  # a real server and sandboxed test runs

TOKEN = "nemo-t0ken-5c1e"  # noqa: S105 - a test token

NEMO_CLIENT = r"""
import asyncio, json, sys
from omegaconf import OmegaConf
from nemo_gym.base_resources_server import (BaseSeedSessionRequest, BaseSeedSessionResponse, BaseVerifyRequest,
                                            BaseVerifyResponse)
from nemo_gym.config_types import AggregateMetrics, AggregateMetricsRequest, BaseServerConfig
from nemo_gym.global_config import TASK_INDEX_KEY_NAME
from nemo_gym.server_utils import (GlobalAIOHTTPAsyncClientConfig, ServerClient, get_response_json,
                                   raise_for_status, set_global_aiohttp_client)

port, token, cases = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
# the resources server as a NeMo-Gym config names it: host and port (no path, no headers)
config = OmegaConf.create({"datagen_grader": {"resources_servers": {"datagen": {"host": "127.0.0.1", "port": port}}}})
client = ServerClient(head_server_config=BaseServerConfig(host="127.0.0.1", port=port), global_config_dict=config)
prefix = f"/t/{token}"


def answer(text):
    return {"id": "resp_1", "created_at": 0.0, "model": "policy", "object": "response", "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [],
            "output": [{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}]}


async def main():
    set_global_aiohttp_client(GlobalAIOHTTPAsyncClientConfig())
    out = {}
    r = await client.post("datagen_grader", f"{prefix}/seed_session", json=BaseSeedSessionRequest())
    await raise_for_status(r)
    out["seed"] = BaseSeedSessionResponse.model_validate(await get_response_json(r)).model_dump()
    r = await client.post("datagen_grader", "/seed_session", json=BaseSeedSessionRequest())
    out["seed_without_token"] = r.status
    verified = []
    for index, (instance_id, text) in enumerate(cases):
        request = BaseVerifyRequest.model_validate({
            "responses_create_params": {"input": [{"role": "user", "content": "fix it"}],
                                        "metadata": {"instance_id": instance_id}},
            "response": answer(text)})
        r = await client.post("datagen_grader", f"{prefix}/verify", json=request)
        await raise_for_status(r)
        body = await get_response_json(r)
        parsed = BaseVerifyResponse.model_validate(body)
        verified.append({**body, TASK_INDEX_KEY_NAME: index})
        out.setdefault("verify", []).append({"reward": parsed.reward, "mask_sample": body.get("mask_sample", False),
                                             "status": body["datagen"]["status"],
                                             "failure_kind": body.get("failure_kind")})
    r = await client.post("datagen_grader", f"{prefix}/aggregate_metrics",
                          json=AggregateMetricsRequest(verify_responses=verified))
    await raise_for_status(r)
    out["metrics"] = AggregateMetrics.model_validate(await get_response_json(r)).model_dump()
    print(json.dumps(out))


asyncio.run(main())
"""


@pytest.fixture(scope="module")
def nemo_pool(tmp_path_factory) -> Path:
    """The two calc tasks plus one whose source is gone (its grade is an infra error)."""
    root = tmp_path_factory.mktemp("nemo")
    tasks = calc_tasks(root)
    first = json.loads(tasks.read_text().splitlines()[0])
    gone = {**first, "instance_id": "calc__gone", "repo_path": "no-such-repo"}
    tasks.write_text(tasks.read_text() + json.dumps(gone) + "\n")
    write_pool(rows_from_tasks(tasks, group_size=4), [], root / "pool")
    return root / "pool"


@pytest.fixture(scope="module")
def grader(nemo_pool, tmp_path_factory):
    cache = tmp_path_factory.mktemp("nemo-cache")
    server = Server("grader", str(nemo_pool), "-w", "1", "--queue", "4", "--timeout-s", "60",
                    "--set", f"env.inherit_site_packages=[{SITE}]", "--set", f"env.cache_dir={cache / 'envs'}",
                    "--set", "sandbox.limits.processes=64", "--set", "sandbox.limits.memory_mb=1024",
                    extra_env={"DATAGEN_CACHE": str(cache), "DATAGEN_SERVE_TOKEN": TOKEN})
    with server:
        yield server


def test_nemo_gym_server_client_gets_rewards(nemo_pool, grader):
    trainer_python("nemo-gym")
    assert version_of("nemo-gym", "nemo-gym") == "0.4.0"
    gold = {r["task_id"]: r["patch"] for shard in sorted((nemo_pool / "data").glob("*.parquet"))
            for r in pq.read_table(shard).to_pylist()}
    cases = [["calc__add", f"The fix:\n```diff\n{gold['calc__add']}```\n"],  # gold: resolved
             ["calc__mul", ""],                                               # empty answer: unresolved
             ["calc__gone", gold["calc__add"]]]                               # no source: infra error
    proc = run_script("nemo-gym", NEMO_CLIENT, str(grader.port), TOKEN, json.dumps(cases), timeout=400)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["seed"] == {} and out["seed_without_token"] == 401
    verify = out["verify"]
    assert [(v["reward"], v["status"], v["mask_sample"]) for v in verify] == [
        (1.0, "resolved", False), (0.0, "patch_failed", False), (0.0, "infra_error", True)]
    assert verify[2]["failure_kind"] == "datagen:infra_error"
    metrics = out["metrics"]
    assert metrics["key_metrics"]["pass_rate"] == 0.5  # the masked sample left out
    assert metrics["agent_metrics"]["masked"] == 1 and len(metrics["group_level_metrics"]) == 3
    assert TOKEN not in grader.output()
