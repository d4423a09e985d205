"""Each language's synth tables in one place: one ``LanguageSpec`` per language, one module
per language (``base`` says what a spec holds). A new language is one module here and one
line below; nothing else in synth names a language.
"""

from __future__ import annotations

from datagen.synth.languages.base import LanguageSpec, Stub
from datagen.synth.languages.c import CPP, C
from datagen.synth.languages.go import GO
from datagen.synth.languages.java import JAVA
from datagen.synth.languages.javascript import JAVASCRIPT, TYPESCRIPT
from datagen.synth.languages.php import PHP
from datagen.synth.languages.python import PYTHON
from datagen.synth.languages.ruby import RUBY
from datagen.synth.languages.rust import RUST

SPECS: dict[str, LanguageSpec] = {s.name: s for s in (PYTHON, JAVASCRIPT, TYPESCRIPT, GO, RUST, JAVA, C, CPP,
                                                       RUBY, PHP)}
LANGS = frozenset(SPECS)  # the languages entities are read from
TABLE_LANGS = frozenset(name for name, s in SPECS.items() if s.walk == "table")  # the generic strategies'


def spec(lang: str) -> LanguageSpec:
    """The spec of ``lang``; ValueError (naming the supported ones) for another language."""
    if lang not in SPECS:
        raise ValueError(f"unsupported language {lang!r}; expected one of {sorted(SPECS)}")
    return SPECS[lang]


__all__ = ["LANGS", "SPECS", "TABLE_LANGS", "LanguageSpec", "Stub", "spec"]
