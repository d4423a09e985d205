"""How a sandboxed stage splits its repos between datatrove ranks."""

from __future__ import annotations

from datagen.runtime.repo_stage import repo_share

REPOS = ["zlib", "attrs", "numpy", "click", "requests"]


def test_every_repo_goes_to_exactly_one_rank_whatever_the_order_given():
    for world in (1, 2, 3, 5, 8):
        shares = [repo_share(REPOS, r, world) for r in range(world)]
        assert sorted(sum(shares, [])) == sorted(REPOS)
        assert shares == [repo_share(list(reversed(REPOS)) + ["numpy"], r, world) for r in range(world)]


def test_a_repo_keeps_its_rank_by_name():
    assert repo_share(REPOS, 0, 5) == ["attrs"] and repo_share(REPOS, 4, 5) == ["zlib"]
    assert repo_share(REPOS, 1, 2) == ["click", "requests"]
