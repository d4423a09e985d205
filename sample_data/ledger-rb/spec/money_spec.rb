# frozen_string_literal: true

RSpec.describe Ledger::Money do
  def eur(cents) = described_class.new(cents, "EUR")

  describe ".parse" do
    it "reads whole and fractional amounts" do
      expect(described_class.parse("12.5").cents).to eq(1250)
      expect(described_class.parse(" 3.07 ").cents).to eq(307)
      expect(described_class.parse("-4").cents).to eq(-400)
    end

    it "rejects text that is not an amount" do
      expect { described_class.parse("1.234") }.to raise_error(ArgumentError)
      expect { described_class.parse("abc") }.to raise_error(ArgumentError)
    end
  end

  it "adds and subtracts in one currency" do
    expect((eur(150) + eur(275)).cents).to eq(425)
    expect((eur(150) - eur(275)).cents).to eq(-125)
  end

  it "refuses to mix currencies" do
    expect { eur(1) + described_class.new(1, "USD") }.to raise_error(ArgumentError, /mismatch/)
  end

  it "multiplies with half-up rounding" do
    expect((eur(101) * 0.5).cents).to eq(51)
    expect((eur(-101) * 0.5).cents).to eq(-51)
    expect((eur(200) * 3).cents).to eq(600)
  end

  it "allocates without losing a cent" do
    parts = eur(1000).allocate(3)
    expect(parts.map(&:cents)).to eq([334, 333, 333])
    expect(parts.sum(&:cents)).to eq(1000)
  end

  it "rejects a non-positive allocation" do
    expect { eur(10).allocate(0) }.to raise_error(ArgumentError)
  end

  it "compares amounts" do
    expect(eur(5)).to be < eur(7)
    expect(eur(7)).to eq(eur(7))
    expect(eur(5) <=> described_class.new(5, "USD")).to be_nil
  end

  it "formats with two decimals and a sign" do
    expect(eur(123_456).to_s).to eq("1234.56 EUR")
    expect(eur(-5).to_s).to eq("-0.05 EUR")
  end

  it "knows zero and negative amounts" do
    expect(eur(0)).to be_zero
    expect(eur(-1)).to be_negative
    expect(eur(1)).not_to be_negative
  end
end
