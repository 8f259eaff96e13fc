"""The words recall ranks by: code-aware terms of a text, and the weighted terms of a question.

    terms("RetryTimeout in src/upload/config.py")  -> ["retrytimeout", "retri", "timeout", "in",
                                                      "src", "upload", "config", "py"]
    question_terms("Which port does the server listen on?")
        -> {"port": 1.0, "server": 1.0, "listen": 1.0, "bind": 0.4, "address": 0.4, ...}

A *word* is a run of letters, digits and underscores. A word made of parts (`tenant_id`,
`RetryTimeout`, `HTTP2Server`) gives itself and each part, so `tenant` finds `tenant_id` and
`tenant_id` finds it more surely than `tenant` does; a path or a dotted name gives its parts
(`/` and `.` end words). Each alphabetic term is lowercased and stemmed (Snowball English:
`listener` -> `listen`, `connections` -> `connect`, `retries` -> `retri`); numbers stay as they
are. A run of CJK characters gives its character pairs (those scripts put no space between
words).

A question drops its function words ("which", "does", "the", "again", "remind me"), the words
that frame it rather than name what it is about ("how much", "exactly", "do we use"; the `'s` of
"what's" and "the service's") and keeps the rest at weight 1. It also gains, at a lower weight,
the words developers use for the same thing (`error` for `exception`, `listen` for `port`,
`bump` for `upgrade`): a question in the user's own words should find an output in the tool's,
and the table below is the general vocabulary of programming, not any one project's. "How long",
"how often", "how many" say what kind of value is wanted; the words such a value is written
beside (timeout and seconds, interval and cron, max and limit) come in at a lower weight still.
"Early on", "when we began", "at the start" say *when*: `asks_for_early` tells the ranking to
prefer what the session saw early, and those words are no terms of their own. "First" alone is
not taken for time: it names things too ("the first-visit fix rate", `first_name`). What a
question quotes (`quoted`: "the `mix test` command") and the paths and dotted names it says
(`named_files`: "the read of subagent.jsonl") the ranking looks for as typed.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from typing import Protocol

__all__ = [
    "ANSWER_KIND_WEIGHT",
    "PREFIX_WEIGHT",
    "RELATED_WEIGHT",
    "asks_for_early",
    "named_files",
    "question_terms",
    "quoted",
    "terms",
]

RELATED_WEIGHT = 0.4  # a related word counts this much of a word the question says
ANSWER_KIND_WEIGHT = 0.25  # and a word beside the kind of value it asks for ("how long": timeout)
PREFIX_WEIGHT = 0.25  # and a word's first letters, as an abbreviation of it, this much

_WORD = re.compile(r"[^\W_](?:\w*[^\W_])?")  # underscores inside a word, not at its ends
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+")
_CLITIC = re.compile(r"(?<=[^\W\d_])['\u2019](?:s|t|d|ll|re|ve|m)\b", re.IGNORECASE)  # "what's", "service's"
_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d")  # `...`, "...", “...”
# A path or a dotted name as a question says it (`subagent.jsonl`, `config/default.json`, `os.Getenv`).
_NAMED = re.compile(r"(?<![\w./-])[\w-]+(?:[./][\w-]+)+")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

_STOP = frozenset(
    """a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can could did didn do does doesn doing don during
    each earlier ever few for from further get got had has have having he her here hers him his how
    i if in into is isn it its itself just know last let like me mean meant more most my no nor not
    now of on once one only or other our ours over own please recall remember remind said
    same say says see seen she should show so some such tell than that the their theirs them then
    there these they this those through to too under until us very was wasn we were weren what
    when where which while who whom why will with would you your yours""".split()  # noqa: SIM905
)
# Words that frame a question rather than name what it asks about ("how much", "exactly", "the
# one we use"): they match every output alike. What "how long" or "how often" asks for is kept as
# the kind of answer it wants (`_ANSWER_KINDS`).
_FRAME = frozenset(
    """actually anything began begin beginning big early earliest exact exactly everything frequently
    gave give given gives giving happen initially originally outset
    happened happens large long many much need needs often something take takes took use used uses using
    whether""".split()  # noqa: SIM905
)
# Words that ask about the start of the session ("early on", "when we began"), and pairs that do
# ("when we started", "at the start", "at first").
_EARLY = frozenset(["began", "beginning", "early", "earliest", "initially", "originally", "outset"])
_EARLY_PAIRS = frozenset(
    {("we", "started"), ("we", "start"), ("the", "start"), ("we", "begin"), ("at", "first")}
)
# The words a value of the kind a question asks for is written beside ("how long" -> a timeout
# in seconds), brought in at `ANSWER_KIND_WEIGHT`.
_ANSWER_KINDS = {
    "long": "timeout duration seconds secs wait ttl",
    "often": "interval every period schedule cron frequency",
    "frequently": "interval every period schedule cron frequency",
    "many": "count max limit total number",
    "much": "max limit size total amount",
    "big": "size max limit bytes",
    "large": "size max limit bytes",
}

# Groups of words developers use for one thing; each word of a question brings in the others.
_RELATED_GROUPS = (
    "error exception fail failure crash traceback raise panic fault",
    "port listen listener bind socket address connect connection accept",
    "host hostname address domain",
    "remove delete drop unlink",
    "add create insert new",
    "change edit modify update replace set rename",
    "config configuration setting settings option options flag env environment",
    "timeout deadline expire",
    "retry retries attempt attempts backoff",
    "max maximum limit cap ceiling",
    "min minimum floor",
    "version release tag",
    "function def method func fn procedure",
    "class type struct interface",
    "test tests spec assert",
    "commit hash sha revision",
    "branch ref",
    "memory mem ram",
    "replica replicas instance instances pod pods",
    "image container docker",
    "column field attribute",
    "table schema migration",
    "author committer wrote",
    "database db sql postgres postgresql sqlite mysql",
    "start launch run boot",
    "stop kill halt shutdown terminate sigterm sigkill graceful",
    "log logs logging logger",
    "package dependency dependencies library lib module",
    "directory folder dir path",
    "url endpoint route link uri",
    "status code",
    "user account login",
    "password secret token credential key",
    "warning warn",
    "build compile compiler",
    "install installed",
    "size length bytes",
    "speed latency duration seconds ms",
    # Kinds of tools, and the names developers know them by.
    "frontend web ui client browser",
    "backend server api service",
    "orm sqlalchemy django prisma typeorm sequelize hibernate gorm diesel activerecord",
    "driver pgx psycopg psycopg2 asyncpg libpq jdbc",
    "broker queue kafka rabbitmq sqs nats celery",
    "cache redis memcached",
    "bundler webpack vite esbuild rollup parcel turbopack",
    "runner pytest jest vitest mocha playwright cypress",
    "linter lint eslint ruff flake8 pylint clippy",
    "formatter prettier black rustfmt gofmt",
    "typecheck mypy tsc pyright",
    "http httpx requests axios fetch reqwest urllib",
    "fetching tanstack swr apollo",
    "manager pip npm yarn pnpm cargo poetry uv",
    "kubernetes k8s kubectl helm cluster",
    "ci pipeline workflow actions jenkins gitlab",
    "infra infrastructure terraform pulumi cloudformation",
    "health healthz liveness readiness probe",
    "oom oomkilled killed memory",
    "duplicate double twice idempotent idempotency dedupe",
    "current checked checkout head",
    "upgrade upgraded bump bumped",
    "pending unapplied outstanding",
    "throttle throttled ratelimit limiter 429",
    "phone mobile android app",  # not ios: stemmed, it is io (std::io, asyncio)
    "background worker job task",
    "schedule cron nightly daily periodic",
    "lag behind backlog offset",
    "email mail smtp sender",
    "dashboard console panel",
    "toolchain compiler sdk",
    "runtime async tokio asyncio",
    "cleanup sweep purge prune",
    "payment charge card billing stripe",
)


class _Stemmer(Protocol):
    def stemWord(self, word: str, /) -> str: ...  # the library's name


@functools.cache
def _stemmer() -> _Stemmer:  # made on the first search: most sessions never recall
    import snowballstemmer  # (imported then too: start-up does not pay for it)

    stemmer: _Stemmer = snowballstemmer.stemmer("english")
    return stemmer


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """The term of one lowercase word: stemmed when alphabetic, as it is otherwise."""
    if not word.isalpha() or not word.isascii() or len(word) < 3:
        return word
    return _stemmer().stemWord(word)


@functools.lru_cache(maxsize=200_000)
def _word_terms(word: str) -> tuple[str, ...]:
    """The terms of one word: itself, and its parts when it has more than one."""
    if _CJK.search(word):
        return tuple(_cjk_terms(word))
    whole = _stem(word.lower())
    parts = _PART.findall(word)
    if len(parts) <= 1:
        return (whole,)
    # One letter or digit is no word of its own (the pieces of a hash or an id: 7c9f6d5b8).
    return (whole, *(_stem(p.lower()) for p in parts if len(p) > 1))


def _cjk_terms(word: str) -> Iterator[str]:
    for piece in re.split(f"({_CJK.pattern})", word):
        if not piece:
            continue
        if _CJK.fullmatch(piece):
            if len(piece) == 1:
                yield piece
            yield from (piece[i : i + 2] for i in range(len(piece) - 1))
        else:
            yield from _word_terms(piece)


def terms(text: str) -> list[str]:
    """Every term of `text`, in order (see the module's docstring)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_word_terms(word))
    return out


@functools.cache
def _related() -> dict[str, frozenset[str]]:
    """Each stem of a group, and the other stems of its groups."""
    table: dict[str, set[str]] = {}
    for group in _RELATED_GROUPS:
        stems = {_stem(word) for word in group.split()}
        for stem in stems:
            table.setdefault(stem, set()).update(stems)
    return {stem: frozenset(others - {stem}) for stem, others in table.items()}


def asks_for_early(question: str) -> bool:
    """Whether `question` asks about what happened early in the session ("what did the build
    report early on?", "when we started")."""
    found = [w.lower() for w in _WORD.findall(question)]
    return any(w in _EARLY for w in found) or any(p in _EARLY_PAIRS for p in itertools.pairwise(found))


def quoted(question: str) -> list[str]:
    """The phrases `question` quotes, in backticks or double quotes (a command, a message, a name
    as typed: "what did the `mix test` command print?"), stripped; the ranking looks for each as
    typed."""
    out = []
    for match in _QUOTED.finditer(question):
        phrase = next(group for group in match.groups() if group is not None).strip()
        if phrase:
            out.append(phrase)
    return out


def named_files(question: str) -> list[str]:
    """The paths and dotted names `question` says (`subagent.jsonl`, `config/default.json`,
    `os.Getenv`): the ranking looks for each as typed in the calls' titles (the path read, the
    pattern searched)."""
    return [m.group(0) for m in _NAMED.finditer(question) if any(c.isalpha() for c in m.group(0))]


def question_terms(question: str) -> dict[str, float]:
    """The terms a question is ranked by, each with its weight (see the module's docstring).

    Function words are dropped unless nothing else is left ("how is it?" still searches)."""
    found = _WORD.findall(_CLITIC.sub("", question))
    words = [w for w in found if w.lower() not in _STOP and w.lower() not in _FRAME]
    said = {term: 1.0 for word in words for term in _word_terms(word)}
    if not said:
        return {term: 1.0 for term in terms(question)}
    weights = dict(said)
    for before, word in itertools.pairwise(w.lower() for w in found):
        if before == "how" and word in _ANSWER_KINDS:
            for term in _ANSWER_KINDS[word].split():
                weights.setdefault(_stem(term), ANSWER_KIND_WEIGHT)
    # Two words said together may be one in the text ("back off" -> backoff, "checked out" ->
    # checkout): the first word's stem and the second; particles (off, out, up, down) are words here.
    joined = {
        _stem(f"{_stem(a.lower())}{b.lower()}")
        for a, b in itertools.pairwise(words)
        if a.isalpha() and b.isalpha()
    }
    for term in joined:
        weights.setdefault(term, RELATED_WEIGHT)
    related = _related()
    for term in [*said, *joined]:
        for other in related.get(term, ()):
            weights.setdefault(other, RELATED_WEIGHT)
    # The text may shorten a word (`--cov` for coverage): its first letters count a little.
    for term in said:
        if term.isalpha() and len(term) >= 5:
            for end in range(3, len(term) - 1):
                weights.setdefault(term[:end], PREFIX_WEIGHT)
    return weights
