"""Numpy archives (.npz) whose bytes depend only on the arrays.

``np.savez_compressed`` streams each member through ``ZipFile.open(..., force_zip64=True)``,
and how zipfile marks such members (zip64 placeholders, the "version needed" field)
changed between Python 3.11 patch releases: the same draws gave different bytes, so
dvc.lock depended on the interpreter that ran the pipeline. Here each member is
serialised first and written with ``writestr`` and a fixed timestamp, so the header holds
the real sizes; ``np.load`` reads the result as usual.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np

from curation.io.atomic import atomic_path
from curation.io.precision import round_array

_EPOCH = (1980, 1, 1, 0, 0, 0)


def write_npz(path: str | Path, **arrays: np.ndarray) -> None:
    """Write ``arrays`` as a deflate-compressed .npz at ``path`` (atomically).

    Float arrays are written to the stated precision (:mod:`curation.io.precision`) in
    their own dtype, so the bytes are the same on every machine.
    """
    with atomic_path(path) as tmp, zipfile.ZipFile(tmp, "w") as zf:
        for name, value in arrays.items():
            buf = io.BytesIO()
            arr = round_array(np.asanyarray(value))
            np.lib.format.write_array(buf, arr, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            zf.writestr(info, buf.getvalue(), compresslevel=6)
