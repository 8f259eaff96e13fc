"""Redactor: credential shapes and configured keys vanish, ordinary text survives."""

from __future__ import annotations

import random
import string
import time
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.store.redact import REDACTED, Redactor

_rng = random.Random(7)


def _rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"

# Real-looking keys of each kind (random, never real).
ANTHROPIC = "sk-ant-api03-" + _rand(URLSAFE, 93) + "AA"
OPENAI_LEGACY = "sk-" + _rand(ALNUM, 45) + "T3"
OPENAI_PROJECT = "sk-proj-" + _rand(URLSAFE, 150) + "7A"
AWS = "AKIA" + _rand(string.ascii_uppercase + string.digits, 16)
GITHUB_CLASSIC = "ghp_" + _rand(ALNUM, 36)
GITHUB_OAUTH = "gho_" + _rand(ALNUM, 36)
GITHUB_FINE = "github_pat_11" + _rand(ALNUM, 20) + "_" + _rand(ALNUM, 59)
SLACK = "xoxb-1234567890-1234567890123-" + _rand(ALNUM, 24)
GOOGLE = "AIza" + _rand(URLSAFE, 35)
JWT = "eyJhbGciOiJIUzI1NiJ9." + _rand(URLSAFE, 40) + "." + _rand(URLSAFE, 43)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + "\n".join(_rand(ALNUM + "+/", 64) for _ in range(5))
    + "\n-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"export ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
        (f"OPENAI_API_KEY='{OPENAI_LEGACY}'", OPENAI_LEGACY),
        (f'{{"api_key": "{OPENAI_PROJECT}"}}', OPENAI_PROJECT),
        (f"aws_access_key_id = {AWS}\n", AWS),
        (f"git clone https://{GITHUB_CLASSIC}@github.com/o/r", GITHUB_CLASSIC),
        (f"token: {GITHUB_OAUTH}", GITHUB_OAUTH),
        (f"GITHUB_TOKEN={GITHUB_FINE}", GITHUB_FINE),
        (f"SLACK_BOT_TOKEN={SLACK}", SLACK),
        (f"maps?key={GOOGLE}&q=x", GOOGLE),
        (f"Authorization: Bearer {JWT}", JWT),
        (f"curl -H 'authorization: bearer {OPENAI_LEGACY[3:]}'", OPENAI_LEGACY[3:]),
        (f"-H 'x-api-key: {ANTHROPIC[7:]}'", ANTHROPIC[7:]),
        (f"key file:\n{PEM}\ndone", PEM),
    ],
)
def test_credential_shapes_vanish(text: str, secret: str) -> None:
    out = Redactor().redact(text)
    assert secret not in out
    assert REDACTED in out


def test_header_name_is_kept() -> None:
    assert Redactor().redact(f"Authorization: Bearer {JWT}") == f"Authorization: Bearer {REDACTED}"
    assert Redactor().redact(f"x-api-key: {ANTHROPIC[7:]}") == f"x-api-key: {REDACTED}"


def test_pem_block_cut_before_its_end_is_still_hidden() -> None:
    cut = PEM[: len(PEM) // 2]
    out = Redactor().redact("head\n" + cut)
    assert out == "head\n" + REDACTED


def test_configured_secret_of_any_shape_vanishes() -> None:
    key = "local-llm-key-" + _rand(ALNUM, 12)
    out = Redactor([key]).redact(f"OPENAI_API_KEY={key} again:{key}")
    assert key not in out
    assert out.count(REDACTED) == 2


def test_configured_secret_glued_to_a_word_still_vanishes() -> None:
    key = "Zq9" + _rand(ALNUM, 30)
    assert key not in Redactor([key]).redact(f"prefix{key}suffix and xsk-{key}")


def test_short_configured_secrets_are_ignored() -> None:
    r = Redactor(["abc", "", "test123"])
    assert r.redact("abc test123 abcdef") == "abc test123 abcdef"


@pytest.mark.parametrize(
    "text",
    [
        "def risk_assessment(task_id: int) -> None:\n    return disk-usage-monitor-service",
        "commit 3f7a2c1d9e8b4a6f0c5d2e1b7a9c8d6e5f4a3b2c",
        f"id = {uuid.UUID(int=_rng.getrandbits(128))}",
        "sha256: e3b0c44298fc1c149afbfc8996fb92427ae41e4649b934ca495991b7852b855",
        "import sklearn; mask-for-the-task-list-here = 1",
        "The bearer token is passed in the header.",
        "ASK-Aardvark ghost_writer xoxo AIzaShort",
        "BEGIN PUBLIC KEY and -----BEGIN CERTIFICATE-----",
        "task-0123456789abcdefghijklmnop",  # "sk-" inside a word
        "",
    ],
)
def test_ordinary_text_and_hashes_survive(text: str) -> None:
    assert Redactor(["not-in-the-text-key"]).redact(text) == text


def test_unchanged_text_is_returned_as_is() -> None:
    text = "nothing secret here " * 10
    assert Redactor().redact(text) is text


def test_redact_json_is_deep_and_touches_strings_only() -> None:
    data = {
        "headers": {"authorization": f"Bearer {JWT}"},
        "items": [1, 2.5, None, True, ANTHROPIC, ("t", AWS)],
        ANTHROPIC: "key as a key",
    }
    out = Redactor().redact_json(data)
    assert out == {
        "headers": {"authorization": f"Bearer {REDACTED}"},
        "items": [1, 2.5, None, True, REDACTED, ("t", REDACTED)],
        REDACTED: "key as a key",
    }
    assert data["items"][4] == ANTHROPIC  # the input is not mutated


@given(st.text(alphabet=string.printable, max_size=200), st.text(alphabet=string.printable, max_size=200))
def test_configured_key_never_survives_any_surrounding(before: str, after: str) -> None:
    key = "Kx7-" + "q" * 20
    out = Redactor([key]).redact(before + key + after)
    assert key not in out


@given(st.text(alphabet=ALNUM + " \n.,:;()[]{}=+*", max_size=400))
def test_text_without_credential_markers_is_unchanged(text: str) -> None:
    # Without the literal markers no shape can match.
    markers = (
        "sk-",
        "AKIA",
        "ASIA",
        "AGPA",
        "AIDA",
        "AROA",
        "ANPA",
        "ANVA",
        "AIPA",
        "gh",
        "github_pat_",
        "xox",
        "AIza",
        "earer",
        "-api-key",
        "-----BEGIN",
    )
    if any(m.lower() in text.lower() for m in markers):
        return
    assert Redactor().redact(text) == text


def test_one_megabyte_without_secrets_is_cheap() -> None:
    chunk = "def handler(request):\n    return Response(status=200, body=sha256(payload).hexdigest())\n"
    text = chunk * (1_000_000 // len(chunk))
    r = Redactor([ANTHROPIC, OPENAI_PROJECT])
    start = time.thread_time()  # this thread's processor time: other work on a busy machine does not count
    out = r.redact(text)
    elapsed = time.thread_time() - start
    assert out is text
    # Measured at a few ms; the bound only catches a pathological regex.
    assert elapsed < 0.5


# -- pieces of a key, as a cut output leaves them ------------------------------------------------

KEY = "sk-ant-api03-" + "Q7x" * 30 + "-tailEND0123456789"


def _pieces(text: str, key: str = KEY, size: int = 16) -> list[str]:
    """Every run of `size` characters of `key` that `text` still holds."""
    return [key[i : i + size] for i in range(len(key) - size + 1) if key[i : i + size] in text]


def test_the_last_or_first_characters_of_a_configured_key_are_redacted() -> None:
    redactor = Redactor([KEY])
    for piece in (KEY[-20:], KEY[-16:], KEY[:18], KEY[40:]):
        out = redactor.redact(f"before {piece} after")
        assert out == "before [REDACTED] after", piece
    assert redactor.redact(f"x {KEY[-15:]} y") == f"x {KEY[-15:]} y"  # too short to be a key
    assert redactor.redact("Authorization: Bearer " + KEY[30:]) == "Authorization: Bearer [REDACTED]"
    assert redactor.spans(f"ab {KEY[-20:]}") == [(3, 23)]


@pytest.mark.parametrize("where", ["head", "tail"])
@pytest.mark.parametrize("configured", [True, False], ids=["configured", "shape-only"])
def test_an_output_cut_never_halves_a_key(where: str, configured: bool) -> None:
    from agent_cli.tools.head_tail import HEAD_BYTES, TAIL_BYTES, HeadTail

    redactor = Redactor([KEY] if configured else [])
    sink = HeadTail()
    filler = b"." * 200_000
    if where == "head":  # the key starts 20 bytes before the head's cut
        sink.write(b"x" * (HEAD_BYTES - 21) + b" " + KEY.encode() + b"\n" + filler)
    else:  # the key ends 20 bytes after the tail's cut
        sink.write(filler + b"\n" + KEY.encode() + b"\n" + b"y" * (TAIL_BYTES - 21))
    shown = redactor.redact(sink.text(redactor.spans))
    assert _pieces(shown) == []
    assert "[REDACTED]" in shown and "bytes of output omitted" in shown
    plain = redactor.redact(sink.text())  # without spans the cut halves it
    assert _pieces(plain) != [] or configured


def test_a_private_key_whose_begin_line_was_cut_away_goes_whole() -> None:
    from agent_cli.tools.head_tail import TAIL_BYTES, HeadTail

    body = "\n".join("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + str(i % 10) * 32 for i in range(40))
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n"
    sink = HeadTail()
    sink.write(b"." * 100_000 + pem.encode() + b"z" * (TAIL_BYTES - 600))
    shown = Redactor().redact(sink.text(Redactor().spans))
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in shown and "END PRIVATE KEY" not in shown
    assert shown.endswith("z" * 100)


# -- the shapes the outside review found reaching the model and the log (issue 16, item 9) ---------

HEX32 = "0123456789abcdef0123456789abcdef"
STRIPE_LIVE = "sk_live_51H" + _rand(ALNUM, 96)
STRIPE_RESTRICTED = "rk_live_51H" + _rand(ALNUM, 96)
GITLAB = "glpat-" + _rand(URLSAFE, 20)
SLACK_HOOK_PATH = "T0123ABCD/B0456EFGH/" + _rand(ALNUM, 24)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DATABASE_URL=postgres://user:pass@host/db", "DATABASE_URL=postgres://user:[REDACTED]@host/db"),
        ("redis://:s3cr3t-pw@cache:6379/0", "redis://:[REDACTED]@cache:6379/0"),
        ("mysql://admin:Pa$$w0rd!@db:3306/app", "mysql://admin:[REDACTED]@db:3306/app"),
        ("amqp://u:p@ss@rabbit/vh", "amqp://u:[REDACTED]@rabbit/vh"),
        (
            f"SENTRY_DSN=https://{HEX32}:{HEX32[::-1]}@o1.ingest.sentry.io/1",
            "SENTRY_DSN=https://[REDACTED]@o1.ingest.sentry.io/1",
        ),
        (
            f"SENTRY_DSN=https://{HEX32}@o450.ingest.us.sentry.io/45",
            "SENTRY_DSN=https://[REDACTED]@o450.ingest.us.sentry.io/45",
        ),
        (
            f"hook: https://hooks.slack.com/services/{SLACK_HOOK_PATH}",
            "hook: https://hooks.slack.com/services/[REDACTED]",
        ),
        (f"STRIPE_SECRET_KEY={STRIPE_LIVE}", "STRIPE_SECRET_KEY=[REDACTED]"),
        (f'stripe.api_key = "{STRIPE_RESTRICTED}"', 'stripe.api_key = "[REDACTED]"'),
        (f"GITLAB_TOKEN={GITLAB} next", "GITLAB_TOKEN=[REDACTED] next"),
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_SECRET_ACCESS_KEY=[REDACTED]",
        ),
        ("//registry.npmjs.org/:_authToken=npm_" + "a1" * 18, "//registry.npmjs.org/:_authToken=[REDACTED]"),
    ],
)
def test_common_credential_shapes_are_redacted(text: str, expected: str) -> None:
    assert Redactor().redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "http://localhost:8000/x and ssh://git@github.com:22/x and git@github.com:o/r.git",
        '{"url":"http://h:80","e":"a@b"}',
        "postgres://user:${DB_PASSWORD}@host/db",
        "https://user@example.com/path?next=a@b",
        "cmd --user=x -us1 APPEND_MODE APPLICATION ACCESS_TOKEN_LIFETIME SKIP_ALL",
        "Model.objects.filter(name__startswith='N').order_by('-created')",
        "sk_live_short and rk_test_",
    ],
)
def test_urls_flags_and_words_that_look_close_survive(text: str) -> None:
    assert Redactor().redact(text) == text
