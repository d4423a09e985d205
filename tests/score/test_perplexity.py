"""Perplexity scorers on a tiny model trained here: the convention, the ordering, and the
three back ends agreeing (vLLM through a stand-in module, the endpoint through a real
local HTTP server)."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

from datagen.config.score import PerplexityConfig
from datagen.errors import UserError
from datagen.score import get_scorer, perplexity, scorer_name
from datagen.score.ppl_transformers import length_buckets
from tests.score.lm import IN_DISTRIBUTION
from tests.score.lm_server import CompletionsServer

SHARED = [
    IN_DISTRIBUTION,
    "def push(self, x):\n    self.items.append(x)\n",
    "x",  # one token: no perplexity
    "",
    "class Stack:\n    def pop(self):\n        return self.items.pop()\n" * 3,
    "return a - b",
]


def scrambled(text: str, seed: int = 0) -> str:
    """The same characters in a random order."""
    chars = list(text)
    random.Random(seed).shuffle(chars)
    return "".join(chars)


def cfg(model: Path | str, **kw) -> PerplexityConfig:
    return PerplexityConfig(model=str(model), **kw)


def test_convention_leaves_out_the_first_token():
    assert perplexity([None, math.log(0.5), math.log(0.5)]) == pytest.approx(2.0)
    assert perplexity([-3.0, math.log(0.25)]) == pytest.approx(4.0)  # entry 0 ignored
    assert math.isnan(perplexity([None])) and math.isnan(perplexity([]))


def test_scorer_names_are_versioned_per_backend_and_model(tmp_path):
    assert scorer_name(cfg(tmp_path / "models" / "tiny-lm/")) == "ppl_v1/transformers/tiny-lm"
    named = cfg("x", backend="endpoint", base_url="http://h/v1", model_id="qwen", name_version="ppl_v2")
    assert scorer_name(named) == "ppl_v2/endpoint/qwen"


def test_config_refuses_what_cannot_run():
    with pytest.raises(ValueError, match="model is required"):
        PerplexityConfig()
    with pytest.raises(ValueError, match="base_url is required"):
        PerplexityConfig(model="m", backend="endpoint")
    with pytest.raises(UserError, match="disabled"):
        get_scorer(PerplexityConfig(enabled=False))


@pytest.mark.parametrize(("lengths", "budget", "expected"), [
    ([5, 1, 9, 3], 10, [[2], [0, 3], [1]]),  # 9 alone; 5 and 3 (2 rows x 5 = 10); then 1
    ([4, 4, 4, 4], 8, [[0, 1], [2, 3]]),
    ([50, 2], 10, [[0], [1]]),  # a text longer than the budget is a batch of its own
    ([], 10, []),
])
def test_length_buckets(lengths, budget, expected):
    got = length_buckets(lengths, budget)
    assert got == expected
    assert sorted(i for b in got for i in b) == list(range(len(lengths)))
    for bucket in got:
        assert len(bucket) == 1 or len(bucket) * max(lengths[i] for i in bucket) <= budget


def test_length_buckets_pad_only_within_one_bucket():
    """Sorted by length and cut greedily, a text is padded only to the longest text of its
    own bucket, the buckets' length ranges do not overlap (so all padding together is at
    most one bucket's rows times the whole length range), and a bucket closes only when
    the next text would break the budget."""
    rng = random.Random(0)
    for budget in (64, 512, 4096):
        lengths = [max(2, int(rng.lognormvariate(math.log(60), 0.9))) for _ in range(500)]
        buckets = length_buckets(lengths, budget)
        spans = [(max(lengths[i] for i in b), min(lengths[i] for i in b)) for b in buckets]
        assert all(low >= high_next for (_, low), (high_next, _) in zip(spans, spans[1:]))
        waste = sum(top * len(b) - sum(lengths[i] for i in b) for b, (top, _) in zip(buckets, spans, strict=True))
        assert waste <= max(len(b) for b in buckets) * (max(lengths) - min(lengths))
        for b, (top, _) in zip(buckets, spans, strict=True):
            assert len(b) * top <= budget or len(b) == 1
        for b, (top, _) in zip(buckets[:-1], spans, strict=False):
            assert (len(b) + 1) * top > budget  # full: the next text did not fit


def test_weights_are_bfloat16_on_cuda_float32_on_cpu():
    torch = pytest.importorskip("torch")
    from datagen.score.ppl_transformers import _dtype

    assert _dtype(torch, "auto", "cuda:0") is torch.bfloat16
    assert _dtype(torch, "auto", "cpu") is torch.float32


def test_in_distribution_scores_lower_than_scrambled(tiny_lm):
    scorer = get_scorer(cfg(tiny_lm))
    texts = [IN_DISTRIBUTION, scrambled(IN_DISTRIBUTION), "def add(a, b):\n    return a + b\n",
             scrambled("def add(a, b):\n    return a + b\n", 1)]
    ppl = scorer.score(texts)
    assert ppl[0] < ppl[1] / 3 and ppl[2] < ppl[3]
    assert all(p > 1 for p in ppl)


def test_transformers_batches_give_the_same_scores_in_input_order(tiny_lm):
    texts = SHARED + [scrambled(IN_DISTRIBUTION, s)[: 20 + 30 * s] for s in range(4)]
    one_each = get_scorer(cfg(tiny_lm, batch_tokens=1)).score(texts)
    batched = get_scorer(cfg(tiny_lm, batch_tokens=4096)).score(texts)
    for a, b in zip(one_each, batched, strict=True):
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-4)
    assert math.isnan(batched[2]) and math.isnan(batched[3])


def test_max_length_scores_only_the_first_tokens(tiny_lm):
    scorer = get_scorer(cfg(tiny_lm, max_length=8))
    scorer.load()
    ids = scorer.encode([IN_DISTRIBUTION])[0]
    assert len(ids) == 8
    prefix = scorer.tokenizer.decode(ids)
    full = get_scorer(cfg(tiny_lm, max_length=None))
    assert scorer.score([IN_DISTRIBUTION]) == pytest.approx(full.score([prefix]), rel=1e-5)


def test_three_backends_agree(tiny_lm, standin_vllm):
    hf = get_scorer(cfg(tiny_lm, model_id="tiny", max_length=40)).score(SHARED)
    vl_scorer = get_scorer(cfg(tiny_lm, backend="vllm", model_id="tiny", max_length=40))
    vl = vl_scorer.score(SHARED)
    assert vl_scorer.llm.engine_kwargs["enable_prefix_caching"] is False
    with CompletionsServer(str(tiny_lm)) as server:
        ep_scorer = get_scorer(cfg("tiny-scorer", backend="endpoint", base_url=server.base_url,
                                   model_id="tiny", max_length=40, api_key_env=None))
        ep = ep_scorer.score(SHARED)
    body = server.requests[0]
    assert (body["echo"], body["logprobs"], body["max_tokens"]) == (True, 1, 1)
    assert len(server.requests) == len([t for t in SHARED if t])  # no request for ""
    assert {hf_name := "ppl_v1/transformers/tiny", vl_scorer.name, ep_scorer.name} == {
        hf_name, "ppl_v1/vllm/tiny", "ppl_v1/endpoint/tiny"}
    for text, a, b, c in zip(SHARED, hf, vl, ep, strict=True):
        if len(text) <= 1:
            assert math.isnan(a) and math.isnan(b) and math.isnan(c), text
            continue
        assert b == pytest.approx(a, rel=1e-3) and c == pytest.approx(a, rel=1e-3), text


def test_missing_vllm_gives_the_install_hint(tiny_lm, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm raises ImportError
    with pytest.raises(UserError, match=r"pip install 'datagen\[vllm\]'"):
        get_scorer(cfg(tiny_lm, backend="vllm")).score(["a b c"])
