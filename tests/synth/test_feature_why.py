"""The feature family says why it proposed nothing for a repo, and it chooses functions whose
stubs compile: a C++ ``constexpr`` function (or a Rust ``const fn``) that a constant
expression calls breaks the build once its body is a trap, so it is never stubbed, and the
others make the feature. The C++ check compiles the stubbed header for real."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.synth.entities import extract_entities
from datagen.synth.families.feature import FeatureSize, feature_proposal
from datagen.synth.reach import entity_id
from datagen.synth.source import Source
from datagen.synth.stubs import stub_edit

HEADER = """#pragma once
#include <string>

namespace clampx {

constexpr int clamp(int v, int lo, int hi) {
    if (v < lo) return lo;
    if (v > hi) return hi;
    return v;
}

constexpr int span(int lo, int hi) {
    int d = hi - lo;
    return d < 0 ? -d : d;
}

inline std::string bar(int v, int width) {
    std::string out;
    for (int i = 0; i < width; i++) out += i < v ? '#' : '.';
    return out;
}

inline int parse_level(const std::string& s) {
    int n = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        n = n * 10 + (c - '0');
    }
    return clamp(n, 0, 10);
}

}  // namespace clampx
"""
# the tests: constant expressions over the constexpr functions, runtime checks over the others
TEST = """#include "clampx.hpp"
static_assert(clampx::clamp(12, 0, 9) == 9, "clamp");
static_assert(clampx::span(3, 1) == 2, "span");
int main() { return clampx::bar(2, 4) == "##.." && clampx::parse_level("7") == 7 ? 0 : 1; }
"""


def _entities():
    return [e for e in extract_entities("clampx.hpp", HEADER, "cpp") if e.kind in ("function", "method")]


def test_constexpr_functions_are_never_stubbed():
    src = Source.parse("clampx.hpp", HEADER, "cpp")
    stubbable = {e.qualname for e in _entities() if stub_edit(src, e) is not None}
    assert {"clampx.bar", "clampx.parse_level"} <= stubbable or {"bar", "parse_level"} <= stubbable, stubbable
    assert not any(name.endswith(("clamp", "span")) for name in stubbable)
    rust = "pub const fn double(x: u32) -> u32 {\n    x * 2\n}\n\npub fn triple(x: u32) -> u32 {\n    x * 3\n}\n"
    rs = Source.parse("src/lib.rs", rust, "rust")
    assert [e.qualname for e in extract_entities("src/lib.rs", rust, "rust")
            if e.kind == "function" and stub_edit(rs, e) is not None] == ["triple"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (apt-get install g++)")
def test_the_feature_takes_the_functions_whose_stubs_compile(tmp_path: Path):
    """The group reaches the constexpr functions too (``parse_level`` calls ``clamp``): the
    feature is the runtime functions alone, and the stubbed header still compiles with the
    constant expressions of the tests (a trap in ``clamp`` would fail them)."""
    ents = _entities()
    reach = {entity_id(e): {"t.runtime"} for e in ents}
    found, why = feature_proposal("clampx", ents, {"clampx.hpp": HEADER}, reach, 4, FeatureSize((4, 400), (1, 40)), 0)
    assert why == "" and found
    stubbed = {eid.rsplit("::", 1)[1] for eid in found[0].entity.split(";")}
    assert stubbed and not any(name.endswith(("clamp", "span")) for name in stubbed), stubbed
    (tmp_path / "clampx.hpp").write_text(found[0].changes["clampx.hpp"])
    (tmp_path / "t.cpp").write_text(TEST)
    built = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-o", "t", "t.cpp"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr


def test_a_repo_without_a_feature_says_why():
    ents = _entities()
    texts = {"clampx.hpp": HEADER}
    size = FeatureSize((4, 400), (1, 40))
    assert "no share of the budget" in feature_proposal("r", ents, texts, {"x": {"g"}}, 0, size, 0)[1]
    assert "no test group reaches a function" in feature_proposal("r", ents, texts, {}, 4, size, 0)[1]
    only_constexpr = {entity_id(e): {"t.a"} for e in ents if e.qualname.endswith(("clamp", "span"))}
    found, why = feature_proposal("r", ents, texts, only_constexpr, 4, size, 0)
    assert found == [] and "reach 2 functions" in why and "still compile (constexpr" in why
    found, why = feature_proposal("r", ents, texts, {entity_id(e): {"t.a"} for e in ents}, 4,
                                  FeatureSize((300, 400), (1, 40)), 0)
    assert found == [] and "300-400 changed lines" in why and "synth.feature_lines" in why
