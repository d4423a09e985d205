"""One module per build: wires the steps into datatrove pipelines."""
