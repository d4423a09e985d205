"""Secrets in config files and typed code: unquoted values (YAML, .env, shell, .properties),
annotated assignments, hex keys and IPv6 addresses, each with the non-secrets next to them."""

from __future__ import annotations

import ast
import random
import string

import pytest
import yaml

from datagen.curate.secrets import SecretPack
from tests.curate.test_secrets import assert_prefilter_superset


@pytest.fixture(scope="module")
def pack() -> SecretPack:
    return SecretPack.load()


def rand(rng: random.Random, n: int, alphabet: str) -> str:
    return "".join(rng.choices(alphabet, k=n))


def password(rng: random.Random) -> str:
    """A password of letters, digits and a sign, like people type."""
    return rand(rng, 5, string.ascii_letters) + rand(rng, 3, string.digits) + "!" + rand(rng, 3, string.ascii_letters)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_unquoted_config_passwords_are_redacted_and_yaml_stays_valid(pack, seed):
    rng = random.Random(seed)
    pw = {
        k: password(rng)
        for k in ("yaml", "nested", "list", "env", "export", "props", "ini", "comment", "docker", "compose")
    }
    config = (
        f"password: {pw['yaml']}\n"
        "database:\n"
        "  host: db.internal\n"
        f"  db_password: {pw['nested']}\n"
        "users:\n"
        f"  - secret: {pw['list']}\n"
        f"api_token: {pw['comment']}  # rotated monthly\n"
    )
    redacted, counts = pack.redact(config)
    for k in ("yaml", "nested", "list", "comment"):
        assert pw[k] not in redacted, k
    assert counts == {"password_assignment": 4}
    data = yaml.safe_load(redacted)
    assert data["password"] == "<PASSWORD>" and data["database"]["db_password"] == "<PASSWORD>"
    assert data["users"][0]["secret"] == "<PASSWORD>" and data["api_token"] == "<PASSWORD>"
    assert data["database"]["host"] == "db.internal"
    other = (
        f"DB_PASSWORD={pw['env']}\n"
        f"export REDIS_PASSWORD={pw['export']}\n"
        f"db.password={pw['props']}\n"
        f"[db]\npassword = {pw['ini']}\n"
        f"ENV API_TOKEN={pw['docker']}\n"
        "environment:\n"
        f"  - POSTGRES_PASSWORD={pw['compose']}\n"
    )
    redacted, counts = pack.redact(other)
    assert counts == {"password_assignment": 6}
    assert not any(pw[k] in redacted for k in ("env", "export", "props", "ini", "docker", "compose"))
    assert 'DB_PASSWORD="<PASSWORD>"\nexport REDIS_PASSWORD="<PASSWORD>"\n' in redacted
    for text in (config, other):
        assert_prefilter_superset(pack, text)
        assert pack.redact(text, pack.candidates([text])[0]) == pack.redact(text)


CONFIG_NOT_SECRETS = """\
password:
password: ""
password: ${DB_PASSWORD}
password: $DB_PASSWORD
password: "{{ vault_db_password }}"
password: {{ vault_db_password }}
password: null
password: None
password: ~
password: changeme
password: !vault |
password: *db_password
secret_name: prod-db-credentials
token_expiry: 3600
max_tokens: 4096
tokens: 100000
password_min_length: 12
DB_PASSWORD=
DB_PASSWORD=$(cat /run/secrets/db)
PASSWORD=your_password_here
"""

CODE_NOT_SECRETS = """\
password: str
password: Optional[str] = None
password = get_password()
password = password
password = self.password
password = args.db_password
password = PASSWORD
password = userPassword
password = os.environ["DB_PASSWORD"]
secret = hashlib.sha256(data).hexdigest()
token = request.headers.get("X-Token")
connect(
    password=user_pw2
)
SIGNATURE_HMAC = SIGNATURE_HMAC_SHA1  # deprecated alias
NO_CHECK_TOKENS = 0x100000
TOKENS = 1e6
KEY = "PYTORCH_TESTING_DEVICE_ONLY_FOR"
"""


def test_obvious_non_secrets_in_config_and_code_are_left_alone(pack):
    for text in (CONFIG_NOT_SECRETS, CODE_NOT_SECRETS):
        redacted, counts = pack.redact(text)
        assert redacted == text, counts
    ast.parse("from typing import Optional\n" + CODE_NOT_SECRETS.replace("password: str\n", "password: str = ''\n"))


HEX = string.hexdigits[:16]


@pytest.mark.parametrize("seed", [1, 2])
def test_annotated_assignments_and_hex_keys_are_redacted(pack, seed):
    rng = random.Random(seed)
    s = {k: rand(rng, 40, HEX) for k in ("client", "signing", "salt", "api", "b64")}
    s["b64"] = rand(rng, 32, string.ascii_lowercase + string.digits)
    source = (
        "class Settings(BaseSettings):\n"
        f'    client_secret: str = "{s["client"]}"\n'
        f'    api_key: SecretStr = "{s["api"]}"\n'
        f'SESSION_SIGNING = "{s["signing"]}"\n'
        f"PASSWORD_SALT = '{s['salt']}'\n"
        f'auth = {{"hmac_key": "{s["b64"]}"}}\n'
    )
    redacted, counts = pack.redact(source)
    for k, v in s.items():
        assert v not in redacted, k
    assert sum(counts.values()) == 5, counts
    ast.parse(redacted)
    assert_prefilter_superset(pack, source)
    assert pack.redact(source, pack.candidates([source])[0]) == (redacted, counts)
    # the same line without the annotation is redacted the same way
    plain = pack.redact(f'client_secret = "{s["client"]}"\n')[0]
    assert pack.redact(f'client_secret: str = "{s["client"]}"\n')[0] == plain.replace(" =", ": str =", 1)


def test_hashes_in_non_secret_contexts_are_left_alone(pack):
    rng = random.Random(9)
    h = [rand(rng, 64, HEX) for _ in range(10)]
    text = (
        f'sha256 = "{h[0]}"\n'
        f'checksum = "{h[1]}"\n'
        f'DIGEST = "{h[2]}"\n'
        f'commit = "{h[3][:40]}"\n'
        f'file_hash = "{h[4]}"\n'
        f'etag = "{h[5][:32]}"\n'
        f'uuid = "{h[6][:32]}"\n'
        f'{{"integrity": "sha512-{h[7]}"}}\n'
        f'cache_key = "{h[8]}"\n'
        f'public_key = "{h[9]}"\n'
        'signing_key = "0000000000000000000000000000000000000000"\n'
    )
    redacted, counts = pack.redact(text)
    assert redacted == text, counts


def test_global_ipv6_addresses_are_redacted_others_left_alone(pack):
    rng = random.Random(4)
    public = [
        f"2a0{rng.randint(1, 9)}:{rand(rng, 4, HEX[1:])}:{rand(rng, 3, HEX[1:])}::{rand(rng, 2, HEX[1:])}",
        ":".join(["2600", *(rand(rng, 4, HEX[1:]) for _ in range(7))]),
    ]
    text = (
        f'SERVER = "{public[0]}"\n'
        f"# reach us at [{public[1]}]:8443 or via 2001:4860:4860::8888\n"
        'LOCAL = ["::1", "fe80::1ff:fe23:4567:890a", "fd12:3456:789a:1::1", "2001:db8:85a3::8a2e:370:7334"]\n'
        "y = x[2000::2]; std::vector<int> v; mac = '00:1a:2b:3c:4d:5e'; t = '12:30:45'\n"
        "add = dead::beef:cafe:1\n"
    )
    redacted, counts = pack.redact(text)
    assert counts == {"ip_address": 2}, counts
    assert not any(p in redacted for p in public)
    assert 'SERVER = "<IP_ADDRESS>"\n# reach us at [<IP_ADDRESS>]:8443 or via 2001:4860:4860::8888\n' in redacted
    assert redacted.split("\n", 2)[2] == text.split("\n", 2)[2]
    assert_prefilter_superset(pack, text)
