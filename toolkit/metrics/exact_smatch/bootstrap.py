"""Bootstrap confidence intervals of corpus Smatch, from per-pair counts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from toolkit.metrics.exact_smatch.solver import f_score


def bootstrap_interval(pairs: Sequence[tuple[float, float, float]], samples: int = 1000, confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """A percentile bootstrap interval of corpus F1, resampling pairs with a seeded generator."""
    if not pairs:
        return 0.0, 0.0
    counts = np.asarray(pairs, dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(counts), size=(samples, len(counts)))
    sums = counts[draws].sum(axis=1)
    scores = np.array([f_score(m, t, g) for m, t, g in sums])
    alpha = (1 - confidence) / 2
    return float(np.quantile(scores, alpha)), float(np.quantile(scores, 1 - alpha))
