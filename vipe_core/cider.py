"""CIDEr-D (Vedantam et al., 2015), the consensus metric the paper reports for ViPE (Fig. 4).

For every candidate c with references S, and n = 1..4:

    g_n(x)[k]    = tf_x(k) * log(N / max(1, df(k)))       n-gram k, N items, df over the references
    CIDEr-D_n    = 10 / |S| * sum_s  exp(-(len_c - len_s)^2 / (2 sigma^2))
                                     * sum_k min(g_n(c)[k], g_n(s)[k]) * g_n(s)[k] / (|g_n(c)| |g_n(s)|)
    CIDEr-D      = mean over n of CIDEr-D_n                 (sigma = 6)

The corpus score is the mean over items; a candidate equal to its only reference scores 10, the
maximum. Text is lower-cased and split into words with punctuation removed (the COCO evaluation
tokenizes with Java's PTB tokenizer, which this approximates without a Java runtime).

Written here because the maintained CIDEr packages need a Java runtime (pycocoevalcap's
tokenizer) or pull in large unrelated dependencies.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Sequence

MAX_N = 4
SIGMA = 6.0


def tokenize(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z0-9]+)*", text.lower())


def _ngrams(words: list[str]) -> Counter:
    return Counter(tuple(words[i : i + n]) for n in range(1, MAX_N + 1) for i in range(len(words) - n + 1))


def _vector(counts: Counter, df: Counter, log_n: float) -> tuple[list[dict], list[float]]:
    """TF-IDF weights per n-gram order, and the norm of each order's vector."""
    vectors: list[dict] = [{} for _ in range(MAX_N)]
    for gram, tf in counts.items():
        vectors[len(gram) - 1][gram] = tf * (log_n - math.log(max(1.0, df[gram])))
    norms = [math.sqrt(sum(w * w for w in v.values())) for v in vectors]
    return vectors, norms


def cider_d(candidates: Sequence[str], references: Sequence[Sequence[str] | str]) -> tuple[float, list[float]]:
    """Corpus CIDEr-D and the score of each candidate. references[i] is one string or a list of them."""
    if len(candidates) != len(references):
        raise ValueError("one list of references per candidate is needed")
    refs = [[r] if isinstance(r, str) else list(r) for r in references]
    if not candidates:
        return 0.0, []
    ref_counts = [[_ngrams(tokenize(r)) for r in rs] for rs in refs]
    df: Counter = Counter()
    for item in ref_counts:
        df.update(set().union(*item) if item else set())
    log_n = math.log(float(len(candidates)))

    scores = []
    for candidate, item_refs, item_counts in zip(candidates, refs, ref_counts):
        words = tokenize(candidate)
        vec_c, norm_c = _vector(_ngrams(words), df, log_n)
        per_n = [0.0] * MAX_N
        for ref, counts in zip(item_refs, item_counts):
            vec_r, norm_r = _vector(counts, df, log_n)
            penalty = math.exp(-((len(words) - len(tokenize(ref))) ** 2) / (2 * SIGMA**2))
            for n in range(MAX_N):
                if norm_c[n] == 0 or norm_r[n] == 0:
                    continue
                overlap = sum(min(w, vec_r[n].get(g, 0.0)) * vec_r[n].get(g, 0.0) for g, w in vec_c[n].items())
                per_n[n] += penalty * overlap / (norm_c[n] * norm_r[n])
        scores.append(10.0 * sum(per_n) / MAX_N / max(1, len(item_refs)))
    return sum(scores) / len(scores), scores
