# frozen_string_literal: true

module Ledger
  # An amount of one currency held as integer cents, so sums never drift.
  class Money
    include Comparable

    attr_reader :cents, :currency

    def self.parse(text, currency = "EUR")
      match = /\A\s*(-)?(\d+)(?:\.(\d{1,2}))?\s*\z/.match(text)
      raise ArgumentError, "not an amount: #{text.inspect}" unless match

      cents = match[2].to_i * 100 + (match[3] || "0").ljust(2, "0").to_i
      new(match[1] ? -cents : cents, currency)
    end

    def initialize(cents, currency = "EUR")
      raise ArgumentError, "cents must be an Integer" unless cents.is_a?(Integer)

      @cents = cents
      @currency = currency
    end

    def +(other)
      same_currency!(other)
      Money.new(cents + other.cents, currency)
    end

    def -(other)
      same_currency!(other)
      Money.new(cents - other.cents, currency)
    end

    # Multiplies by a number, rounding half away from zero to the cent.
    def *(factor)
      exact = cents * factor
      rounded = exact.abs.round(half: :up)
      Money.new(exact.negative? ? -rounded : rounded, currency)
    end

    def negative?
      cents.negative?
    end

    def zero?
      cents.zero?
    end

    # Splits into n parts that differ by at most one cent and add up exactly.
    def allocate(n)
      raise ArgumentError, "n must be positive" if n <= 0

      base, extra = cents.divmod(n)
      Array.new(n) { |i| Money.new(i < extra ? base + 1 : base, currency) }
    end

    def <=>(other)
      return nil unless other.is_a?(Money) && other.currency == currency

      cents <=> other.cents
    end

    def to_s
      sign = cents.negative? ? "-" : ""
      whole, frac = cents.abs.divmod(100)
      format("%s%d.%02d %s", sign, whole, frac, currency)
    end

    private

    def same_currency!(other)
      return if other.currency == currency

      raise ArgumentError, "currency mismatch: #{currency} vs #{other.currency}"
    end
  end
end
