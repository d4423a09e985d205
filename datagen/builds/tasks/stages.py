"""The stages of ``datagen build tasks`` (see ``builds/tasks/build.py`` for the order).

The sandboxed parts (baselines, validation) are datatrove stages on the recipe's
executor (``builds/tasks/sandboxed.py``); everything else, the teacher included, runs here.
"""

from __future__ import annotations

import math
import shutil
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path, PurePosixPath

from rich.console import Console

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
from datagen.synth.candidates import Candidate, change_id, covered_entities, propose
from datagen.synth.check import Verdict
from datagen.synth.emit import CopyIndex, Emitted, commit_task, instance_id
from datagen.synth.entities import LANGS as ENTITY_LANGS
from datagen.synth.entities import extract_entities
from datagen.synth.feature_tasks import FAMILY as FEATURE
from datagen.synth.feature_tasks import FeatureSize, doc_comments, feature_candidates, interface
from datagen.synth.gitrepo import TaskRepo
from datagen.synth.interface import task_interface
from datagen.synth.mining import combine_candidates, history_candidates
from datagen.synth.reach import coverage_reach, static_reach
from datagen.synth.snapshot import (
    detect_profile,
    is_test_file,
    non_blank_lines,
    snapshot_files,
    source_files,
    write_snapshot,
)
from datagen.synth.statements import (
    RepoTokens,
    feature_statement,
    first_error,
    given,
    template_statement,
    with_names,
)

PROPOSING = ("procedural", "removal", "feature_removal")


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
        return _skip(state, repo.error)
    if not CrawlRules.from_config(cfg.crawl).license_allowed(repo.license):
        return _skip(state, f"license:{repo.license or 'unknown'}")
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
        return _skip(state, "no_test_runner")
    state.row.language = profile.task_language(state.src)
    if missing := profile.missing_tool():
        return _skip(state, missing.reason)
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


def _skip(state: RepoState, reason: str) -> RepoState:
    state.row = state.row.model_copy(update={"status": "skipped", "reason": reason})
    return state


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
    """Every first-wave candidate of every ready repo, in a stable order."""
    out: list[Candidate] = []
    budget = singles_budget(cfg)
    for s in states:
        targets, total = covered_entities(s.sources, s.texts, s.baseline, cfg.synth.min_entity_lines)
        s.row = s.row.model_copy(update={"entities": total, "covered_entities": len(targets)})
        mine: list[Candidate] = []
        if "history" in cfg.synth.families and s.repo.kind != "dir":
            # real past fixes are single bugs too: the newest take up to half the singles budget
            mine += history_candidates(s.repo.name, s.repo.root, s.texts, {p for p, _ in s.sources},
                                       cfg.synth.history_commits, limit=math.ceil(budget / 2))
        mine += islice(propose(s.repo.name, targets, s.texts, [f for f in cfg.synth.families if f in PROPOSING],
                               cfg.synth.strategies, cfg.seed, cfg.synth.seeds_per_pair,
                               cfg.synth.max_candidates_per_entity), budget - len(mine))
        if FEATURE in cfg.synth.families:
            mine += propose_features(cfg, s)
        if teacher is not None and "lm_rewrite" in cfg.synth.families:
            from datagen.synth.teacher_tasks import lm_rewrites

            mine += lm_rewrites(cfg, s.repo.name, targets, s.texts, teacher)
        out += mine
    for c in out:
        if len(c.changes) > 1:
            c.covering = []  # a change across files: the whole suite checks it
    return out


def singles_budget(cfg: TasksRecipe) -> int:
    """Candidates a repo's single bugs may use: its budget less the combine and feature shares."""
    cap = cfg.synth.max_candidates_per_repo
    if "combine" not in cfg.synth.families and FEATURE not in cfg.synth.families:
        return cap
    return max(1, cap - combine_budget(cfg, cap) - feature_budget(cfg, cap))


def feature_budget(cfg: TasksRecipe, cap: int) -> int:
    """Feature candidates a repo of budget ``cap`` may use (``synth.feature_share`` of it)."""
    return math.ceil(cfg.synth.feature_share * cap) if FEATURE in cfg.synth.families else 0


def propose_features(cfg: TasksRecipe, s: RepoState) -> list[Candidate]:
    """The repo's feature candidates: what each group of its tests reaches (per-test
    coverage where the baseline has it, else the static reach from the test code), less
    what the other groups reach, stubbed (``synth.feature_*``)."""
    profile = get_profile(s.row.runner)
    entities = [e for path, lang in s.sources for e in extract_entities(path, s.texts[path], lang)]
    reach = coverage_reach(s.baseline, entities, profile.test_group) if s.baseline and s.baseline.line_tests else {}
    if len({frozenset(g) for g in reach.values()}) < 2:  # no coverage, or one that tells no group apart
        # (a runner that traces per file, not per test)
        lang_of = {PurePosixPath(p).suffix: lang for p, lang in s.sources}
        tests = [p for p in sorted(s.texts) if PurePosixPath(p).suffix in lang_of and profile.is_test_file(p)]
        reach = static_reach(entities, s.texts, tests, lang_of)
    size = FeatureSize(tuple(cfg.synth.feature_lines), tuple(cfg.synth.feature_entities),
                       cfg.synth.feature_multi_file)
    return feature_candidates(s.repo.name, entities, s.texts, reach,
                              feature_budget(cfg, cfg.synth.max_candidates_per_repo), size, cfg.seed)


def combine_budget(cfg: TasksRecipe, cap: int) -> int:
    """Combined candidates a repo of budget ``cap`` may use (``synth.combine_share`` of it)."""
    return math.ceil(cfg.synth.combine_share * cap) if "combine" in cfg.synth.families else 0


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
    """Second-wave candidates made from validated ones: combined bugs, teacher variants."""
    kept = [c for c in _unique(sorted(first, key=emit_order)) if verdicts[c.candidate_id].kept]
    ids = {c.candidate_id: instance_id(c) for c in kept}
    proposed = Counter(c.repo for c in _unique(first) if c.family in PROPOSING)
    extra: list[Candidate] = []
    for s in states:
        mine = [c for c in kept if c.repo == s.repo.name]
        # the share of the budget the repo's singles used: an uncapped repo is not given 1 250
        share = combine_budget(cfg, min(cfg.synth.max_candidates_per_repo,
                                        math.ceil(proposed[s.repo.name] / (1 - cfg.synth.combine_share))))
        if share:
            breaks = {c.candidate_id: set(verdicts[c.candidate_id].fail_to_pass) for c in mine}
            extra += combine_candidates(s.repo.name, mine, share, cfg.synth.combine_size, cfg.seed, ids, breaks,
                                        s.texts)
        if teacher is not None and "evolve" in cfg.synth.families and cfg.synth.scale:
            from datagen.synth.teacher_tasks import evolve

            extra += evolve(cfg, s.repo.name, mine, s.texts, teacher, ids)
    return extra


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per change: the first, as ``emit_tasks`` keeps it (so lineage ids match)."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        seen.setdefault(c.candidate_id, c)
    return list(seen.values())


def emit_order(c: Candidate) -> tuple:
    """Per repo, the merged bugs first (``combine`` sorts before the single families), so
    a function's quota of tasks goes to the harder, multi-place task before a second single
    bug of the same function; then by family, strategy, entity."""
    return (c.repo, c.family != "combine", c.family, c.strategy, c.entity, c.candidate_id)


# 5. emit ---------------------------------------------------------------------------------
def emit_tasks(cfg: TasksRecipe, states: list[RepoState], candidates: list[Candidate],
               verdicts: dict[str, Verdict], teacher, run_id: str, console: Console
               ) -> tuple[list[Emitted], list[CandidateRow]]:
    """Commit every kept candidate, write its statement; a row for every candidate.

    A validated candidate is still dropped (with its reason) when its entity has given
    ``synth.max_tasks_per_entity`` tasks already (``entity_quota``; a combined task counts
    for each function it changes), when it breaks the same
    tests with the same first error as a kept task (``duplicate_break``, ``duplicate_of``
    that task), when its statement is another task's (``duplicate_statement``), or when the
    fixed text is a file of its own environment, or a block of lines the fix brings back
    (a removed body) stands in another file of it (``fix_in_environment``)."""
    by_repo = {s.repo.name: s for s in states}
    order = sorted(candidates, key=emit_order)
    fate: list[tuple[Candidate, dict]] = []  # each candidate with its row's overrides
    emitted: list[Emitted] = []
    seen: set[str] = set()
    kept_lines: dict[str, list[set[str]]] = {}
    per_entity: Counter[tuple[str, str]] = Counter()  # (repo, function) -> tasks that change it
    breaks: dict[tuple, str] = {}  # (repo, FAIL_TO_PASS, first error) -> the task that has it
    copies: dict[str, CopyIndex] = {}  # repo -> its normalized text files
    for c in order:
        v = verdicts[c.candidate_id]
        if c.candidate_id in seen:  # its own row id: the change's id is the first proposer's
            dup = change_id(c.repo, {f"#duplicate:{c.strategy}:{c.entity}:{c.seed}": c.candidate_id})
            fate.append((c, {"candidate_id": dup, "status": "dropped", "reason": "duplicate_patch",
                             "stage": "generated", "sandbox_s": 0.0, "fail_to_pass": 0, "pass_to_pass": 0}))
            continue
        seen.add(c.candidate_id)
        if not v.kept:
            fate.append((c, {}))
            continue
        s = by_repo[c.repo]
        drop = {"status": "dropped"}
        functions = [e for e in c.entity.split(";") if e]  # a combined task's: each of its bugs'
        if any(per_entity[(c.repo, f)] >= cfg.synth.max_tasks_per_entity for f in functions):
            fate.append((c, {**drop, "reason": "entity_quota"}))
            continue
        signature = (c.repo, tuple(v.fail_to_pass), first_error(v.failure_output))
        if signature in breaks:
            fate.append((c, {**drop, "reason": "duplicate_break", "duplicate_of": breaks[signature]}))
            continue
        lines = changed_lines(c, s.texts)
        mine = kept_lines.setdefault(c.repo, [])
        if c.family == "evolve" and any(jaccard(lines, k) >= cfg.synth.near_dup_jaccard for k in mine):
            fate.append((c, {**drop, "reason": "near_duplicate_patch"}))
            continue
        try:
            if c.repo not in copies:
                copies[c.repo] = CopyIndex(s.texts)
            e = commit_task(s.git, s.clean, c, v, s.row.runner, s.baseline, copies[c.repo])
        except SkipItem as exc:
            fate.append((c, {**drop, "reason": exc.reason, "detail": exc.detail}))
            continue
        mine.append(lines)
        for f in functions:
            per_entity[(c.repo, f)] += 1
        breaks[signature] = e.record.instance_id
        emitted.append(e)
        fate.append((c, {"instance_id": e.record.instance_id, "stage": "kept",
                         "changed_lines": e.record.changed_lines, "changed_files": e.record.changed_files,
                         "entities": len(functions)}))
    _write_statements(cfg, by_repo, emitted, teacher, console)
    emitted = _unique_statements(emitted, fate)
    rows = [_row(run_id, c, verdicts[c.candidate_id]).model_copy(update=upd) for c, upd in fate]
    return emitted, rows


def _unique_statements(emitted: list[Emitted], fate: list[tuple[Candidate, dict]]) -> list[Emitted]:
    """The tasks whose statement no earlier task has; the others' rows say whose it is."""
    first: dict[str, str] = {}
    dropped: dict[str, str] = {}
    out = []
    for e in emitted:
        text = " ".join(e.record.problem_statement.split())
        if text in first:
            dropped[e.record.instance_id] = first[text]
            continue
        first[text] = e.record.instance_id
        out.append(e)
    for _, upd in fate:
        if upd.get("instance_id") in dropped:
            upd.update({"status": "dropped", "reason": "duplicate_statement", "stage": "valid",
                        "duplicate_of": dropped[upd.pop("instance_id")]})
    return out


def changed_lines(c: Candidate, texts: dict[str, str]) -> set[str]:
    """The lines a candidate removes or adds (stripped), for near-duplicate checks."""
    out: set[str] = set()
    for path, new in c.changes.items():
        old = texts.get(path, "").splitlines()
        now = (new or "").splitlines()
        out |= {f"-{x.strip()}" for x in set(old) - set(now)} | {f"+{x.strip()}" for x in set(now) - set(old)}
    return out


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _row(run_id: str, c: Candidate, v: Verdict) -> CandidateRow:
    return CandidateRow(
        run_id=run_id, candidate_id=c.candidate_id, repo=c.repo, strategy=c.strategy, family=c.family,
        entity=c.entity, seed=c.seed, status="kept" if v.kept else "dropped", reason=v.reason,
        stage=v.stage, fail_to_pass=len(v.fail_to_pass), pass_to_pass=len(v.pass_to_pass),
        sandbox_s=v.sandbox_s, teacher_tokens=c.teacher_tokens, parent_ids=c.parent_ids)


def _write_statements(cfg: TasksRecipe, by_repo: dict[str, RepoState], emitted: list[Emitted], teacher,
                      console: Console) -> None:
    pack = SecretPack.load() if cfg.statement.redact_secrets else None
    described = {e.record.instance_id: _describe(by_repo[e.record.repo], e) for e in emitted}
    names = {iid: d[1] for iid, d in described.items()}
    if teacher is not None:
        from datagen.synth.teacher_tasks import teacher_statements

        apis = {}
        for e in emitted:
            if e.candidate.family == FEATURE:
                s = by_repo[e.record.repo]
                apis[e.record.instance_id] = (interface(s.texts, e.candidate.entity, dict(s.sources)),
                                              doc_comments(s.texts, e.candidate.entity, dict(s.sources)))
        statements = teacher_statements(cfg, emitted, {n: s.texts for n, s in by_repo.items()},
                                        {n: s.tokens for n, s in by_repo.items()}, teacher, apis, names)
    else:
        statements = []
        for e in emitted:
            tok = by_repo[e.record.repo].tokens
            fix_only = tok.fix_only(e.candidate.changes, e.record.patch) - given(names[e.record.instance_id])
            if e.candidate.family == FEATURE:
                langs = dict(by_repo[e.record.repo].sources)
                api = interface(by_repo[e.record.repo].texts, e.candidate.entity, langs)
                statements.append(feature_statement(e.record.repo, api, e.record.FAIL_TO_PASS, e.record.patch,
                                                    fix_only))
                continue
            statements.append(template_statement(e.record.repo, e.record.FAIL_TO_PASS, e.verdict.failure_output,
                                                 e.record.patch, fix_only))
    for e, st in zip(emitted, statements):
        items, needed = described[e.record.instance_id]
        st = with_names(st, needed) if cfg.statement.give_implicit_names else st
        text = pack.redact(st.text)[0] if pack is not None else st.text
        e.record = e.record.model_copy(update={"problem_statement": text, "statement_style": st.style,
                                               "interface": items})
        e.statement_note = st.note


def _describe(s: RepoState, e: Emitted) -> tuple[list, list[str]]:
    """The task's interface and what its failing tests need that only the fix shows."""
    tests = [p for p in e.record.relevant_files if is_test_file(p)]
    return task_interface(s.texts, e.candidate.changes, e.record.patch, e.candidate.entity, dict(s.sources),
                          e.record.FAIL_TO_PASS, tests, e.candidate.family == FEATURE)
