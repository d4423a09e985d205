-- Generated from datagen.records by `python -m datagen.records.export`.
-- Do not edit by hand.

CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR NOT NULL,
    command VARCHAR NOT NULL,
    recipe_json VARCHAR NOT NULL,
    recipe_hash VARCHAR NOT NULL,
    datagen_version VARCHAR NOT NULL,
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    status VARCHAR NOT NULL,
    PRIMARY KEY (run_id)
);

CREATE TABLE IF NOT EXISTS files (
    run_id VARCHAR NOT NULL,
    file_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    path_raw VARCHAR,
    lang VARCHAR,
    license VARCHAR,
    bytes BIGINT NOT NULL,
    content_hash VARCHAR,
    decision VARCHAR NOT NULL,
    reason VARCHAR,
    duplicate_of VARCHAR,
    mix_repeats BIGINT,
    shard VARCHAR,
    source VARCHAR NOT NULL,
    max_line_length BIGINT,
    avg_line_length DOUBLE,
    alnum_fraction DOUBLE,
    syntax_error_ratio DOUBLE,
    secrets_redacted BIGINT,
    secret_kinds VARCHAR,
    contamination_source VARCHAR,
    contamination_span VARCHAR,
    cluster_id VARCHAR,
    perplexity DOUBLE,
    quality_score DOUBLE,
    PRIMARY KEY (run_id, file_id)
);

CREATE TABLE IF NOT EXISTS shards (
    run_id VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    rows BIGINT NOT NULL,
    bytes BIGINT NOT NULL,
    sha256 VARCHAR NOT NULL,
    PRIMARY KEY (run_id, path)
);

CREATE TABLE IF NOT EXISTS validations (
    run_id VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    backend VARCHAR NOT NULL,
    fail_to_pass VARCHAR[] NOT NULL,
    pass_to_pass VARCHAR[] NOT NULL,
    flaky VARCHAR[] NOT NULL,
    missing_f2p VARCHAR[] NOT NULL,
    missing_p2p VARCHAR[] NOT NULL,
    notes VARCHAR[] NOT NULL,
    duration_s DOUBLE NOT NULL,
    PRIMARY KEY (run_id, instance_id)
);

CREATE TABLE IF NOT EXISTS teacher_calls (
    call_id VARCHAR NOT NULL,
    run_id VARCHAR,
    custom_id VARCHAR,
    request_hash VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    model_id VARCHAR NOT NULL,
    backend VARCHAR NOT NULL,
    n BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    latency_s DOUBLE NOT NULL,
    attempts BIGINT NOT NULL,
    status VARCHAR NOT NULL,
    error VARCHAR,
    cached BOOLEAN NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (call_id)
);

CREATE TABLE IF NOT EXISTS repo_orders (
    run_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    files BIGINT NOT NULL,
    edges BIGINT NOT NULL,
    imports BIGINT NOT NULL,
    unresolved BIGINT NOT NULL,
    external BIGINT NOT NULL,
    cycles_broken BIGINT NOT NULL,
    parse_errors BIGINT NOT NULL,
    PRIMARY KEY (run_id, repo)
);

CREATE TABLE IF NOT EXISTS repo_docs (
    run_id VARCHAR NOT NULL,
    doc_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    part BIGINT NOT NULL,
    tokens BIGINT NOT NULL,
    file_ids VARCHAR[] NOT NULL,
    bucket VARCHAR,
    long_output BOOLEAN,
    fim VARCHAR,
    fim_files BIGINT NOT NULL,
    PRIMARY KEY (run_id, doc_id)
);

CREATE TABLE IF NOT EXISTS token_counts (
    run_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    lang VARCHAR NOT NULL,
    files BIGINT NOT NULL,
    tokens BIGINT NOT NULL,
    PRIMARY KEY (run_id, split, repo, lang)
);

CREATE TABLE IF NOT EXISTS pack_outputs (
    run_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    seq_len BIGINT NOT NULL,
    sequences BIGINT NOT NULL,
    documents BIGINT NOT NULL,
    tokens BIGINT NOT NULL,
    padding_tokens BIGINT NOT NULL,
    dropped_tokens BIGINT NOT NULL,
    tokenizer VARCHAR NOT NULL,
    folder VARCHAR NOT NULL,
    PRIMARY KEY (run_id, split, seq_len)
);

CREATE TABLE IF NOT EXISTS clusters (
    run_id VARCHAR NOT NULL,
    cluster_id VARCHAR NOT NULL,
    size BIGINT NOT NULL,
    representative VARCHAR NOT NULL,
    PRIMARY KEY (run_id, cluster_id)
);

CREATE TABLE IF NOT EXISTS language_mix (
    run_id VARCHAR NOT NULL,
    lang VARCHAR NOT NULL,
    weight DOUBLE NOT NULL,
    files_before BIGINT NOT NULL,
    files_after BIGINT NOT NULL,
    downsampled BIGINT NOT NULL,
    repeated BIGINT NOT NULL,
    bytes_before BIGINT NOT NULL,
    bytes_after BIGINT NOT NULL,
    tokens_before BIGINT,
    tokens_after BIGINT,
    PRIMARY KEY (run_id, lang)
);

CREATE TABLE IF NOT EXISTS long_buckets (
    run_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    bucket VARCHAR NOT NULL,
    min_tokens BIGINT NOT NULL,
    max_tokens BIGINT,
    long BOOLEAN NOT NULL,
    documents BIGINT NOT NULL,
    tokens BIGINT NOT NULL,
    selected_documents BIGINT NOT NULL,
    selected_tokens BIGINT NOT NULL,
    seq_len BIGINT NOT NULL,
    PRIMARY KEY (run_id, split, bucket)
);

CREATE TABLE IF NOT EXISTS repo_baselines (
    run_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    runner VARCHAR,
    language VARCHAR NOT NULL,
    toolchain VARCHAR NOT NULL,
    toolchain_mismatch VARCHAR,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    detail VARCHAR NOT NULL,
    tests BIGINT NOT NULL,
    flaky_tests VARCHAR[] NOT NULL,
    failing_tests BIGINT NOT NULL,
    suite_s DOUBLE NOT NULL,
    source_lines BIGINT NOT NULL,
    entities BIGINT NOT NULL,
    covered_entities BIGINT NOT NULL,
    feature_detail VARCHAR NOT NULL,
    clean_commit VARCHAR NOT NULL,
    PRIMARY KEY (run_id, repo)
);

CREATE TABLE IF NOT EXISTS candidates (
    run_id VARCHAR NOT NULL,
    candidate_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    strategy VARCHAR NOT NULL,
    family VARCHAR NOT NULL,
    entity VARCHAR NOT NULL,
    seed BIGINT NOT NULL,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    detail VARCHAR NOT NULL,
    duplicate_of VARCHAR,
    stage VARCHAR NOT NULL,
    instance_id VARCHAR,
    fail_to_pass BIGINT NOT NULL,
    pass_to_pass BIGINT NOT NULL,
    changed_lines BIGINT NOT NULL,
    changed_files BIGINT NOT NULL,
    entities BIGINT NOT NULL,
    sandbox_s DOUBLE NOT NULL,
    teacher_tokens BIGINT NOT NULL,
    parent_ids VARCHAR[] NOT NULL,
    PRIMARY KEY (run_id, candidate_id)
);

CREATE TABLE IF NOT EXISTS tasks (
    run_id VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    candidate_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    strategy VARCHAR NOT NULL,
    family VARCHAR NOT NULL,
    base_commit VARCHAR NOT NULL,
    fail_to_pass BIGINT NOT NULL,
    pass_to_pass BIGINT NOT NULL,
    changed_files BIGINT NOT NULL,
    changed_lines BIGINT NOT NULL,
    hunks BIGINT NOT NULL,
    entities BIGINT NOT NULL,
    entity VARCHAR NOT NULL,
    env_path VARCHAR NOT NULL,
    statement_style VARCHAR NOT NULL,
    statement_chars BIGINT NOT NULL,
    statement_note VARCHAR NOT NULL,
    long_horizon BOOLEAN NOT NULL,
    PRIMARY KEY (run_id, instance_id)
);

CREATE TABLE IF NOT EXISTS repo_envs (
    run_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    env_key VARCHAR NOT NULL,
    profile VARCHAR NOT NULL,
    plan VARCHAR NOT NULL,
    plan_source VARCHAR NOT NULL,
    step_sources VARCHAR NOT NULL,
    toolchain VARCHAR NOT NULL,
    toolchain_mismatch VARCHAR,
    installer VARCHAR NOT NULL,
    attempts BIGINT NOT NULL,
    seconds DOUBLE NOT NULL,
    outcome VARCHAR NOT NULL,
    reason VARCHAR,
    failed_step VARCHAR NOT NULL,
    log_tail VARCHAR NOT NULL,
    tasks BIGINT NOT NULL,
    notes VARCHAR[] NOT NULL,
    PRIMARY KEY (run_id, repo)
);

CREATE TABLE IF NOT EXISTS scores (
    run_id VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    scorer VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    value DOUBLE,
    PRIMARY KEY (run_id, item_id, scorer, kind)
);

CREATE TABLE IF NOT EXISTS attempts (
    run_id VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    policy_id VARCHAR NOT NULL,
    sample BIGINT NOT NULL,
    passed BOOLEAN NOT NULL,
    reason VARCHAR,
    patch VARCHAR NOT NULL,
    hint VARCHAR,
    duration_s DOUBLE NOT NULL,
    tokens BIGINT NOT NULL,
    PRIMARY KEY (run_id, instance_id, policy_id, sample)
);

CREATE TABLE IF NOT EXISTS difficulty (
    run_id VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    policy_id VARCHAR NOT NULL,
    k BIGINT NOT NULL,
    passes BIGINT,
    pass_rate DOUBLE,
    wilson_low DOUBLE,
    wilson_high DOUBLE,
    pass_vector BOOLEAN[] NOT NULL,
    error VARCHAR,
    PRIMARY KEY (run_id, instance_id, policy_id)
);

CREATE TABLE IF NOT EXISTS pool (
    instruction_id VARCHAR NOT NULL,
    task_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    prompt STRUCT(role VARCHAR, content VARCHAR)[] NOT NULL,
    repo VARCHAR NOT NULL,
    base_commit VARCHAR NOT NULL,
    repo_path VARCHAR NOT NULL,
    problem_statement VARCHAR NOT NULL,
    patch VARCHAR NOT NULL,
    test_patch VARCHAR NOT NULL,
    runner VARCHAR NOT NULL,
    test_files VARCHAR[] NOT NULL,
    fail_to_pass VARCHAR[] NOT NULL,
    pass_to_pass VARCHAR[] NOT NULL,
    aux_checks STRUCT(kind VARCHAR, command VARCHAR, patterns VARCHAR[], required BOOLEAN)[] NOT NULL,
    group_size BIGINT NOT NULL,
    pass_rate DOUBLE,
    difficulty_band VARCHAR NOT NULL,
    perplexity DOUBLE,
    scorer VARCHAR,
    perplexity_scorer VARCHAR,
    policy_id VARCHAR,
    source_files VARCHAR[] NOT NULL,
    strategy VARCHAR,
    statement_style VARCHAR,
    parent_ids VARCHAR[] NOT NULL,
    hints_text VARCHAR NOT NULL,
    created_at VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    environment_setup_commit VARCHAR NOT NULL,
    env_pins VARCHAR[] NOT NULL,
    interface VARCHAR NOT NULL,
    soundness_flags VARCHAR[] NOT NULL,
    PRIMARY KEY (instruction_id)
);

CREATE TABLE IF NOT EXISTS pool_drops (
    instruction_id VARCHAR NOT NULL,
    task_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    detail VARCHAR,
    PRIMARY KEY (instruction_id)
);

CREATE TABLE IF NOT EXISTS ledger (
    instruction_id VARCHAR NOT NULL,
    consumer VARCHAR NOT NULL,
    run VARCHAR,
    taken_at TIMESTAMP NOT NULL,
    returned_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS soundness (
    run_id VARCHAR NOT NULL,
    task_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    strategy VARCHAR NOT NULL,
    flag VARCHAR NOT NULL,
    flagged BOOLEAN NOT NULL,
    evidence VARCHAR NOT NULL,
    action VARCHAR NOT NULL,
    PRIMARY KEY (run_id, task_id, flag)
);

CREATE TABLE IF NOT EXISTS judgements (
    run_id VARCHAR NOT NULL,
    task_id VARCHAR NOT NULL,
    teacher VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    solvable BOOLEAN,
    issues VARCHAR[] NOT NULL,
    intent_completeness BIGINT,
    time_bucket VARCHAR,
    confidence DOUBLE,
    reasoning VARCHAR NOT NULL,
    cached BOOLEAN NOT NULL,
    PRIMARY KEY (run_id, task_id)
);

CREATE TABLE IF NOT EXISTS agent_runs (
    run_id VARCHAR NOT NULL,
    trajectory_id VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    repo VARCHAR NOT NULL,
    policy_id VARCHAR NOT NULL,
    sample BIGINT NOT NULL,
    rerun BIGINT NOT NULL,
    exit_status VARCHAR NOT NULL,
    masked BOOLEAN NOT NULL,
    passed BOOLEAN,
    reason VARCHAR,
    steps BIGINT NOT NULL,
    segments BIGINT NOT NULL,
    tokens_in BIGINT NOT NULL,
    tokens_out BIGINT NOT NULL,
    cached_calls BIGINT NOT NULL,
    wall_s DOUBLE NOT NULL,
    grade_s DOUBLE NOT NULL,
    diff VARCHAR NOT NULL,
    PRIMARY KEY (run_id, trajectory_id)
);

CREATE TABLE IF NOT EXISTS agent_tasks (
    run_id VARCHAR NOT NULL,
    instance_id VARCHAR NOT NULL,
    policy_id VARCHAR NOT NULL,
    runs BIGINT NOT NULL,
    masked BIGINT NOT NULL,
    measured BIGINT NOT NULL,
    passes BIGINT NOT NULL,
    pass_at_1 DOUBLE,
    pass_at_k DOUBLE,
    tokens_in BIGINT NOT NULL,
    tokens_out BIGINT NOT NULL,
    seconds DOUBLE NOT NULL,
    error VARCHAR,
    PRIMARY KEY (run_id, instance_id, policy_id)
);

CREATE TABLE IF NOT EXISTS trajectory_segments (
    run_id VARCHAR NOT NULL,
    trajectory_id VARCHAR NOT NULL,
    segment BIGINT NOT NULL,
    continues BIGINT,
    summary VARCHAR,
    messages BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    reward DOUBLE,
    PRIMARY KEY (run_id, trajectory_id, segment)
);
