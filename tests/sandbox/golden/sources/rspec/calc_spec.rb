RSpec.describe "Calc" do
  it "adds" do
    expect(2 + 2).to eq(4)
  end

  it "adds wrong" do
    expect(2 + 2).to eq(5)
  end

  it "raises unexpectedly" do
    raise "boom"
  end

  it "is pending" do
    pending("not done")
    expect(1).to eq(2)
  end

  xit "is skipped" do
  end

  context "with a context" do
    it "works" do
      expect([1, 2]).to include(2)
    end

    [1, 2].each do |n|
      it "handles #{n}" do
        expect(n).to be < 2
      end
    end
  end

  it "adds" do
    expect(1 + 1).to eq(2)
  end
end
