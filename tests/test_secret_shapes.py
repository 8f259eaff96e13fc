"""The shape table against detect-secrets' own rules: what they flag, we redact; when they change, we know.

`secret_shapes.py` is derived by hand from detect-secrets' plugins (rewritten so every shape starts
with a literal, and so a shape covers the whole token). These tests hold it to them:

- every rule of the installed detect-secrets is either covered (hypothesis draws strings from the
  rule's own regex, and the redactor must hide the part detect-secrets calls the secret) or listed
  in LEFT_OUT with the reason;
- the rules are the ones the table was made from (FINGERPRINT): a new detect-secrets release that
  changes them fails here, so the table is looked at again rather than silently falling behind.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agent_cli.store.redact import Redactor
from agent_cli.store.secret_shapes import SHAPES

# Made from detect-secrets 1.5.0. Update it only after re-deriving the table from the new rules.
FINGERPRINT = "8eb4e45f19f9d49b"

# Whole plugins left out, and why.
LEFT_OUT_PLUGINS = {
    "Base64HighEntropyString": "entropy: would hide hashes, ids and base64 data the model needs",
    "HexHighEntropyString": "entropy: would hide commit ids, checksums and UUIDs",
    "KeywordDetector": "keyword heuristics (`password = ...`): would hide ordinary code",
    "IPPublicDetector": "an address is not a credential, and the model needs to see it",
    "IbmCloudIamDetector": "a keyword heuristic: any `key` or `token` then 44 characters",
    "IbmCosHmacDetector": "a keyword heuristic around `secret_key`",
}
# Single rules left out: (plugin, the rule's first characters).
LEFT_OUT_RULES = {
    ("CloudantDetector", r"(?:(?<=\W)|(?<=^))(?:\[|)"): "a keyword heuristic around `cl`, `clou`",
    ("SoftlayerDetector", r"(?:(?<=\W)|(?<=^))(?:\[|)"): "a keyword heuristic around `sl`",
}
# Plugins whose first group is the secret (the rest of the match is its context).
GROUP_IS_SECRET = {
    "AWSKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "SoftlayerDetector",
    "NpmDetector",
}
# Context we keep visible in front of a secret that detect-secrets counts as part of it.
KEPT = {
    "SlackDetector": re.compile(r"(?i)https://hooks\.slack\.com/services/"),
    "AzureStorageKeyDetector": re.compile(r"AccountKey="),
}
# Characters detect-secrets allows and we deliberately do not (see secret_shapes._PASSWORD).
NARROWED = {"BasicAuthDetector": '"{}', "CloudantDetector": '"{}'}
# Delimiters some rules match around the secret (Artifactory's `(?:\s|=|:|"|^)...(?:\s|"|$)`).
DELIMITERS = ' \t\r\n\x0b\x0c"=:'


def upstream_rules() -> list[tuple[str, re.Pattern[str]]]:
    rules = []
    for cls in sorted(get_mapping_from_secret_type_to_class().values(), key=lambda c: c.__name__):
        for regex in getattr(cls(), "denylist", ()):
            rules.append((cls.__name__, regex))
    return rules


def _left_out(plugin: str, regex: re.Pattern[str]) -> bool:
    return plugin in LEFT_OUT_PLUGINS or any(
        plugin == p and regex.pattern.startswith(start) for p, start in LEFT_OUT_RULES
    )


COVERED = [(p, r) for p, r in upstream_rules() if not _left_out(p, r)]


def test_detect_secrets_rules_are_the_ones_this_table_was_made_from() -> None:
    text = "\n".join(f"{plugin} {regex.flags} {regex.pattern}" for plugin, regex in upstream_rules())
    got = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert got == FINGERPRINT, (
        "detect-secrets' rules changed: re-derive agent_cli/store/secret_shapes.py from them "
        f"(the tests below say which rule is not covered), then set FINGERPRINT = {got!r}"
    )


def test_every_plugin_is_covered_or_left_out_with_a_reason() -> None:
    plugins = {p for p, _ in upstream_rules()}
    covered = {p for p, _ in COVERED}
    assert plugins - covered <= set(LEFT_OUT_PLUGINS)
    assert len(COVERED) >= 30  # the table is not quietly emptied
    for plugin, _ in LEFT_OUT_RULES:
        assert plugin in plugins


def _secret_span(plugin: str, match: re.Match[str]) -> tuple[int, int]:
    """The part of `match` detect-secrets reports as the secret, less what we keep visible."""
    if plugin in GROUP_IS_SECRET and match.re.groups:
        index = next(i for i in range(1, match.re.groups + 1) if match.group(i) is not None)
        start, end = match.span(index)
    else:
        start, end = match.span()
    text = match.string
    kept = KEPT.get(plugin)
    if kept and (prefix := kept.match(text, start)):
        start = prefix.end()
    while start < end and text[start] in DELIMITERS:
        start += 1
    while end > start and text[end - 1] in DELIMITERS:
        end -= 1
    return start, end


@pytest.mark.parametrize(("plugin", "regex"), COVERED, ids=[f"{p}-{i}" for i, (p, _) in enumerate(COVERED)])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_what_detect_secrets_flags_is_redacted(
    plugin: str, regex: re.Pattern[str], data: st.DataObject
) -> None:
    # Drawn with ASCII classes (a `\d` of Arabic digits is no token), kept only where the rule,
    # as detect-secrets runs it, still matches.
    ascii_rule = re.compile(regex.pattern, (regex.flags & ~re.UNICODE) | re.ASCII)
    sample = data.draw(st.from_regex(ascii_rule, fullmatch=True))
    assume(not any(c in sample for c in NARROWED.get(plugin, "")))
    text = f"value={sample}\n"
    match = regex.search(text)
    assume(match is not None)
    assert match is not None
    start, end = _secret_span(plugin, match)
    assume(end > start)
    spans = Redactor().spans(text)
    assert any(s <= start and end <= e for s, e in spans), (text, text[start:end], spans)


def test_every_shape_starts_with_a_literal_character() -> None:
    # The alternation's fast skip needs it (redact.py); a shape with a class first would slow every record.
    for shape in SHAPES:
        assert shape.pattern[0] not in "\\()[]{}.*+?|^$", shape.name
        re.compile(shape.pattern)
