"""Package mirrors from the recipe (``env.mirrors``) written into environments, and the
words for a setup that failed because a registry could not be reached.

Every ecosystem's installer is pointed at the mirror the way it reads one: variables for
uv / pip / npm / pnpm / yarn / corepack / go, a source replacement in the env's
``CARGO_HOME/config.toml`` for cargo, a ``settings.xml`` mirror for Maven. A setup that
fails on a name that does not resolve or a connection that is refused is recorded as
``registry_unreachable: <registry>`` (crates.io, proxy.golang.org, Maven Central, ...), so
the report says it is the machine's reach, not the repo, that failed.
"""

from __future__ import annotations

import hashlib
import json
import re
from xml.sax.saxutils import escape

from datagen.config.sandbox import MirrorsConfig


def mirror_env(m: MirrorsConfig) -> dict[str, str]:
    """Variables that send the installers that read them to the mirrors."""
    env: dict[str, str] = {}
    if m.pypi:
        env |= {"UV_DEFAULT_INDEX": m.pypi, "UV_INDEX_URL": m.pypi, "PIP_INDEX_URL": m.pypi}
    if m.npm:
        env |= {"npm_config_registry": m.npm, "COREPACK_NPM_REGISTRY": m.npm.rstrip("/"),
                "YARN_NPM_REGISTRY_SERVER": m.npm, "YARN_REGISTRY": m.npm}
    if m.goproxy:
        env["GOPROXY"] = m.goproxy
    if m.gosumdb:
        env["GOSUMDB"] = m.gosumdb
    return env


def mirrors_key(m: MirrorsConfig) -> str:
    """What the mirrors add to an env's cache key ('' when none is set: keys stay as they were)."""
    return json.dumps(m.model_dump(), sort_keys=True) if m.any() else ""


def keyed(key: str, m: MirrorsConfig) -> str:
    """``key`` with the mirrors mixed in (unchanged when none is set)."""
    extra = mirrors_key(m)
    return key if not extra else hashlib.sha256(f"{key}\0{extra}".encode()).hexdigest()[:16]


def cargo_config(url: str) -> str:
    """A cargo ``config.toml`` replacing crates.io with ``url`` (sparse+https:// or a git index)."""
    return (f'[source.crates-io]\nreplace-with = "datagen-mirror"\n\n'
            f'[source.datagen-mirror]\nregistry = {json.dumps(url)}\n')


def maven_settings(url: str) -> str:
    """A Maven ``settings.xml`` that sends every repository request to ``url``."""
    return ("<settings>\n  <mirrors>\n    <mirror>\n      <id>datagen-mirror</id>\n      <mirrorOf>*</mirrorOf>\n"
            f"      <url>{escape(url)}</url>\n    </mirror>\n  </mirrors>\n</settings>\n")


# Phrases installers print when a host cannot be reached (name, if the phrase holds it).
_UNREACHABLE = [
    re.compile(r"Could not resolve host(?:name)?\b[^\n]*?(?:host: |: )([\w.\-]+\.[a-z]{2,})", re.I),  # curl, cargo
    re.compile(r"lookup ([\w.\-]+\.[a-z]{2,})(?: on [\d.:\[\]]+)?: (?:no such host|server misbehaving)"),  # go
    re.compile(r"\b(?:ENOTFOUND|EAI_AGAIN)\b\s*([\w.\-]+\.[a-z]{2,})?"),  # npm, node
    re.compile(r"(?:UnknownHostException|Unknown host|Name or service not known)[: ]*([\w.\-]+\.[a-z]{2,})?"),
    re.compile(r"(?:dns error|failed to lookup address information|Temporary failure in name resolution"
               r"|Network is unreachable|Connection refused|ECONNREFUSED|No route to host)()", re.I),
]
_URL_HOST = re.compile(r"https?://([\w.\-]+)")
REGISTRIES = {  # host (or its domain) -> the registry's name in a reason
    "crates.io": "crates.io", "proxy.golang.org": "proxy.golang.org", "sum.golang.org": "sum.golang.org",
    "golang.org": "proxy.golang.org", "repo.maven.apache.org": "Maven Central", "repo1.maven.org": "Maven Central",
    "plugins.gradle.org": "Gradle Plugin Portal", "services.gradle.org": "Gradle distributions",
    "registry.npmjs.org": "npm registry", "registry.yarnpkg.com": "npm registry (yarn)", "pypi.org": "PyPI",
    "files.pythonhosted.org": "PyPI", "rubygems.org": "RubyGems", "packagist.org": "Packagist",
    "repo.packagist.org": "Packagist", "github.com": "github.com", "static.rust-lang.org": "rustup",
}


def unreachable_registry(output: str) -> str | None:
    """The registry a failed setup could not reach, by the installer's own words (None when
    its output says no host was unreachable)."""
    for pattern in _UNREACHABLE:
        m = pattern.search(output)
        if m is None:
            continue
        host = (m.group(1) or "").lower()
        if not host:  # the phrase names none: the last URL printed before it
            urls = _URL_HOST.findall(output[: m.start()]) or _URL_HOST.findall(output)
            host = urls[-1].lower() if urls else ""
        return registry_name(host) if host else "a package registry"
    return None


def registry_name(host: str) -> str:
    """``index.crates.io`` -> crates.io; an unknown host is its own name."""
    parts = host.split(".")
    for i in range(len(parts) - 1):
        if ".".join(parts[i:]) in REGISTRIES:
            return REGISTRIES[".".join(parts[i:])]
    return host
