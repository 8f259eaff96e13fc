"""The outside recall probe's development set: eight facts of "tally", an invoicing web app.

tally is a FastAPI service on Postgres (tally/), a React front end (web/), a background worker
for payouts and e-mail (worker/), run with docker compose and make. Three work runs read and run
its files among look-alikes (other ports, timeouts, functions, versions, flags and errors of the
same project); the second run's user message carries a person's decision. Then eight questions,
two in the words the fact was planted in and six in other words, as a developer would type them
long after the output left the context. No question holds its answer.

Written 2026-12-05 before the ranking was tuned on it (issue 37 item 6); recall_outside_sealed.py
was written at the same time for another project and is not read while tuning.
"""

# ruff: noqa: E501  (outputs are quoted as the tools print them)
from __future__ import annotations

import random

from recall_outside import Question, Run, Step, draw, mixed

# --- the facts' outputs ----------------------------------------------------------------------------

MAKE_DEV = """\
docker compose -f deploy/compose.dev.yml up -d db redis mailpit
[+] Running 3/3
 ✔ Container tally-db-1       Healthy                                   2.1s
 ✔ Container tally-redis-1    Started                                   0.6s
 ✔ Container tally-mailpit-1  Started                                   0.7s
alembic upgrade head
INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.
INFO  [alembic.runtime.migration] Will assume transactional DDL.
uvicorn tally.api.main:app --reload --host 0.0.0.0 --port ${API_PORT:-8000}
INFO:     Will watch for changes in these directories: ['/home/dev/tally']
WARNING:  [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use
INFO:     API_PORT_FALLBACK set, retrying
INFO:     Uvicorn running on http://0.0.0.0:8731 (Press CTRL+C to quit)
INFO:     Started reloader process [51207] using WatchFiles
INFO:     Started server process [51233]
INFO:     Waiting for application startup.
INFO:     tally.api.main: mounted /metrics for prometheus (scrape port 9464)
INFO:     Application startup complete.
"""

SETTINGS_SHOW = """\
tally 0.14.2 (python 3.12.4)
environment        dev
settings loaded from /home/dev/.config/tally/local.toml
  (defaults: tally/settings/defaults.toml; env prefix: TALLY_)
database.url       postgresql+psycopg://tally:***@localhost:5433/tally_dev
database.pool_size 10
redis.url          redis://localhost:6380/2
mail.smtp_host     localhost
mail.smtp_port     1025
payments.provider  stripe
payments.mode      test
features           invoices_v2, bulk_export
log.level          DEBUG
"""

PYTEST_INVOICES = """\
============================= test session starts ==============================
platform linux -- Python 3.12.4, pytest-8.2.2, pluggy-1.5.0
rootdir: /home/dev/tally
configfile: pyproject.toml
plugins: anyio-4.4.0, asyncio-0.23.7, cov-5.0.0
collected 23 items

tests/api/test_invoices.py ......F

=================================== FAILURES ===================================
__________________ test_create_second_invoice_same_number ______________________

client = <starlette.testclient.TestClient object at 0x7f3a2c1d5e50>
tenant = Tenant(id=7, slug='acme')

    def test_create_second_invoice_same_number(client, tenant):
        client.post(f"/t/{tenant.slug}/invoices", json=invoice_payload(number="INV-0042"))
>       resp = client.post(f"/t/{tenant.slug}/invoices", json=invoice_payload(number="INV-0042"))

tests/api/test_invoices.py:88:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
tally/api/routes/invoices.py:61: in create_invoice
    session.commit()
.venv/lib/python3.12/site-packages/sqlalchemy/orm/session.py:1969: in commit
    trans.commit(_to_root=True)
E   sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) duplicate key value violates unique constraint "uq_invoice_number_per_tenant"
E   DETAIL:  Key (tenant_id, number)=(7, INV-0042) already exists.
=========================== short test summary info ============================
FAILED tests/api/test_invoices.py::test_create_second_invoice_same_number - sqlalchemy.exc.IntegrityError
========================= 1 failed, 6 passed in 3.42s ==========================
"""

PIP_LIST = """\
Package                 Version
----------------------- ---------
alembic                 1.13.1
annotated-types         0.7.0
anyio                   4.4.0
celery                  5.4.0
fastapi                 0.111.0
httpx                   0.27.0
jinja2                  3.1.4
psycopg                 3.1.19
psycopg-binary          3.1.19
pydantic                2.7.4
pydantic-settings       2.3.3
pydantic_core           2.18.4
pytest                  8.2.2
python-multipart        0.0.9
redis                   5.0.6
sqlalchemy              2.0.31
starlette               0.37.2
stripe                  9.12.0
structlog               24.2.0
uvicorn                 0.30.1
watchfiles              0.22.0
"""

PAYMENTS_TOML = """\
# Payment providers. Secrets come from the environment (TALLY_STRIPE_KEY, TALLY_PAYPAL_SECRET).
[payments]
provider = "stripe"
currency_default = "EUR"
capture = "automatic"

[payments.stripe]
api_base = "https://api.stripe.com"
api_version = "2024-06-20"
request_timeout_s = 37
max_network_retries = 2
webhook_tolerance_s = 300
statement_descriptor = "TALLY INVOICE"

[payments.paypal]
enabled = false
api_base = "https://api-m.sandbox.paypal.com"
request_timeout_s = 20
max_network_retries = 1

[payments.payouts]
schedule = "daily"
min_amount_cents = 500
"""

GREP_BILLING = """\
tally/billing/__init__.py:3:from .ledger import post_entry, reverse_entry
tally/billing/ledger.py:14:def post_entry(session, account, amount_cents, memo=""):
tally/billing/ledger.py:41:def reverse_entry(session, entry_id, reason):
tally/billing/ledger.py:67:def balance_for(session, account):
tally/billing/payouts.py:18:def fetch_payouts(client, since):
tally/billing/payouts.py:52:def match_payouts_to_invoices(payouts, invoices, tolerance_cents=0):
tally/billing/payouts.py:96:def mark_settled(session, invoice_ids, payout_id):
tally/billing/fees.py:9:def stripe_fee_cents(amount_cents, country):
tally/billing/fees.py:30:def vat_for(invoice):
tally/billing/export.py:11:def export_csv(invoices, columns=None):
tally/billing/export.py:58:def export_datev(invoices):
"""

SERVE_HELP = """\
usage: tally serve [-h] [--host HOST] [--port PORT] [--workers N] [--reload]
                   [--no-migrate] [--seed-demo] [--log-json] [--root-path PATH]

Run the tally API.

options:
  -h, --help         show this help message and exit
  --host HOST        interface to bind (default: 127.0.0.1)
  --port PORT        port to bind (default: $API_PORT or 8000)
  --workers N        worker processes (default: 1; ignored with --reload)
  --reload           restart on code changes (development only)
  --no-migrate       start without running alembic upgrade head first
  --seed-demo        load the demo tenant "acme" and its invoices
  --log-json         structured JSON logs instead of the console renderer
  --root-path PATH   ASGI root_path when served behind a proxy prefix
"""

DECISION = (
    "Quick update from this morning's sync: Ines decided that login sessions stay in Postgres "
    "(the user_sessions table) for launch; the Redis session store stays switched off until after "
    "launch, so don't turn it back on. Carry on with the payments side: look at how payouts are "
    "configured and matched, and how the API is started in production."
)

# --- look-alikes -----------------------------------------------------------------------------------

_MODULES = (
    "tenants",
    "customers",
    "invoices",
    "payments",
    "taxes",
    "exports",
    "webhooks",
    "reports",
    "auth",
    "mail",
)
_VERBS = ("load", "save", "list", "find", "sync", "render", "validate", "apply", "build", "send")


def _module(rng: random.Random, name: str) -> Step:
    lines = [f'"""{name.title()}: routes and helpers of the tally API."""', "from __future__ import annotations", "",
             "import structlog", "from fastapi import APIRouter, Depends, HTTPException", "",
             "from tally.db import get_session", f"from tally.models import {name.title().rstrip('s')}", "",
             "log = structlog.get_logger(__name__)", f'router = APIRouter(prefix="/t/{{tenant}}/{name}")', ""]  # fmt: skip
    for verb in rng.sample(_VERBS, 6):
        limit = rng.choice((25, 50, 100, 250))
        lines += [f"def {verb}_{name}(session, tenant_id, *, limit={limit}):",
                  f'    """{verb.title()} the tenant\'s {name} (at most {limit})."""',
                  f"    rows = session.query({name.title().rstrip('s')}).filter_by(tenant_id=tenant_id).limit(limit).all()",
                  f'    log.debug("{verb}_{name}", tenant=tenant_id, count=len(rows))',
                  "    return rows", ""]  # fmt: skip
    folder = rng.choice(("api/routes", "services"))
    return Step("read_file", f"tally/{folder}/{name}.py", "\n".join(lines) + "\n")


def _service_log(rng: random.Random, service: str, port: int) -> Step:
    lines = [f"{service} | starting {service} (pid {rng.randint(2000, 60000)})",
             f"{service} | listening on 127.0.0.1:{port}"]  # fmt: skip
    for n in range(22):
        status = rng.choice((200, 200, 200, 201, 204, 304, 404))
        path = rng.choice(
            ("/healthz", "/t/acme/invoices", "/t/acme/customers", "/static/app.js", "/t/acme/reports/monthly")
        )
        lines.append(
            f"{service} | 2026-12-0{rng.randint(1, 4)}T10:{n:02d}:{rng.randint(10, 59)}Z GET {path} {status} {rng.randint(2, 180)}ms"
        )
    since = rng.choice(("--tail 24", "--since 1h", "--since 10m"))
    return Step("bash", f"docker compose logs {since} {service}", "\n".join(lines) + "\n")


def _config(rng: random.Random, name: str) -> Step:
    body = [f"# {name}: settings for the {name} component", f"[{name}]",
            f"timeout_ms = {rng.choice((1500, 2500, 4000, 8000))}",
            f"connect_timeout_s = {rng.choice((3, 5, 10))}",
            f"retries = {rng.randint(1, 5)}",
            f"batch_size = {rng.choice((50, 100, 200, 500))}",
            f"port = {rng.randint(3000, 9999)}",
            f'log_level = "{rng.choice(("info", "warning", "debug"))}"', "",
            f"[{name}.limits]",
            f"max_body_kb = {rng.choice((256, 512, 1024))}",
            f"rate_per_minute = {rng.choice((60, 120, 600))}"]  # fmt: skip
    env = rng.choice(("", ".prod", ".staging"))
    return Step("read_file", f"config/{name}{env}.toml", "\n".join(body) + "\n")


def _test_run(rng: random.Random, name: str) -> Step:
    count = rng.randint(8, 30)
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.12.4, pytest-8.2.2, pluggy-1.5.0",
             "rootdir: /home/dev/tally", f"collected {count} items", "",
             f"tests/api/test_{name}.py " + "." * count, "",
             f"============================== {count} passed in {rng.uniform(0.5, 6):.2f}s =============================="]  # fmt: skip
    return Step("bash", f"pytest tests/api/test_{name}.py -q", "\n".join(lines) + "\n")


def _web(rng: random.Random, name: str) -> Step:
    lines = ["import { useQuery } from '@tanstack/react-query';", "import { api } from '../api';", "",
             f"export function {name}Page() {{",
             f"  const {{ data, isLoading }} = useQuery({{ queryKey: ['{name.lower()}'], queryFn: () => api.get('/{name.lower()}'), staleTime: {rng.choice((5000, 30000, 60000))} }});",
             "  if (isLoading) return <Spinner />;", "  return (", "    <Table>"]  # fmt: skip
    for col in rng.sample(
        ("number", "customer", "amount", "status", "due", "issued", "currency", "tenant"), 5
    ):
        lines.append(f'      <Column field="{col}" sortable />')
    lines += ["    </Table>", "  );", "}"]
    return Step("read_file", f"web/src/pages/{name}Page.tsx", "\n".join(lines) + "\n")


def _worker(rng: random.Random, name: str) -> Step:
    lines = ["from celery import shared_task", "", "from tally.mail import send_template", ""]
    for verb in rng.sample(("send", "retry", "sweep", "sync", "notify", "archive"), 4):
        lines += [f"@shared_task(bind=True, max_retries={rng.randint(2, 6)}, default_retry_delay={rng.choice((30, 60, 120))})",
                  f"def {verb}_{name}(self, tenant_id):",
                  f'    """{verb.title()} {name} for one tenant."""',
                  f"    return send_template('{name}-{verb}', tenant_id)", ""]  # fmt: skip
    return Step("read_file", f"worker/tasks/{name}.py", "\n".join(lines) + "\n")


def _help(rng: random.Random, command: str) -> Step:
    flags = rng.sample(("--dry-run", "--tenant SLUG", "--since DATE", "--limit N", "--force", "--no-email",
                        "--format {csv,json}", "--concurrency N", "--verbose", "--skip-closed"), 5)  # fmt: skip
    lines = [f"usage: tally {command} [-h] " + " ".join(f"[{f}]" for f in flags), "", f"{command.title()} for one or all tenants.", "", "options:",
             "  -h, --help         show this help message and exit"]  # fmt: skip
    lines += [
        f"  {f:<18} {rng.choice(('only report what would change', 'limit to this tenant', 'do not send any mail', 'parallel jobs', 'overwrite existing output'))}"
        for f in flags
    ]
    return Step("bash", f"tally {command} --help", "\n".join(lines) + "\n")


def _grep(rng: random.Random, package: str) -> Step:
    lines = []
    for module in rng.sample(("models", "service", "views", "queries", "utils", "schemas"), 3):
        for verb in rng.sample(_VERBS, 3):
            lines.append(
                f"tally/{package}/{module}.py:{rng.randint(5, 200)}:def {verb}_{package}_{module}(session, tenant_id):"
            )
    return Step("bash", f"grep -rn def tally/{package}/", "\n".join(lines) + "\n")


def _failing(rng: random.Random, name: str) -> Step:
    error = rng.choice(
        (
            "E   AssertionError: assert 404 == 200",
            "E   KeyError: 'currency'",
            "E   pydantic_core._pydantic_core.ValidationError: 1 validation error for CustomerIn",
            'E   sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection to server at "localhost" (127.0.0.1), port 5433 failed: timeout expired',
        )
    )
    lines = ["============================= test session starts ==============================",
             f"collected {rng.randint(5, 30)} items", "", f"tests/api/test_{name}.py ..F", "",
             "=================================== FAILURES ===================================",
             f"__________________ test_{name}_{rng.choice(_VERBS)} ______________________", "", error,
             f"FAILED tests/api/test_{name}.py - {error.split(': ')[0][4:]}", "========================= 1 failed, 2 passed in 1.10s =========================="]  # fmt: skip
    return Step("bash", f"pytest tests/api/test_{name}.py -x -q", "\n".join(lines) + "\n")


def _npm(rng: random.Random, package: str) -> Step:
    deps = rng.sample(("react@18.3.1", "react-dom@18.3.1", "@tanstack/react-query@5.45.1", "vite@5.3.1", "typescript@5.4.5",
                       "zod@3.23.8", "axios@1.7.2", "vitest@1.6.0", "eslint@8.57.0", "date-fns@3.6.0"), 6)  # fmt: skip
    lines = ["tally-web@0.14.2 /home/dev/tally/web"] + [f"├── {d}" for d in deps[:-1]] + [f"└── {deps[-1]}"]
    return Step("bash", f"npm ls --depth 0 {package}".strip(), "\n".join(lines) + "\n")


def _looks(seed: int, counts: tuple[int, ...]) -> list[list[Step]]:
    """`counts` look-alikes for each run, none of them a path or a command another one has."""
    rng = random.Random(seed)
    makers = [
        lambda: _module(rng, rng.choice(_MODULES)),
        lambda: _service_log(
            rng, rng.choice(("web", "worker", "docs", "mailpit", "flower")), rng.randint(3000, 9999)
        ),
        lambda: _config(rng, rng.choice(("worker", "mail", "exports", "webhooks", "cache", "search", "pdf"))),
        lambda: _test_run(rng, rng.choice(_MODULES)),
        lambda: _web(rng, rng.choice(("Invoices", "Customers", "Reports", "Settings", "Payouts", "Taxes"))),
        lambda: _worker(rng, rng.choice(("reminders", "receipts", "payouts", "exports", "dunning"))),
        lambda: _help(rng, rng.choice(("export", "worker", "tenants", "reminders", "backfill", "reindex"))),
        lambda: _grep(rng, rng.choice(("tenants", "customers", "mail", "reports", "auth", "exports"))),
        lambda: _failing(rng, rng.choice(_MODULES)),
        lambda: _npm(rng, rng.choice(("", "react", "vite", "zod", "axios"))),
    ]
    return draw(rng, makers, counts)


_LOOKS = _looks(1, (30, 30, 40))

RUNS = (
    Run(
        "Get tally running locally and find out why the invoice tests fail. Look around first.",
        mixed(
            [
                Step("bash", "make dev", MAKE_DEV),
                Step("bash", "tally settings show", SETTINGS_SHOW),
                Step("bash", "pytest tests/api/test_invoices.py -x", PYTEST_INVOICES),
                Step("bash", "pip list", PIP_LIST),
            ],
            _LOOKS[0],
        ),
    ),
    Run(
        DECISION,
        mixed(
            [
                Step("read_file", "config/payments.toml", PAYMENTS_TOML),
                Step("bash", "grep -rn def tally/billing/", GREP_BILLING),
                Step("bash", "tally serve --help", SERVE_HELP),
            ],
            _LOOKS[1],
        ),
    ),
    Run("Now go through the front end and the worker tasks and note anything odd.", _LOOKS[2]),
)

QUESTIONS = (
    Question("which port did the dev server end up on?", "0.0.0.0:8731", "other", "port"),
    Question(
        "where were the settings loaded from?", "/home/dev/.config/tally/local.toml", "planted", "config path"
    ),
    Question(
        "what was the db complaining about when the invoice tests failed?",
        "uq_invoice_number_per_tenant",
        "other",
        "error line",
    ),
    Question("what version of pydantic is installed?", "2.7.4", "planted", "version"),
    Question(
        "what did we settle on for storing sessions?", "login sessions stay in Postgres", "other", "decision"
    ),
    Question("how long do we wait on Stripe before giving up?", "request_timeout_s = 37", "other", "timeout"),
    Question(
        "what did we call the helper that lines up payouts with invoices?",
        "match_payouts_to_invoices",
        "other",
        "function name",
    ),
    Question(
        "what's the switch to boot the API without touching the schema?", "--no-migrate", "other", "flag"
    ),
)
