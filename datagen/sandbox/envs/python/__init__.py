"""Python environments: ``plan`` (rules from the repo's own files, no network), ``sources``
(readers of its dependency files), ``manager`` (builds and reuses one env per plan with uv),
``docker`` (the plan as a Dockerfile)."""
