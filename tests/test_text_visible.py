"""`core.text.visible` and `visible_exact`: what each writes out, and what it leaves alone."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.core.text import visible, visible_exact, visible_parts


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, é 中文 🙂\n\tindented", "plain text, é 中文 🙂\n\tindented"),
        ("a\x1b[2K\rb", "a\\x1b[2K\\x0db"),
        ("line\r\nnext", "line\nnext"),  # Windows line ends are line ends
        ("\x9b31m\x7f\x00", "\\x9b31m\\x7f\\x00"),
        ("\u202eevil\u2066x\u2069", "\\u202eevil\\u2066x\\u2069"),
        ("nbsp\u00a0zw\u200bjoin\u200d", "nbsp\u00a0zw\u200bjoin\u200d"),  # text: layout, not spoofing
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ls\u00a0-la", "ls\\xa0-la"),
        ("a\u200b\u200c\u200d\u2060\ufeffb", "a\\u200b\\u200c\\u200d\\u2060\\ufeffb"),
        ("x\u2028y\u2029z\u3000", "x\\u2028y\\u2029z\\u3000"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("private\ue000 unassigned\U000e0fff", "private\\ue000 unassigned\\U000e0fff"),
        ("a\r\nb", "a\\x0d\nb"),  # a command's CR is part of it
    ],
)
def test_visible_exact(text: str, shown: str) -> None:
    assert visible_exact(text) == shown
    assert "".join(part for part, _ in visible_parts(text)) == shown


@given(st.text())
def test_shown_text_holds_no_control_and_is_stable(text: str) -> None:
    shown = visible(text)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", shown)
    assert visible(shown) == shown
    exact = visible_exact(text)
    assert exact.replace("\n", "").replace("\t", "").isprintable()
    assert visible_exact(exact) == exact
