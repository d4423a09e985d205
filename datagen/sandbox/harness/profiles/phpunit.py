"""PHP with PHPUnit: ``phpunit --log-junit``; ids ``Ns\\Class::method`` (see ``harness/parsers.py``).

Setup (network on) runs ``composer install`` in a copy of the repo inside the env folder; each
run copies that ``vendor/`` into its working copy (Composer's autoloader finds the project
relative to ``vendor/``, so a link would load the env's copy of the sources, not the run's).
Where Packagist cannot be reached (or Composer is missing), a repo whose ``require`` needs no
package runs on the machine's ``phpunit`` (Debian's): ``composer dump-autoload --dev``
(offline) writes the project's own autoloader from composer.json's ``autoload`` /
``autoload-dev``, and PHP prepends it to PHPUnit (``-d auto_prepend_file``), as ``vendor/bin/phpunit`` would load it.
require-dev's tools (static analysers, code style) are then absent and said in the plan's
notes, and its ``fallback`` (``autoload``, or ``machine`` without Composer's autoloader) has
the task's setup script go on the same way, saying so. A repo whose ``require`` needs
packages is recorded ``registry_unreachable: Packagist`` (``toolchain_missing: composer``
without Composer). A subset is ``--filter`` with an anchored regex of the ids; a long list is
split over several runs, each regex short enough for PHP's PCRE2 (``phpunit_filters``).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.harness.parsers import parse_phpunit_junit
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles._replay import cmake_regex, junit_check
from datagen.sandbox.harness.profiles.base import (
    EnvContext,
    Profile,
    ProfileEnv,
    TestResults,
    ToolchainMissing,
    fitting,
    read_json,
)
from datagen.sandbox.harness.profiles.registry import register

CONFIGS = ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")
_PLATFORM = re.compile(r"^(php|ext-.+|lib-.+|composer-plugin-api|composer-runtime-api)$")
FLAGS = ["--do-not-cache-result", "--colors=never"]


@lru_cache(maxsize=1)
def php_version() -> str:
    if shutil.which("php") is None:
        return ""
    return subprocess.run(["php", "-r", "echo PHP_VERSION;"], capture_output=True, text=True).stdout.strip()


def php_etc() -> tuple[Path, ...]:
    """Debian's php.ini and module list live under /etc/php, which the sandbox must see."""
    return (Path("/etc/php"),) if Path("/etc/php").is_dir() else ()


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def php_fits(constraint: str, have: str) -> bool:
    """Whether PHP ``have`` meets a Composer constraint's alternatives (``^8.1 || ^7.4``,
    ``>=8.0``, ``~8.1.0``, ``8.2.*``): floors and caret/tilde majors are checked; others pass."""
    ver = _tuple(have)
    for alt in re.split(r"\s*\|\|?\s*", constraint.strip()):
        ok = True
        for part in alt.replace(",", " ").split():
            m = re.match(r"^(\^|~|>=|>|<=|<|=|==)?v?(\d+(?:\.\d+){0,2})(\.\*)?$", part)
            if not m:
                continue
            op, want = m.group(1) or "=", _tuple(m.group(2))
            if op in ("^", "~", ">=", "=", "==") and ver[:len(want)] < want:
                ok = False
            if op == "^" and ver[0] != want[0] or op == "~" and ver[:len(want) - 1] != want[:len(want) - 1]:
                ok = False
            if op == "<" and ver[:len(want)] >= want or op == "<=" and ver[:len(want)] > want:
                ok = False
            if op == "=" and m.group(3) and ver[:len(want)] != want:
                ok = False
        if ok:
            return True
    return False


def composer_needs(src: Path, dev: bool = True) -> list[str]:
    """Packages of composer.json's require (+ require-dev) beyond the platform (php, ext-*)."""
    data = read_json(src / "composer.json")
    if not isinstance(data, dict):
        return []
    names = [*(data.get("require") or {}), *((data.get("require-dev") or {}) if dev else {})]
    return sorted(n for n in names if not _PLATFORM.match(n))


INSTALL, DUMP = "composer install", "composer dump-autoload"  # the plan's Composer steps
DUMP_ARGS = ["composer", "dump-autoload", "--dev", "--no-interaction"]
# the bootstrap's ``require`` of Composer's autoloader, unless guarded by a check that it exists
_REQUIRES_AUTOLOAD = re.compile(r"\b(?:require|include)(?:_once)?\b[^;]*vendor/autoload\.php")
_GUARDED = re.compile(r"\b(?:is_file|file_exists|is_readable|stream_resolve_include_path)\s*\(")


def autoloader_need(src: Path) -> str:
    """Where the suite loads Composer's autoloader (``vendor/autoload.php``) with no way
    around it: the PHPUnit config's ``bootstrap`` names it, or the bootstrap file requires it
    unguarded (no ``is_file`` check with a loader of its own); '' when nothing does."""
    for name in CONFIGS:
        try:
            text = (src / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        m = re.search(r"<phpunit\b[^>]*\bbootstrap\s*=\s*[\"']([^\"']+)[\"']", text)
        boot = m.group(1).strip() if m else ""
        if boot.endswith("vendor/autoload.php"):
            return f"{name} bootstrap {boot}"
        try:
            code = (src / boot).read_text(encoding="utf-8", errors="replace") if boot else ""
        except OSError:
            code = ""
        if _REQUIRES_AUTOLOAD.search(code) and not _GUARDED.search(code):
            return f"{name} bootstrap {boot} requires vendor/autoload.php"
        return ""
    return ""


def composer_missing(plan: EnvPlan) -> EnvSetupError:
    """The skip of a repo whose plan needs Composer on a machine without it: one line that
    says what needs it and what to install."""
    step = next((s for s in plan.install if s.args[:1] == ["composer"]), None)
    why = f" ({step.name}: {step.origin})" if step else ""
    return EnvSetupError(f"Composer is missing{why}; install Composer (Debian package composer) and build again",
                         step=step.name if step else "", reason=ToolchainMissing("composer", "composer").reason)


AUTOLOAD, MACHINE = "autoload", "machine"  # the plan's ``fallback`` when composer install failed


def machine_phpunit() -> str:
    """The shell words that run the machine's PHPUnit, with the project's Composer autoloader
    (``vendor/autoload.php``, when there is one) loaded first, as ``vendor/bin/phpunit`` does."""
    return ('P=phpunit; if [ -x vendor/bin/phpunit ]; then P=vendor/bin/phpunit; '
            'elif [ -f vendor/autoload.php ]; then P="php -d auto_prepend_file=vendor/autoload.php '
            '$(command -v phpunit)"; fi')  # relative: PHP resolves it against the include path (.)


# PHPUnit compiles ``--filter`` with PHP's PCRE2, whose compiled pattern must fit in 64K code
# units (two per literal character, three per alternative). A longer regex does not compile,
# and PHPUnit then runs no test at all ("No tests executed!"): inflector's 981 FAIL_TO_PASS
# ids made a 110 861-character filter. So a long list is split over several runs, each filter
# at most FILTER_BYTES (worst case, one-character ids: 16 000 / 2 alternatives * 5 units = 40K).
FILTER_BYTES = 16_000


def phpunit_filter(tests: list[str]) -> str:
    """``--filter`` regex matching exactly ``tests`` (PHPUnit matches ``Class::name``)."""
    return "/" + cmake_regex(sorted(set(tests))) + "/"


def phpunit_filters(tests: list[str], limit: int = FILTER_BYTES) -> list[str]:
    """``--filter`` regexes that together match exactly ``tests``, in order, each of at most
    ``limit`` bytes (one id longer than that gets a run of its own)."""
    groups: list[list[str]] = []
    size = limit
    for name in sorted(set(tests)):
        n = len(phpunit_filter([name]).encode())
        if groups and size + n - 5 <= limit:  # joined: "|" in place of a second "/^(", ")$/"
            groups[-1].append(name)
            size += n - 5
        else:
            groups.append([name])
            size = n
    return [phpunit_filter(g) for g in groups]


@register
class PHPUnitProfile(Profile):
    """A PHP repo with a PHPUnit config or ``phpunit/phpunit`` in composer.json, and ``*Test.php``."""

    name = "phpunit"
    language = "php"
    source_langs = ("php",)
    tools = {"php": "php-cli"}
    env_tools = ("composer", "phpunit")
    priority = 80
    report = ".datagen-report.xml"
    image, image_default = "php:{version}-cli", "php:cli"
    # 2: an env without ``composer install`` holds the project's autoloader; 3: only vendor/ of
    # the install's folder stays (the rest was a copy of the clean tree)
    env_version = 3

    def detect(self, src: Path, paths: list[str]) -> bool:
        configured = any((src / c).is_file() for c in CONFIGS) or "phpunit/phpunit" in composer_needs(src)
        return configured and any(p.endswith("Test.php") for p in paths)

    def dependency_files(self, src: Path) -> list[str]:
        return [n for n in ("composer.json", "composer.lock") if (src / n).is_file()]

    def plan(self, src: Path) -> EnvPlan:
        data = read_json(src / "composer.json")
        request = str(((data or {}).get("require") or {}).get("php", "")) if isinstance(data, dict) else ""
        have = php_version()
        mismatch = f"composer.json asks PHP {request}; PHP {have} here" if request and have and \
            not php_fits(request, have) else None
        install = []
        if composer_needs(src):
            install.append(InstallStep(name=INSTALL, kind="command",
                                       args=["composer", "install", "--no-interaction", "--no-progress"],
                                       origin="composer.json require / require-dev"))
        elif (src / "composer.json").is_file():  # no package to install: the project's own autoloader
            need = autoloader_need(src)
            install.append(InstallStep(name=DUMP, kind="command", args=DUMP_ARGS, optional=not need,
                                       origin=need or "composer.json autoload"))
        return EnvPlan(profile=self.name, toolchain=f"php{have}" if have else "php", toolchain_request=request,
                       toolchain_mismatch=mismatch, install=install, test_command=["vendor/bin/phpunit"],
                       test_paths=["tests"])

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        runtime_needs = composer_needs(src, dev=False)
        composer = shutil.which("composer") is not None
        installs = any(s.name == INSTALL for s in plan.install)

        def build(target: Path, step) -> None:
            mode = {"vendor": False, "autoload": False}
            if composer and (src / "composer.json").is_file():
                work = copy_source(src, target / "work")
                env = {"COMPOSER_HOME": str(target / "composer-home")}
                if installs:
                    mode["vendor"] = step(INSTALL, ["composer", "install", "--no-interaction",
                                                               "--no-progress"], work, env=env, ro_paths=php_etc(),
                                          check=bool(runtime_needs))
                if not mode["vendor"]:  # Packagist unreachable, or nothing to install: the project's autoloader
                    shutil.rmtree(work / "vendor", ignore_errors=True)
                    mode["autoload"] = step(DUMP, DUMP_ARGS, work, env=env, ro_paths=php_etc())
                for entry in work.iterdir():  # the env keeps vendor/ alone, no copy of the project's code
                    if entry.name != "vendor":
                        shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
            (target / "mode.json").write_text(json.dumps(mode), encoding="utf-8")

        if not composer and (runtime_needs or any(s.args[:1] == ["composer"] and not s.optional
                                                  for s in plan.install)):
            raise composer_missing(plan)
        target = cached_env(self, src, plan, ctx, build)
        mode = json.loads((target / "mode.json").read_text(encoding="utf-8"))
        if not mode["vendor"] and shutil.which("phpunit") is None:
            raise EnvSetupError(ToolchainMissing("phpunit", "phpunit").reason)
        if mode["vendor"]:
            notes = ["composer install into the env"]
        else:
            missing = sorted(set(composer_needs(src)) - {"phpunit/phpunit"})
            notes = ["the machine's phpunit" + (" with the project's autoloader (composer dump-autoload)"
                                                if mode.get("autoload") else "")
                     + (f"; require-dev not installed: {', '.join(missing)}" if missing else "")]
        # composer install failed (Packagist unreachable): the env went on, and so do the replays
        fallback = "" if mode["vendor"] or not installs else AUTOLOAD if mode.get("autoload") else MACHINE
        plan = plan.model_copy(update={"notes": [*plan.notes, *notes], "fallback": fallback})
        return ProfileEnv(self.name, plan, path=target, ro_paths=(target, *php_etc()),
                          extra=mode["vendor"] or bool(mode.get("autoload")))

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        prep = ""
        if env.extra and env.path is not None:
            prep = f"[ -d vendor ] || cp -r {shlex.quote(str(env.path / 'work' / 'vendor'))} vendor; "
        if not tests:
            whole = shlex.join([*FLAGS, "--log-junit", self.report])
            return ["sh", "-c", f"{prep}{machine_phpunit()}; exec $P {whole}"]
        # one run per filter, each filter its own argument ("$@": no argument nears 128 KB),
        # their reports joined into one (the parser reads several XML documents)
        part = f"{self.report}.part"
        loop = (f'rm -f {self.report}; rc=0; for f in "$@"; do $P {shlex.join(FLAGS)} --log-junit {part} '
                f'--filter "$f" || rc=$?; cat {part} >> {self.report} 2>/dev/null; rm -f {part}; done; exit $rc')
        # filters too many for one command line: the whole suite (the report is read per id)
        filters = fitting(phpunit_filters(tests), [])
        if not filters:
            return self.test_command(env, workdir, None)
        return ["sh", "-c", f"{prep}{machine_phpunit()}; {loop}", "sh", *filters]

    def parse(self, text: str) -> TestResults:
        return parse_phpunit_junit(text)

    def test_files(self, tests: list[str]) -> list[str]:
        return []

    # --- replay -------------------------------------------------------------------------
    def image_tools(self, plan: EnvPlan) -> list[str]:
        """Composer (its official image's binary) and what it unpacks packages with."""
        from datagen.sandbox.envs.docker import apt_install

        return ["COPY --from=composer:2 /usr/bin/composer /usr/local/bin/composer", apt_install("git", "unzip")]

    def setup_commands(self, plan: EnvPlan) -> list[str]:
        # where Packagist is missing, the project's own autoloader and the machine's PHPUnit
        fallback = "{ command -v phpunit >/dev/null || exit 1; }"
        autoload = f"{{ rm -rf vendor; composer dump-autoload --dev --no-interaction && {fallback}; }}"
        install = "composer install --no-interaction --no-progress"
        went_on = ["# composer install failed where this task was validated (Packagist unreachable) and that",
                   "# env went on with the machine's PHPUnit" + (" and the project's own autoloader (composer"
                                                               if plan.fallback == AUTOLOAD else "."),
                   *(["# dump-autoload --dev)."] if plan.fallback == AUTOLOAD else []),
                   "# This script goes on the same way (composer install only where this machine has no phpunit)."]
        if plan.fallback == AUTOLOAD:
            return [*went_on, f"if command -v phpunit >/dev/null; then {autoload} || exit 1; "
                              f"else {install} || exit 1; fi"]
        if plan.fallback == MACHINE:
            return [*went_on, f"command -v phpunit >/dev/null || {install} || exit 1"]
        if any(s.name == INSTALL for s in plan.install):
            return [f"composer install --no-interaction --no-progress || {autoload} || {fallback}"]
        needed = [s for s in plan.install if s.name == DUMP and not s.optional]
        if needed:  # the tests load vendor/autoload.php: without Composer they cannot run
            why = shlex.quote(f"Composer is missing: {needed[0].origin}; install Composer (composer dump-autoload)")
            return [f"command -v composer >/dev/null || {{ echo {why} >&2; exit 1; }}", f"{autoload} || exit 1"]
        return [f"if command -v composer >/dev/null && [ -f composer.json ]; then {autoload}; fi"]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        filters = phpunit_filters(tests)
        if len(filters) == 1:
            run = [*FLAGS, "--log-junit", ".datagen-eval.xml", "--filter", filters[0]]
            return [machine_phpunit(), f'$P {shlex.join(run)}', *junit_check("phpunit", ".datagen-eval.xml", tests)]
        # a long list: several runs (see FILTER_BYTES), each with its own report; none left
        # from an earlier eval may stand in for a run that wrote nothing
        reports = [f".datagen-eval-{i}.xml" for i in range(1, len(filters) + 1)]
        runs = [f'$P {shlex.join([*FLAGS, "--log-junit", r, "--filter", f])}' for r, f in zip(reports, filters)]
        return [machine_phpunit(), f"rm -f {' '.join(reports)}", *runs,
                *junit_check("phpunit", " ".join(reports), tests)]
