"""The vllm backend. vLLM cannot run here (no GPU, not installed): the back end's own code
runs against the stand-in ``vllm`` module (tests/standin, the tiny model behind vLLM's
offline API) in test_vllm_standin.py; the GPU test runs a real vLLM engine where one exists."""

from __future__ import annotations

import importlib.util

import pytest

from datagen.config.teacher import TeacherConfig
from datagen.errors import UserError
from datagen.teachers import TeacherRequest, make_teacher

HAS_VLLM = importlib.util.find_spec("vllm") is not None


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(HAS_VLLM, reason="vllm is installed")
def test_missing_vllm_gives_the_install_hint(tmp_path):
    teacher = make_teacher(TeacherConfig(backend="vllm", model="m", cache_dir=None))
    with pytest.raises(UserError, match=r"pip install 'datagen\[vllm\]'"):
        teacher.generate([TeacherRequest(prompt="x")])


@pytest.mark.gpu
@pytest.mark.skipif(not (HAS_VLLM and _cuda()), reason="needs vllm and a CUDA GPU")
def test_vllm_offline_generates_and_caches(tiny_model, tmp_path):
    template = tmp_path / "chat.jinja"
    template.write_text("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                        "assistant:")
    cfg = TeacherConfig(backend="vllm", model=str(tiny_model), cache_dir=str(tmp_path / "c"),
                        vllm={"gpu_memory_utilization": 0.2, "max_model_len": 256,
                              "chat_template": str(template)})
    reqs = [TeacherRequest(prompt="def add(a, b):", sampling={"max_tokens": 8}),
            TeacherRequest(messages=[{"role": "user", "content": "class Stack:"}],
                           sampling={"max_tokens": 8}, n=2, seed=1)]
    results = make_teacher(cfg).generate(reqs)
    assert [r.status for r in results] in (["ok", "ok"], ["truncated", "truncated"],
                                           ["ok", "truncated"], ["truncated", "ok"])
    assert len(results[1].texts) == 2 and results[0].usage.completion_tokens <= 8
    again = make_teacher(cfg).generate(reqs)
    assert all(r.cached for r in again)
