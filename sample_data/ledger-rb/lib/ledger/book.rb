# frozen_string_literal: true

module Ledger
  class InsufficientFunds < StandardError; end

  # A set of named accounts moved by balanced transfers.
  class Book
    Entry = Struct.new(:from, :to, :amount, :memo)

    attr_reader :entries

    def initialize(currency = "EUR", overdraft: 0)
      @currency = currency
      @overdraft = overdraft
      @balances = Hash.new(0)
      @entries = []
    end

    def open(name, opening_cents = 0)
      raise ArgumentError, "account exists: #{name}" if @balances.key?(name)

      @balances[name] = opening_cents
      self
    end

    def balance(name)
      raise KeyError, "no account #{name}" unless @balances.key?(name)

      Money.new(@balances[name], @currency)
    end

    def transfer(from, to, money, memo = "")
      raise ArgumentError, "amount must be positive" unless money.cents.positive?
      raise ArgumentError, "same account" if from == to

      balance(to)
      left = balance(from).cents - money.cents
      raise InsufficientFunds, "#{from} would go to #{left}" if left < -@overdraft

      @balances[from] = left
      @balances[to] += money.cents
      @entries << Entry.new(from, to, money, memo)
      self
    end

    def total
      Money.new(@balances.values.sum, @currency)
    end

    # Accounts with a balance at or above the threshold, richest first.
    def richest(threshold_cents = 0)
      kept = @balances.select { |_, cents| cents >= threshold_cents }
      kept.sort_by { |name, cents| [-cents, name] }.map(&:first)
    end

    # Net flow per account over the recorded entries: money in minus money out.
    def net_flows
      flows = Hash.new(0)
      entries.each do |entry|
        flows[entry.from] -= entry.amount.cents
        flows[entry.to] += entry.amount.cents
      end
      flows
    end
  end
end
