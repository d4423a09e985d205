# frozen_string_literal: true

require_relative "lib/ledger/version"

Gem::Specification.new do |spec|
  spec.name = "ledger"
  spec.version = Ledger::VERSION
  spec.summary = "Money in integer cents, double-entry accounts and loan schedules"
  spec.authors = ["The ledger authors"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.0"
  spec.files = Dir["lib/**/*.rb"]
  spec.add_development_dependency "rspec", "~> 3.12"
end
