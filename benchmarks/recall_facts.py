"""Planted facts for a fair probe of recall: answers hidden in realistic tool outputs, asked for later.

    FACTS                    -> tuple[PlantedFact, ...]   (45 facts, one scene each)
    distractors(seed, count) -> list[Scene]               look-alike outputs, holding no answer

Terms:
- a *scene* is one tool call as the session saw it: the tool (read_file, bash or grep), its
  arguments and its whole output, formatted the way the agent's own tools format it (read_file
  numbers lines like `cat -n`, bash ends with its `[exit code N]` line, grep prints path:line:text).
- a *planted fact* is a short verbatim substring of one scene's output (a value, a line, an error
  message), placed among plausible neighbours (the other ports of the same file, the other errors of
  the same run), with three questions a developer would ask about it many turns later:
  [0] direct: may name the file or the command, never the answer;
  [1] paraphrase: the person's own words for what the output says ("accept connections" for a
      listener's port, "how many times will it try" for max_attempts);
  [2] vague: short and indirect, what someone who forgot the details would ask.
  Every question carries enough meaning to pick out one scene and one line among all of a
  session's outputs, as a competent human reader would.
- a *distractor* is a scene from the same project that looks like the facts' scenes (other
  configs with other ports and timeouts, other test runs with other errors, logs, diffs, package
  lists) but holds none of the answers and names none of the facts' files or commands.

The questions were written as a user would ask them, without looking at any search method; the
data is meant to judge recall, not to suit one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["FACTS", "PlantedFact", "Scene", "distractors"]


@dataclass(frozen=True, slots=True)
class Scene:
    tool: str  # read_file, bash or grep
    args: dict[str, object]
    output: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class PlantedFact:
    scene: Scene
    answer: str  # verbatim in scene.output
    questions: tuple[str, ...]  # (direct, paraphrase, vague)


def _numbered(text: str) -> str:
    """A file's text as read_file shows it: `cat -n` numbering, six columns and a tab."""
    return "\n".join(f"{number:6d}\t{line}" for number, line in enumerate(text.splitlines(), 1))


def _read(path: str, text: str) -> Scene:
    return Scene("read_file", {"path": path}, _numbered(text))


def _bash(command: str, text: str, code: int = 0) -> Scene:
    return Scene("bash", {"command": command}, f"{text.rstrip()}\n[exit code {code}]", is_error=code != 0)


def _grep(pattern: str, path: str, text: str) -> Scene:
    return Scene("grep", {"pattern": pattern, "path": path}, text.rstrip())


def _table(header: tuple[str, str], rows: list[tuple[str, str]]) -> str:
    """Two columns aligned the way `pip list` aligns them."""
    width = max(len(name) for name, _ in [header, *rows])
    vwidth = max(len(version) for _, version in [header, *rows])
    lines = [f"{header[0]:<{width}} {header[1]}", f"{'-' * width} {'-' * vwidth}"]
    lines += [f"{name:<{width}} {version}" for name, version in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Configuration files
# ---------------------------------------------------------------------------------------------

_SERVER_TOML = """\
# Ledgerline API server configuration.
# Every value can be overridden by a LEDGERLINE_<SECTION>_<KEY> environment variable.

[server]
name = "ledgerline-api"
environment = "staging"
workers = 6
graceful_shutdown_seconds = 20

[listener]
host = "0.0.0.0"
port = 48213
backlog = 2048
keepalive_seconds = 75
proxy_protocol = false

[admin]
# Internal endpoints (/debug, /reload); never expose outside the pod.
host = "127.0.0.1"
port = 48290
enable_pprof = false

[metrics]
enabled = true
port = 9464
path = "/metrics"

[tls]
enabled = true
cert_file = "/etc/ledgerline/tls/server.crt"
key_file = "/etc/ledgerline/tls/server.key"
min_version = "1.2"

[limits]
max_body_bytes = 10485760
request_timeout_seconds = 30
max_concurrent_requests = 512

[cors]
allowed_origins = ["https://app.ledgerline.dev", "https://staging.ledgerline.dev"]
allow_credentials = true
max_age_seconds = 600
"""

_WORKER_YAML = """\
# Background worker settings, loaded by worker/cmd/worker at start-up.
worker:
  concurrency: 16
  queue: billing-jobs
  shutdown_grace: 30s
  heartbeat_every: 10s

redis:
  url: redis://redis.internal:6379/3
  pool_size: 20
  dial_timeout: 5s

jobs:
  charge_invoice:
    timeout_seconds: 120
    retry:
      max_attempts: 9
      backoff: exponential
      initial_delay: 4s
      max_delay: 10m
  send_receipt:
    timeout_seconds: 30
    retry:
      max_attempts: 4
      backoff: fixed
      initial_delay: 15s
  sync_exchange_rates:
    schedule: "*/30 * * * *"
    timeout_seconds: 300
    retry:
      max_attempts: 2
      backoff: fixed
      initial_delay: 1m
  close_billing_period:
    schedule: "5 0 1 * *"
    timeout_seconds: 1800
    retry:
      max_attempts: 1

dead_letter:
  enabled: true
  queue: billing-jobs-dlq
  retention: 168h

logging:
  level: info
  format: json
"""

_DB_INI = """\
; Database connections for the API and the migration runner.
; Passwords come from the environment (DB_PASSWORD, DB_RO_PASSWORD), never from this file.

[postgres]
host = pg-primary.internal.ledgerline.net
port = 5432
database = ledgerline
user = ledgerline_app
sslmode = verify-full
pool_size = 24
pool_timeout = 10
statement_timeout_ms = 15000

[postgres_replica]
host = pg-replica-2.internal.ledgerline.net
port = 5432
database = ledgerline
user = ledgerline_ro
sslmode = verify-full
pool_size = 12
max_lag_seconds = 5

[migrations]
lock_timeout_ms = 5000
schema = public
version_table = alembic_version

[analytics]
host = ch-analytics.internal.ledgerline.net
port = 9000
database = events
user = analytics_ro
"""

_ENV_STAGING = """\
# Staging environment. Copy to .env and fill in the secrets from the vault.
APP_ENV=staging
APP_DEBUG=false
LOG_LEVEL=info
PUBLIC_BASE_URL=https://staging.ledgerline.dev

DATABASE_URL=postgresql://ledgerline_app@pg-staging.internal:5432/ledgerline
REDIS_URL=redis://redis-staging.internal:6379/0

SESSION_COOKIE_NAME=ll_session
SESSION_TTL_SECONDS=5400
REMEMBER_ME_TTL_SECONDS=2592000
CSRF_TOKEN_TTL_SECONDS=3600
PASSWORD_RESET_TTL_SECONDS=1800
INVITE_LINK_TTL_SECONDS=604800

STRIPE_API_BASE=https://api.stripe.com
STRIPE_WEBHOOK_TOLERANCE_SECONDS=300
SMTP_HOST=smtp.mailgun.org
SMTP_PORT=587
MAIL_FROM=billing@ledgerline.dev

RATE_LIMIT_PER_MINUTE=600
EXPORT_MAX_ROWS=250000
FEATURE_FLAGS_FILE=config/features.json
SENTRY_TRACES_SAMPLE_RATE=0.2
"""

_FEATURES_JSON = """\
{
  "$schema": "./features.schema.json",
  "defaults": {
    "enabled": false,
    "rollout_percent": 0
  },
  "flags": {
    "bulk_export": {
      "enabled": true,
      "rollout_percent": 100,
      "owner": "data-platform"
    },
    "invoice_pdf_v2": {
      "enabled": true,
      "rollout_percent": 15,
      "owner": "billing",
      "note": "new renderer; widen once font embedding is fixed for CJK names"
    },
    "usage_based_pricing": {
      "enabled": true,
      "rollout_percent": 40,
      "owner": "billing",
      "allow_tenants": ["acme-eu", "northwind"]
    },
    "dunning_emails": {
      "enabled": false,
      "rollout_percent": 0,
      "owner": "growth"
    },
    "tax_engine_avalara": {
      "enabled": true,
      "rollout_percent": 100,
      "owner": "billing"
    },
    "customer_portal_dark_mode": {
      "enabled": true,
      "rollout_percent": 50,
      "owner": "web"
    }
  }
}
"""

_API_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "ledgerline-api"
version = "3.8.1"
description = "Billing and ledger API for Ledgerline"
readme = "README.md"
requires-python = ">=3.11"
license = { text = "Proprietary" }
dependencies = [
  "fastapi>=0.110",
  "uvicorn[standard]>=0.29",
  "sqlalchemy>=2.0",
  "alembic>=1.13",
  "psycopg[binary]>=3.1",
  "pydantic>=2.6",
  "pydantic-settings>=2.2",
  "stripe>=8.0",
  "structlog>=24.1",
  "httpx>=0.27",
]

[project.optional-dependencies]
dev = ["pytest>=8.1", "pytest-cov>=5.0", "pytest-xdist>=3.5", "mypy>=1.9", "ruff>=0.4"]

[project.scripts]
ledgerline-api = "ledgerline_api.main:run"

[tool.ruff]
line-length = 100
target-version = "py311"

[tool.mypy]
strict = true
plugins = ["pydantic.mypy"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra --strict-markers"
markers = ["integration: needs a running Postgres"]
"""

_STORAGE_TOML = """\
# File storage for uploads, exports and generated PDFs.
# The local paths are used in development and on the single-box demo; production uses [s3].

[local]
root = "/var/lib/ledgerline"
upload_dir = "/var/lib/ledgerline/uploads"
export_dir = "/var/lib/ledgerline/exports"
pdf_cache_dir = "/var/cache/ledgerline/pdf"
tmp_dir = "/var/tmp/ledgerline"
max_upload_mb = 25
allowed_types = ["application/pdf", "image/png", "image/jpeg", "text/csv"]

[s3]
enabled = true
bucket = "ledgerline-prod-documents"
region = "eu-central-1"
prefix = "invoices/"
presign_ttl_seconds = 900
server_side_encryption = "aws:kms"

[antivirus]
enabled = true
clamd_socket = "/run/clamav/clamd.ctl"
scan_timeout_seconds = 20

[cleanup]
tmp_max_age_hours = 6
export_retention_days = 14
schedule = "0 4 * * *"
"""


# ---------------------------------------------------------------------------------------------
# Test runs
# ---------------------------------------------------------------------------------------------

_PYTEST_INVOICES = """\
.........F.......F..                                                     [100%]
=================================== FAILURES ===================================
____________________________ test_discount_rounding ____________________________

    def test_discount_rounding():
        invoice = make_invoice(
            lines=[("seat", 3, Decimal("4.40"))],
            discount_percent=Decimal("12.5"),
        )
>       assert invoice.total_cents == 1155
E       assert 1160 == 1155
E        +  where 1160 = <Invoice id=inv_test_0007 status=draft total=11.60 EUR>.total_cents

tests/test_invoices.py:141: AssertionError
__________________________ test_credit_note_currency ___________________________

    def test_credit_note_currency():
        original = make_invoice(currency="GBP", lines=[("plan", 1, Decimal("49.00"))])
        note = issue_credit_note(original, amount=Decimal("10.00"))
>       assert note.currency == "GBP"
E       AssertionError: assert 'EUR' == 'GBP'
E
E         - GBP
E         + EUR

tests/test_invoices.py:188: AssertionError
=========================== short test summary info ============================
FAILED tests/test_invoices.py::test_discount_rounding - assert 1160 == 1155
FAILED tests/test_invoices.py::test_credit_note_currency - AssertionError: assert 'EUR' == 'GBP'
2 failed, 18 passed in 1.84s
"""

_PYTEST_AUTH = """\
........F..s....                                                         [100%]
=================================== FAILURES ===================================
__________________________ test_refresh_rotates_token __________________________

client = <starlette.testclient.TestClient object at 0x7f3a2c1d9e50>
user = <User id=usr_81 email='ana@example.com'>

    def test_refresh_rotates_token(client, user):
        login = client.post("/v1/auth/login", json={"email": user.email, "password": "pw"})
        refresh = login.json()["refresh_token"]
>       resp = client.post("/v1/auth/refresh", json={"refresh_token": refresh})

tests/test_auth.py:63:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
.venv/lib/python3.11/site-packages/starlette/testclient.py:597: in post
    return super().post(
.venv/lib/python3.11/site-packages/httpx/_client.py:1145: in post
    return self.request(
services/api/auth/routes.py:112: in refresh
    claims = decode_refresh_token(body.refresh_token)
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfODEiLCJleHAiOjE3MTU2OTk2MDB9.Qm9ndXNTaWc'

    def decode_refresh_token(token: str) -> RefreshClaims:
        payload = jwt.decode(token, settings.jwt_secret, algorithms=["HS256"])
        return RefreshClaims(
            user_id=payload["sub"],
>           tenant_id=payload["tenant_id"],
            expires_at=datetime.fromtimestamp(payload["exp"], tz=UTC),
        )
E       KeyError: 'tenant_id'

services/api/auth/tokens.py:88: KeyError
=========================== short test summary info ============================
FAILED tests/test_auth.py::test_refresh_rotates_token - KeyError: 'tenant_id'
1 failed, 14 passed, 1 skipped in 2.31s
"""

_PYTEST_PRORATION = """\
[+] Creating 2/0
 \u2714 Container ledgerline-postgres-1  Running                              0.0s
 \u2714 Container ledgerline-redis-1     Running                              0.0s
============================= test session starts ==============================
platform linux -- Python 3.11.4, pytest-8.1.1, pluggy-1.4.0
rootdir: /app
configfile: pyproject.toml
plugins: cov-5.0.0, xdist-3.5.0, anyio-4.3.0
collected 9 items

tests/billing/test_proration.py::test_full_period PASSED                 [ 11%]
tests/billing/test_proration.py::test_half_period PASSED                 [ 22%]
tests/billing/test_proration.py::test_upgrade_mid_cycle PASSED           [ 33%]
tests/billing/test_proration.py::test_downgrade_credit PASSED            [ 44%]
tests/billing/test_proration.py::test_zero_day_period FAILED             [ 55%]
tests/billing/test_proration.py::test_leap_february PASSED               [ 66%]
tests/billing/test_proration.py::test_quantity_change PASSED             [ 77%]
tests/billing/test_proration.py::test_trial_to_paid PASSED               [ 88%]
tests/billing/test_proration.py::test_currency_minor_units PASSED        [100%]

=================================== FAILURES ===================================
_____________________________ test_zero_day_period _____________________________
tests/billing/test_proration.py:77: in test_zero_day_period
    change = prorate_seat_change(sub, seats_before=3, seats_after=5, effective=sub.period_end)
services/api/billing/subscriptions.py:208: in prorate_seat_change
    delta = prorate(price_delta, days_used=remaining, days_in_period=period_days(sub))
services/api/billing/proration.py:142: in prorate
    share = Decimal(days_used) / Decimal(days_in_period)
E   decimal.DivisionByZero: [<class 'decimal.DivisionByZero'>]
=========================== short test summary info ============================
FAILED tests/billing/test_proration.py::test_zero_day_period - decimal.DivisionByZero: [<class 'decim...
========================= 1 failed, 8 passed in 0.62s ==========================
"""

_JEST_CART = """\
 PASS  src/cart/__tests__/totals.test.ts
 FAIL  src/cart/__tests__/formatPrice.test.ts
  \u25cf formatPrice \u203a pads minor units for EUR

    expect(received).toBe(expected) // Object.is equality

    Expected: "12.50 EUR"
    Received: "12.5 EUR"

      14 |   it("pads minor units for EUR", () => {
      15 |     const out = formatPrice(1250, "EUR", "en-IE");
    > 16 |     expect(out).toBe("12.50 EUR");
         |                 ^
      17 |   });
      18 |
      19 |   it("uses no minor units for JPY", () => {

      at Object.toBe (src/cart/__tests__/formatPrice.test.ts:16:17)

 PASS  src/cart/__tests__/coupon.test.ts
 PASS  src/cart/__tests__/useCart.test.tsx

Test Suites: 1 failed, 3 passed, 4 total
Tests:       1 failed, 31 passed, 32 total
Snapshots:   2 passed, 2 total
Time:        3.412 s
Ran all test suites matching /src\\/cart/i.
"""

_GO_TEST_WORKER = """\
=== RUN   TestEnqueueOrdersByRunAt
--- PASS: TestEnqueueOrdersByRunAt (0.00s)
=== RUN   TestClaimHidesJob
--- PASS: TestClaimHidesJob (0.01s)
=== RUN   TestDrainQueue
    scheduler_test.go:57: got 4 jobs, want 3
    scheduler_test.go:58: leftover job ids: [job_0001 job_0002 job_0003 job_0004]
--- FAIL: TestDrainQueue (0.03s)
=== RUN   TestBackoffCapped
--- PASS: TestBackoffCapped (0.00s)
=== RUN   TestShutdownWaitsForInflight
--- PASS: TestShutdownWaitsForInflight (0.21s)
FAIL
FAIL\tgithub.com/ledgerline/worker/internal/scheduler\t0.284s
=== RUN   TestParseCron
--- PASS: TestParseCron (0.00s)
=== RUN   TestNextRunAcrossDST
--- PASS: TestNextRunAcrossDST (0.00s)
PASS
ok  \tgithub.com/ledgerline/worker/internal/cron\t0.019s
=== RUN   TestVisibilityExtension
--- PASS: TestVisibilityExtension (0.05s)
=== RUN   TestAckRemovesJob
--- PASS: TestAckRemovesJob (0.01s)
PASS
ok  \tgithub.com/ledgerline/worker/internal/queue\t0.412s
?   \tgithub.com/ledgerline/worker/cmd/worker\t[no test files]
?   \tgithub.com/ledgerline/worker/cmd/reconcile\t[no test files]
FAIL
"""

# ---------------------------------------------------------------------------------------------
# Build and type-check errors
# ---------------------------------------------------------------------------------------------

_MYPY_API = """\
services/api/auth/routes.py:57: error: Function is missing a return type annotation  [no-untyped-def]
services/api/auth/routes.py:57: note: Use "-> None" if function does not return a value
services/api/billing/tax.py:41: error: Missing type parameters for generic type "dict"  [type-arg]
services/api/billing/tax.py:97: error: Incompatible return value type \
(got "Decimal | None", expected "Decimal")  [return-value]
services/api/billing/models.py:73: error: Argument 1 to "apply_credit" of "Invoice" has \
incompatible type "Decimal | None"; expected "Decimal"  [arg-type]
services/api/billing/models.py:118: error: Item "None" of "Customer | None" has no attribute \
"currency"  [union-attr]
services/api/billing/subscriptions.py:64: error: Unused "type: ignore" comment  [unused-ignore]
services/api/billing/subscriptions.py:203: error: Name "period_days" is not defined  [name-defined]
services/api/webhooks/dispatcher.py:29: error: Library stubs not installed for "requests"  [import-untyped]
services/api/webhooks/dispatcher.py:29: note: Hint: "python3 -m pip install types-requests"
services/api/webhooks/dispatcher.py:29: note: (or run "mypy --install-types" to install all \
missing stub packages)
services/api/webhooks/dispatcher.py:88: error: Returning Any from function declared to return \
"bool"  [no-any-return]
services/api/exports/csv_writer.py:22: error: Need type annotation for "buffer" \
(hint: "buffer: list[<type>] = ...")  [var-annotated]
services/api/exports/csv_writer.py:51: error: Argument "newline" to "open" has incompatible \
type "int"; expected "str | None"  [arg-type]
services/api/settings.py:14: error: Module "pydantic" has no attribute "BaseSettings"  [attr-defined]
services/api/settings.py:14: note: "BaseSettings" has moved to the pydantic-settings package
services/api/portal/views.py:188: error: Missing return statement  [return]
services/api/main.py:33: error: Call to untyped function "configure_logging" in typed context  \
[no-untyped-call]
services/api/main.py:71: error: "FastAPI" has no attribute "state_store"  [attr-defined]
Found 15 errors in 9 files (checked 148 source files)
"""

_TSC_WEB = """\
src/api/client.ts(112,7): error TS2322: Type 'string | undefined' is not assignable to type 'string'.
  Type 'undefined' is not assignable to type 'string'.
src/api/client.ts(140,23): error TS2345: Argument of type 'number' is not assignable to \
parameter of type 'string'.
src/components/InvoiceTable.tsx(58,17): error TS7006: Parameter 'row' implicitly has an 'any' type.
src/components/InvoiceTable.tsx(91,9): error TS2741: Property 'onSort' is missing in type \
'{ columns: Column[]; }' but required in type 'HeaderProps'.
src/hooks/useSession.ts(41,18): error TS2532: Object is possibly 'undefined'.
src/hooks/useSession.ts(63,5): error TS2322: Type 'Session | null' is not assignable to type 'Session'.
  Type 'null' is not assignable to type 'Session'.
src/pages/Checkout.tsx(24,10): error TS6133: 'useMemo' is declared but its value is never read.
src/pages/Checkout.tsx(130,31): error TS2339: Property 'taxRate' does not exist on type 'CartTotals'.
src/pages/Settings/Billing.tsx(77,14): error TS2769: No overload matches this call.
  Overload 1 of 2, '(props: SelectProps<string>): Element', gave the following error.
    Type '(value: number) => void' is not assignable to type '(value: string) => void'.
  Overload 2 of 2, '(props: SelectProps<string>, context: any): Element', gave the following error.
    Type '(value: number) => void' is not assignable to type '(value: string) => void'.
src/utils/dates.ts(9,3): error TS2554: Expected 2 arguments, but got 1.
src/utils/money.ts(18,12): error TS2365: Operator '+' cannot be applied to types 'bigint' and 'number'.

Found 12 errors in 7 files.

Errors  Files
     2  src/api/client.ts:112
     2  src/components/InvoiceTable.tsx:58
     2  src/hooks/useSession.ts:41
     2  src/pages/Checkout.tsx:24
     1  src/pages/Settings/Billing.tsx:77
     1  src/utils/dates.ts:9
     1  src/utils/money.ts:18
"""

_CARGO_BUILD = """\
   Compiling proc-macro2 v1.0.81
   Compiling unicode-ident v1.0.12
   Compiling serde v1.0.198
   Compiling memchr v2.7.2
   Compiling quote v1.0.36
   Compiling syn v2.0.60
   Compiling serde_derive v1.0.198
   Compiling clap_derive v4.5.4
   Compiling csv-core v0.1.11
   Compiling csv v1.3.0
   Compiling clap v4.5.4
   Compiling ledgerline-cli v0.6.2 (/home/dev/ledgerline/tools/cli)
warning: unused import: `std::io::Write`
 --> src/export.rs:3:5
  |
3 | use std::io::Write;
  |     ^^^^^^^^^^^^^^
  |
  = note: `#[warn(unused_imports)]` on by default

error[E0502]: cannot borrow `self.entries` as mutable because it is also borrowed as immutable
  --> src/index.rs:88:17
   |
84 |         let latest = self.entries.last();
   |                      ------------ immutable borrow occurs here
...
88 |                 self.entries.push(entry.clone());
   |                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here
89 |             }
90 |             if let Some(prev) = latest {
   |                                 ------ immutable borrow later used here

error[E0308]: mismatched types
   --> src/export.rs:141:20
    |
141 |         write_row(&mut out, row.amount)?;
    |         ---------           ^^^^^^^^^^ expected `&str`, found `i64`
    |         |
    |         arguments to this function are incorrect
    |
note: function defined here
   --> src/export.rs:17:4
    |
17  | fn write_row(out: &mut Vec<u8>, field: &str) -> io::Result<()> {
    |    ^^^^^^^^^ -----------------  -----------

Some errors have detailed explanations: E0308, E0502.
For more information about an error, try `rustc --explain E0308`.
warning: `ledgerline-cli` (bin "ledgerline") generated 1 warning
error: could not compile `ledgerline-cli` (bin "ledgerline") due to 2 previous errors; 1 warning emitted
"""

_MAKE_NATIVE = """\
make: Entering directory '/home/dev/ledgerline/native'
gcc -std=c11 -O2 -Wall -Wextra -Werror=implicit-function-declaration -fPIC -Iinclude \
-c src/base32.c -o build/base32.o
gcc -std=c11 -O2 -Wall -Wextra -Werror=implicit-function-declaration -fPIC -Iinclude \
-c src/varint.c -o build/varint.o
src/varint.c: In function 'varint_decode':
src/varint.c:57:19: warning: comparison of integer expressions of different signedness: \
'int' and 'size_t' {aka 'long unsigned int'} [-Wsign-compare]
   57 |     for (int i = 0; i < len; i++) {
      |                   ^
gcc -std=c11 -O2 -Wall -Wextra -Werror=implicit-function-declaration -fPIC -Iinclude \
-c src/checksum.c -o build/checksum.o
src/checksum.c: In function 'ledger_checksum':
src/checksum.c:214:9: error: implicit declaration of function 'crc32c_hw'; \
did you mean 'crc32c_sw'? [-Werror=implicit-function-declaration]
  214 |     h = crc32c_hw(h, buf, n);
      |         ^~~~~~~~~
      |         crc32c_sw
src/checksum.c:231:12: warning: unused variable 'tail' [-Wunused-variable]
  231 |     size_t tail = n & 7;
      |            ^~~~
cc1: some warnings being treated as errors
make: *** [Makefile:24: build/checksum.o] Error 1
make: Leaving directory '/home/dev/ledgerline/native'
"""


# ---------------------------------------------------------------------------------------------
# Stack traces from scripts
# ---------------------------------------------------------------------------------------------

_BACKFILL = """\
2024-05-14 10:02:11,204 INFO backfill: connecting to pg-staging.internal:5432/ledgerline
2024-05-14 10:02:11,377 INFO backfill: 18,442 payments since 2024-01-01 without ledger entries
2024-05-14 10:02:13,915 INFO backfill: batch 1/19 written (1000 rows, 2.5s)
2024-05-14 10:02:16,402 INFO backfill: batch 2/19 written (1000 rows, 2.4s)
2024-05-14 10:02:18,990 INFO backfill: batch 3/19 written (1000 rows, 2.6s)
2024-05-14 10:02:21,311 INFO backfill: batch 4/19 written (1000 rows, 2.3s)
2024-05-14 10:02:22,048 WARNING backfill: payment pay_9QxT71 has no customer; skipped
Traceback (most recent call last):
  File "/home/dev/ledgerline/.venv/lib/python3.11/site-packages/sqlalchemy/engine/base.py", \
line 1967, in _exec_single_context
    self.dialect.do_execute(
  File "/home/dev/ledgerline/.venv/lib/python3.11/site-packages/sqlalchemy/engine/default.py", \
line 924, in do_execute
    cursor.execute(statement, parameters)
  File "/home/dev/ledgerline/.venv/lib/python3.11/site-packages/psycopg/cursor.py", line 732, in execute
    raise ex.with_traceback(None)
psycopg.errors.UniqueViolation: duplicate key value violates unique constraint \
"ledger_entries_external_ref_key"
DETAIL:  Key (external_ref)=(pay_9QvM02) already exists.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/dev/ledgerline/scripts/backfill_ledger.py", line 143, in <module>
    main()
  File "/home/dev/ledgerline/scripts/backfill_ledger.py", line 131, in main
    write_batch(session, batch)
  File "/home/dev/ledgerline/scripts/backfill_ledger.py", line 88, in write_batch
    session.flush()
  File "/home/dev/ledgerline/.venv/lib/python3.11/site-packages/sqlalchemy/orm/session.py", \
line 4353, in flush
    self._flush(objects)
sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) duplicate key value violates \
unique constraint "ledger_entries_external_ref_key"
DETAIL:  Key (external_ref)=(pay_9QvM02) already exists.
[SQL: INSERT INTO ledger_entries (id, account_id, external_ref, amount, currency, posted_at) \
VALUES (%(id)s::UUID, %(account_id)s::UUID, %(external_ref)s, %(amount)s, %(currency)s, %(posted_at)s)]
(Background on this error at: https://sqlalche.me/e/20/gkpj)
"""

_SEED_JS = """\
> ledgerline-web@0.31.0 seed
> node scripts/seed.js --customers 50

[seed] connected to http://localhost:48000 (dev API)
[seed] created 12 plans
[seed] created 50 customers
[seed] created 50 subscriptions
[seed] creating invoices...
/home/dev/ledgerline/web/scripts/seed.js:64
      currency: customer.billing.currency,
                                 ^

TypeError: Cannot read properties of undefined (reading 'currency')
    at seedInvoices (/home/dev/ledgerline/web/scripts/seed.js:64:31)
    at Array.map (<anonymous>)
    at main (/home/dev/ledgerline/web/scripts/seed.js:121:35)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)

Node.js v20.12.2
npm ERR! Lifecycle script `seed` failed with error:
npm ERR! Error: command failed
npm ERR!   in workspace: ledgerline-web@0.31.0
npm ERR!   at location: /home/dev/ledgerline/web
npm ERR! A complete log of this run can be found in: \
/home/dev/.npm/_logs/2024-05-14T08_41_09_532Z-debug-0.log
[seed] note: previous run left 3 draft invoices (inv_dev_0001..inv_dev_0003)
[seed] hint: run `npm run seed:reset` to start from an empty database
"""

_RECONCILE_PANIC = """\
2024/05/14 09:12:40 reconcile: date=2024-05-13 provider=stripe
2024/05/14 09:12:40 reconcile: fetched 1184 balance transactions
2024/05/14 09:12:41 reconcile: loaded 1179 ledger entries
2024/05/14 09:12:41 reconcile: matching by external_ref
panic: runtime error: index out of range [5] with length 5

goroutine 1 [running]:
github.com/ledgerline/worker/internal/reconcile.splitFees(...)
\t/home/dev/ledgerline/worker/internal/reconcile/reconcile.go:203
github.com/ledgerline/worker/internal/reconcile.(*Matcher).Match(0xc0001b4000, \
{0xc000292000, 0x4a0, 0x4a0}, {0xc0003d8000, 0x49b, 0x49b})
\t/home/dev/ledgerline/worker/internal/reconcile/reconcile.go:151 +0x5c8
github.com/ledgerline/worker/internal/reconcile.Run({0xb3e2a8, 0xc00007e0a0}, {0xc000014148, 0xa}, ...)
\t/home/dev/ledgerline/worker/internal/reconcile/run.go:48 +0x2f1
main.main()
\t/home/dev/ledgerline/worker/cmd/reconcile/main.go:39 +0x1d6

goroutine 18 [select]:
github.com/redis/go-redis/v9/internal/pool.(*ConnPool).reaper(0xc000162000, 0xdf8475800)
\t/home/dev/go/pkg/mod/github.com/redis/go-redis/v9@v9.5.1/internal/pool/pool.go:498 +0xd0
created by github.com/redis/go-redis/v9/internal/pool.NewConnPool in goroutine 1
\t/home/dev/go/pkg/mod/github.com/redis/go-redis/v9@v9.5.1/internal/pool/pool.go:111 +0x8ad

goroutine 7 [chan receive]:
github.com/ledgerline/worker/internal/telemetry.(*Exporter).loop(0xc0000a2f00)
\t/home/dev/ledgerline/worker/internal/telemetry/exporter.go:66 +0x7b
created by github.com/ledgerline/worker/internal/telemetry.Start in goroutine 1
\t/home/dev/ledgerline/worker/internal/telemetry/exporter.go:41 +0x1e5
exit status 2
"""

# ---------------------------------------------------------------------------------------------
# Git
# ---------------------------------------------------------------------------------------------

_GIT_LOG = """\
e41d0b7 Stream CSV rows instead of building the file in memory
9c0d7e2 Add ledger export endpoint behind bulk_export flag
5b7a2f9 Merge pull request #815 from ledgerline/deps/stripe-8.9
0f6e3c1 Bump stripe from 8.7.0 to 8.9.0
d82c4a6 Round tax per line before summing, as EU invoicing rules require (#814)
71be9d3 Retry exchange-rate sync with a fixed backoff (#813)
a3f9c1e Fix double charge on retried webhooks (#812)
2c58e0f Log the idempotency key with every charge attempt
be3f704 Make proration tests independent of the current date (#810)
6a91d25 Add refund reason codes (#809)
c07e5ab Drop the unused legacy_invoices table (#808)
f3d2890 Cache customer lookups for 60s in the portal (#806)
8e4b1c0 Upgrade React Query to v5 (#805)
47af9e2 Render invoice PDFs with the v2 renderer behind a flag (#804)
1d6c3b8 Fix timezone of period boundaries for Pacific customers (#803)
93e0a7f Add worker autoscaling on queue depth (#801)
ab58d14 Split settings into per-environment .env files (#800)
5f09c2d Reconcile Stripe balance transactions nightly (#798)
e6c7a41 Move native checksum into its own library (#797)
0b2d9f6 Document the release process (#796)
7c3e5a2 Raise the API's memory limit after the May 2 OOMs (#795)
d41f8b3 Add coverage gate to CI (#794)
2a7e6c9 Use pgx v5 in the worker (#792)
f9b1e04 Bump eslint from 8.56.0 to 8.57.0 (#791)
3e8d2c7 Initial commit of the Rust CLI (#790)
"""

_BRANCHES = [
    ("  ", "chore/bump-eslint-8.57", "f9b1e04 [origin/chore/bump-eslint-8.57: gone] Bump eslint"),
    ("  ", "chore/ci-cache-go-modules", "4e1b2d0 [origin/chore/ci-cache-go-modules] Cache Go modules in CI"),
    (
        "  ",
        "feature/ledger-export-pdf",
        "2f81c6a [origin/feature/ledger-export-pdf: behind 4] WIP pdf export",
    ),
    (
        "* ",
        "feature/ledger-export-csv",
        "e41d0b7 [origin/feature/ledger-export-csv] Stream CSV rows instead of",
    ),
    ("  ", "fix/portal-session-expiry", "a0c9f13 Refresh the session cookie on activity"),
    (
        "  ",
        "fix/proration-zero-day",
        "6d2e8b1 [origin/fix/proration-zero-day: ahead 1] Guard zero-day periods",
    ),
    ("  ", "main", "5b7a2f9 [origin/main] Merge pull request #815 from ledgerline/deps/stripe-8.9"),
    ("  ", "spike/clickhouse-usage", "0e7f4d2 Try ClickHouse for usage events"),
    ("  ", "remotes/origin/HEAD", "-> origin/main"),
    ("  ", "remotes/origin/chore/ci-cache-go-modules", "4e1b2d0 Cache Go modules in CI"),
    ("  ", "remotes/origin/deps/stripe-8.9", "0f6e3c1 Bump stripe from 8.7.0 to 8.9.0"),
    ("  ", "remotes/origin/feature/ledger-export-csv", "e41d0b7 Stream CSV rows instead of building"),
    ("  ", "remotes/origin/feature/ledger-export-pdf", "7b3a0c5 Paginate the PDF export"),
    ("  ", "remotes/origin/feature/usage-pricing", "3c9d1e8 Meter API calls per tenant"),
    ("  ", "remotes/origin/fix/proration-zero-day", "4a7f2b0 Add failing test for zero-day periods"),
    ("  ", "remotes/origin/main", "5b7a2f9 Merge pull request #815 from ledgerline/deps/stripe-8.9"),
    ("  ", "remotes/origin/release/3.7", "8d0c4f1 Release 3.7.4"),
    ("  ", "remotes/origin/release/3.8", "c5e2a9b Release 3.8.0"),
    ("  ", "remotes/origin/renovate/go-modules", "9f3b6d4 Update module github.com/jackc/pgx/v5"),
    ("  ", "remotes/origin/renovate/npm-minor", "1b4e7a0 Update npm minor versions"),
]
_GIT_BRANCH = "\n".join(f"{mark}{name:<41}{rest}" for mark, name, rest in _BRANCHES)


_GIT_LOG_TAX = """\
commit d82c4a6f1c0b95e7e3d1f0a4c6b9e2d7f5a3c1e08
Author:     Tomas Ferreira <tomas.ferreira@ledgerline.dev>
AuthorDate: Mon May 13 16:42:09 2024 +0200
Commit:     Jonas Weber <jonas.weber@ledgerline.dev>
CommitDate: Tue May 14 09:05:51 2024 +0200

    Round tax per line before summing, as EU invoicing rules require (#814)

 services/api/billing/tax.py            | 38 +++++++++++++++++++++++++-----------
 services/api/tests/billing/test_tax.py | 41 ++++++++++++++++++++++++++++++++++++++++
 2 files changed, 68 insertions(+), 11 deletions(-)

commit 4c7e1b9a2f0d83e65c4a1f7b2d9e0c3a8b6f5d21
Author:     Mei Lin <mei.lin@ledgerline.dev>
AuthorDate: Wed Apr 10 11:18:37 2024 +0200
Commit:     Mei Lin <mei.lin@ledgerline.dev>
CommitDate: Wed Apr 10 11:18:37 2024 +0200

    Expose tax lines in the invoice schema (#784)

 services/api/billing/tax.py     | 12 ++++++++++--
 services/api/billing/schemas.py |  9 +++++++++
 2 files changed, 19 insertions(+), 2 deletions(-)

commit 0e9b3d7c5a1f2e4b6d8c0a9f7e5d3b1c2a4f6e80
Author:     Priya Raman <priya.raman@ledgerline.dev>
AuthorDate: Thu Mar 28 14:03:22 2024 +0100
Commit:     Jonas Weber <jonas.weber@ledgerline.dev>
CommitDate: Fri Mar 29 10:11:40 2024 +0100

    Look up reverse-charge VAT for B2B customers in the EU (#771)

 services/api/billing/tax.py | 57 +++++++++++++++++++++++++++++++++++++++++++++---
 1 file changed, 54 insertions(+), 3 deletions(-)
"""

# ---------------------------------------------------------------------------------------------
# Package versions
# ---------------------------------------------------------------------------------------------

_PIP_ROWS = [
    ("alembic", "1.13.1"),
    ("annotated-types", "0.6.0"),
    ("anyio", "4.3.0"),
    ("certifi", "2024.2.2"),
    ("charset-normalizer", "3.3.2"),
    ("click", "8.1.7"),
    ("coverage", "7.5.0"),
    ("execnet", "2.1.1"),
    ("fastapi", "0.110.2"),
    ("greenlet", "3.0.3"),
    ("h11", "0.14.0"),
    ("httpcore", "1.0.5"),
    ("httptools", "0.6.1"),
    ("httpx", "0.27.0"),
    ("idna", "3.7"),
    ("iniconfig", "2.0.0"),
    ("Mako", "1.3.3"),
    ("MarkupSafe", "2.1.5"),
    ("mypy", "1.10.0"),
    ("mypy-extensions", "1.0.0"),
    ("packaging", "24.0"),
    ("pip", "24.0"),
    ("pluggy", "1.5.0"),
    ("psycopg", "3.1.18"),
    ("psycopg-binary", "3.1.18"),
    ("pydantic", "2.7.1"),
    ("pydantic_core", "2.18.2"),
    ("pydantic-settings", "2.2.1"),
    ("PyJWT", "2.8.0"),
    ("pytest", "8.2.0"),
    ("pytest-cov", "5.0.0"),
    ("pytest-xdist", "3.6.1"),
    ("python-dotenv", "1.0.1"),
    ("PyYAML", "6.0.1"),
    ("requests", "2.31.0"),
    ("ruff", "0.4.3"),
    ("setuptools", "69.5.1"),
    ("sniffio", "1.3.1"),
    ("SQLAlchemy", "2.0.29"),
    ("starlette", "0.37.2"),
    ("stripe", "8.9.0"),
    ("structlog", "24.1.0"),
    ("types-requests", "2.31.0.20240406"),
    ("typing_extensions", "4.11.0"),
    ("urllib3", "2.2.1"),
    ("uvicorn", "0.29.0"),
    ("uvloop", "0.19.0"),
    ("watchfiles", "0.21.0"),
    ("websockets", "12.0"),
]

_NPM_LS = """\
ledgerline-web@0.31.0 /home/dev/ledgerline/web
\u251c\u2500\u2500 @playwright/test@1.43.1
\u251c\u2500\u2500 @radix-ui/react-dialog@1.0.5
\u251c\u2500\u2500 @radix-ui/react-select@2.0.0
\u251c\u2500\u2500 @tanstack/react-query@5.28.4
\u251c\u2500\u2500 @tanstack/react-query-devtools@5.32.0
\u251c\u2500\u2500 @tanstack/react-table@8.16.0
\u251c\u2500\u2500 @testing-library/jest-dom@6.4.2
\u251c\u2500\u2500 @testing-library/react@14.3.1
\u251c\u2500\u2500 @types/jest@29.5.12
\u251c\u2500\u2500 @types/node@20.12.7
\u251c\u2500\u2500 @types/react@18.3.1
\u251c\u2500\u2500 @types/react-dom@18.3.0
\u251c\u2500\u2500 @typescript-eslint/eslint-plugin@7.8.0
\u251c\u2500\u2500 @typescript-eslint/parser@7.8.0
\u251c\u2500\u2500 @vitejs/plugin-react@4.2.1
\u251c\u2500\u2500 axios@1.6.8
\u251c\u2500\u2500 clsx@2.1.1
\u251c\u2500\u2500 date-fns@3.6.0
\u251c\u2500\u2500 eslint@8.57.0
\u251c\u2500\u2500 eslint-plugin-react-hooks@4.6.2
\u251c\u2500\u2500 jest@29.7.0
\u251c\u2500\u2500 jest-environment-jsdom@29.7.0
\u251c\u2500\u2500 prettier@3.2.5
\u251c\u2500\u2500 react@18.3.1
\u251c\u2500\u2500 react-dom@18.3.1
\u251c\u2500\u2500 react-hook-form@7.51.3
\u251c\u2500\u2500 react-router-dom@6.23.0
\u251c\u2500\u2500 ts-jest@29.1.2
\u251c\u2500\u2500 typescript@5.4.5
\u251c\u2500\u2500 vite@5.2.10
\u2514\u2500\u2500 zod@3.23.6
"""

_GO_MOD = """\
module github.com/ledgerline/worker

go 1.22

toolchain go1.22.3

require (
\tgithub.com/google/uuid v1.6.0
\tgithub.com/jackc/pgx/v5 v5.5.5
\tgithub.com/prometheus/client_golang v1.19.0
\tgithub.com/redis/go-redis/v9 v9.5.1
\tgithub.com/robfig/cron/v3 v3.0.1
\tgithub.com/stripe/stripe-go/v78 v78.6.0
\tgo.opentelemetry.io/otel v1.26.0
\tgolang.org/x/sync v0.7.0
\tgopkg.in/yaml.v3 v3.0.1
)

require (
\tgithub.com/beorn7/perks v1.0.1 // indirect
\tgithub.com/cespare/xxhash/v2 v2.3.0 // indirect
\tgithub.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
\tgithub.com/go-logr/logr v1.4.1 // indirect
\tgithub.com/jackc/pgpassfile v1.0.0 // indirect
\tgithub.com/jackc/pgservicefile v0.0.0-20231201235250-de7065d80cb9 // indirect
\tgithub.com/jackc/puddle/v2 v2.2.1 // indirect
\tgithub.com/prometheus/client_model v0.6.1 // indirect
\tgithub.com/prometheus/common v0.53.0 // indirect
\tgithub.com/prometheus/procfs v0.14.0 // indirect
\tgo.opentelemetry.io/otel/metric v1.26.0 // indirect
\tgo.opentelemetry.io/otel/trace v1.26.0 // indirect
\tgolang.org/x/crypto v0.22.0 // indirect
\tgolang.org/x/sys v0.19.0 // indirect
\tgolang.org/x/text v0.14.0 // indirect
\tgoogle.golang.org/protobuf v1.34.0 // indirect
)
"""


# ---------------------------------------------------------------------------------------------
# Source code
# ---------------------------------------------------------------------------------------------

_PAYMENTS_PY = '''\
"""Applying an incoming payment to an invoice and posting the ledger entries it makes."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .ledger import LedgerEntry, post_entry
from .models import Invoice, InvoiceStatus

__all__ = ["AllocationError", "allocate_payment", "oldest_first"]

MINIMUM_ALLOCATION = Decimal("0.01")
CASH_ACCOUNT = "1000-cash"
RECEIVABLES_ACCOUNT = "1200-receivables"


class AllocationError(Exception):
    """The payment cannot be applied as asked (overpayment, void invoice, partial not allowed)."""


@dataclass(frozen=True)
class Allocation:
    invoice_id: str
    amount: Decimal


def oldest_first(invoices: list[Invoice]) -> list[Invoice]:
    """Open invoices in the order a payment without a reference settles them."""
    return sorted(invoices, key=lambda inv: (inv.due_at, inv.number))


def allocate_payment(invoice: Invoice, amount: Decimal, *, allow_partial: bool = False) -> list[LedgerEntry]:
    """Apply `amount` to `invoice` and return the ledger entries posted.

    A payment below the open balance is refused unless the caller says partial payments are
    fine for this invoice (instalment plans); an overpayment is always refused, the surplus
    goes to the customer's credit balance through `credits.add_credit` instead.
    """
    if invoice.status is InvoiceStatus.VOID:
        raise AllocationError(f"invoice {invoice.id} is void")
    if amount < MINIMUM_ALLOCATION:
        raise AllocationError(f"amount {amount} is below the minimum allocation")
    open_balance = invoice.total - invoice.paid
    if amount > open_balance:
        raise AllocationError(f"overpayment: {amount} > open balance {open_balance}")
    if amount < open_balance and not allow_partial:
        raise AllocationError(f"partial payment of {amount} refused for {invoice.id}")
    entries = [
        post_entry(CASH_ACCOUNT, debit=amount, ref=invoice.id),
        post_entry(RECEIVABLES_ACCOUNT, credit=amount, ref=invoice.id),
    ]
    invoice.paid += amount
    if invoice.paid == invoice.total:
        invoice.status = InvoiceStatus.PAID
    return entries
'''

_DISPATCHER_PY = '''\
"""Delivering webhook events to customer endpoints: signed payloads, redelivery with backoff."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time

import httpx

from ..models import WebhookDelivery, WebhookEndpoint

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "Ledgerline-Signature"
USER_AGENT = "Ledgerline-Webhooks/1.4"
CONNECT_TIMEOUT = 5
FIRST_ATTEMPT_TIMEOUT = 15
# A redelivery waits longer than the first attempt: slow endpoints are the usual reason it failed.
RETRY_TIMEOUT = 37
MAX_REDELIVERIES = 6
REDELIVERY_BACKOFF = (30, 120, 600, 1800, 7200, 21600)  # seconds after each failed attempt
DISABLE_AFTER_FAILED_DAYS = 3


def sign(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def deliver(endpoint: WebhookEndpoint, delivery: WebhookDelivery, client: httpx.Client) -> bool:
    body = json.dumps(delivery.payload, separators=(",", ":")).encode()
    now = int(time.time())
    timeout = FIRST_ATTEMPT_TIMEOUT if delivery.attempt == 0 else RETRY_TIMEOUT
    try:
        resp = client.post(
            endpoint.url,
            content=body,
            headers={SIGNATURE_HEADER: sign(endpoint.secret, now, body), "User-Agent": USER_AGENT},
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT),
        )
    except httpx.HTTPError as exc:
        log.warning("webhook %s attempt %d failed: %s", delivery.id, delivery.attempt, exc)
        return False
    return 200 <= resp.status_code < 300


def next_attempt_at(delivery: WebhookDelivery) -> float | None:
    if delivery.attempt >= MAX_REDELIVERIES:
        return None
    return delivery.last_attempt_at + REDELIVERY_BACKOFF[delivery.attempt]
'''

_CLIENT_TS = """\
import axios, { AxiosError } from "axios";
import type { Customer, Invoice, Page, Payment, Plan } from "./types";

const BASE_URL = import.meta.env.VITE_API_BASE_URL ?? "/api";
export const DEFAULT_PAGE_SIZE = 25;

export interface FetchOptions {
  cursor?: string;
  limit?: number;
  status?: "draft" | "open" | "paid" | "void";
  signal?: AbortSignal;
}

const http = axios.create({ baseURL: BASE_URL, withCredentials: true, timeout: 20_000 });

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

function unwrap(err: unknown): never {
  if (err instanceof AxiosError && err.response) {
    const { status, data } = err.response;
    throw new ApiError(status, data?.error?.code ?? "unknown", data?.error?.message ?? err.message);
  }
  throw err;
}

export async function fetchCustomer(id: string): Promise<Customer> {
  return http.get(`/v1/customers/${id}`).then((r) => r.data, unwrap);
}

export async function fetchInvoices(customerId: string, opts: FetchOptions = {}): Promise<Page<Invoice>> {
  const params = { customer: customerId, limit: opts.limit ?? DEFAULT_PAGE_SIZE, cursor: opts.cursor };
  return http.get("/v1/invoices", { params, signal: opts.signal }).then((r) => r.data, unwrap);
}

export async function fetchPayments(invoiceId: string): Promise<Payment[]> {
  return http.get(`/v1/invoices/${invoiceId}/payments`).then((r) => r.data.items, unwrap);
}

export async function listPlans(): Promise<Plan[]> {
  return http.get("/v1/plans").then((r) => r.data.items, unwrap);
}

export async function voidInvoice(invoiceId: string, reason: string): Promise<Invoice> {
  return http.post(`/v1/invoices/${invoiceId}/void`, { reason }).then((r) => r.data, unwrap);
}
"""

_QUEUE_GO = """\
// Package queue is the Redis-backed job queue the worker claims jobs from.
package queue

import (
\t"context"
\t"encoding/json"
\t"errors"
\t"time"

\t"github.com/redis/go-redis/v9"
)

const (
\tpollInterval      = 2 * time.Second
\tvisibilityTimeout = 90 * time.Second
\tmaxClaimBatch     = 32
\tdeadLetterAfter   = 10
)

// ErrEmpty is returned by Claim when no job is ready.
var ErrEmpty = errors.New("queue: empty")

type Job struct {
\tID       string          `json:"id"`
\tKind     string          `json:"kind"`
\tPayload  json.RawMessage `json:"payload"`
\tAttempts int             `json:"attempts"`
}

type Queue struct {
\trdb  *redis.Client
\tname string
}

func New(rdb *redis.Client, name string) *Queue {
\treturn &Queue{rdb: rdb, name: name}
}

// Claim moves up to n ready jobs to the in-flight set, hidden from other workers until
// the visibility timeout passes or the job is acked.
func (q *Queue) Claim(ctx context.Context, n int) ([]Job, error) {
\tif n > maxClaimBatch {
\t\tn = maxClaimBatch
\t}
\tdeadline := time.Now().Add(visibilityTimeout).UnixMilli()
\tkeys := []string{q.name + ":ready", q.name + ":inflight"}
\tres, err := claimScript.Run(ctx, q.rdb, keys, n, deadline).Result()
\tif err != nil {
\t\treturn nil, err
\t}
\treturn decodeJobs(res)
}

func (q *Queue) Ack(ctx context.Context, id string) error {
\treturn q.rdb.ZRem(ctx, q.name+":inflight", id).Err()
}
"""

# ---------------------------------------------------------------------------------------------
# Database schema
# ---------------------------------------------------------------------------------------------

_MIGRATION_REFUNDS = """\
-- 0042_add_refunds.sql
-- Refunds become first-class rows instead of negative payments (#809).

BEGIN;

CREATE TYPE refund_status AS ENUM ('pending', 'succeeded', 'failed', 'cancelled');

CREATE TABLE refunds (
    id                 UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    payment_id         UUID NOT NULL REFERENCES payments (id) ON DELETE RESTRICT,
    invoice_id         UUID REFERENCES invoices (id),
    amount             NUMERIC(14, 4) NOT NULL CHECK (amount > 0),
    currency           CHAR(3) NOT NULL,
    status             refund_status NOT NULL DEFAULT 'pending',
    refund_reason_code VARCHAR(32) NOT NULL DEFAULT 'unspecified',
    reason_note        TEXT,
    provider_ref       VARCHAR(64) UNIQUE,
    requested_by       UUID REFERENCES users (id),
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    settled_at         TIMESTAMPTZ
);

CREATE INDEX refunds_payment_id_idx ON refunds (payment_id);
CREATE INDEX refunds_status_created_idx ON refunds (status, created_at) WHERE status = 'pending';

INSERT INTO refunds (payment_id, amount, currency, status, refund_reason_code, created_at, settled_at)
SELECT p.refunded_from, -p.amount, p.currency, 'succeeded', 'legacy_negative_payment',
       p.created_at, p.created_at
FROM payments p
WHERE p.amount < 0 AND p.refunded_from IS NOT NULL;

DELETE FROM payments WHERE amount < 0 AND refunded_from IS NOT NULL;

COMMIT;
"""

_PSQL_INVOICES = """\
                                   Table "public.invoices"
     Column      |           Type           | Collation | Nullable |      Default
-----------------+--------------------------+-----------+----------+-------------------
 id              | uuid                     |           | not null | gen_random_uuid()
 number          | character varying(20)    |           | not null |
 customer_id     | uuid                     |           | not null |
 status          | invoice_status           |           | not null | 'draft'::invoice_status
 currency        | character(3)             |           | not null |
 subtotal_amount | numeric(14,4)            |           | not null | 0
 tax_amount      | numeric(14,4)            |           | not null | 0
 total_amount    | numeric(16,6)            |           | not null | 0
 paid_amount     | numeric(14,4)            |           | not null | 0
 issued_at       | timestamp with time zone |           |          |
 due_at          | timestamp with time zone |           |          |
 voided_at       | timestamp with time zone |           |          |
 pdf_key         | text                     |           |          |
 created_at      | timestamp with time zone |           | not null | now()
Indexes:
    "invoices_pkey" PRIMARY KEY, btree (id)
    "invoices_number_key" UNIQUE CONSTRAINT, btree (number)
    "invoices_customer_status_idx" btree (customer_id, status)
    "invoices_due_open_idx" btree (due_at) WHERE status = 'open'::invoice_status
Check constraints:
    "invoices_total_check" CHECK (total_amount = subtotal_amount + tax_amount)
Foreign-key constraints:
    "invoices_customer_id_fkey" FOREIGN KEY (customer_id) REFERENCES customers(id)
Referenced by:
    TABLE "payments" CONSTRAINT "payments_invoice_id_fkey" FOREIGN KEY (invoice_id) REFERENCES invoices(id)
    TABLE "refunds" CONSTRAINT "refunds_invoice_id_fkey" FOREIGN KEY (invoice_id) REFERENCES invoices(id)
"""


# ---------------------------------------------------------------------------------------------
# Searches
# ---------------------------------------------------------------------------------------------

_GREP_TODO = """\
services/api/accounts/merge.py:41:    # TODO: merge the two customers' payment methods too
services/api/accounts/merge.py:118:    # FIXME: merging a customer into itself deadlocks
services/api/admin/impersonate.py:27:    # TODO(security): log every impersonation to the audit trail
services/api/auth/oauth.py:94:    # TODO: support PKCE for the mobile client
services/api/auth/oauth.py:217:    # TODO(security): verify the state parameter against the session
services/api/auth/routes.py:40:# FIXME: login and refresh share a rate limit bucket
services/api/auth/tokens.py:23:# TODO: move the JWT secret to the key service
services/api/billing/credits.py:61:        # TODO: expire credits after 12 months (finance asked in #billing)
services/api/billing/models.py:133:    # FIXME: currency should come from the price, not the customer
services/api/billing/proration.py:12:# TODO: handle anniversary billing, not only calendar months
services/api/billing/proration.py:139:    # FIXME: zero-length periods (cancel on the renewal day)
services/api/billing/subscriptions.py:88:        # TODO: emit subscription.updated after commit
services/api/billing/subscriptions.py:241:    # TODO: pause/resume
services/api/billing/tax.py:58:    # TODO: cache the VIES lookups
services/api/exports/csv_writer.py:19:# TODO: stream instead of buffering the whole export in memory
services/api/exports/scheduler.py:34:    # FIXME: runs twice when two API pods start at the same minute
services/api/main.py:52:# TODO: drop the /v0 routes after the mobile app 4.2 rollout
services/api/notifications/email.py:77:    # TODO: localise the subject lines
services/api/notifications/email.py:102:    # FIXME: the provider drops attachments over 10 MB
services/api/portal/views.py:145:    # TODO(security): rate limit magic links per address, not only per IP
services/api/portal/views.py:203:    # TODO: remember the last selected billing account
services/api/settings.py:31:# TODO: validate that PUBLIC_BASE_URL has no trailing slash
services/api/webhooks/dispatcher.py:71:    # TODO: use a connection pool per endpoint host
services/api/webhooks/receiver.py:48:    # FIXME: Stripe retries can arrive twice; dedupe on event id
services/api/webhooks/receiver.py:119:    # TODO: read the timestamp tolerance from settings
"""

_GREP_ENVIRON = """\
services/api/settings.py:22:    APP_ENV = os.environ.get("APP_ENV", "development")
services/api/settings.py:23:    LOG_LEVEL = os.environ.get("LOG_LEVEL", "info")
services/api/settings.py:31:    PUBLIC_BASE_URL = os.environ["PUBLIC_BASE_URL"]
services/api/settings.py:40:    DATABASE_URL = os.environ["DATABASE_URL"]
services/api/settings.py:41:    DATABASE_RO_URL = os.environ.get("DATABASE_RO_URL")
services/api/settings.py:44:    REDIS_URL = os.environ.get("REDIS_URL", "redis://localhost:6379/0")
services/api/settings.py:51:    JWT_SECRET = os.environ["JWT_SECRET"]
services/api/settings.py:52:    SESSION_COOKIE_NAME = os.environ.get("SESSION_COOKIE_NAME", "ll_session")
services/api/settings.py:57:    STRIPE_API_KEY = os.environ["STRIPE_API_KEY"]
services/api/settings.py:58:    STRIPE_WEBHOOK_SECRET = os.environ["STRIPE_WEBHOOK_SECRET"]
services/api/settings.py:59:    TOLERANCE = int(os.environ.get("STRIPE_WEBHOOK_TOLERANCE_SECONDS", "300"))
services/api/settings.py:66:    SMTP_HOST = os.environ.get("SMTP_HOST", "localhost")
services/api/settings.py:67:    SMTP_PORT = int(os.environ.get("SMTP_PORT", "1025"))
services/api/settings.py:68:    SMTP_PASSWORD = os.environ.get("SMTP_PASSWORD")
services/api/settings.py:80:    SENTRY_DSN = os.environ.get("SENTRY_DSN")
services/api/exports/scheduler.py:15:EXPORT_BUCKET = os.environ.get("EXPORT_BUCKET", "ledgerline-dev-exports")
services/api/notifications/email.py:12:MAILGUN_KEY = os.environ.get("MAILGUN_API_KEY")
services/api/webhooks/receiver.py:21:PROVIDER_SECRET = os.environ.get("PAYPAL_WEBHOOK_ID", "")
services/api/tests/conftest.py:18:os.environ.setdefault("JWT_SECRET", "test-secret")
services/api/tests/conftest.py:19:os.environ.setdefault("STRIPE_API_KEY", "sk_test_dummy")
services/api/tests/conftest.py:20:os.environ.setdefault("STRIPE_WEBHOOK_SECRET", "whsec_dummy")
services/api/tests/conftest.py:21:os.environ.setdefault("PUBLIC_BASE_URL", "http://testserver")
"""

# ---------------------------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------------------------

_CURL_RATE_LIMITED = """\
HTTP/2 429
date: Tue, 14 May 2024 09:31:07 GMT
content-type: application/json
content-length: 164
x-request-id: 0b7e4c1f-3a9d-4f52-8c61-5d2e9a7b0c34
x-ratelimit-limit: 600
x-ratelimit-remaining: 0
x-ratelimit-reset: 1715679187
retry-after: 120
strict-transport-security: max-age=63072000; includeSubDomains
vary: Origin, Authorization
cache-control: no-store
x-envoy-upstream-service-time: 3
server: envoy

{
  "error": {
    "code": "rate_limited",
    "message": "Too many requests for this API key; try again later.",
    "limit_window_seconds": 60,
    "docs": "https://docs.ledgerline.dev/api/rate-limits"
  }
}
"""

_CURL_HEALTHZ = """\
*   Trying 18.197.44.210:443...
* Connected to api.ledgerline.dev (18.197.44.210) port 443
* ALPN: curl offers h2,http/1.1
* TLSv1.3 (OUT), TLS handshake, Client hello (1):
*  CAfile: /etc/ssl/certs/ca-certificates.crt
*  CApath: /etc/ssl/certs
* TLSv1.3 (IN), TLS handshake, Server hello (2):
* TLSv1.3 (IN), TLS handshake, Encrypted Extensions (8):
* TLSv1.3 (IN), TLS handshake, Certificate (11):
* TLSv1.3 (IN), TLS handshake, CERT verify (15):
* TLSv1.3 (IN), TLS handshake, Finished (20):
* TLSv1.3 (OUT), TLS handshake, Finished (20):
* SSL connection using TLSv1.3 / TLS_AES_128_GCM_SHA256 / X25519 / id-ecPublicKey
* ALPN: server accepted http/1.1
* Server certificate:
*  subject: CN=api.ledgerline.dev
*  start date: Apr  2 00:00:00 2024 GMT
*  expire date: May  1 23:59:59 2025 GMT
*  subjectAltName: host "api.ledgerline.dev" matched cert's "api.ledgerline.dev"
*  issuer: C=US; O=Amazon; CN=Amazon RSA 2048 M02
*  SSL certificate verify ok.
> GET /healthz HTTP/1.1
> Host: api.ledgerline.dev
> User-Agent: curl/8.5.0
> Accept: */*
>
< HTTP/1.1 503 Service Unavailable
< Date: Tue, 14 May 2024 03:21:55 GMT
< Content-Type: application/json
< Content-Length: 118
< Connection: keep-alive
< X-Served-By: api-7c9f6d5b8-q2lxk
< Cache-Control: no-store
<
{"status":"unhealthy","checks":{"postgres":"ok","redis":"ok","stripe":"timeout","queue_depth":4812}}
* Connection #0 to host api.ledgerline.dev left intact
"""

# ---------------------------------------------------------------------------------------------
# Containers and deployment
# ---------------------------------------------------------------------------------------------

_WEB_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: billing
  labels:
    app.kubernetes.io/name: web
    app.kubernetes.io/part-of: ledgerline
spec:
  replicas: 3
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      containers:
        - name: web
          image: registry.ledgerline.dev/ledgerline/web:1.42.0-rc2
          ports:
            - containerPort: 8080
              name: http
          env:
            - name: API_UPSTREAM
              value: http://api.billing.svc.cluster.local:8000
          readinessProbe:
            httpGet:
              path: /index.html
              port: http
            periodSeconds: 5
          resources:
            requests:
              cpu: 50m
              memory: 64Mi
            limits:
              memory: 128Mi
        - name: log-shipper
          image: fluent/fluent-bit:3.0.3
          resources:
            limits:
              memory: 48Mi
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              app.kubernetes.io/name: web
"""

_WORKER_HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
  namespace: billing
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: worker
  minReplicas: 2
  maxReplicas: 12
  metrics:
    - type: External
      external:
        metric:
          name: redis_queue_depth
          selector:
            matchLabels:
              queue: billing-jobs
        target:
          type: AverageValue
          averageValue: "200"
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 75
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 30
      policies:
        - type: Pods
          value: 4
          periodSeconds: 60
    scaleDown:
      stabilizationWindowSeconds: 600
      policies:
        - type: Percent
          value: 25
          periodSeconds: 120
"""

_COMPOSE = """\
name: ledgerline

services:
  api:
    build: ./services/api
    command: uvicorn ledgerline_api.main:app --host 0.0.0.0 --port 8000 --reload
    env_file: .env
    ports:
      - "8000:8000"
    depends_on:
      postgres:
        condition: service_healthy
      redis:
        condition: service_started
    mem_limit: 1g

  worker:
    build: ./worker
    env_file: .env
    depends_on: [postgres, redis]
    mem_limit: 512m

  postgres:
    image: postgres:16.2
    environment:
      POSTGRES_USER: ledgerline
      POSTGRES_PASSWORD: ledgerline
      POSTGRES_DB: ledgerline
    ports:
      - "5433:5432"
    shm_size: 256mb
    volumes:
      - pgdata:/var/lib/postgresql/data
    healthcheck:
      test: ["CMD-SHELL", "pg_isready -U ledgerline"]
      interval: 5s
      retries: 10

  redis:
    image: redis:7.2-alpine
    command: ["redis-server", "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru"]
    ports:
      - "6380:6379"
    mem_limit: 384m

  mailpit:
    image: axllent/mailpit:v1.17
    ports:
      - "8025:8025"
      - "1025:1025"

volumes:
  pgdata:
"""

_KUBECTL_DESCRIBE = """\
Name:             api-7c9f6d5b8-q2lxk
Namespace:        billing
Priority:         0
Service Account:  api
Node:             ip-10-4-21-87.eu-central-1.compute.internal/10.4.21.87
Start Time:       Tue, 14 May 2024 02:51:13 +0200
Labels:           app.kubernetes.io/name=api
                  pod-template-hash=7c9f6d5b8
Status:           Running
IP:               10.4.22.140
Controlled By:    ReplicaSet/api-7c9f6d5b8
Containers:
  api:
    Container ID:   containerd://5e0c1a7f2b9d4e36a8c1f0b7d2e5a9c3b6f8d1e4a7c0b3f6e9d2a5c8b1e4f7a0
    Image:          registry.ledgerline.dev/ledgerline/api:3.8.0
    Port:           8000/TCP
    Host Port:      0/TCP
    State:          Running
      Started:      Tue, 14 May 2024 03:19:02 +0200
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
      Started:      Tue, 14 May 2024 02:51:40 +0200
      Finished:     Tue, 14 May 2024 03:18:57 +0200
    Ready:          True
    Restart Count:  4
    Limits:
      cpu:     2
      memory:  1536Mi
    Requests:
      cpu:     500m
      memory:  1Gi
    Liveness:   http-get http://:8000/healthz delay=10s timeout=2s period=10s #success=1 #failure=3
    Readiness:  http-get http://:8000/readyz delay=5s timeout=2s period=5s #success=1 #failure=3
    Environment Variables from:
      api-config  ConfigMap  Optional: false
      api-secrets Secret     Optional: false
  pgbouncer:
    Image:          bitnami/pgbouncer:1.22.1
    Port:           6432/TCP
    State:          Running
      Started:      Tue, 14 May 2024 02:51:20 +0200
    Ready:          True
    Restart Count:  0
    Limits:
      memory:  128Mi
    Requests:
      cpu:     50m
      memory:  64Mi
Conditions:
  Type              Status
  Initialized       True
  Ready             True
  ContainersReady   True
  PodScheduled      True
QoS Class:          Burstable
Events:
  Type     Reason     Age                From     Message
  ----     ------     ----               ----     -------
  Warning  BackOff    41m (x3 over 2h)   kubelet  Back-off restarting failed container api in pod \
api-7c9f6d5b8-q2lxk
  Normal   Pulled     38m (x5 over 2h)   kubelet  Container image \
"registry.ledgerline.dev/ledgerline/api:3.8.0" already present on machine
  Normal   Started    38m (x5 over 2h)   kubelet  Started container api
"""

# ---------------------------------------------------------------------------------------------
# CI
# ---------------------------------------------------------------------------------------------

_CI_YML = """\
name: ci

on:
  pull_request:
  push:
    branches: [main, "release/**"]

concurrency:
  group: ci-${{ github.ref }}
  cancel-in-progress: true

jobs:
  api:
    runs-on: [self-hosted, linux, x64]
    services:
      postgres:
        image: postgres:16.2
        env:
          POSTGRES_PASSWORD: postgres
        ports: ["5432:5432"]
        options: --health-cmd pg_isready --health-interval 5s --health-retries 10
    defaults:
      run:
        working-directory: services/api
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
          cache: pip
      - run: pip install -e '.[dev]'
      - name: Lint
        run: ruff check . && ruff format --check .
      - name: Type check
        run: mypy .
      - name: Tests
        run: pytest -n 4 --cov=ledgerline_api --cov-report=xml --cov-fail-under=87
        env:
          DATABASE_URL: postgresql://postgres:postgres@localhost:5432/postgres
      - uses: codecov/codecov-action@v4
        with:
          files: services/api/coverage.xml

  web:
    runs-on: [self-hosted, linux, x64]
    defaults:
      run:
        working-directory: web
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
          cache: npm
          cache-dependency-path: web/package-lock.json
      - run: npm ci
      - run: npx tsc --noEmit
      - run: npx jest --ci --coverage --coverageThreshold='{"global":{"lines":70}}'

  worker:
    runs-on: [self-hosted, linux, x64]
    defaults:
      run:
        working-directory: worker
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version-file: worker/go.mod
      - run: go vet ./...
      - run: go test -race -count=1 ./...

  integration-tests:
    needs: [api, worker]
    runs-on: [self-hosted, linux, x64]
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - run: docker compose -f docker-compose.yml -f docker-compose.ci.yml up -d --wait
      - run: ./scripts/integration.sh
"""

_GH_RUN_LOG = """\
integration-tests\tSet up job\t2024-05-14T09:02:11.2041930Z Current runner version: '2.316.1'
integration-tests\tSet up job\t2024-05-14T09:02:11.2069852Z Runner name: 'ci-runner-03'
integration-tests\tRun docker compose\t2024-05-14T09:02:19.8814020Z  Container ledgerline-postgres-1  Healthy
integration-tests\tRun docker compose\t2024-05-14T09:02:20.4410377Z  Container ledgerline-redis-1  Started
integration-tests\tRun docker compose\t2024-05-14T09:02:31.0927665Z  Container ledgerline-api-1  Healthy
integration-tests\tRun docker compose\t2024-05-14T09:02:31.6630143Z  Container ledgerline-worker-1  Started
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:02:32.0154901Z + pytest -q tests/integration
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:03:05.7741220Z ........................
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:04:12.3302178Z ................
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:05:47.9012346Z ..........
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:11:02.1187735Z \
tests/integration/test_export.py::test_export_full_ledger
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:11:02.1190042Z   \
export: 412,880 rows written to /tmp/export-7f1c.csv
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:14:40.5528813Z \
./scripts/integration.sh: line 14:  2231 Killed                  pytest -q tests/integration
integration-tests\tRun ./scripts/integration.sh\t2024-05-14T09:14:40.5613309Z \
##[error]Process completed with exit code 137.
integration-tests\tPost Run actions/checkout@v4\t2024-05-14T09:14:41.0027716Z Post job cleanup.
integration-tests\tStop containers\t2024-05-14T09:14:41.3314502Z Stopping container ledgerline-api-1
integration-tests\tStop containers\t2024-05-14T09:14:42.1029988Z Stopping container ledgerline-worker-1
integration-tests\tStop containers\t2024-05-14T09:14:42.8841190Z Stopping container ledgerline-redis-1
integration-tests\tStop containers\t2024-05-14T09:14:43.5526731Z Stopping container ledgerline-postgres-1
integration-tests\tComplete job\t2024-05-14T09:14:44.0012385Z Cleaning up orphan processes
integration-tests\tComplete job\t2024-05-14T09:14:44.0107112Z Terminate orphan process: pid (2198) (dockerd)
"""

# ---------------------------------------------------------------------------------------------
# Logs
# ---------------------------------------------------------------------------------------------

_API_LOG = """\
2024-05-14T03:16:40.512Z INFO  [http] GET /v1/invoices?customer=cus_Q2xT 200 41ms req_id=6b1f0e2a
2024-05-14T03:16:41.027Z INFO  [http] GET /v1/customers/cus_Q2xT 200 12ms req_id=0c93d7e1
2024-05-14T03:16:44.880Z WARN  [db] slow query 2.4s: SELECT ... FROM ledger_entries WHERE account_id = $1 ...
2024-05-14T03:16:47.301Z INFO  [http] POST /v1/invoices/inv_20240514_0188/finalize 200 230ms req_id=7d0a2c55
2024-05-14T03:16:52.664Z INFO  [jobs] enqueued charge_invoice inv_20240514_0188 job_91c2
2024-05-14T03:16:58.204Z INFO  [http] GET /healthz 200 2ms
2024-05-14T03:17:03.991Z INFO  [http] POST /v1/webhooks/stripe 200 18ms event=evt_1PGx7Q
2024-05-14T03:17:09.415Z ERROR [db] statement timeout after 15000ms: UPDATE subscriptions ... req_id=2f6b90d4
2024-05-14T03:17:09.418Z INFO  [http] PATCH /v1/subscriptions/sub_8812 500 15021ms req_id=2f6b90d4
2024-05-14T03:17:15.760Z INFO  [http] GET /v1/plans 200 6ms req_id=a1e3f8c0
2024-05-14T03:17:21.092Z INFO  [jobs] enqueued charge_invoice inv_20240514_0193 job_91c7
2024-05-14T03:17:28.344Z INFO  [http] GET /healthz 200 2ms
2024-05-14T03:17:33.870Z WARN  [stripe] request took 4.8s (POST /v1/payment_intents)
2024-05-14T03:17:42.118Z ERROR [payments] charge failed: card_declined (decline_code=insufficient_funds) \
invoice=inv_20240514_0193 req_id=9f2c41d7
2024-05-14T03:17:42.120Z INFO  [payments] invoice inv_20240514_0193 moved to past_due, dunning step 1
2024-05-14T03:17:45.553Z INFO  [http] GET /v1/invoices/inv_20240514_0193 200 9ms req_id=c4d2e7b1
2024-05-14T03:17:51.206Z ERROR [webhooks] delivery whd_5521 to https://hooks.acme-eu.example/ledger failed: \
ReadTimeout after 15.0s
2024-05-14T03:17:58.389Z INFO  [http] GET /healthz 200 3ms
2024-05-14T03:18:04.731Z INFO  [http] POST /v1/auth/refresh 200 22ms req_id=5e8f1a36
2024-05-14T03:18:12.047Z WARN  [cache] redis GET took 310ms (key=customer:cus_Q2xT)
2024-05-14T03:18:19.662Z INFO  [http] GET /v1/exports/exp_0419 200 5ms req_id=d7b3c9a2
2024-05-14T03:18:26.115Z ERROR [exports] export exp_0419 failed: disk quota exceeded on /var/tmp/ledgerline
2024-05-14T03:18:28.402Z INFO  [http] GET /healthz 200 2ms
2024-05-14T03:18:33.958Z INFO  [http] POST /v1/payments 201 140ms req_id=b0a4e6f3
2024-05-14T03:18:41.270Z INFO  [jobs] enqueued send_receipt pay_9R1c job_91d4
2024-05-14T03:18:49.813Z WARN  [http] 429 for key_live_...8f2a on GET /v1/invoices (600/min)
2024-05-14T03:18:55.006Z INFO  [http] GET /v1/customers/cus_M7pK/invoices 200 33ms req_id=e2c8f0d9
2024-05-14T03:18:57.441Z WARN  [runtime] RSS 1.49 GiB, close to the container limit
2024-05-14T03:18:58.520Z INFO  [http] GET /healthz 200 2ms
"""

_JOURNAL_WORKER = """\
May 14 03:02:58 app-02 ledgerline-worker[18231]: level=info msg=claimed job=charge_invoice id=job_9188
May 14 03:03:01 app-02 ledgerline-worker[18231]: level=info msg=acked job=charge_invoice id=job_9188
May 14 03:03:12 app-02 ledgerline-worker[18231]: level=info msg=claimed job=send_receipt id=job_9190
May 14 03:03:12 app-02 ledgerline-worker[18231]: level=info msg=acked job=send_receipt id=job_9190
May 14 03:03:30 app-02 ledgerline-worker[18231]: level=warn msg="redis latency 420ms" op=ZADD
May 14 03:03:44 app-02 ledgerline-worker[18231]: level=info msg=claimed job=sync_exchange_rates
May 14 03:04:02 app-02 systemd[1]: Stopping ledgerline-worker.service - Ledgerline background worker...
May 14 03:04:02 app-02 ledgerline-worker[18231]: level=info msg="SIGTERM received, draining" inflight=3
May 14 03:04:10 app-02 ledgerline-worker[18231]: level=info msg=acked job=charge_invoice id=job_9196
May 14 03:04:25 app-02 ledgerline-worker[18231]: level=warn msg="still draining" inflight=2
May 14 03:04:32 app-02 systemd[1]: ledgerline-worker.service: State 'stop-sigterm' timed out. Killing.
May 14 03:04:32 app-02 systemd[1]: ledgerline-worker.service: Killing process 18231 (ledgerline-work) \
with signal SIGKILL.
May 14 03:04:32 app-02 systemd[1]: ledgerline-worker.service: Main process exited, code=killed, status=9/KILL
May 14 03:04:32 app-02 systemd[1]: ledgerline-worker.service: Failed with result 'timeout'.
May 14 03:04:32 app-02 systemd[1]: Stopped ledgerline-worker.service - Ledgerline background worker.
May 14 03:04:32 app-02 systemd[1]: ledgerline-worker.service: Consumed 3h 12min 4.551s CPU time.
May 14 03:04:33 app-02 systemd[1]: Started ledgerline-worker.service - Ledgerline background worker.
May 14 03:04:33 app-02 ledgerline-worker[20977]: level=info msg=starting version=3.8.0 concurrency=16
May 14 03:04:33 app-02 ledgerline-worker[20977]: level=info msg=connected redis=redis.internal:6379/3
May 14 03:04:34 app-02 ledgerline-worker[20977]: level=warn msg="requeued orphaned" count=2
May 14 03:04:35 app-02 ledgerline-worker[20977]: level=info msg=claimed job=charge_invoice id=job_9193
May 14 03:04:38 app-02 ledgerline-worker[20977]: level=info msg=acked job=charge_invoice id=job_9193
"""

# ---------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------

_DOCTOR = """\
== ledgerline doctor ==
host:        dev-laptop-ana (x86_64)
os:          Ubuntu 22.04.4 LTS
kernel:      6.5.0-35-generic
shell:       /bin/zsh 5.8.1
git:         2.43.0
python:      Python 3.11.9 (/home/dev/ledgerline/.venv/bin/python)
pip:         24.0
uv:          0.1.44
node:        v20.12.2
npm:         10.5.0
go:          go1.22.3 linux/amd64
rustc:       rustc 1.78.0 (9b00956e5 2024-04-29)
cargo:       cargo 1.78.0 (54d8815d0 2024-03-26)
gcc:         gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
docker:      Docker version 26.1.1, build 4cf5afa
compose:     Docker Compose version v2.27.0
kubectl:     Client Version: v1.29.4
psql:        psql (PostgreSQL) 16.2

checks:
  [ok]   .venv exists and satisfies requires-python (>=3.11)
  [ok]   pre-commit hooks installed
  [ok]   web/node_modules matches web/package-lock.json
  [warn] docker context is 'default', expected 'ledgerline-dev'
  [fail] worker/go.sum is out of date (run: cd worker && go mod tidy)
  [ok]   tools/cli builds (cargo check, 3.9s)
  [ok]   ports 8000, 5433, 6380 free

1 failure, 1 warning
"""

_RUNNER_OS = """\
 Static hostname: ci-runner-03
       Icon name: computer-vm
         Chassis: vm
      Machine ID: 4f0c2b7e91d84a6c9e3f5b1a7d2c8e60
         Boot ID: b91e3d07c5a24f68a1d9e0c7b3f5a2d4
  Virtualization: kvm
Operating System: Debian GNU/Linux 12 (bookworm)
          Kernel: Linux 6.1.0-21-amd64
    Architecture: x86-64
 Hardware Vendor: QEMU
  Hardware Model: Standard PC _Q35 + ICH9, 2009_
Firmware Version: 1.16.2-debian-1.16.2-1
PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
8
               total        used        free      shared  buff/cache   available
Mem:            15Gi       3.1Gi       8.9Gi       212Mi       3.6Gi        12Gi
Swap:          2.0Gi          0B       2.0Gi
Filesystem      Size  Used Avail Use% Mounted on
/dev/vda1        79G   41G   35G  55% /
"""


# ---------------------------------------------------------------------------------------------
# The facts
# ---------------------------------------------------------------------------------------------


def _fact(scene: Scene, answer: str, direct: str, paraphrase: str, vague: str) -> PlantedFact:
    return PlantedFact(scene, answer, (direct, paraphrase, vague))


_CURL_STAGING = (
    "curl -si 'https://staging-api.ledgerline.dev/v1/invoices?limit=5' "
    '-H "Authorization: Bearer $LL_STAGING_KEY"'
)
_SSH_RUNNER = "ssh ci-runner-03 'hostnamectl; cat /etc/os-release; nproc; free -h; df -h /'"

FACTS: tuple[PlantedFact, ...] = (
    # Configuration values
    _fact(
        _read("config/server.toml", _SERVER_TOML),
        "port = 48213",
        "What port is set in the [listener] section of config/server.toml?",
        "According to its config file, which TCP port does the API server accept client connections on?",
        "what was the main port in the server config again?",
    ),
    _fact(
        _read("config/worker.yaml", _WORKER_YAML),
        "max_attempts: 9",
        "In config/worker.yaml, what is max_attempts for the charge_invoice job?",
        "How many times will the worker try to charge an invoice before it gives up on the job?",
        "what was the retry limit on invoice charging?",
    ),
    _fact(
        _read("config/db.ini", _DB_INI),
        "pg-primary.internal.ledgerline.net",
        "What host is configured under [postgres] in config/db.ini?",
        "What's the hostname of the Postgres machine that takes the writes, as opposed to the read replica?",
        "which host was the primary database on?",
    ),
    _fact(
        _read(".env.staging", _ENV_STAGING),
        "SESSION_TTL_SECONDS=5400",
        "What is SESSION_TTL_SECONDS in .env.staging?",
        "On staging, how long does a login session stay valid before the user has to sign in again?",
        "how long did sessions last on staging?",
    ),
    _fact(
        _read("config/features.json", _FEATURES_JSON),
        '"rollout_percent": 15',
        "What rollout_percent does invoice_pdf_v2 have in config/features.json?",
        "What share of customers is the new PDF invoice renderer being rolled out to?",
        "how far along was the new invoice pdf rollout?",
    ),
    _fact(
        _read("services/api/pyproject.toml", _API_PYPROJECT),
        'version = "3.8.1"',
        "What version does services/api/pyproject.toml declare for the project?",
        "What release number is the API's Python package currently at?",
        "what version had we given the api package?",
    ),
    _fact(
        _read("config/storage.toml", _STORAGE_TOML),
        "/var/lib/ledgerline/uploads",
        "What is upload_dir set to in config/storage.toml?",
        "Where on the local disk are files that users upload saved?",
        "where did uploaded files end up on the box?",
    ),
    # Test failures
    _fact(
        _bash("cd services/api && pytest -q tests/test_invoices.py", _PYTEST_INVOICES, 1),
        "assert 1160 == 1155",
        "In the pytest run of tests/test_invoices.py, what did the failing assertion in "
        "test_discount_rounding compare?",
        "When the invoice discount rounding test broke, what total in cents did we get versus the one "
        "it expected?",
        "what were the two numbers in that rounding failure?",
    ),
    _fact(
        _bash("cd services/api && pytest -q tests/test_auth.py", _PYTEST_AUTH, 1),
        "KeyError: 'tenant_id'",
        "What exception did test_refresh_rotates_token raise when we ran tests/test_auth.py?",
        "Which missing field in the decoded JWT payload made the token refresh test crash?",
        "why was the auth refresh test failing?",
    ),
    _fact(
        _bash(
            "docker compose run --rm api pytest -v --tb=short tests/billing/test_proration.py",
            _PYTEST_PRORATION,
            1,
        ),
        "services/api/billing/proration.py:142",
        "In the proration test run, at which file and line did the division by zero happen?",
        "Which spot in the billing source code divided by zero when test_zero_day_period ran?",
        "where was that zero-day proration crash coming from?",
    ),
    _fact(
        _bash("cd web && npx jest src/cart", _JEST_CART, 1),
        'Received: "12.5 EUR"',
        "What did formatPrice actually return in the failing jest test under src/cart?",
        "What string did the price formatter produce instead of the expected one when the cart tests ran?",
        "what was the wrong price text in the frontend test?",
    ),
    _fact(
        _bash("cd worker && go test -v ./...", _GO_TEST_WORKER, 1),
        "got 4 jobs, want 3",
        "What did TestDrainQueue report when go test failed in the worker?",
        "How many jobs was the scheduler's drain test left with, compared with what it expected?",
        "what was the count mismatch in the go scheduler test?",
    ),
    # Build and type-check errors
    _fact(
        _bash("mypy services/api", _MYPY_API, 1),
        "services/api/billing/models.py:73",
        "Where did mypy report the arg-type error about apply_credit?",
        "Which file and line did the type checker flag for passing a possibly-None amount into the "
        "credit method?",
        "where was the type error about applying a credit?",
    ),
    _fact(
        _bash("cd web && npx tsc --noEmit -p .", _TSC_WEB, 2),
        "error TS2532",
        "Which TS error code did tsc report for useSession.ts line 41?",
        "What's the compiler's diagnostic number for the object-might-be-undefined problem in the "
        "session hook?",
        "what error number was the possibly-undefined one in the session hook?",
    ),
    _fact(
        _bash("cargo build --manifest-path tools/cli/Cargo.toml", _CARGO_BUILD, 101),
        "error[E0502]",
        "What error code did cargo build give for the borrow problem in src/index.rs?",
        "Which rustc error number did the borrow checker raise about mutating the entries while they "
        "were still borrowed?",
        "what was the rust borrow error code?",
    ),
    _fact(
        _bash("make -C native", _MAKE_NATIVE, 2),
        "src/checksum.c:214:9",
        "Where did gcc report the implicit declaration error when we ran make -C native?",
        "At which file, line and column did the C compiler complain about a function being used "
        "without a declaration?",
        "where was the C build breaking?",
    ),
    # Stack traces
    _fact(
        _bash("python scripts/backfill_ledger.py --since 2024-01-01", _BACKFILL, 1),
        "ledger_entries_external_ref_key",
        "Which unique constraint did scripts/backfill_ledger.py violate?",
        "What's the name of the database constraint that rejected the duplicate rows during the ledger "
        "backfill?",
        "which constraint was the backfill tripping over?",
    ),
    _fact(
        _bash("cd web && npm run seed -- --customers 50", _SEED_JS, 1),
        "seed.js:64:31",
        "Where in scripts/seed.js was the TypeError thrown (line and column)?",
        "Which line of the database seeding script tried to read a property of something undefined?",
        "where did the seed script crash?",
    ),
    _fact(
        _bash("cd worker && go run ./cmd/reconcile --date 2024-05-13", _RECONCILE_PANIC, 1),
        "index out of range [5] with length 5",
        "What was the panic message when we ran go run ./cmd/reconcile?",
        "What runtime error made the reconciliation command crash? Something about a slice index?",
        "why did the reconciler blow up?",
    ),
    # Git
    _fact(
        _bash("git log --oneline -25", _GIT_LOG),
        "a3f9c1e",
        "In the git log, what's the short hash of the commit that fixed double charges on retried webhooks?",
        "Which commit stopped customers being billed twice when a webhook got re-delivered?",
        "what was the hash of that webhook fix?",
    ),
    _fact(
        _bash("git branch -a -vv", _GIT_BRANCH),
        "feature/ledger-export-csv",
        "Which branch was marked as the current one in the git branch -a -vv output?",
        "What's the name of the local branch we had checked out at that point?",
        "what branch were we on?",
    ),
    _fact(
        _bash("git log -3 --format=fuller --stat -- services/api/billing/tax.py", _GIT_LOG_TAX),
        "Priya Raman",
        "In the git log of services/api/billing/tax.py, who authored the reverse-charge VAT commit?",
        "Which developer implemented the reverse charge handling for business clients in the tax module?",
        "who did the reverse-charge work?",
    ),
    # Package versions
    _fact(
        _bash(
            "pip list",
            _table(("Package", "Version"), _PIP_ROWS)
            + "\n\n[notice] A new release of pip is available: 24.0 -> 24.1\n"
            "[notice] To update, run: pip install --upgrade pip",
        ),
        "2.0.29",
        "What version of SQLAlchemy did pip list show?",
        "Which release of the Python ORM is installed in the API's virtualenv?",
        "what version of the orm did we have installed?",
    ),
    _fact(
        _bash("cd web && npm ls --depth=0", _NPM_LS),
        "5.28.4",
        "Which version of @tanstack/react-query does npm ls list in web/?",
        "What version of the data-fetching and caching library does the frontend depend on?",
        "which react-query were we on?",
    ),
    _fact(
        _read("worker/go.mod", _GO_MOD),
        "v5.5.5",
        "What pgx version does worker/go.mod require?",
        "Which release of the Postgres driver is the Go worker pinned to?",
        "what postgres driver version was the go side using?",
    ),
    # Source code
    _fact(
        _read("services/api/billing/payments.py", _PAYMENTS_PY),
        "allow_partial: bool = False",
        "In services/api/billing/payments.py, what keyword-only parameter does allocate_payment take, "
        "and what is its default?",
        "Is the payment allocation function's option for accepting less than the full balance on or "
        "off by default, and what is it named?",
        "what was that flag on allocate_payment?",
    ),
    _fact(
        _read("services/api/webhooks/dispatcher.py", _DISPATCHER_PY),
        "RETRY_TIMEOUT = 37",
        "What is RETRY_TIMEOUT set to in services/api/webhooks/dispatcher.py?",
        "How many seconds does the webhook dispatcher give a redelivery attempt before it counts it as "
        "failed?",
        "how long did a webhook redelivery get before timing out?",
    ),
    _fact(
        _read("web/src/api/client.ts", _CLIENT_TS),
        "Promise<Page<Invoice>>",
        "What does fetchInvoices return in web/src/api/client.ts?",
        "What's the declared return type of the frontend helper that loads a customer's invoices?",
        "what did the invoice fetch function give back?",
    ),
    _fact(
        _read("worker/internal/queue/queue.go", _QUEUE_GO),
        "visibilityTimeout = 90 * time.Second",
        "What is visibilityTimeout in worker/internal/queue/queue.go?",
        "How long does a claimed job stay hidden from other workers before someone else can pick it up?",
        "how long did the queue hide a claimed job?",
    ),
    # Database schema
    _fact(
        _read("migrations/0042_add_refunds.sql", _MIGRATION_REFUNDS),
        "refund_reason_code VARCHAR(32)",
        "What type does the 0042_add_refunds migration give refund_reason_code?",
        "How long can a refund's reason code be, according to the migration that introduced the "
        "refunds table?",
        "what size was the refund reason column?",
    ),
    _fact(
        _bash("psql \"$DATABASE_URL\" -c '\\d invoices'", _PSQL_INVOICES),
        "numeric(16,6)",
        "In the psql \\d invoices output, what type is total_amount?",
        "What precision and scale does the invoices table use for the invoice total column?",
        "how was the invoice total stored in the db?",
    ),
    # Searches
    _fact(
        _grep("TODO|FIXME", "services/api", _GREP_TODO),
        "services/api/auth/oauth.py:217",
        "In the TODO/FIXME grep over services/api, which file and line had the TODO(security) about the "
        "OAuth state?",
        "Where's the to-do about validating the OAuth state value against the user's session?",
        "where was the oauth security todo?",
    ),
    _fact(
        _grep("os\\.environ", "services/api", _GREP_ENVIRON),
        "services/api/settings.py:58",
        "In the os.environ grep, which file and line reads STRIPE_WEBHOOK_SECRET?",
        "Where in the API code is the Stripe webhook signing secret pulled from the environment?",
        "where did we load the stripe webhook secret?",
    ),
    # HTTP
    _fact(
        _bash(_CURL_STAGING, _CURL_RATE_LIMITED),
        "retry-after: 120",
        "What Retry-After value did the staging API send back in that curl to /v1/invoices?",
        "How many seconds did the rate-limited staging API tell us to wait before trying again?",
        "how long did staging say to back off?",
    ),
    _fact(
        _bash("curl -sv https://api.ledgerline.dev/healthz", _CURL_HEALTHZ),
        "HTTP/1.1 503 Service Unavailable",
        "What status line came back from curl -v on the production /healthz endpoint?",
        "What HTTP code did the live health check answer with when we probed whether prod was up?",
        "what did the prod health check say?",
    ),
    # Containers and deployment
    _fact(
        _read("deploy/k8s/web-deployment.yaml", _WEB_DEPLOYMENT),
        "1.42.0-rc2",
        "Which image tag does deploy/k8s/web-deployment.yaml use for the web container?",
        "What build of the frontend container image is the Kubernetes deployment pinned to?",
        "which frontend image version was going out?",
    ),
    _fact(
        _read("deploy/k8s/worker-hpa.yaml", _WORKER_HPA),
        "maxReplicas: 12",
        "What's maxReplicas in deploy/k8s/worker-hpa.yaml?",
        "What's the most pods the worker autoscaler will scale out to?",
        "what was the cap on worker pods?",
    ),
    _fact(
        _read("docker-compose.yml", _COMPOSE),
        "mem_limit: 384m",
        "What mem_limit does docker-compose.yml set for the redis service?",
        "How much RAM is the cache container capped at in the local compose setup?",
        "what was the redis container's memory cap in compose?",
    ),
    _fact(
        _bash("kubectl describe pod api-7c9f6d5b8-q2lxk -n billing", _KUBECTL_DESCRIBE),
        "1536Mi",
        "What memory limit does kubectl describe show for the api container in pod api-7c9f6d5b8-q2lxk?",
        "How much RAM is the API container allowed before Kubernetes OOM-kills it?",
        "what was the api pod's memory cap?",
    ),
    # CI
    _fact(
        _read(".github/workflows/ci.yml", _CI_YML),
        "--cov-fail-under=87",
        "What coverage threshold does the api job in .github/workflows/ci.yml enforce?",
        "Below what percentage of test coverage does the Python part of the pipeline fail?",
        "what coverage did CI require for the backend?",
    ),
    _fact(
        _bash("gh run view 9102847731 --log-failed", _GH_RUN_LOG),
        "exit code 137",
        "What exit code did the failed step report in the gh run view --log-failed output?",
        "With what status did the integration tests job on CI get killed?",
        "how did that CI integration job die?",
    ),
    # Logs
    _fact(
        _bash("ssh app-01 tail -n 29 /var/log/ledgerline/api.log", _API_LOG),
        "2024-05-14T03:17:42.118Z",
        "At what timestamp did the card_declined error appear in the api log we tailed on app-01?",
        "When exactly did the payment processor turn down the charge, according to the API log?",
        "when did that payment failure happen?",
    ),
    _fact(
        _bash("ssh app-02 journalctl -u ledgerline-worker --since 03:02 --no-pager", _JOURNAL_WORKER),
        "status=9/KILL",
        "What exit status did systemd record when the ledgerline-worker unit was killed, in the journalctl "
        "output?",
        "Which signal terminated the background worker's main process, according to the system journal?",
        "how did the worker process end up dying?",
    ),
    # Environment
    _fact(
        _bash("make doctor", _DOCTOR, 2),
        "3.11.9",
        "Which Python version did make doctor report?",
        "What interpreter release is installed in the dev machine's virtualenv?",
        "what python did the local setup check find?",
    ),
    _fact(
        _bash(_SSH_RUNNER, _RUNNER_OS),
        "Debian GNU/Linux 12 (bookworm)",
        "What operating system did hostnamectl report on ci-runner-03?",
        "Which Linux distribution and release is the CI runner machine running?",
        "what OS was that runner on?",
    ),
)

_ANSWERS = tuple(fact.answer for fact in FACTS)
_FACT_ARGS = tuple(fact.scene.args for fact in FACTS)


# ---------------------------------------------------------------------------------------------
# Distractors: look-alike scenes drawn from a seed
# ---------------------------------------------------------------------------------------------

# Components that exist in the project but that no fact is about, so a distractor never answers a
# fact's question: its ports, timeouts and errors belong to something the question does not name.
_SERVICES = (
    "notifier",
    "gateway",
    "mailer",
    "search",
    "exporter",
    "reports",
    "auditlog",
    "ratelimiter",
    "pdfgen",
    "fx-rates",
    "usage-meter",
    "ledger-sync",
)
_ENVS = ("development", "test", "ci", "demo", "loadtest", "preview")
_PY_MODULES = (
    ("notifications", "email"),
    ("notifications", "sms"),
    ("exports", "scheduler"),
    ("exports", "xlsx_writer"),
    ("reports", "revenue"),
    ("reports", "aging"),
    ("portal", "views"),
    ("portal", "magic_links"),
    ("search", "indexer"),
    ("usage", "meter"),
    ("usage", "rollup"),
    ("customers", "merge"),
)
_TEST_MODULES = (
    "test_exports",
    "test_notifications",
    "test_portal",
    "test_plans",
    "test_customers",
    "test_credits",
    "test_receipts",
    "test_search",
    "test_usage",
    "test_reports",
    "test_magic_links",
    "test_rollup",
)
_WORDS = ("customer", "plan", "export", "receipt", "usage", "report", "portal", "credit", "coupon")
_KEYS = ("account_id", "currency_code", "plan_slug", "region", "locale", "period", "seat_count")
_ATTRS = ("email", "locale", "plan", "billing_address", "owner", "parent_id")
_COMMIT_VERBS = ("Fix", "Add", "Refactor", "Speed up", "Test", "Document", "Log", "Simplify", "Harden")
_COMMIT_THINGS = (
    "pagination",
    "validation",
    "retries",
    "caching",
    "timezone handling",
    "CSV output",
    "error messages",
    "the German translation",
    "batch sizes",
    "the admin view",
)


def _hexid(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _version(rng: random.Random) -> str:
    return f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"


def _clock(day: int, second: int) -> str:
    """An ISO time in May 2024, milliseconds taken from the second so a line is reproducible."""
    ms = second * 7919 % 1000
    return f"2024-05-{day:02d}T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d}.{ms:03d}Z"


def _toml_config(rng: random.Random) -> Scene:
    svc = rng.choice(_SERVICES)
    lines = [
        f"# {svc} service configuration.",
        "",
        "[service]",
        f'name = "ledgerline-{svc}"',
        f'environment = "{rng.choice(("development", "staging", "production"))}"',
        f"workers = {rng.randint(1, 12)}",
        "",
        f"[{rng.choice(('http', 'listener', 'server'))}]",
        f'host = "{rng.choice(("0.0.0.0", "127.0.0.1", "::"))}"',
        f"port = {rng.randint(3000, 64000)}",
        f"read_timeout_seconds = {rng.randint(5, 120)}",
        f"idle_timeout_seconds = {rng.randint(30, 300)}",
        "",
        "[admin]",
        f"port = {rng.randint(3000, 64000)}",
        "",
        "[retry]",
        f"max_attempts = {rng.randint(2, 8)}",
        f"backoff_ms = {rng.choice((100, 250, 500, 1000, 2000))}",
        f"max_backoff_ms = {rng.choice((5000, 10000, 30000, 60000))}",
        "",
        "[limits]",
        f"max_batch = {rng.choice((50, 100, 200, 500, 1000))}",
        f"queue_size = {rng.choice((256, 512, 1024, 4096))}",
        "",
        "[log]",
        f'level = "{rng.choice(("debug", "info", "warn"))}"',
        f'format = "{rng.choice(("json", "logfmt", "text"))}"',
    ]
    return _read(f"config/{svc}.toml", "\n".join(lines))


def _yaml_config(rng: random.Random) -> Scene:
    svc = rng.choice(_SERVICES)
    lines = [
        f"# {svc} settings",
        f"{svc.replace('-', '_')}:",
        f"  concurrency: {rng.randint(1, 32)}",
        f"  queue: {svc}-jobs",
        f"  shutdown_grace: {rng.randint(5, 60)}s",
        "",
        "jobs:",
    ]
    for word in rng.sample(_WORDS, rng.randint(3, 5)):
        lines += [
            f"  {rng.choice(('sync', 'send', 'build', 'refresh', 'prune'))}_{word}:",
            f"    timeout_seconds: {rng.choice((10, 30, 60, 90, 300, 600))}",
            "    retry:",
            f"      max_attempts: {rng.randint(1, 8)}",
            f"      backoff: {rng.choice(('fixed', 'exponential', 'linear'))}",
            f"      initial_delay: {rng.randint(1, 30)}s",
        ]
    lines += ["", "logging:", f"  level: {rng.choice(('debug', 'info', 'warn'))}", "  format: json"]
    return _read(f"config/{svc}.yaml", "\n".join(lines))


def _env_file(rng: random.Random) -> Scene:
    env = rng.choice(_ENVS)
    lines = [
        f"# {env} environment",
        f"APP_ENV={env}",
        f"APP_DEBUG={rng.choice(('true', 'false'))}",
        f"LOG_LEVEL={rng.choice(('debug', 'info'))}",
        f"PUBLIC_BASE_URL=http://localhost:{rng.randint(3000, 9999)}",
        "",
        f"DATABASE_URL=postgresql://ledgerline@localhost:{rng.randint(5432, 5440)}/ledgerline_{env}",
        f"REDIS_URL=redis://localhost:{rng.randint(6379, 6390)}/{rng.randint(0, 15)}",
        "",
        "SESSION_COOKIE_NAME=ll_session",
        f"SESSION_TTL_SECONDS={rng.choice((600, 900, 3600, 7200, 28800, 86400))}",
        f"REMEMBER_ME_TTL_SECONDS={rng.choice((86400, 604800, 1209600))}",
        f"CSRF_TOKEN_TTL_SECONDS={rng.choice((900, 1800, 7200))}",
        "",
        "STRIPE_API_BASE=http://localhost:12111",
        f"SMTP_HOST={rng.choice(('localhost', 'mailpit'))}",
        "SMTP_PORT=1025",
        f"MAIL_FROM=dev+{env}@ledgerline.dev",
        "",
        f"RATE_LIMIT_PER_MINUTE={rng.choice((60, 120, 1200, 10000))}",
        f"EXPORT_MAX_ROWS={rng.choice((1000, 10000, 50000))}",
        f"SENTRY_TRACES_SAMPLE_RATE={rng.choice(('0', '0.05', '1.0'))}",
    ]
    return _read(f".env.{env}", "\n".join(lines))


def _test_error(rng: random.Random) -> tuple[str, str]:
    """One failure's `E` line and the exception type pytest names after the file:line."""
    key, word = rng.choice(_KEYS), rng.choice(_WORDS)
    return rng.choice(
        (
            (f"AttributeError: 'NoneType' object has no attribute '{rng.choice(_ATTRS)}'", "AttributeError"),
            (f"assert {rng.randint(1, 5000)} == {rng.randint(1, 5000)}", "AssertionError"),
            (f"ValueError: invalid literal for int() with base 10: '{word}'", "ValueError"),
            (f"TypeError: create_{word}() got an unexpected keyword argument '{key}'", "TypeError"),
            (f"KeyError: '{key}'", "KeyError"),
        )
    )


def _pytest_run(rng: random.Random) -> Scene:
    module = rng.choice(_TEST_MODULES)
    verbs = ("created", "listed", "merged", "expired", "sent")
    names = rng.sample([f"test_{word}_{verb}" for word in _WORDS for verb in verbs], rng.randint(20, 36))
    seconds = f"{rng.uniform(0.3, 9):.2f}s"
    if rng.random() < 0.3:
        lines = [f"tests/{module}.py::{name} PASSED" for name in names]
        lines.append(f"{len(names)} passed in {seconds}")
        return _bash(f"cd services/api && pytest -v tests/{module}.py", "\n".join(lines))
    chosen = set(rng.sample(names, rng.randint(2, 3)))
    failing = [name for name in names if name in chosen]
    dots = "".join("F" if name in failing else "." for name in names)
    lines = [f"{dots:<73}[100%]", f"{' FAILURES ':=^80}"]
    summary = []
    for name in failing:
        error, kind = _test_error(rng)
        limit = rng.randint(1, 100)
        lines += [
            f"{' ' + name + ' ':_^80}",
            "",
            f"    def {name}(client, {rng.choice(_WORDS)}):",
            f'        resp = client.get("/v1/{rng.choice(_WORDS)}s", params={{"limit": {limit}}})',
            "        body = resp.json()",
            f'>       assert body["items"][0]["{rng.choice(_KEYS)}"] == expected',
            f"E       {error}",
            "",
            f"tests/{module}.py:{rng.randint(20, 400)}: {kind}",
        ]
        summary.append(f"FAILED tests/{module}.py::{name} - {error}")
    lines += [f"{' short test summary info ':=^80}", *summary]
    lines.append(f"{len(failing)} failed, {len(names) - len(failing)} passed in {seconds}")
    return _bash(f"cd services/api && pytest -q tests/{module}.py", "\n".join(lines), 1)


def _log_event(rng: random.Random, svc: str) -> str:
    word = rng.choice(_WORDS)
    return rng.choice(
        (
            f"INFO  [http] GET /v1/{word}s {rng.choice((200, 200, 200, 304, 404))} {rng.randint(1, 300)}ms",
            f"INFO  [http] POST /v1/{word}s {rng.choice((200, 201, 202, 422))} {rng.randint(5, 400)}ms",
            f"WARN  [cache] redis GET took {rng.randint(100, 900)}ms (key={word}:{_hexid(rng, 6)})",
            f"WARN  [db] slow query {rng.uniform(1, 9):.1f}s on {word}s",
            f"ERROR [smtp] connection reset by peer (attempt {rng.randint(1, 4)})",
            f"ERROR [{svc}] {word} {_hexid(rng, 6)} failed: upstream timeout after {rng.randint(2, 30)}s",
            f"INFO  [jobs] finished {word}_sync in {rng.randint(1, 90)}s",
        )
    )


def _log_tail(rng: random.Random) -> Scene:
    svc = rng.choice(_SERVICES)
    count = rng.randint(25, 80)
    day, second = rng.randint(1, 31), rng.randint(0, 80000)
    lines = []
    for _ in range(count):
        second += rng.randint(1, 20)
        lines.append(f"{_clock(day, second)} {_log_event(rng, svc)}")
    command = f"ssh app-0{rng.randint(3, 9)} tail -n {count} /var/log/ledgerline/{svc}.log"
    return _bash(command, "\n".join(lines))


def _grep_line(rng: random.Random, pattern: str) -> str:
    """One matching line for a distractor's grep pattern, its names drawn afresh."""
    key, word = rng.choice(_KEYS), rng.choice(_WORDS)
    if pattern == "log\\.info":
        return f'    log.info("{word} %s done", {key})'
    if pattern == "logger\\.warning":
        return f'    logger.warning("{word} %s skipped", {key})'
    if pattern == "Decimal\\(":
        return f'    {key} = Decimal("{rng.randint(0, 99)}.{rng.randint(0, 99):02d}")'
    if pattern == "@router\\.(get|post)":
        return f'@router.{rng.choice(("get", "post"))}("/v1/{word}s")'
    return f'        raise ValueError(f"bad {key}: {{value!r}}")'


def _grep_hits(rng: random.Random) -> Scene:
    pattern = rng.choice(
        ("log\\.info", "logger\\.warning", "Decimal\\(", "@router\\.(get|post)", "raise ValueError")
    )
    hits = []
    for package, module in sorted(rng.sample(_PY_MODULES, rng.randint(8, 12))):
        for line in sorted(rng.sample(range(10, 400), rng.randint(3, 5))):
            hits.append(f"services/api/{package}/{module}.py:{line}:{_grep_line(rng, pattern)}")
    return _grep(pattern, rng.choice(("services/api", "services")), "\n".join(hits))


def _source_file(rng: random.Random) -> Scene:
    package, module = rng.choice(_PY_MODULES)
    word = rng.choice(_WORDS)
    lines = [
        f'"""The {module.replace("_", " ")} part of {package}: what it sends, builds or refreshes."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "from datetime import timedelta",
        "",
        "log = logging.getLogger(__name__)",
        "Row = dict[str, object]",
        "",
        f"BATCH_SIZE = {rng.choice((50, 100, 250, 500, 1000))}",
        f"SEND_TIMEOUT = {rng.randint(3, 60)}",
        f"MAX_RETRIES = {rng.randint(1, 8)}",
        f"CACHE_TTL = timedelta(minutes={rng.randint(1, 120)})",
        "",
        "",
        f"def build_{word}(tenant_id: str, *, limit: int = {rng.randint(10, 500)}) -> list[Row]:",
        f'    """Up to `limit` {word} rows for the tenant, newest first."""',
        "    rows = _query(tenant_id)[:limit]",
        f'    log.info("built %d {word} rows for %s", len(rows), tenant_id)',
        "    return rows",
        "",
        "",
        f"def send_{word}(row: Row, attempt: int = 0) -> bool:",
        "    if attempt >= MAX_RETRIES:",
        '        log.warning("giving up on %s", row.get("id"))',
        "        return False",
        "    return _post(row, timeout=SEND_TIMEOUT)",
        "",
        "",
        "def _query(tenant_id: str) -> list[Row]:",
        f'    return [{{"id": f"{word}_{{i}}", "tenant_id": tenant_id}} for i in range(BATCH_SIZE)]',
        "",
        "",
        "def _post(row: Row, *, timeout: int) -> bool:",
        '    log.debug("posting %s (timeout %ss)", row["id"], timeout)',
        "    return True",
    ]
    return _read(f"services/api/{package}/{module}.py", "\n".join(lines))


def _diff(rng: random.Random) -> Scene:
    package, module = rng.choice(_PY_MODULES)
    path = f"services/api/{package}/{module}.py"
    start = rng.randint(10, 300)
    old, new = rng.randint(1, 60), rng.randint(1, 60)
    word = rng.choice(_WORDS)
    lines = [
        f"diff --git a/{path} b/{path}",
        f"index {_hexid(rng)}..{_hexid(rng)} 100644",
        f"--- a/{path}",
        f"+++ b/{path}",
        f"@@ -{start},9 +{start},10 @@ class {word.title()}Builder:",
        "     def __init__(self, tenant_id: str) -> None:",
        "         self.tenant_id = tenant_id",
        f"-        self.timeout = {old}",
        f"+        self.timeout = {new}",
        f"+        self.{rng.choice(_KEYS)} = None",
        "",
        f"     def build(self) -> list[{word.title()}]:",
        f"-        rows = self._fetch(limit={rng.randint(10, 99)})",
        "+        rows = self._fetch(limit=self.limit)",
        "         return [self._row(r) for r in rows]",
        f"@@ -{start + 40},7 +{start + 41},8 @@ class {word.title()}Builder:",
        "     def _row(self, raw: dict[str, object]) -> " + word.title() + ":",
        f"-        return {word.title()}(**raw)",
        f'+        raw.setdefault("{rng.choice(_KEYS)}", "{rng.choice(_WORDS)}")',
        f"+        return {word.title()}(**raw)",
        "",
        "     def _fetch(self, *, limit: int) -> list[dict[str, object]]:",
        f'         log.debug("fetching %d {word}s", limit)',
    ]
    return _bash(f"git diff -- {path}", "\n".join(lines))


_PIP_NAMES = (
    "certifi",
    "charset-normalizer",
    "click",
    "gevent",
    "greenlet",
    "idna",
    "Jinja2",
    "locust",
    "MarkupSafe",
    "mkdocs",
    "mkdocs-material",
    "msgpack",
    "pip",
    "psutil",
    "Pygments",
    "PyYAML",
    "pyzmq",
    "requests",
    "setuptools",
    "urllib3",
    "Werkzeug",
    "zope.interface",
)
_NPM_NAMES = (
    "@playwright/test",
    "@types/node",
    "dotenv",
    "eslint",
    "execa",
    "fast-glob",
    "handlebars",
    "juice",
    "mjml",
    "nodemailer",
    "playwright",
    "prettier",
    "tsx",
    "typescript",
    "vitepress",
    "vue",
    "yaml",
    "chalk",
    "commander",
    "zx",
)


def _package_list(rng: random.Random) -> Scene:
    if rng.random() < 0.5:
        venv = rng.choice(("tools/loadtest", "docs", "scripts/etl"))
        names = sorted(rng.sample(_PIP_NAMES, rng.randint(18, len(_PIP_NAMES))), key=str.lower)
        rows = [(name, _version(rng)) for name in names]
        return _bash(f"{venv}/.venv/bin/pip list", _table(("Package", "Version"), rows))
    folder = rng.choice(("e2e", "docs-site", "tools/email-templates"))
    chosen = sorted(rng.sample(_NPM_NAMES, rng.randint(17, len(_NPM_NAMES))))
    lines = [f"ledgerline-{folder.split('/')[-1]}@{_version(rng)} /home/dev/ledgerline/{folder}"]
    lines += [f"\u251c\u2500\u2500 {name}@{_version(rng)}" for name in chosen[:-1]]
    lines.append(f"\u2514\u2500\u2500 {chosen[-1]}@{_version(rng)}")
    for name in rng.sample(chosen, 3):
        lines.append(f"npm warn deprecated {name}@{_version(rng)}: this version is no longer supported")
    return _bash(f"cd {folder} && npm ls --depth=0", "\n".join(lines))


def _k8s_deployment(rng: random.Random) -> Scene:
    svc = rng.choice(_SERVICES)
    port = rng.randint(3000, 9999)
    lines = [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        f"  name: {svc}",
        "  namespace: billing",
        "spec:",
        f"  replicas: {rng.randint(1, 8)}",
        "  selector:",
        "    matchLabels:",
        f"      app.kubernetes.io/name: {svc}",
        "  template:",
        "    metadata:",
        "      labels:",
        f"        app.kubernetes.io/name: {svc}",
        "    spec:",
        "      containers:",
        f"        - name: {svc}",
        f"          image: registry.ledgerline.dev/ledgerline/{svc}:{_version(rng)}",
        "          ports:",
        f"            - containerPort: {port}",
        "          resources:",
        "            requests:",
        f"              cpu: {rng.choice(('50m', '100m', '250m', '500m'))}",
        f"              memory: {rng.choice(('64Mi', '128Mi', '256Mi', '512Mi'))}",
        "            limits:",
        f"              memory: {rng.choice(('256Mi', '512Mi', '768Mi', '1Gi', '2Gi'))}",
        "          livenessProbe:",
        "            httpGet:",
        "              path: /healthz",
        f"              port: {port}",
        f"            periodSeconds: {rng.choice((5, 10, 15))}",
    ]
    return _read(f"deploy/k8s/{svc}-deployment.yaml", "\n".join(lines))


def _git_log(rng: random.Random) -> Scene:
    package, module = rng.choice(_PY_MODULES)
    path = f"services/api/{package}/{module}.py"
    count = rng.randint(20, 30)
    subjects = [
        f"{verb} {thing} for {word}s" for verb in _COMMIT_VERBS for word in _WORDS for thing in _COMMIT_THINGS
    ]
    numbers = sorted(rng.sample(range(600, 800), count), reverse=True)
    lines = [
        f"{_hexid(rng)} {subject} (#{number})"
        for subject, number in zip(rng.sample(subjects, count), numbers, strict=True)
    ]
    return _bash(f"git log --oneline -{count} -- {path}", "\n".join(lines))


_MYPY_ERRORS = (
    ('Incompatible types in assignment (expression has type "str", variable has type "int")', "assignment"),
    ('Argument 1 to "render" has incompatible type "dict[str, Any]"; expected "Context"', "arg-type"),
    ("Missing return statement", "return"),
    ('Name "row" is not defined', "name-defined"),
    ("Function is missing a type annotation", "no-untyped-def"),
)
_TSC_ERRORS = (
    ("TS2304", "Cannot find name 'page'."),
    ("TS2339", "Property 'locator' does not exist on type 'Frame'."),
    ("TS7006", "Parameter 'el' implicitly has an 'any' type."),
    ("TS2345", "Argument of type 'string' is not assignable to parameter of type 'RegExp'."),
    ("TS18048", "'response' is possibly 'undefined'."),
)


def _type_check(rng: random.Random) -> Scene:
    """A type checker's run over code no fact is about, its errors grouped by file as the tools print them."""
    found: list[tuple[str, int, str]] = []
    if rng.random() < 0.5:
        for _ in range(rng.randint(20, 30)):
            message, code = rng.choice(_MYPY_ERRORS)
            path = f"scripts/etl/{rng.choice(_WORDS)}_{rng.choice(('load', 'clean', 'dump'))}.py"
            found.append((path, rng.randint(5, 300), f"error: {message}  [{code}]"))
        lines = [f"{path}:{line}: {text}" for path, line, text in sorted(found)]
        files = len({path for path, _, _ in found})
        lines.append(
            f"Found {len(found)} errors in {files} files (checked {files + rng.randint(5, 40)} source files)"
        )
        return _bash("mypy scripts/etl", "\n".join(lines), 1)
    for _ in range(rng.randint(20, 30)):
        code, message = rng.choice(_TSC_ERRORS)
        found.append((f"tests/{rng.choice(_WORDS)}.spec.ts", rng.randint(3, 200), f"error {code}: {message}"))
    lines = [f"{path}({line},{rng.randint(1, 40)}): {text}" for path, line, text in sorted(found)]
    lines += ["", f"Found {len(found)} errors in {len({path for path, _, _ in found})} files."]
    return _bash("cd e2e && npx tsc --noEmit", "\n".join(lines), 2)


_FAMILIES: tuple[Callable[[random.Random], Scene], ...] = (
    _toml_config,
    _yaml_config,
    _env_file,
    _pytest_run,
    _log_tail,
    _grep_hits,
    _source_file,
    _diff,
    _package_list,
    _k8s_deployment,
    _git_log,
    _type_check,
)


def _holds_answer(scene: Scene) -> bool:
    return any(answer in scene.output for answer in _ANSWERS) or scene.args in _FACT_ARGS


def distractors(seed: int, count: int) -> list[Scene]:
    """`count` look-alike scenes, the same for the same seed; none holds a fact's answer or args.

    A draw that happens to hold an answer (a random port equal to the planted one) is drawn again;
    a scene whose tool call already came up is drawn again a few times, then kept (a file read twice
    with other content is still a look-alike, only less tidy).
    """
    rng = random.Random(seed)
    scenes: list[Scene] = []
    seen: list[dict[str, object]] = []
    while len(scenes) < count:
        for _ in range(20):
            scene = rng.choice(_FAMILIES)(rng)
            while _holds_answer(scene):
                scene = rng.choice(_FAMILIES)(rng)
            if scene.args not in seen:
                break
        seen.append(scene.args)
        scenes.append(scene)
    return scenes
