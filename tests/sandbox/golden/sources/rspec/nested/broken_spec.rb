require "does_not_exist"
RSpec.describe "Broken" do
  it "never loads" do
  end
end
