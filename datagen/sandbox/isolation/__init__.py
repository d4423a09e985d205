"""Isolation: the back ends that run untrusted code (bubblewrap, plain subprocess), their
cgroup and disk limits, which folders may be a working copy, and the probe that proves what a
back end enforces (``datagen sandbox check``)."""
