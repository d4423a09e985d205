# frozen_string_literal: true

module Ledger
  # A fixed-rate loan repaid in equal monthly instalments (an annuity).
  class Loan
    Row = Struct.new(:month, :payment, :interest, :principal, :remaining)

    attr_reader :principal_cents, :annual_rate, :months

    def initialize(principal_cents, annual_rate, months)
      raise ArgumentError, "months must be positive" unless months.positive?
      raise ArgumentError, "rate must not be negative" if annual_rate.negative?

      @principal_cents = principal_cents
      @annual_rate = annual_rate
      @months = months
    end

    def monthly_rate
      annual_rate / 12.0
    end

    def payment_cents
      return (principal_cents.to_f / months).ceil if annual_rate.zero?

      r = monthly_rate
      factor = (1 + r)**months
      (principal_cents * r * factor / (factor - 1)).round
    end

    # The month-by-month schedule; the last payment absorbs rounding.
    def schedule
      remaining = principal_cents
      (1..months).map do |month|
        interest = (remaining * monthly_rate).round
        payment = month == months ? remaining + interest : payment_cents
        principal = payment - interest
        remaining -= principal
        Row.new(month, payment, interest, principal, remaining)
      end
    end

    def total_interest_cents
      schedule.sum(&:interest)
    end

    # The first month after which at most `cents` remain owed, or nil.
    def month_below(cents)
      row = schedule.find { |r| r.remaining <= cents }
      row&.month
    end
  end
end
