# frozen_string_literal: true

module Ledger
  VERSION = "0.4.1"
end
