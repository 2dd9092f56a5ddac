"""The hashed draws every simulated backend takes its randomness from."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from curation.hashing import hashed_normal, hashed_uniform


def test_a_draw_depends_on_every_part_and_nothing_else() -> None:
    assert hashed_uniform("draw", 0, "m", "i", 1) == hashed_uniform("draw", 0, "m", "i", 1)
    base = hashed_uniform("draw", 0, "m", "i", 1)
    for other in (("draw", 1, "m", "i", 1), ("draw", 0, "m2", "i", 1), ("draw", 0, "m", "i", 2)):
        assert hashed_uniform(*other) != base
    # parts are joined with a separator, so moving a boundary changes the key
    assert hashed_uniform("ab", "c") != hashed_uniform("a", "bc")


def test_the_key_layout_is_the_committed_outputs_one() -> None:
    # the simulated stages' committed outputs were drawn with this mapping: a change
    # here changes every simulated number (sha256 of "draw\x1f0\x1fm", first 8 bytes)
    import hashlib

    digest = hashlib.sha256(b"draw\x1f0\x1fm").digest()
    expected = (int.from_bytes(digest[:8], "big") + 0.5) / 2**64
    assert hashed_uniform("draw", 0, "m") == expected
    assert 0.0 < expected < 1.0


def test_uniform_and_normal_draws_have_their_distributions() -> None:
    n = 20_000
    u = np.array([hashed_uniform("u", k) for k in range(n)])
    z = np.array([hashed_normal("u", k) for k in range(n)])
    assert u.min() > 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # the normal draw is the inverse CDF of the uniform one with the same key
    assert np.allclose(stats.norm.cdf(z), u, atol=1e-12)
    assert math.isfinite(float(z.min())) and math.isfinite(float(z.max()))
