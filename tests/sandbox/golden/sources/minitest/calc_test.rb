require "minitest/autorun"

class CalcTest < Minitest::Test
  def test_adds
    assert_equal 4, 2 + 2
  end

  def test_adds_wrong
    assert_equal 5, 2 + 2
  end

  def test_raises
    raise "boom"
  end

  def test_skipped
    skip "later"
  end
end

module Outer
  class InnerTest < Minitest::Test
    def test_inner_ok
      assert true
    end
  end
end

describe "Spec style" do
  it "works in spec style" do
    _(1 + 1).must_equal 2
  end
end
