"""Recall's sense of meaning: how close a question is to a passage when they share few words.

    closeness({"ram": 1, "pod": 1, "kill": 1}, [chunk_counts, ...]) -> [0.41, 0.12, ...]

The *table* (`meaning_vectors.npz`, shipped in this package) gives each term (terms.py: a
lowercased, stemmed word) a vector: the terms' words were each embedded alone through a sentence-
embedding model, all-MiniLM-L6-v2 (Apache-2.0, Sentence Transformers), averaged by stem, reduced
by PCA and stored as int8 (benchmarks/distill_meaning.py rebuilds it). Terms of similar meaning
have vectors that point the same way: `memori` near `ram`, `releas` near `version`.

A text's *meaning* is the weighted mean of its terms' vectors, a term weighted by how rare it is
in English (`SMOOTHING / (SMOOTHING + p)`, p its frequency; common words say little) and by the
logarithm of its count; terms the table lacks (identifiers, numbers) count for nothing here, as
BM25 finds those by their letters. *Closeness* is the cosine of two meanings.

numpy and the table are loaded on the first ranking, never at import: most sessions never recall.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Meaning: TypeAlias = npt.NDArray[np.float32]  # a text's unit vector

__all__ = ["SMOOTHING", "TABLE", "closeness", "known", "meaning"]

TABLE = "meaning_vectors.npz"
SMOOTHING = 1e-4  # the frequency at which a term's weight halves (about the 2,000th word of English)


class _Table(NamedTuple):
    rows: dict[str, int]  # each term's row
    vectors: npt.NDArray[np.int8]  # one row per term, a unit vector times 127
    weights: npt.NDArray[np.float32]  # each term's rarity weight


@functools.cache
def _table() -> _Table:
    import numpy as np

    with resources.files(__package__).joinpath(TABLE).open("rb") as f, np.load(f) as data:
        names = str(data["terms"]).split("\n")
        vectors = data["vectors"]
        frequency = 10.0 ** (data["zipf"].astype(np.float64) - 9.0)  # Zipf: log10 per billion words
    weights = (SMOOTHING / (SMOOTHING + frequency)).astype(np.float32)
    return _Table({name: row for row, name in enumerate(names)}, vectors, weights)


def known(term: str) -> bool:
    """Whether the table has a vector for `term`."""
    return term in _table().rows


def meaning(counts: Mapping[str, int]) -> Meaning | None:
    """The unit vector of a text's terms (see the module's docstring); None when none is known."""
    import numpy as np

    table = _table()
    rows = [(table.rows[t], 1.0 + math.log(n)) for t, n in counts.items() if n > 0 and t in table.rows]
    if not rows:
        return None
    ids = np.fromiter((r for r, _ in rows), dtype=np.intp, count=len(rows))
    scale = np.fromiter((s for _, s in rows), dtype=np.float32, count=len(rows)) * table.weights[ids]
    total: npt.NDArray[np.float32] = scale @ table.vectors[ids].astype(np.float32)
    norm = float(np.linalg.norm(total))
    return total / norm if norm > 0 else None


def closeness(question: Mapping[str, int], meanings: Sequence[Meaning | None]) -> list[float]:
    """The cosine of the question's meaning with each text's meaning, 0.0 where either has none."""
    asked = meaning(question)
    if asked is None:
        return [0.0] * len(meanings)
    return [cosine(asked, m) for m in meanings]


def cosine(asked: Meaning, text: Meaning | None) -> float:
    """The closeness of two meanings (unit vectors): their cosine, 0.0 where the text has none."""
    return 0.0 if text is None else float(text @ asked)
