from __future__ import annotations

import pytest

from datagen.crawl.language import detect_language
from datagen.crawl.license import detect_license, is_license_file
from tests.conftest import GPL, MIT


@pytest.mark.parametrize("path,lang", [
    ("a/b.py", "python"), ("x.js", "javascript"), ("x.mjs", "javascript"), ("x.ts", "typescript"),
    ("x.tsx", "typescript"), ("main.go", "go"), ("lib.rs", "rust"), ("A.java", "java"), ("x.c", "c"),
    ("x.h", "c"), ("x.cpp", "cpp"), ("x.hpp", "cpp"), ("x.cs", "csharp"), ("x.rb", "ruby"),
    ("Rakefile", "ruby"), ("x.php", "php"), ("x.sh", "shell"), ("README.md", "markdown"),
    ("c.yaml", "yaml"), ("c.yml", "yaml"), ("p.json", "json"), ("Cargo.toml", "toml"), ("x.xyz", None),
])
def test_language_by_name(path, lang):
    assert detect_language(path) == lang


@pytest.mark.parametrize("head,lang", [
    (b"#!/usr/bin/env python3\nprint(1)\n", "python"), (b"#!/bin/bash\necho\n", "shell"),
    (b"#!/usr/bin/env node\n", "javascript"), (b"#!/usr/bin/ruby -w\n", "ruby"), (b"no shebang\n", None),
])
def test_language_by_shebang(head, lang):
    assert detect_language("bin/tool", head) == lang


def test_license_detection():
    assert detect_license(MIT) == "MIT"
    assert detect_license(GPL) == "GPL-3.0"
    assert detect_license("Apache License\nVersion 2.0, January 2004\n") == "Apache-2.0"
    assert detect_license("// SPDX-License-Identifier: BSD-3-Clause\n") == "BSD-3-Clause"
    assert detect_license("All rights reserved.") is None


COMMON = "/usr/share/common-licenses"


@pytest.mark.parametrize("name,spdx", [
    ("GPL-3", "GPL-3.0"), ("GPL-2", "GPL-2.0"), ("LGPL-2", "LGPL-2.0"), ("LGPL-2.1", "LGPL-2.1"),
    ("LGPL-3", "LGPL-3.0"), ("MPL-2.0", "MPL-2.0"), ("Apache-2.0", "Apache-2.0"), ("BSD", "BSD-3-Clause"),
    ("CC0-1.0", "CC0-1.0"),
])
def test_license_detection_on_full_license_texts(name, spdx):
    """Full texts quote each other (GPL-3 names the AGPL, MPL-2 the GPL family)."""
    import os

    path = os.path.join(COMMON, name)
    if not os.path.isfile(path):
        pytest.skip(f"{path} not on this machine")
    with open(path, encoding="utf-8", errors="replace") as fh:
        assert detect_license(fh.read()) == spdx


@pytest.mark.parametrize("name, found", [
    ("LICENSE", True), ("LICENSE.md", True), ("COPYING", True), ("MIT-LICENSE", True), ("mit-license.txt", True),
    ("LICENSE-APACHE", True), ("README", False), ("BSD-LICENSE-notes", False), ("licenses.py", False),
])
def test_license_file_names(name, found):
    """``MIT-LICENSE`` (the Rails / RubyGems convention) is a license file too."""
    assert is_license_file(name) is found
