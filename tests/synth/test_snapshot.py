"""What a task's snapshot holds: every tracked file of a git input, even one a ``.gitignore``
pattern matches (git ignores only untracked files); in a plain folder such a file is not
repository content. Real git, real listing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from datagen.config.cpt import CrawlConfig
from datagen.crawl.rules import CrawlRules
from datagen.crawl.sources import list_repo, open_repo
from datagen.synth.snapshot import snapshot_files


def _tree(root: Path) -> Path:
    (root / "cmake").mkdir(parents=True)
    (root / ".gitignore").write_text("config.h*\n")  # autotools' generated header, libyaml's pattern
    (root / "cmake" / "config.h.in").write_text("#define VERSION \"@V@\"\n")  # cmake's template
    (root / "config.h").write_text("/* generated */\n")
    (root / "yaml.c").write_text("int f(void) { return 1; }\n")
    return root


def test_a_tracked_file_under_an_ignore_pattern_is_in_the_snapshot(tmp_path):
    root = _tree(tmp_path / "lib")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", ".gitignore", "yaml.c"], check=True)
    subprocess.run([*git, "add", "-f", "cmake/config.h.in"], check=True)  # tracked despite the pattern
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    rules = CrawlRules.from_config(CrawlConfig())

    as_git = [f.path for f in snapshot_files(list_repo(open_repo(str(root), root, "lib"), rules))]
    assert as_git == [".gitignore", "cmake/config.h.in", "yaml.c"]  # config.h is untracked: not in HEAD

    (root / ".git").rename(root / "dot-git")  # the same files as a plain folder
    as_dir = [f.path for f in snapshot_files(list_repo(open_repo(str(root), root, "lib"), rules))]
    assert "cmake/config.h.in" not in as_dir and "config.h" not in as_dir and "yaml.c" in as_dir
