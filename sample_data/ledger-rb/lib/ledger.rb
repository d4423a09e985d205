# frozen_string_literal: true

require_relative "ledger/version"
require_relative "ledger/money"
require_relative "ledger/book"
require_relative "ledger/loan"
