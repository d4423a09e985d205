"""Secrets and PII: every supported kind planted in code is redacted, the code still
parses, counts are recorded per kind, and obvious non-secrets are left alone."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import numpy as np
import pytest
from datatrove.data import Document

from datagen.config.curate import SecretsConfig
from datagen.curate.secrets import SecretPack, SecretsStep
from datagen.curate.syntax import error_ratio
from datagen.errors import UserError


def rand(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choices(alphabet, k=n))


def planted_secrets(rng: random.Random) -> dict[str, tuple[str, str]]:
    """kind -> (python source line(s) containing the secret, the secret)."""
    upper = string.ascii_uppercase + string.digits
    b64 = string.ascii_letters + string.digits + "+/"
    key_body = "\\n".join(rand(rng, 64, b64) for _ in range(4))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----"
    s = {
        "aws_access_key_id": "AKIA" + rand(rng, 16, upper),
        "aws_secret_access_key": rand(rng, 40, b64),
        "github_token": "ghp_" + rand(rng, 36),
        "gitlab_token": "glpat-" + rand(rng, 20),
        "slack_token": "xoxb-" + rand(rng, 12, string.digits) + "-" + rand(rng, 24),
        "stripe_key": "sk_live_" + rand(rng, 24),
        "openai_key": "sk-proj-" + rand(rng, 48),
        "jwt": "eyJ" + rand(rng, 20) + ".eyJ" + rand(rng, 30) + "." + rand(rng, 40),
        "bearer_token": rand(rng, 32),
        "url_password": "pw" + rand(rng, 10),
        "password_assignment": "Hunter2!" + rand(rng, 4),
        "high_entropy_secret": rand(rng, 40),
        "email": "jane.doe" + rand(rng, 3, string.digits) + "@acme-corp.io",
        "ip_address": f"84.{rng.randint(10, 200)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "private_key": pem,
        "gcp_private_key_id": rand(rng, 40, "0123456789abcdef"),
    }
    lines = {
        "aws_access_key_id": f'AWS_KEY = "{s["aws_access_key_id"]}"',
        "aws_secret_access_key": f'aws_secret_access_key = "{s["aws_secret_access_key"]}"',
        "github_token": f'client = Github("{s["github_token"]}")',
        "gitlab_token": f"GITLAB = '{s['gitlab_token']}'",
        "slack_token": f'slack = WebClient(token="{s["slack_token"]}")',
        "stripe_key": f'stripe.api_key = "{s["stripe_key"]}"',
        "openai_key": f'client = OpenAI(api_key="{s["openai_key"]}")',
        "jwt": f'session = "{s["jwt"]}"',
        "bearer_token": f'headers = {{"Authorization": "Bearer {s["bearer_token"]}"}}',
        "url_password": f'DB = "postgres://admin:{s["url_password"]}@db.internal:5432/app"',
        "password_assignment": f'config = {{"db_password": "{s["password_assignment"]}"}}',
        "high_entropy_secret": f'signing_salt = "{s["high_entropy_secret"]}"',
        "email": f"# Maintainer: Jane Doe <{s['email']}>",
        "ip_address": f'SERVER = "{s["ip_address"]}"',
        "private_key": f'KEY = """{pem}"""',
        "gcp_private_key_id": f'SA = {{"private_key_id": "{s["gcp_private_key_id"]}"}}',
    }
    return {k: (lines[k], s[k]) for k in s}


def assert_prefilter_superset(pack: SecretPack, text: str) -> None:
    """A rule the batch prefilter rules out finds nothing in ``text`` on its own."""
    mask = pack.candidates([text])[0]
    for j, rule in enumerate(pack.rules):
        if not mask[j]:
            alone = np.zeros(len(pack.rules), bool)
            alone[j] = True
            assert not pack.find(text, alone), rule.kind


@pytest.fixture(scope="module")
def pack() -> SecretPack:
    return SecretPack.load()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_kind_is_redacted_and_code_still_parses(pack, seed):
    planted = planted_secrets(random.Random(seed))
    assert {r.kind for r in pack.rules} == set(planted)  # every rule is exercised
    source = "import os\n\n" + "\n".join(line for line, _ in planted.values()) + "\n"
    assert error_ratio(source, "python") == 0.0
    redacted, counts = pack.redact(source)
    for kind, (_, secret) in planted.items():
        assert secret not in redacted, kind
        assert counts[kind] == 1, (kind, counts)
    assert error_ratio(redacted, "python") == 0.0
    # The batch prefilter (polars' Rust regex) lets every planted secret through.
    assert_prefilter_superset(pack, source)
    assert pack.redact(source, pack.candidates([source])[0]) == (redacted, counts)
    assert '"<AWS_ACCESS_KEY_ID>"' in redacted and 'KEY = """<PRIVATE_KEY>"""' in redacted


def test_gcp_service_account_json_stays_valid_json(pack):
    rng = random.Random(7)
    body = "\\n".join(rand(rng, 64) for _ in range(5))
    sa = {
        "type": "service_account",
        "private_key_id": rand(rng, 40, "0123456789abcdef"),
        "private_key": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
        "client_email": "bot@proj-123.iam.gserviceaccount.com",
    }
    redacted, counts = pack.redact(json.dumps(sa, indent=2))
    out = json.loads(redacted)
    assert out["private_key"] == "<PRIVATE_KEY>\n"
    assert out["private_key_id"] == "<GCP_PRIVATE_KEY_ID>"
    assert out["client_email"] == "<EMAIL>"
    assert counts == {"private_key": 1, "gcp_private_key_id": 1, "email": 1}


NOT_SECRETS = """\
__version__ = "1.2.3.4"
HOST = "127.0.0.1"
BIND = "0.0.0.0"
LAN = "192.168.1.20"
DNS = "8.8.8.8"
contact = "someone@example.com"
remote = "git@github.com:owner/repo.git"
password = os.environ["DB_PASSWORD"]
password = "password"
password_field = "user_password"
token_type = "bearer"
api_key = "${API_KEY}"
url = "postgres://user:{password}@localhost/db"
sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
checksum = "aGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8="
name = "ThisIsJustALongCamelCaseName"
y = x @ weights.T
"js-tokens": "^10.0.0",
"design-tokens": "~2.1.0-beta.3",
token_version = "v1.10.2"
"""


def test_obvious_non_secrets_are_left_alone(pack):
    redacted, counts = pack.redact(NOT_SECRETS)
    assert redacted == NOT_SECRETS, counts


def test_step_records_counts_per_kind(pack):
    planted = planted_secrets(random.Random(5))
    text = "\n".join(planted[k][0] for k in ("email", "ip_address", "github_token")) + "\n"
    text += planted["email"][0].replace("jane", "john") + "\n"
    docs = [
        Document(text=text, id="a", metadata={"decision": "kept"}),
        Document(text="x = 1\n", id="b", metadata={"decision": "kept"}),
    ]
    a, b = list(SecretsStep(SecretsConfig()).run(docs))
    assert a.metadata["secrets_redacted"] == 4
    assert json.loads(a.metadata["secret_kinds"]) == {
        "email": 2,
        "github_token": 1,
        "ip_address": 1,
    }
    assert b.metadata["secrets_redacted"] == 0 and b.metadata["secret_kinds"] is None
    assert b.text == "x = 1\n"


def test_bad_rule_pack_is_a_user_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - kind: x\n    placeholder: '<X>'\n    pattern: '(unclosed'\n")
    with pytest.raises(UserError, match="rule 1 \\(x\\): bad regex"):
        SecretPack.load(str(bad))


def varied_sources(rng: random.Random) -> list[str]:
    """Planted secrets in many surroundings and spellings (quotes, case, CRLF, unquoted
    config, non-ASCII text around them, truncated near-misses), plus files of real code."""
    root = Path(__file__).resolve().parents[2]
    real = sorted(p for d in ("datagen", "tests", "filters", "sample_data") for p in (root / d).rglob("*")
                  if p.is_file() and p.suffix in {".py", ".yaml", ".go", ".rs", ".js", ".c", ".h", ".md", ".toml"})
    sources = [p.read_text(encoding="utf-8", errors="replace") for p in real]
    filler = ["x = compute(a, b)", "# café naïve — ✓", "def f(key):\n    return key", "token_type = 'bearer'", ""]
    for seed in range(40):
        planted = planted_secrets(random.Random(seed))
        lines = []
        for line, secret in planted.values():
            variant = rng.choice([
                line,
                line.replace('"', "'"),
                line.upper() if "=" not in secret else line,
                line.replace(secret, secret[: max(1, len(secret) - 5)]),  # near-miss
                f"export MY_SECRET={secret}" if "\n" not in secret else line,
                f"  api_token: {secret}" if "\n" not in secret else line,
                f'{{"password": "{secret}", "user": "é"}}' if "\n" not in secret else line,
            ])
            lines += [variant, rng.choice(filler)]
        rng.shuffle(lines)
        sources.append(rng.choice(["\n", "\r\n"]).join(lines) + "\n")
    return sources


def test_batch_prefilter_gives_the_same_redactions_as_the_full_search(pack):
    sources = varied_sources(random.Random(11))
    ruled_out = kinds = 0
    for start in range(0, len(sources), 64):
        batch = sources[start : start + 64]
        mask = pack.candidates(batch)
        ruled_out += int((~mask).sum())
        for text, rules in zip(batch, mask, strict=True):
            full = pack.redact(text)
            assert pack.redact(text, rules) == full
            kinds += len(full[1])
    assert ruled_out > 1000 and kinds > 200  # the prefilter skips work and secrets are found


def test_staged_prefilter_runs_each_stage_on_what_the_earlier_ones_let_through(tmp_path):
    staged = tmp_path / "staged.yaml"
    staged.write_text(
        "rules:\n"
        "  - {kind: a, placeholder: '<A>', pattern: 'key=\\w+', prefilter: 'key='}\n"
        "  - {kind: b, placeholder: '<B>', pattern: 'key=\\d+', prefilter: ['key=', 'key=\\d']}\n"
    )
    pack = SecretPack.load(str(staged))
    assert pack.rules[1].prefilter == ("key=", r"key=\d")
    texts = ["key=abc", "key=123", "x=1", "other 1"]
    assert pack.candidates(texts).tolist() == [[True, False], [True, True], [False, False], [False, False]]
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - {kind: x, placeholder: '<X>', pattern: 'a', prefilter: ['a', '(?<=a)b']}\n")
    with pytest.raises(UserError, match=r"rule 1 \(x\): prefilter is not a valid Rust regex: \(\?<=a\)b"):
        SecretPack.load(str(bad))
