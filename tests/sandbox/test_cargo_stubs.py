"""A crate whose ``cargo fetch`` fails only for crates its tests never compile (an optional
dependency off by default, a dev-dependency only the benches use) goes on with stand-ins, and
its task replays outside datagen the same way; a crate whose tests compile an unreachable
crate still fails, saying the registry was unreachable."""

from __future__ import annotations

import pytest

from datagen.config.sandbox import EnvConfig, MirrorsConfig, SandboxLimits
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.harness.profiles._cargo_stubs import parse_pin, stand_ins
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from tests import tools
from tests.conftest import write_tree
from tests.sandbox.test_profiles_replay_more import replay, validated_task

# crates.io replaced by a registry that does not exist: fetch fails here as on any machine
NOWHERE = EnvConfig(mirrors=MirrorsConfig(cargo="sparse+https://crates.mirror.invalid/index/"))

MANIFEST = """\
[package]
name = "tally"
version = "0.1.0"
edition = "2021"

[dependencies]
serde = { version = "1.0.130", optional = true, features = ["derive"] }
memchr = { version = "2", optional = true }

[features]
default = ["std"]
std = []
serde = ["dep:serde", "serde?/std"]
fast = ["memchr"]

[dev-dependencies]
criterion = "0.5"

[[bench]]
name = "sum"
harness = false
"""
TREE = {
    "Cargo.toml": MANIFEST,
    "src/lib.rs": "/// The sum of the values.\npub fn total(xs: &[i64]) -> i64 {\n    xs.iter().sum()\n}\n\n"
                  "/// The largest value, 0 for none.\npub fn peak(xs: &[i64]) -> i64 {\n"
                  "    xs.iter().copied().max().unwrap_or(0)\n}\n",
    "tests/tally.rs": "#[test]\nfn totals() {\n    assert_eq!(tally::total(&[1, 2, 3]), 6);\n}\n\n"
                      "#[test]\nfn peaks() {\n    assert_eq!(tally::peak(&[4, 9, 2]), 9);\n}\n",
    "benches/sum.rs": "use criterion::{criterion_group, criterion_main, Criterion};\n\n"
                      "fn bench(c: &mut Criterion) {\n    c.bench_function(\"total\", |b| b.iter(|| tally::total(&[1])));\n}\n\n"
                      "criterion_group!(benches, bench);\ncriterion_main!(benches);\n",
}
LOCK = """\
version = 3

[[package]]
name = "criterion"
version = "0.5.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "f2b12d017a929603d80db1831cd3a24082f8137ce19c69e6447f54f5fc8d692f"
"""


def test_the_crates_a_test_build_never_compiles_are_told_apart(tmp_path):
    src = write_tree(tmp_path / "crate", {**TREE, "Cargo.lock": LOCK})
    stubs, needed = stand_ins(src)
    assert needed == []
    by_name = {s.name: s for s in stubs}
    assert set(by_name) == {"serde", "memchr", "criterion"}
    assert by_name["serde"].version == "1.0.130" and by_name["serde"].features == {"derive", "std"}
    assert by_name["criterion"].version == "0.5.1"  # the lockfile's: the lock must still fit
    assert by_name["memchr"].version == "2.0.0"
    assert parse_pin(by_name["serde"].pin()) == by_name["serde"]
    # the default feature turning memchr on, and a test naming criterion: both are compiled
    src2 = write_tree(tmp_path / "crate2", {**TREE, "Cargo.toml": MANIFEST.replace('default = ["std"]',
                                                                                    'default = ["std", "fast"]'),
                                            "src/fast.rs": "pub use memchr::memchr;\n",
                                            "tests/timing.rs": "use criterion::black_box;\n"})
    stubs2, needed2 = stand_ins(src2)
    assert {s.name for s in stubs2} == {"serde"}
    assert needed2 == ["criterion (dev-dependencies, named in the code the tests compile)",
                       "memchr (dependencies, named in the code the tests compile)"]


@tools.needs("cargo")
def test_a_crate_goes_on_with_stand_ins_and_its_task_replays_with_them(tmp_path):
    src = write_tree(tmp_path / "fixture" / "tally", TREE)
    bug = ("src/lib.rs", "xs.iter().sum()", "xs.iter().skip(1).sum()")
    task = validated_task(tmp_path, "cargo", src, bug, NOWHERE)
    assert "tests/tally.rs::totals" in task.FAIL_TO_PASS and "tests/tally.rs::peaks" in task.PASS_TO_PASS
    assert "stand-ins" in task.setup_script and "criterion==0.5.0[]" in task.setup_script
    assert "crates.mirror.invalid" not in task.setup_script + task.eval_script
    # outside datagen: no mirror, no crates.io here; the scripts make the same stand-ins
    replay(tmp_path, tmp_path / "out" / task.repo_path, task.base_commit, task.setup_script, task.eval_script,
           task.patch)


@tools.needs("cargo")
def test_a_crate_whose_tests_compile_an_unreachable_crate_still_fails_plainly(tmp_path):
    from tests.sandbox.conftest import _bwrap_or_skip

    src = write_tree(tmp_path / "crate", {**TREE, "tests/timing.rs": "use criterion::black_box;\n"})
    config = NOWHERE.model_copy(update={"cache_dir": str(tmp_path / "envs")})
    with pytest.raises(EnvSetupError) as err:
        ensure_env(get_profile("cargo"), src, config, _bwrap_or_skip(),
                   SandboxLimits(timeout_s=120, processes=256))
    assert err.value.reason == "registry_unreachable: crates.mirror.invalid"


@tools.needs("cargo")
def test_the_env_record_holds_the_plan_as_built_with_its_stand_ins(tmp_path):
    """What ``repo_envs.plan`` shows: the fallback the env took and the crates it stood in for."""
    import json

    from tests.sandbox.conftest import _bwrap_or_skip

    src = write_tree(tmp_path / "crate", TREE)
    config = NOWHERE.model_copy(update={"cache_dir": str(tmp_path / "envs")})
    env = ensure_env(get_profile("cargo"), src, config, _bwrap_or_skip(), SandboxLimits(timeout_s=300, processes=256),
                     record=tmp_path / "record.json")
    plan = json.loads((tmp_path / "record.json").read_text())["plan"]
    assert plan["fallback"] == env.plan.fallback == "stubs"
    assert sorted(plan["pins"]) == ["criterion==0.5.0[]", "memchr==2.0.0[]", "serde==1.0.130[derive,std]"]
