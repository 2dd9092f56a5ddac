"""write_npz: np.load reads it back, and the bytes depend only on the arrays."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from curation.io.npz import write_npz
from curation.io.precision import round_array


def test_round_trip_and_stable_bytes(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {"items": np.array(["a", "b", "c"]), "b": rng.normal(size=(50, 3)), "s": np.array("x")}
    write_npz(tmp_path / "one.npz", **arrays)
    write_npz(tmp_path / "two.npz", **arrays)
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    with np.load(tmp_path / "one.npz") as got:
        assert sorted(got.files) == ["b", "items", "s"]
        # floats as written: to the stated precision (curation.io.precision)
        assert np.array_equal(got["b"], round_array(arrays["b"]))
        assert got["items"].tolist() == ["a", "b", "c"]
    for info in zipfile.ZipFile(tmp_path / "one.npz").infolist():
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert info.extract_version == 20  # real sizes in the header: no zip64 placeholders
