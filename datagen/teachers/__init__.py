"""Teacher models behind one protocol: OpenAI-compatible endpoints (async), vLLM offline,
local transformers models; with a content-hash request cache and call accounting.

    from datagen.teachers import TeacherRequest, make_teacher
    teacher = make_teacher(recipe.teacher, run_id=run_id)
    results = teacher.generate([TeacherRequest(messages=[{"role": "user", "content": "hi"}])])
    manifest.insert(TeacherCall, teacher.take_calls())
"""

from __future__ import annotations

from typing import Any

from datagen.config.teacher import TeacherConfig
from datagen.teachers.base import BaseTeacher, Call, Teacher, parse_json_answer
from datagen.teachers.cache import RequestCache
from datagen.teachers.types import (
    Message,
    SamplingParams,
    TeacherRequest,
    TeacherResult,
    Usage,
    request_key,
)


def make_teacher(config: TeacherConfig, **kwargs: Any) -> BaseTeacher:
    """The backend the recipe names. Heavy imports (torch, vllm) happen in its ``load()``."""
    if config.backend == "openai":
        from datagen.teachers.openai_backend import OpenAITeacher

        return OpenAITeacher(config, **kwargs)
    if config.backend == "vllm":
        from datagen.teachers.vllm_backend import VllmTeacher

        return VllmTeacher(config, **kwargs)
    from datagen.teachers.transformers_backend import TransformersTeacher

    return TransformersTeacher(config, **kwargs)


__all__ = [
    "BaseTeacher", "Call", "Message", "RequestCache", "SamplingParams", "Teacher",
    "TeacherConfig", "TeacherRequest", "TeacherResult", "Usage", "make_teacher",
    "parse_json_answer", "request_key",
]
