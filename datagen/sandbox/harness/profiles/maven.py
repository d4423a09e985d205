"""Java with Maven: ``mvn test``, graded from Surefire's ``TEST-*.xml`` reports.

Setup (network on) fills a local repository inside the env folder (``-Dmaven.repo.local``):
``dependency:go-offline``, then one run of the suite with failures ignored, which also resolves
what ``go-offline`` misses (Surefire's JUnit provider) and checks that the tests compile. Where
Maven Central cannot be reached, the user's own local repository (``~/.m2/repository``, or
``$DATAGEN_MAVEN_SEED``) serves as a ``file://`` mirror instead: a hard-linked, world-readable
copy in datagen's cache, bound read-only into the sandbox. Test runs are offline (``-o``).

Ids are ``pkg.Class#method`` (see ``harness/parsers.py``); a subset is Surefire's ``-Dtest=`` with
``Class#m1+m2`` patterns (a parameterized method runs all its cases; only the chosen ids are read).
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness import protect
from datagen.sandbox.harness.parsers import parse_jvm_junit
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles._replay import junit_check
from datagen.sandbox.harness.profiles.base import EnvContext, Profile, ProfileEnv, TestResults, fitting
from datagen.sandbox.harness.profiles.registry import register

REPORTS = "find . -path '*/target/surefire-reports/TEST-*.xml' -type f | sort | xargs -r cat"
# The setup runs the suite once, failures ignored: Surefire resolves its test-framework provider
# only when there are tests to run, and no other goal fetches it.
SETUP_RUN = ["-Dmaven.test.failure.ignore=true"]
# Short JVM runs start faster without the optimizing compiler (about a quarter off a small suite).
FAST_JVM = "-XX:+TieredCompilation -XX:TieredStopAtLevel=1"
_RELEASE_TAGS = ("maven.compiler.release", "maven.compiler.source", "maven.compiler.target", "java.version",
                 "release", "source")


def java_etc() -> tuple[Path, ...]:
    """Debian keeps the JDK's and Maven's configuration under /etc (the JDK's ``conf/`` and
    ``/usr/share/maven/bin/m2.conf`` are links there), which the sandbox must see."""
    return tuple(sorted(p for p in (*Path("/etc").glob("java-*"), Path("/etc/maven")) if p.is_dir()))


@lru_cache(maxsize=1)
def java_major() -> int:
    """The major version of the local ``java`` (0 when there is none)."""
    if shutil.which("java") is None:
        return 0
    out = subprocess.run(["java", "-version"], capture_output=True, text=True)
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return 0
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major  # "1.8" is Java 8


def java_request(build_file: str) -> str:
    """The Java release a pom.xml (or Gradle build) asks for: the first of ``maven.compiler.release``,
    ``.source``, ``.target``, ``java.version`` and the compiler plugin's ``<release>`` / ``<source>``;
    Gradle's ``sourceCompatibility`` / ``languageVersion``. '' when it says nothing."""
    for tag in _RELEASE_TAGS:
        m = re.search(rf"<{re.escape(tag)}>\s*([0-9.]+)\s*</{re.escape(tag)}>", build_file)
        if m:
            return m.group(1)
    m = re.search(r"(?:sourceCompatibility|languageVersion)\s*[=(]\s*(?:JavaVersion\.VERSION_|JavaLanguageVersion"
                  r"\.of\()?['\"]?([0-9][0-9._]*)", build_file)
    return m.group(1).replace("_", ".") if m else ""


def release_major(request: str) -> int:
    parts = [int(p) for p in re.findall(r"\d+", request)[:2]]
    if not parts:
        return 0
    return parts[1] if parts[0] == 1 and len(parts) > 1 else parts[0]


def java_plan_fields(request: str) -> dict:
    """toolchain, toolchain_request and toolchain_mismatch of a JVM plan."""
    have = java_major()
    want = release_major(request)
    mismatch = f"the build asks Java {request}; Java {have} here" if want and have and want > have else None
    return {"toolchain": f"java{have}" if have else "java", "toolchain_request": request,
            "toolchain_mismatch": mismatch}


def java_major_of(plan: EnvPlan) -> int:
    """The Java release of a JVM plan's image: the build's where the JDK here is older, else the
    JDK the plan was measured with (0 when neither says)."""
    if plan.toolchain_mismatch and (asked := release_major(plan.toolchain_request)):
        return asked
    return release_major(plan.toolchain.removeprefix("java"))


def surefire_selection(tests: list[str]) -> str:
    """``-Dtest`` value for ids ``pkg.Class#method`` (parameter suffixes dropped) and ``pkg.Class``."""
    by_class: dict[str, set[str]] = {}
    for t in tests:
        cls, _, method = t.partition("#")
        methods = by_class.setdefault(cls, set())
        if method:
            methods.add(re.sub(r"[(\[].*$", "", method))
        else:
            methods.add("*")
    parts = []
    for cls, methods in sorted(by_class.items()):
        parts.append(cls if "*" in methods else f"{cls}#{'+'.join(sorted(methods))}")
    return ",".join(parts)


def surefire_args(tests: list[str]) -> list[str]:
    """The selection of ``tests`` for Surefire: by method, else (too long for one command line)
    by class, else the whole suite (the reports are read per id)."""
    flags = ["-Dsurefire.failIfNoSpecifiedTests=false", "-DfailIfNoTests=false"]
    classes = ",".join(sorted({t.partition("#")[0] for t in tests}))
    return fitting([f"-Dtest={surefire_selection(tests)}", *flags], [f"-Dtest={classes}", *flags], [])


def java_test_files(tests: list[str], root: str = "src/test/java") -> list[str]:
    """The conventional source file of each test class (``pkg.Outer$Inner`` -> ``pkg/Outer.java``)."""
    files = set()
    for t in tests:
        cls = t.partition("#")[0].split("$", 1)[0]
        if cls:
            files.add(f"{root}/{cls.replace('.', '/')}.java")
    return sorted(files)


def is_java_test_file(path: str) -> bool:
    """Maven/Gradle test sources (``src/test/``, integration tests in ``src/it/``) or the usual names."""
    return any(d in f"/{path}" for d in ("/src/test/", "/src/it/")) or protect.is_test_file(path)


def seed_repository(cache_dir: Path) -> Path | None:
    """A world-readable copy of the user's local Maven repository, made once in the cache
    (hard links where the file system allows, else a copy); None when there is none."""
    source = Path(os.environ.get("DATAGEN_MAVEN_SEED") or Path.home() / ".m2" / "repository")
    if not source.is_dir():
        return None
    seed = cache_dir / "maven-seed"
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / "maven-seed.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (seed / ".complete").exists():
            shutil.rmtree(seed, ignore_errors=True)
            copied = subprocess.run(["cp", "-al", str(source), str(seed)], capture_output=True)
            if copied.returncode != 0:
                shutil.rmtree(seed, ignore_errors=True)
                subprocess.run(["cp", "-a", str(source), str(seed)], check=True, capture_output=True)
            for root, dirs, _ in os.walk(seed):  # directories are our own (not linked): open them
                for d in dirs:
                    os.chmod(Path(root) / d, 0o755)
            os.chmod(seed, 0o755)
            (seed / ".complete").write_text("")
    return seed


def mirror_settings(seed: Path) -> str:
    """A Maven settings.xml that sends every repository request to ``seed``."""
    return ("<settings>\n  <mirrors>\n    <mirror>\n      <id>datagen-seed</id>\n      <mirrorOf>*</mirrorOf>\n"
            f"      <url>{seed.resolve().as_uri()}</url>\n    </mirror>\n  </mirrors>\n</settings>\n")


class JvmProfile(Profile):
    """What the Maven and Gradle profiles share: JUnit XML reports, test files by Java's
    conventions, and an image of the build tool at the plan's Java release (a base, not
    registered itself)."""

    language = "java"
    report = ".datagen-report.xml"

    def is_test_file(self, path: str) -> bool:
        return is_java_test_file(path)

    def parse(self, text: str) -> TestResults:
        return parse_jvm_junit(text)

    def test_files(self, tests: list[str]) -> list[str]:
        return java_test_files(tests)

    def docker_image(self, plan: EnvPlan) -> str:
        """``image`` at the plan's Java release (21 where it names none)."""
        return self.image.format(version=java_major_of(plan) or 21)


@register
class MavenProfile(JvmProfile):
    """A Maven project (``pom.xml`` at the root) with tests under ``src/test``."""

    name = "maven"
    source_langs = ("java",)
    tools = {"mvn": "maven", "java": "default-jdk-headless", "javac": "default-jdk-headless"}
    priority = 50
    image = "maven:3-eclipse-temurin-{version}"

    def detect(self, src: Path, paths: list[str]) -> bool:
        return (src / "pom.xml").is_file() and any(p.endswith(".java") and "/src/test/" in f"/{p}" for p in paths)

    def dependency_files(self, src: Path) -> list[str]:
        return sorted(p.relative_to(src).as_posix() for p in src.rglob("pom.xml") if "target" not in p.parts)

    def plan(self, src: Path) -> EnvPlan:
        pom = (src / "pom.xml").read_text(encoding="utf-8", errors="replace")
        install = [
            InstallStep(name="dependencies", kind="command", args=["mvn", "-B", "-q", "dependency:go-offline"],
                        origin="pom.xml", optional=True),
            InstallStep(name="test classpath", kind="command", args=["mvn", "-B", "-q", "test", *SETUP_RUN],
                        origin="pom.xml (one suite run, failures ignored: resolves the Surefire provider)"),
        ]
        return EnvPlan(profile=self.name, **java_plan_fields(java_request(pom)), install=install,
                       test_command=["mvn", "test"], test_paths=["src/test/java"])

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        def build(target: Path, step) -> None:
            # the run's folder is the env (it is what the sandbox lets a run write): repo and project in it
            copy_source(src, target / "work")
            repo = ["-f", "work/pom.xml", "-Dmaven.repo.local=" + str(target / "m2")]
            work = target
            env = {"MAVEN_OPTS": FAST_JVM}
            go_offline, classpath = (list(s.args) for s in plan.install[:2])
            etc = java_etc()
            if ctx.config.mirrors.maven:  # the recipe's mirror: every request goes there, in setup and runs
                from datagen.sandbox.envs.mirrors import maven_settings

                (target / "settings.xml").write_text(maven_settings(ctx.config.mirrors.maven), encoding="utf-8")
                repo = ["-s", str(target / "settings.xml"), *repo]
                step("dependencies", [*go_offline, *repo], work, env=env, ro_paths=etc, check=False)
                step("test classpath (mirror)", [*classpath, *repo], work, env=env, ro_paths=etc)
                shutil.rmtree(target / "work", ignore_errors=True)
                return
            step("dependencies", [*go_offline, *repo], work, env=env, ro_paths=etc, check=False)
            if not step("test classpath", [*classpath, *repo], work, env=env, ro_paths=etc, check=False):
                seed = seed_repository(ctx.cache_dir)  # Central unreachable: the user's local repository
                if seed is None:
                    step("test classpath", [*classpath, *repo], work, env=env, ro_paths=etc)
                else:
                    (target / "settings.xml").write_text(mirror_settings(seed), encoding="utf-8")
                    step("test classpath (local mirror)", [*classpath, "-s", str(target / "settings.xml"), *repo],
                         work, env=env, ro_paths=(*etc, seed))
            shutil.rmtree(target / "work", ignore_errors=True)

        target = cached_env(self, src, plan, ctx, build)
        return ProfileEnv(self.name, plan, path=target, env={"MAVEN_OPTS": FAST_JVM},
                          ro_paths=(target, *java_etc()))

    def maven_args(self, env: ProfileEnv) -> list[str]:
        """Offline, batch, quiet, on the env's local repository (and its settings: Maven only trusts
        an artifact offline when it came through a repository of the same id)."""
        args = ["-o", "-B", "-q"]
        if env.path is None:
            return args
        settings = ["-s", str(env.path / "settings.xml")] if (env.path / "settings.xml").exists() else []
        return [*args, *settings, f"-Dmaven.repo.local={env.path / 'm2'}"]

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        cmd = ["mvn", *self.maven_args(env), "test", "-Dmaven.test.failure.ignore=true", "-DtrimStackTrace=true"]
        if tests:
            cmd += surefire_args(tests)
        script = f"find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {{}} +; " \
                 f"{shlex.join(cmd)}; rc=$?; {REPORTS} > {self.report}; exit $rc"
        return ["sh", "-c", script]

    # --- replay -------------------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        classpath = shlex.join(["mvn", "-B", "-q", "test", *SETUP_RUN])
        offline = shlex.join(["mvn", "-o", "-B", "-q", "test", *SETUP_RUN])
        # offline first: where the local repository already holds everything, no network is needed
        return [f"export MAVEN_OPTS={shlex.quote(FAST_JVM)}",
                "# optional (dependency:go-offline): where it fails, the env that validated the task went on",
                "# to the test classpath step, and so does this script",
                f"{offline} >/dev/null 2>&1 || {{ mvn -B -q dependency:go-offline; {classpath}; }} || exit 1"]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        run = ["mvn", "-o", "-B", "-q", "test", "-Dmaven.test.failure.ignore=true", *surefire_args(tests)]
        return [f"export MAVEN_OPTS={shlex.quote(FAST_JVM)}",
                "find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} +",
                shlex.join(run),
                *junit_check("maven", "$(find . -path '*/target/surefire-reports/TEST-*.xml' -type f | sort)", tests)]
