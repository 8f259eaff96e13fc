"""A fetched page as text for the model: HTML as Markdown, other text as it is, anything else refused.

HTML goes through `html-to-markdown` (a maintained converter, Rust underneath) with its standard
clean-up: script, style, navigation and forms are left out. The encoding is the one the
`Content-Type` header names, else the page's own `<meta charset>` (or `http-equiv`) within its
first 4 KB, else a byte-order mark, else UTF-8; bytes that do not decode become U+FFFD. The text is
untrusted: control characters (but newline and tab) are written out (`\\x1b`), so nothing a page
holds reaches a terminal as a control sequence.
"""

from __future__ import annotations

import codecs
import re

from agent_cli.core.text import clean, visible
from agent_cli.web.fetch import FetchError, Page

__all__ = ["page_text"]

_HTML = frozenset({"text/html", "application/xhtml+xml"})
_TEXT = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ld+json",
    }
)
_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _known(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _encoding(page: Page, html: bool) -> str:
    found = _known(page.charset)
    if found is None and html:
        meta = _META.search(page.body[:4096])
        found = _known(meta.group(1).decode("ascii", "replace")) if meta else None
    if found is None:
        found = next((name for bom, name in _BOMS if page.body.startswith(bom)), None)
    return found or "utf-8"


def _looks_like_html(page: Page) -> bool:
    start = page.body[:512].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html"))


def page_text(page: Page) -> str:
    """The page's text (Markdown for HTML); raises `FetchError` for what is not text."""
    html = page.content_type in _HTML or (page.content_type in ("", "text/plain") and _looks_like_html(page))
    if not (
        html or page.content_type.startswith("text/") or page.content_type in _TEXT or not page.content_type
    ):
        raise FetchError(
            f"{page.url} is not a text page ({page.content_type}, {len(page.body):,} bytes): "
            "web_fetch reads HTML and text"
        )
    text = clean(page.body.decode(_encoding(page, html), "replace"))
    if html:
        import html_to_markdown

        options = html_to_markdown.ConversionOptions(
            preprocessing=html_to_markdown.PreprocessingOptions(enabled=True)
        )
        try:
            text = html_to_markdown.convert(text, options).content or ""
        except html_to_markdown.ConversionError as exc:
            raise FetchError(f"{page.url} could not be read as HTML: {exc}") from None
    return visible(text.replace("\r\n", "\n").replace("\r", "\n")).strip()
