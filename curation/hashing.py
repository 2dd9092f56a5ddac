"""Deterministic draws from a hash of a key: the randomness of every simulated backend.

The simulations (the collect panel in :mod:`curation.llm`, the calibration world in
:mod:`curation.calibrate`, the rewriter in :mod:`curation.fill`, the judge in
:mod:`curation.judge`) must give the same answer to the same question in any order,
in any process, on a rerun that finds half the answers cached. A seeded generator
would tie each draw to how many came before it; a draw keyed by what it is about
(seed, model, item, sample index ...) does not. One definition, so the four agree on
what a key means and none drifts: the bytes are sha256 of the parts' ``str`` joined by
``\\x1f``, and the first 8 bytes of the digest give the number.
"""

from __future__ import annotations

import hashlib
from statistics import NormalDist

_UNIT = NormalDist()


def hashed_uniform(*parts: object) -> float:
    """A uniform number in (0, 1) from the sha256 of ``parts`` (never 0 or 1 itself)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def hashed_normal(*parts: object) -> float:
    """A standard normal number from the sha256 of ``parts`` (the inverse CDF of
    :func:`hashed_uniform` of the same parts)."""
    return _UNIT.inv_cdf(hashed_uniform(*parts))
