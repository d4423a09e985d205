"""The stages of ``datagen build tasks`` (see ``builds/tasks/build.py`` for the order).

The sandboxed parts (baselines, validation) are datatrove stages on the recipe's
executor (``builds/tasks/sandboxed.py``); everything else, the teacher included, runs here.
"""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from datagen.builds.tasks.drops import Ledger, first_drop, functions, unique_statements
from datagen.builds.tasks.sandboxed import BaselineStage, ValidateStage, read_baseline, read_verdict, write_wave
from datagen.config.tasks import TasksRecipe
from datagen.crawl.rules import CrawlRules
from datagen.crawl.sources import ListedFile, Repo
from datagen.curate.secrets import SecretPack, redact_file_text
from datagen.errors import SkipItem
from datagen.records.tasks import CandidateRow, RepoBaselineRow
from datagen.runtime.executors import StageRunner
from datagen.runtime.repo_stage import run_repo_stage, stage_threads, stored
from datagen.sandbox.envs.python.plan import generated_files
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.synth.baseline import Baseline
from datagen.synth.candidates import Candidate, covered_entities
from datagen.synth.check import Verdict
from datagen.synth.emit import CopyIndex, Emitted, commit_task, instance_id
from datagen.synth.entities import LANGS as ENTITY_LANGS
from datagen.synth.families.registry import (
    Growth,
    Proposal,
    get_family,
    grow_repo,
    propose_repo,
    singles_budget,
    strategy_families,
)
from datagen.synth.gitrepo import TaskRepo
from datagen.synth.interface import task_interface
from datagen.synth.snapshot import (
    detect_profile,
    is_test_file,
    no_runner_detail,
    non_blank_lines,
    snapshot_files,
    source_files,
    write_snapshot,
)
from datagen.synth.statements import RepoTokens, Statement, feature_statement, given, template_statement, with_names


@dataclass
class RepoState:
    """One input repo as the build sees it."""

    repo: Repo
    row: RepoBaselineRow
    src: Path | None = None
    texts: dict[str, str] = field(default_factory=dict)
    sources: list[tuple[str, str]] = field(default_factory=list)
    baseline: Baseline | None = None
    git: TaskRepo | None = None
    clean: str = ""
    _tokens: RepoTokens | None = None

    @property
    def tokens(self) -> RepoTokens:
        if self._tokens is None:
            self._tokens = RepoTokens(self.texts)
        return self._tokens

    @property
    def testable(self) -> bool:
        """Has a test runner and nothing ruled it out: its baseline is measured."""
        return self.row.runner is not None and self.row.reason is None


# 1. prepare --------------------------------------------------------------------------------
def prepare_repo(cfg: TasksRecipe, repo: Repo, files: list[ListedFile], out: Path, work: Path) -> RepoState:
    """Snapshot and clean commit of one repo, and its test runner (or why it has none)."""
    state = RepoState(repo, RepoBaselineRow(run_id="", repo=repo.name, status="skipped",
                                            language=_main_language(files)))
    if repo.error:
        return _skip(state, repo.error, REPO_ERRORS.get(repo.error.split(":", 1)[0], ""))
    if not CrawlRules.from_config(cfg.crawl).license_allowed(repo.license):
        return _skip(state, f"license:{repo.license or 'unknown'}", license_detail(cfg, repo.license))
    snap = snapshot_files(files)
    state.src = _snapshot(repo, snap, work / "src" / repo.name, cfg.statement.redact_secrets,
                          cfg.snapshot.redact_pii)
    state.texts = _texts(state.src, [f.path for f in snap])
    profile = detect_profile(state.src, [f.path for f in snap])
    # strategies target the repo's own code: not vendored, generated or minified files
    state.sources = source_files(sorted(state.texts), {f.path: f.lang for f in snap if f.skip is None}, profile)
    state.row.source_lines = sum(non_blank_lines(state.texts[p]) for p, _ in state.sources)
    state.sources = [(p, lang) for p, lang in state.sources if lang in ENTITY_LANGS]  # what entities are read from
    state.row.runner = profile.name if profile else None
    if profile is None:
        return _skip(state, "no_test_runner", no_runner_detail([f.path for f in snap], {f.path: f.lang for f in snap}))
    state.row.language = profile.task_language(state.src)
    if missing := profile.missing_tool():
        return _skip(state, missing.reason, f"{profile.name} needs {missing.tool}, which is not on PATH here: "
                                            f"install it (Debian: apt-get install {missing.package})")
    # the store holds every answer: it stays in the work folder; trainers get sealed envs
    state.git = TaskRepo(work / "git" / f"{repo.name}.git")
    state.clean = state.row.clean_commit = state.git.commit_folder(state.src, f"{repo.name}: clean source")
    return state


def measure_baselines(cfg: TasksRecipe, states: list[RepoState], work: Path, runner: StageRunner) -> None:
    """Environment and baseline of every testable repo (a ``BaselineStage``), then each
    repo's row from its baseline."""
    testable = [s for s in states if s.testable]
    names = [s.repo.name for s in testable]
    if stored(work / "baselines", names) < len(names):
        step = BaselineStage(cfg, work, {s.repo.name: s.row.runner for s in testable},
                             stage_threads(runner.cfg, cfg.workers))
        run_repo_stage(runner, "baselines", step, cfg.workers, work / "logs" / "baselines", len(names),
                       lambda: stored(work / "baselines", names))
    for s in testable:
        b = s.baseline = read_baseline(work, s.repo.name)
        # a file the suite reports tests from is test code whatever its name (a root tests.py):
        # every grader refuses a patch that edits a task's test files, so none is a target
        # (the profile says which: Rust's inline `mod tests` and Python's doctests are in code files)
        reported = set(get_profile(b.runner).test_files([*b.stable, *b.flaky, *b.failing])) if b.runner else set()
        # nor is a file the env holds a copy of (a dependency vendors it): a patch could import it
        s.sources = [(p, lang) for p, lang in s.sources if p not in reported and p not in b.held]
        s.row = s.row.model_copy(update={
            "tests": len(b.stable), "flaky_tests": b.flaky, "failing_tests": len(b.failing),
            "suite_s": round(b.suite_s, 3), "status": "skipped" if b.reason else "ok", "reason": b.reason,
            "detail": b.detail[:2000] if b.reason or b.subset or b.budget or b.held else "",
            "language": b.language or s.row.language, "toolchain": b.plan.get("toolchain", ""),
            "toolchain_mismatch": b.plan.get("toolchain_mismatch")})


def _main_language(files: list[ListedFile]) -> str:
    """The language most of a repo's kept source files are in (what a skipped repo is
    listed under; a testable repo's profile says it more precisely); '' when none."""
    counts = Counter(f.lang for f in files if f.lang in ENTITY_LANGS and f.skip in (None, "license"))
    return min(counts, key=lambda lang: (-counts[lang], lang)) if counts else ""


def _skip(state: RepoState, reason: str, detail: str) -> RepoState:
    """The repo skipped for ``reason``, and why in one line a person can act on (``detail``)."""
    state.row = state.row.model_copy(update={"status": "skipped", "reason": reason, "detail": detail or reason})
    return state


REPO_ERRORS = {"empty_repo": "the input holds no file datagen can read (an empty folder, or a repo with no commit)",
               "broken_repo": "git could not read the input repo (see the reason for git's words)"}


def license_detail(cfg: TasksRecipe, spdx: str | None) -> str:
    """Why the license policy skipped a repo, and how to allow it (docs/tasks.md#licenses)."""
    policy = cfg.crawl.licenses if isinstance(cfg.crawl.licenses, str) else ", ".join(cfg.crawl.licenses)
    if spdx is None:
        return (f"no license file datagen recognizes, and the policy ({policy}) does not allow unknown licenses: "
                "add the repo's license or set crawl.allow_unknown_license=true")
    return (f"{spdx} is not in the license policy ({policy}): allow it with --set 'crawl.licenses=[...,{spdx}]' "
            "(or crawl.licenses=any), after checking its terms fit the data's use")


def _snapshot(repo: Repo, snap: list[ListedFile], dest: Path, redact: bool, redact_pii: bool = True) -> Path:
    """The clean source in the work folder (kept across a resume: written once); redacted
    values become same-kind stand-ins, so packaging metadata still builds."""
    done = dest.parent / f"{repo.name}.done"
    if done.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    write_snapshot(repo, snap, dest)
    if redact:
        pack = SecretPack.load()
        for f in snap:
            path = dest / f.path
            try:
                text = path.read_bytes().decode("utf-8")  # keep CRLF as it is
            except (UnicodeDecodeError, OSError):
                continue
            clean, found = redact_file_text(pack, f.path, text, redact_pii)
            if found:
                path.write_text(clean, encoding="utf-8", newline="")
    for rel, text in generated_files(dest).items():  # e.g. a .gitignored _version.py the package imports
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text, encoding="utf-8")
    done.touch()
    return dest


def _texts(src: Path, paths: list[str]) -> dict[str, str]:
    texts = {}
    for p in paths:
        try:
            texts[p] = (src / p).read_bytes().decode("utf-8")  # CRLF kept: patches stay minimal
        except (UnicodeDecodeError, OSError):
            continue
    return texts


# 2. propose ------------------------------------------------------------------------------
def propose_all(cfg: TasksRecipe, states: list[RepoState], teacher, console: Console) -> list[Candidate]:
    """Every first-wave candidate of every ready repo, in a stable order: each chosen
    family's, in the family registry's order (``families.registry.propose_repo``)."""
    out: list[Candidate] = []
    budget = singles_budget(cfg)
    for s in states:
        targets, total = covered_entities(s.sources, s.texts, s.baseline, cfg.synth.min_entity_lines)
        s.row = s.row.model_copy(update={"entities": total, "covered_entities": len(targets)})
        p = Proposal(cfg, s.repo, s.texts, s.sources, s.baseline, s.row.runner, targets, budget, teacher)
        out += propose_repo(p)
        s.row = s.row.model_copy(update=p.row)  # what a family says of the repo (why it proposed nothing)
    for c in out:
        if len(c.changes) > 1:
            c.covering = []  # a change across files: the whole suite checks it
    return out


# 3. validate -----------------------------------------------------------------------------
def validate_all(cfg: TasksRecipe, states: list[RepoState], candidates: list[Candidate], work: Path,
                 runner: StageRunner, wave: str) -> dict[str, Verdict]:
    """A verdict per distinct candidate: those a teacher check dropped here, the others
    from a ``ValidateStage`` over the wave (verdicts stored by an earlier run are kept)."""
    todo = list({c.candidate_id: c for c in candidates}.values())
    checked = [c for c in todo if c.drop is None]
    ids = [c.candidate_id for c in checked]
    if stored(work / "verdicts", ids) < len(ids):
        path = work / "waves" / f"{wave}.jsonl"
        write_wave(path, checked)
        runners = {s.repo.name: s.row.runner for s in states if s.repo.name in {c.repo for c in checked}}
        step = ValidateStage(cfg, work, runners, stage_threads(runner.cfg, cfg.workers), path)
        name = "validating" if wave == "first" else f"validating {wave}"
        run_repo_stage(runner, name, step, cfg.workers, work / "logs" / f"validate-{wave}", len(ids),
                       lambda: stored(work / "verdicts", ids))
    return {c.candidate_id: Verdict(False, c.drop, "generated") if c.drop is not None
            else read_verdict(work, c.candidate_id) for c in todo}


# 4. grow ---------------------------------------------------------------------------------
def grow(cfg: TasksRecipe, states: list[RepoState], first: list[Candidate], verdicts: dict[str, Verdict],
         teacher, console: Console) -> list[Candidate]:
    """Second-wave candidates made from validated ones (combined bugs, teacher variants):
    each chosen family's grower, in the registry's order (``families.registry.grow_repo``)."""
    kept = [c for c in _unique(sorted(first, key=emit_order)) if verdicts[c.candidate_id].kept]
    ids = {c.candidate_id: instance_id(c) for c in kept}
    singles = strategy_families()
    proposed = Counter(c.repo for c in _unique(first) if c.family in singles)
    extra: list[Candidate] = []
    for s in states:
        mine = [c for c in kept if c.repo == s.repo.name]
        extra += grow_repo(Growth(cfg, s.repo.name, s.texts, mine, ids, verdicts, proposed[s.repo.name], teacher))
    return extra


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per change: the first, as ``emit_tasks`` keeps it (so lineage ids match)."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        seen.setdefault(c.candidate_id, c)
    return list(seen.values())


def emit_order(c: Candidate) -> tuple:
    """Per repo, the families that emit first (``combine``'s merged bugs) before the others,
    so a function's quota of tasks goes to the harder, multi-place task before a second
    single bug of the same function; then by family, strategy, entity."""
    return (c.repo, not get_family(c.family).emits_first, c.family, c.strategy, c.entity, c.candidate_id)


# 5. emit ---------------------------------------------------------------------------------
def emit_tasks(cfg: TasksRecipe, states: list[RepoState], candidates: list[Candidate],
               verdicts: dict[str, Verdict], teacher, run_id: str, console: Console
               ) -> tuple[list[Emitted], list[CandidateRow]]:
    """Commit every kept candidate, write its statement; a row for every candidate.

    A validated candidate is still dropped (with its reason) by the first of the drop
    rules (``drops.DROP_RULES``) that refuses it: the same change as an earlier candidate
    (``duplicate_patch``), its entity has given ``synth.max_tasks_per_entity`` tasks already
    (``entity_quota``; a combined task counts for each function it changes), it breaks the
    same tests with the same first error as a kept task (``duplicate_break``,
    ``duplicate_of`` that task), or its changed lines nearly repeat a kept task's
    (``near_duplicate_patch``, for the families that ask for it); then when its commit is
    refused (the fixed text is a file of its own environment, or a block of lines the fix
    brings back stands in another file of it: ``fix_in_environment``), and last when its
    statement is another task's (``duplicate_statement``)."""
    by_repo = {s.repo.name: s for s in states}
    led = Ledger(cfg, {s.repo.name: s.texts for s in states})
    fate: list[tuple[Candidate, dict]] = []  # each candidate with its row's overrides
    emitted: list[Emitted] = []
    copies: dict[str, CopyIndex] = {}  # repo -> its normalized text files
    for c in sorted(candidates, key=emit_order):
        v = verdicts[c.candidate_id]
        drop = first_drop(c, v, led)
        led.seen.add(c.candidate_id)
        if drop is None:
            s = by_repo[c.repo]
            try:
                if c.repo not in copies:
                    copies[c.repo] = CopyIndex(s.texts)
                e = commit_task(s.git, s.clean, c, v, s.row.runner, s.baseline, copies[c.repo])
            except SkipItem as exc:
                drop = {"status": "dropped", "reason": exc.reason, "detail": exc.detail}
        if drop is not None:
            fate.append((c, drop))
            continue
        led.keep(c, v, e.record.instance_id)
        emitted.append(e)
        fate.append((c, {"instance_id": e.record.instance_id, "stage": "kept",
                         "changed_lines": e.record.changed_lines, "changed_files": e.record.changed_files,
                         "entities": len(functions(c))}))
    _write_statements(cfg, by_repo, emitted, teacher, console)
    emitted = unique_statements(emitted, fate)
    rows = [_row(run_id, c, verdicts[c.candidate_id]).model_copy(update=upd) for c, upd in fate]
    return emitted, rows


def _row(run_id: str, c: Candidate, v: Verdict) -> CandidateRow:
    return CandidateRow(
        run_id=run_id, candidate_id=c.candidate_id, repo=c.repo, strategy=c.strategy, family=c.family,
        entity=c.entity, seed=c.seed, status="kept" if v.kept else "dropped", reason=v.reason,
        stage=v.stage, fail_to_pass=len(v.fail_to_pass), pass_to_pass=len(v.pass_to_pass),
        sandbox_s=v.sandbox_s, teacher_tokens=c.teacher_tokens, parent_ids=c.parent_ids)


def _write_statements(cfg: TasksRecipe, by_repo: dict[str, RepoState], emitted: list[Emitted], teacher,
                      console: Console) -> None:
    """Each task's problem statement: the teacher's (a family that states its tasks as an
    interface gives it that interface and its doc comments), else its family's template."""
    pack = SecretPack.load() if cfg.statement.redact_secrets else None
    described = {e.record.instance_id: _describe(by_repo[e.record.repo], e) for e in emitted}
    names = {iid: d[1] for iid, d in described.items()}
    if teacher is not None:
        from datagen.synth.teacher_tasks import teacher_statements

        apis = {}
        for e in emitted:
            family, s = get_family(e.candidate.family), by_repo[e.record.repo]
            if family.interface is not None:
                langs = dict(s.sources)
                apis[e.record.instance_id] = (family.interface(s.texts, e.candidate.entity, langs),
                                              family.doc_comments(s.texts, e.candidate.entity, langs)
                                              if family.doc_comments else "")
        statements = teacher_statements(cfg, emitted, {n: s.texts for n, s in by_repo.items()},
                                        {n: s.tokens for n, s in by_repo.items()}, teacher, apis, names)
    else:
        statements = [_template_statement(e, by_repo[e.record.repo], names[e.record.instance_id]) for e in emitted]
    for e, st in zip(emitted, statements):
        items, needed = described[e.record.instance_id]
        st = with_names(st, needed) if cfg.statement.give_implicit_names else st
        text = pack.redact(st.text)[0] if pack is not None else st.text
        e.record = e.record.model_copy(update={"problem_statement": text, "statement_style": st.style,
                                               "interface": items})
        e.statement_note = st.note


def _template_statement(e: Emitted, s: RepoState, names: list[str]) -> Statement:
    """A task's statement without a teacher: the interface to implement for a family that
    states its tasks so, else the failing tests and their first error (``names``: what the
    failing tests need that only the fix shows, which the statement may give)."""
    fix_only = s.tokens.fix_only(e.candidate.changes, e.record.patch) - given(names)
    interface = get_family(e.candidate.family).interface
    if interface is not None:
        api = interface(s.texts, e.candidate.entity, dict(s.sources))
        return feature_statement(e.record.repo, api, e.record.FAIL_TO_PASS, e.record.patch, fix_only)
    return template_statement(e.record.repo, e.record.FAIL_TO_PASS, e.verdict.failure_output, e.record.patch,
                              fix_only)


def _describe(s: RepoState, e: Emitted) -> tuple[list, list[str]]:
    """The task's interface and what its failing tests need that only the fix shows."""
    tests = [p for p in e.record.relevant_files if is_test_file(p)]
    return task_interface(s.texts, e.candidate.changes, e.record.patch, e.candidate.entity, dict(s.sources),
                          e.record.FAIL_TO_PASS, tests,
                          get_family(e.candidate.family).interface is not None)
