"""Invariances of DDM and gaps (hypothesis): permutation, duplication, reflection."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.measure import Beta, ddm, gaps, max_gap, top_k_sum

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_infinity=False)
samples = st.lists(unit, min_size=1, max_size=60).map(np.array)
PROPS = settings(max_examples=150, deadline=None)


def _positive_widths(z: np.ndarray) -> np.ndarray:
    w = gaps(z)["width"].to_numpy()
    return np.sort(w[w > 0])


@PROPS
@given(z=samples, data=st.data())
def test_permutation_invariance(z: np.ndarray, data: st.DataObject) -> None:
    perm = np.array(data.draw(st.permutations(range(z.size))))
    zp = z[perm]
    assert ddm(zp) == ddm(z)
    assert ddm(zp, Beta(2, 5)) == ddm(z, Beta(2, 5))
    assert gaps(zp).equals(gaps(z))


@PROPS
@given(z=samples)
def test_duplicating_every_item_changes_nothing(z: np.ndarray) -> None:
    zz = np.concatenate([z, z])
    assert abs(ddm(zz) - ddm(z)) <= 1e-12
    assert abs(ddm(zz, Beta(0.5, 3)) - ddm(z, Beta(0.5, 3))) <= 1e-12
    assert abs(ddm(zz, z)) <= 1e-12
    np.testing.assert_array_equal(_positive_widths(zz), _positive_widths(z))
    assert max_gap(zz) == max_gap(z)
    for k in (3, 5):
        assert abs(top_k_sum(zz, k) - top_k_sum(z, k)) <= 1e-12


@PROPS
@given(z=samples)
def test_reflection(z: np.ndarray) -> None:
    r = 1.0 - z
    assert abs(ddm(r) - ddm(z)) <= 1e-12
    assert abs(ddm(r, Beta(5, 2)) - ddm(z, Beta(2, 5))) <= 1e-12
    mirrored = gaps(z).select(left=1.0 - gaps(z)["z_right"], right=1.0 - gaps(z)["z_left"])
    got = gaps(r)
    a = np.sort(np.stack([got["z_left"], got["z_right"]], axis=1), axis=0)
    b = np.sort(np.stack([mirrored["left"], mirrored["right"]], axis=1), axis=0)
    np.testing.assert_allclose(a, b, atol=1e-12)
    assert abs(max_gap(r) - max_gap(z)) <= 1e-12


@PROPS
@given(z=samples, y=samples)
def test_metric_axioms(z: np.ndarray, y: np.ndarray) -> None:
    assert abs(ddm(z, y) - ddm(y, z)) <= 1e-12
    assert ddm(z, y) <= ddm(z) + ddm(y) + 1e-12
    assert 0.0 <= ddm(z) <= 0.5
    assert abs(gaps(z)["width"].sum() - 1.0) <= 1e-12
