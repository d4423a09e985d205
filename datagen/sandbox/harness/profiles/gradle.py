"""Java (and Kotlin) with Gradle: ``gradle test``, graded from its JUnit XML reports
(``build/test-results/<task>/TEST-*.xml``, same shape as Surefire's; ids ``pkg.Class#method``).

The repo's wrapper (``./gradlew``) is preferred; without one, the machine's ``gradle``.
Setup (network on) runs ``testClasses`` with ``GRADLE_USER_HOME`` in the env folder, which
fetches the wrapper's distribution and every dependency; test runs are ``--offline`` and read
the dependencies from that cache read-only (``GRADLE_RO_DEP_CACHE``) with a private
``GRADLE_USER_HOME`` in the run's /tmp (the wrapper's distribution linked in). A subset is one
``--tests pkg.Class.method`` per chosen method. Not run here: Debian's gradle is 4.4 (it
predates Java 17) and services.gradle.org is not reachable, so only the plan, commands and
report parsing are tested.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles._replay import junit_check
from datagen.sandbox.harness.profiles.base import (
    EnvContext,
    ProfileEnv,
    ToolchainMissing,
    fitting,
)
from datagen.sandbox.harness.profiles.maven import (
    FAST_JVM,
    JvmProfile,
    java_etc,
    java_plan_fields,
    java_request,
)
from datagen.sandbox.harness.profiles.registry import register

BUILD_FILES = ("build.gradle", "build.gradle.kts")
RUN_HOME = "/tmp/datagen-gradle-home"
REPORTS = "find . -path '*/build/test-results/*' -name 'TEST-*.xml' -type f | sort"
GRADLE_FLAGS = ["--no-daemon", "--console=plain", "-q"]


def gradle_launcher(src: Path) -> str:
    """``./gradlew`` where the repo has a wrapper, else ``gradle``."""
    return "./gradlew" if (src / "gradlew").is_file() else "gradle"


def gradle_filters(tests: list[str]) -> list[str]:
    """``--tests`` arguments of ids ``pkg.Class#method`` (parameter suffixes dropped) / ``pkg.Class``."""
    patterns = set()
    for t in tests:
        cls, _, method = t.partition("#")
        cls = cls.replace("$", ".")  # Gradle names nested classes with dots in filters
        method = re.sub(r"[(\[].*$", "", method)
        patterns.add(f"{cls}.{method}" if method else cls)
    narrow = [arg for p in sorted(patterns) for arg in ("--tests", p)]
    # too long for one command line: by class, then the whole suite (the reports are read per id)
    classes = sorted({t.partition("#")[0].replace("$", ".") for t in tests})
    return fitting(narrow, [arg for c in classes for arg in ("--tests", c)], [])


@register
class GradleProfile(JvmProfile):
    """A Gradle build (``build.gradle[.kts]`` at the root) with tests under ``src/test``."""

    name = "gradle"
    source_langs = ("java", "kotlin")
    tools = {"java": "default-jdk-headless"}
    env_tools = ("gradle",)
    priority = 55
    image = "gradle:jdk{version}"

    def detect(self, src: Path, paths: list[str]) -> bool:
        built = any((src / b).is_file() for b in BUILD_FILES)
        return built and any(p.endswith((".java", ".kt")) and "/src/test/" in f"/{p}" for p in paths)

    def dependency_files(self, src: Path) -> list[str]:
        names = [*BUILD_FILES, "settings.gradle", "settings.gradle.kts", "gradle.properties",
                 "gradle/libs.versions.toml", "gradle/wrapper/gradle-wrapper.properties"]
        return [n for n in names if (src / n).is_file()]

    def plan(self, src: Path) -> EnvPlan:
        build = "".join((src / b).read_text(encoding="utf-8", errors="replace") for b in BUILD_FILES
                        if (src / b).is_file())
        launcher = gradle_launcher(src)
        notes = []
        if launcher == "gradle" and shutil.which("gradle") is None:
            notes.append("no ./gradlew and no gradle here (Debian package gradle)")
        install = [InstallStep(name="dependencies", kind="command", args=[launcher, *GRADLE_FLAGS, "testClasses"],
                               origin=" + ".join(b for b in BUILD_FILES if (src / b).is_file()))]
        return EnvPlan(profile=self.name, **java_plan_fields(java_request(build)), install=install,
                       test_command=[launcher, "test"], test_paths=["src/test"], notes=notes)

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        launcher = plan.install[0].args[0] if plan.install else gradle_launcher(src)
        if launcher == "gradle" and shutil.which("gradle") is None:
            raise EnvSetupError(ToolchainMissing("gradle", "gradle").reason)

        def build(target: Path, step) -> None:
            copy_source(src, target / "work")
            env = {"GRADLE_USER_HOME": str(target / "home"), "JAVA_OPTS": FAST_JVM}
            step("dependencies", list(plan.install[0].args), target / "work", env=env, ro_paths=java_etc())
            shutil.rmtree(target / "work", ignore_errors=True)

        target = cached_env(self, src, plan, ctx, build)
        env = {"GRADLE_USER_HOME": RUN_HOME, "GRADLE_RO_DEP_CACHE": str(target / "home" / "caches"),
               "JAVA_OPTS": FAST_JVM}
        return ProfileEnv(self.name, plan, path=target, env=env, ro_paths=(target, *java_etc()), extra=launcher)

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        launcher = env.extra or gradle_launcher(workdir)
        prep = f"mkdir -p {RUN_HOME}; "
        if env.path is not None:
            prep += f"ln -sfn {shlex.quote(str(env.path / 'home' / 'wrapper'))} {RUN_HOME}/wrapper; "
        cmd = [launcher, *GRADLE_FLAGS, "--offline", "--continue", "test", *(gradle_filters(tests) if tests else [])]
        return ["sh", "-c", f"{prep}{shlex.join(cmd)}; rc=$?; {REPORTS} | xargs -r cat > {self.report}; exit $rc"]

    # --- replay -------------------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        return [f"{shlex.join(step.args)} || exit 1" for step in plan.install]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        launcher = plan.test_command[0] if plan.test_command else "gradle"
        run = [launcher, *GRADLE_FLAGS, "--offline", "--continue", "test", *gradle_filters(tests)]
        return ["find . -path '*/build/test-results' -type d -prune -exec rm -rf {} +", shlex.join(run),
                *junit_check("maven", f"$({REPORTS})", tests)]
