import numpy as np
import pytest
from scipy import stats


def assert_frequencies(samples, probs, alpha=1e-6):
    """Chi-square goodness of fit of integer samples against exact probabilities (strict alpha)."""
    probs = np.asarray(probs, dtype=float)
    counts = np.bincount(np.asarray(samples), minlength=probs.size)
    n = counts.sum()
    keep = probs * n >= 5  # pool tiny cells so the chi-square approximation holds
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(probs[keep] * n, probs[~keep].sum() * n)
    if exp[-1] == 0:
        assert obs[-1] == 0, "sampled an output of probability 0"
        obs, exp = obs[:-1], exp[:-1]
    p = stats.chisquare(obs, exp).pvalue
    assert p > alpha, f"chi-square p = {p:.3g}: counts {obs} vs expected {np.round(exp, 1)}"


@pytest.fixture
def freq():
    return assert_frequencies
