# frozen_string_literal: true

RSpec.describe Ledger::Book do
  subject(:book) { described_class.new.open("alice", 10_000).open("bob", 500).open("carol") }

  def eur(cents) = Ledger::Money.new(cents)

  it "reports opening balances" do
    expect(book.balance("alice").cents).to eq(10_000)
    expect(book.balance("carol").cents).to eq(0)
  end

  it "refuses to open an account twice" do
    expect { book.open("bob") }.to raise_error(ArgumentError)
  end

  it "raises for an unknown account" do
    expect { book.balance("dave") }.to raise_error(KeyError)
  end

  context "when transferring" do
    it "moves money and keeps the total" do
      book.transfer("alice", "bob", eur(2_500), "rent")
      expect(book.balance("alice").cents).to eq(7_500)
      expect(book.balance("bob").cents).to eq(3_000)
      expect(book.total.cents).to eq(10_500)
    end

    it "records an entry per transfer" do
      book.transfer("alice", "bob", eur(1)).transfer("bob", "carol", eur(2))
      expect(book.entries.map(&:to)).to eq(%w[bob carol])
    end

    it "refuses to overdraw" do
      expect { book.transfer("bob", "carol", eur(501)) }.to raise_error(Ledger::InsufficientFunds)
    end

    it "allows emptying an account exactly" do
      book.transfer("bob", "carol", eur(500))
      expect(book.balance("bob")).to be_zero
    end

    it "allows an overdraft up to the limit" do
      lenient = described_class.new(overdraft: 100).open("a").open("b")
      lenient.transfer("a", "b", eur(100))
      expect(lenient.balance("a").cents).to eq(-100)
      expect { lenient.transfer("a", "b", eur(1)) }.to raise_error(Ledger::InsufficientFunds)
    end

    it "rejects non-positive amounts and self transfers" do
      expect { book.transfer("alice", "bob", eur(0)) }.to raise_error(ArgumentError)
      expect { book.transfer("alice", "alice", eur(5)) }.to raise_error(ArgumentError)
    end
  end

  it "ranks the richest accounts" do
    expect(book.richest).to eq(%w[alice bob carol])
    expect(book.richest(500)).to eq(%w[alice bob])
  end

  it "sums net flows per account" do
    book.transfer("alice", "bob", eur(300)).transfer("bob", "carol", eur(100))
    expect(book.net_flows).to eq("alice" => -300, "bob" => 200, "carol" => 100)
  end
end
