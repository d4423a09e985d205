# frozen_string_literal: true

RSpec.describe Ledger::Loan do
  let(:loan) { described_class.new(120_000, 0.06, 12) }

  it "computes the annuity payment" do
    expect(loan.payment_cents).to eq(10_328)
  end

  it "splits a zero-rate loan evenly, rounding up" do
    expect(described_class.new(1_000, 0, 3).payment_cents).to eq(334)
  end

  it "pays the loan off exactly in the last month" do
    rows = loan.schedule
    expect(rows.size).to eq(12)
    expect(rows.last.remaining).to eq(0)
    expect(rows.first.interest).to eq(600)
  end

  it "adds up the interest" do
    expect(loan.total_interest_cents).to eq(loan.schedule.sum(&:payment) - 120_000)
    expect(loan.total_interest_cents).to be_between(3_900, 4_000)
  end

  it "finds the month the debt falls below a level" do
    expect(loan.month_below(60_000)).to eq(7)
    expect(loan.month_below(-1)).to be_nil
  end

  it "validates its terms" do
    expect { described_class.new(100, 0.1, 0) }.to raise_error(ArgumentError)
    expect { described_class.new(100, -0.1, 3) }.to raise_error(ArgumentError)
  end
end
