"""Per-example line coverage of an RSpec suite (Ruby's ``Coverage``), and what the feature
family makes of it: two classes with a method of the same name are told apart by the spec
files that run them, which a reach by names cannot do."""

from __future__ import annotations

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from datagen.synth.entities import extract_entities
from datagen.synth.reach import coverage_reach, entity_id, static_reach
from tests.conftest import write_tree
from tests.sitekit import SITE

SHAPES = """\
module Shapes
  class Square
    def initialize(side)
      @side = side
    end

    def call
      @side * @side
    end
  end

  class Circle
    def initialize(radius)
      @radius = radius
    end

    def call
      3 * @radius * @radius
    end
  end
end
"""
TREE = {
    "lib/shapes.rb": SHAPES,
    # the helper loads the code before any example (and before datagen's hook file)
    ".rspec": "--require spec_helper\n",
    "spec/spec_helper.rb": 'require_relative "../lib/shapes"\n',
    "spec/square_spec.rb": "RSpec.describe Shapes::Square do\n"
                           "  it \"has an area\" do\n    expect(described_class.new(2).call).to eq(4)\n  end\n"
                           "  it \"is wrong here\" do\n    expect(described_class.new(3).call).to eq(10)\n  end\nend\n",
    "spec/circle_spec.rb": "RSpec.describe Shapes::Circle do\n"
                           "  it \"has an area\" do\n    expect(described_class.new(1).call).to eq(3)\n  end\nend\n",
}


def test_each_example_gets_the_lines_it_ran_and_the_feature_groups_are_spec_files(tmp_path):
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {why}")
    profile = get_profile("rspec")
    if (missing := profile.missing_tool()) is not None:
        pytest.skip(missing.reason)
    src = write_tree(tmp_path / "src", TREE)
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=180, processes=256)
    env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE]),
                     sandbox, limits)
    (tmp_path / "scratch").mkdir()
    base = measure_baseline(SuiteRunner("rspec", src, sandbox, limits, env, tmp_path / "scratch"), 1, True)
    assert base.reason is None, base.detail
    square, circle = "spec/square_spec.rb::Shapes::Square has an area", "spec/circle_spec.rb::Shapes::Circle has an area"
    assert base.stable == sorted([square, circle])
    lines = base.line_tests["lib/shapes.rb"]
    assert lines[8] == [square]  # Square#call's body: only the example that passed through it
    assert lines[18] == [circle]
    assert 1 not in lines and 2 not in lines  # load time (the module and class lines) is no example's
    assert set(base.line_tests) <= {"lib/shapes.rb", "spec/spec_helper.rb", "spec/square_spec.rb",
                                    "spec/circle_spec.rb"}  # the repo's files only: no gem's, no hook's

    entities = extract_entities("lib/shapes.rb", SHAPES, "ruby")
    calls = {e.qualname: entity_id(e) for e in entities if e.name == "call"}
    reach = coverage_reach(base, entities, profile.test_group)
    assert reach[calls["Shapes.Square.call"]] == {"spec/square_spec.rb"}
    assert reach[calls["Shapes.Circle.call"]] == {"spec/circle_spec.rb"}
    # by names alone both spec files reach both methods called ``call``
    texts = {p: (src / p).read_text() for p in TREE}
    by_name = static_reach(entities, texts, ["spec/circle_spec.rb", "spec/square_spec.rb"], {".rb": "ruby"})
    assert by_name[calls["Shapes.Square.call"]] == {"spec/square_spec.rb", "spec/circle_spec.rb"}
