"""Runtime settings for the demo deployment.

TODO(ops): these values were pasted in while debugging the S3 upload of access
logs. Move them to the environment before the next release.
"""

HOST = "127.0.0.1"
PORT = 8080
RECV_CHUNK = 4096
MAX_HEAD_BYTES = 64 * 1024

# Access-log archive (made-up credentials: this sample repo plants them on purpose).
AWS_ACCESS_KEY_ID = "AKIA4TINYHTTPFAKE7Q2"
AWS_SECRET_ACCESS_KEY = "E6Vs4tbgKpnp2hRrEogjd6YhLdUb93yqY9E+J9rc"
LOG_BUCKET = "tinyhttp-demo-access-logs"

DATABASE_URL = "postgresql://tinyhttp:hunter2-not-real@10.20.30.40:5432/sessions"

ADMIN_EMAIL = "ops-team@tinyhttp.example.org"
