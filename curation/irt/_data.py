"""Validate a long responses frame and encode it as index arrays.

Every estimator in this package works on the same encoded form, so validation happens
once, here, and the messages name the offending rows. Two storage layouts share one
small interface (``rows``/``cols`` broadcast, ``row_sum``/``col_sum`` reduce, ``cross``
forms model × model products): a dense model × item matrix, where a missing cell is a
cell with zero trials (fast BLAS for LLM panels, which are small and nearly complete),
and a sparse cell list for large, thin matrices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import polars as pl
from numpy.typing import NDArray

from curation.irt._numeric import log_factorials
from curation.irt._rows import _validated

if TYPE_CHECKING:
    import scipy.sparse as sp

Layout = Literal["auto", "dense", "sparse", "chunked"]
_DENSE_MAX_CELLS = 1_000_000  # below this a dense matrix is always cheap


@dataclass(frozen=True)
class Cells:
    """Aggregated responses: one entry per observed (model, item) cell, duplicates summed.

    ``mi``/``ii`` index ``models``/``items`` (both in sorted order, or an Enum's
    order): int32, or an Enum column's own unsigned codes when every category
    occurs (no cell-sized copy); cells are sorted by (model, item).
    """

    models: tuple[str, ...]
    items: tuple[str, ...]
    mi: np.ndarray
    ii: np.ndarray
    k: np.ndarray
    n: np.ndarray

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_items(self) -> int:
        return len(self.items)

    def item_stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per item: number of models answering, total correct, total trials (cached)."""
        cached = self.__dict__.get("_item_stats")
        if cached is None:
            n_models = bincount(self.ii, None, self.n_items)
            k = bincount(self.ii, self.k, self.n_items)
            binary = self.n.size == 0 or int(self.n.max()) <= 1
            n = n_models.astype(np.float64) if binary else bincount(self.ii, self.n, self.n_items)
            cached = (n_models, k, n)
            object.__setattr__(self, "_item_stats", cached)  # frozen: cache beside the fields
        return cached

    def model_trials(self) -> np.ndarray:
        """Total trials per model (cells are sorted by model: one reduction, no scatter)."""
        starts = np.searchsorted(self.mi, np.arange(self.n_models))
        ends = np.append(starts[1:], self.mi.size)
        out = np.zeros(self.n_models)
        has = ends > starts  # every encoded model has cells; a hand-built Cells may not
        if has.any():
            out[has] = np.add.reduceat(self.n, starts[has], dtype=np.float64)
        return out

    def drop_model(self, j: int) -> Cells:
        """The same cells without model ``j``; items left with no response are dropped."""
        keep = self.mi != j
        mi, ii = self.mi[keep], self.ii[keep]
        mi = mi - (mi > j)
        used = np.unique(ii)
        remap = np.full(self.n_items, -1, dtype=np.int64)
        remap[used] = np.arange(used.size)
        return Cells(
            models=self.models[:j] + self.models[j + 1 :],
            items=tuple(self.items[i] for i in used),
            mi=mi,
            ii=remap[ii],
            k=self.k[keep],
            n=self.n[keep],
        )


_CHUNK = 1 << 20  # elements per chunk of a scatter-add (the int64/float64 casts stay small)


def bincount(idx: np.ndarray, weights: np.ndarray | None, size: int) -> np.ndarray:
    """``np.bincount(idx, weights, minlength=size)`` in chunks (no cell-sized temporaries)."""
    out = np.zeros(size, dtype=np.int64 if weights is None else np.float64)
    for s in range(0, idx.size, _CHUNK):
        w = None if weights is None else weights[s : s + _CHUNK]
        out += np.bincount(idx[s : s + _CHUNK], weights=w, minlength=size)
    return out


def encode(responses: pl.DataFrame | pl.LazyFrame | Cells, *, name: str = "responses") -> Cells:
    """Validate ``responses`` (see :func:`check_responses`) and aggregate them into cells.

    The one boundary where names become integer codes: a frame with string, integer,
    categorical or Enum ids, or a lazy scan of a file (``pl.scan_parquet`` /
    ``scan_csv`` / ``scan_ndjson``: read in a streaming pass, the ids coded as they
    stream, so no column of per-cell strings is ever held). Already encoded
    :class:`Cells` pass through. Codes number the names in sorted order (an Enum: its
    categories' order), whatever the input's type, so a file sorted by (model, item) needs
    no re-sort.
    """
    if isinstance(responses, Cells):
        return responses
    if isinstance(responses, pl.LazyFrame):
        from curation.irt._scan import collect_coded  # the streaming reader (one home)

        df = collect_coded(responses, name=name)
    else:
        df = _validated(responses, name=name)
    models, mi = _codes(df.get_column("model"))
    items, ii = _codes(df.get_column("item"))
    k, n = _counts(df.get_column("n_correct"), df.get_column("n_trials"))
    del df
    return cells_of(tuple(models.to_list()), tuple(items.to_list()), mi, ii, k, n)


def cells_of(
    models: tuple[str, ...],
    items: tuple[str, ...],
    mi: np.ndarray,
    ii: np.ndarray,
    k: np.ndarray,
    n: np.ndarray,
) -> Cells:
    """Cells from already valid per-row codes and counts: sorted by (model, item),
    duplicates summed. :func:`encode` after validation; callers that build the counts
    themselves (BenchFill's thousands of tiny calibrations) skip the frame round trip."""
    n_i = len(items)
    if mi.size > _COMPACT_CELLS and not _strictly_sorted(mi, ii, n_i):
        grouped = _models_in_code_order(mi, ii, k, n, len(models))
        if grouped is not None:  # one run of rows per model, runs out of name order
            mi, ii, k, n = grouped
    if not _strictly_sorted(mi, ii, n_i):  # unsorted or duplicated cells
        if mi.size > _COMPACT_CELLS and _model_major(mi):
            mi, ii, k, n = _sort_blocks(mi, ii, k, n, len(models), n_i)
        else:
            lin = mi.astype(np.int64) * n_i + ii
            lin, inv = np.unique(lin, return_inverse=True)
            k, n = np.bincount(inv, weights=k), np.bincount(inv, weights=n)
            if k.size > _COMPACT_CELLS:
                k, n = _compact(k, n)
            mi, ii = (lin // n_i).astype(np.int32), (lin % n_i).astype(np.int32)
            del lin
    return Cells(models=models, items=items, mi=mi, ii=ii, k=k, n=n)


_BLOCK_CELLS = 1 << 22
"""Dense (model, item) slots per block when sorting a model-major cell list."""


def _models_in_code_order(
    mi: np.ndarray, ii: np.ndarray, k: np.ndarray, n: np.ndarray, n_m: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Rows grouped by model (each model one contiguous run: a file written model by model
    in any model order) with the runs put in code order, or None if they are not grouped.

    Names are coded in sorted order, a leaderboard file often lists its models in its own
    order: moving whole runs (one copy per array) keeps each model's rows, and so a
    file sorted by item within each model stays strictly sorted, with no per-cell sort.
    """
    starts = [0]
    for s in range(0, mi.size - 1, _CHUNK):
        e = min(s + _CHUNK + 1, mi.size)
        starts.extend((np.flatnonzero(mi[s + 1 : e] != mi[s : e - 1]) + s + 1).tolist())
        if len(starts) > n_m:
            return None  # some model in more than one run
    if len(starts) != n_m:
        return None
    bounds = np.append(np.asarray(starts, dtype=np.int64), mi.size)
    order = np.argsort(mi[bounds[:-1]], kind="stable")
    pieces = [(int(bounds[r]), int(bounds[r + 1])) for r in order]
    out = []
    for arr in (mi, ii, k, n):
        moved = np.empty_like(arr)
        at = 0
        for s, e in pieces:
            moved[at : at + e - s] = arr[s:e]
            at += e - s
        out.append(moved)
    return out[0], out[1], out[2], out[3]


def _model_major(mi: np.ndarray) -> bool:
    """Each model's rows contiguous and in code order (a frame sorted or grouped by model),
    checked in chunks."""
    for s in range(0, mi.size - 1, _CHUNK):
        e = min(s + _CHUNK + 1, mi.size)
        if not np.all(mi[s + 1 : e] >= mi[s : e - 1]):
            return False
    return True


def _index_dtype(size: int) -> type[np.unsignedinteger[Any]]:
    return np.uint8 if size <= 0x100 else np.uint16 if size <= 0x10000 else np.uint32


def _sort_blocks(
    mi: np.ndarray,
    ii: np.ndarray,
    k: np.ndarray,
    n: np.ndarray,
    n_m: int,
    n_i: int,
    block_cells: int = _BLOCK_CELLS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Model-major cells in (model, item) order, duplicates summed, without a global sort.

    A model-major frame whose items are not sorted within each model (a file not sorted
    by item; a sorted file's codes are sorted, see :func:`_codes`). A block of
    whole models is scattered into a dense slot array (``np.bincount``: duplicates add
    up) and read back with ``flatnonzero``, which is sorted: O(cells) time and a few
    block-sized buffers, where ``np.unique`` sorted ~8 bytes x cells several times over.
    The result equals the ``np.unique`` path's (same cells, same counts; compact dtypes).
    """
    per_block = max(1, block_cells // max(n_i, 1))
    bounds = np.searchsorted(mi, np.arange(0, n_m + per_block, per_block, dtype=np.int64))
    out_mi = np.empty(mi.size, dtype=_index_dtype(n_m))
    out_ii = np.empty(mi.size, dtype=_index_dtype(n_i))
    top = int(n.max()) if n.size else 0
    cdt = np.uint8 if top <= 0xFF else np.uint16 if top <= 0xFFFF else np.uint32
    out_k, out_n = np.empty(mi.size, dtype=cdt), np.empty(mi.size, dtype=cdt)
    filled = 0
    for b in range(bounds.size - 1):
        s, e = int(bounds[b]), int(bounds[b + 1])
        if e <= s:
            continue
        m0 = b * per_block
        size = min(per_block, n_m - m0) * n_i
        lin = mi[s:e].astype(np.int64)
        lin -= m0
        lin *= n_i
        lin += ii[s:e]
        slots = np.flatnonzero(np.bincount(lin, minlength=size))
        got = slots.size
        out_k[filled : filled + got] = np.bincount(lin, weights=k[s:e], minlength=size)[slots]
        out_n[filled : filled + got] = np.bincount(lin, weights=n[s:e], minlength=size)[slots]
        out_mi[filled : filled + got] = m0 + slots // n_i
        out_ii[filled : filled + got] = slots % n_i
        filled += got
    if filled < mi.size:  # duplicates were summed: keep the cells only
        out_mi, out_ii = out_mi[:filled].copy(), out_ii[:filled].copy()
        out_k, out_n = out_k[:filled].copy(), out_n[:filled].copy()
    return out_mi, out_ii, out_k, out_n


def _strictly_sorted(mi: np.ndarray, ii: np.ndarray, n_i: int) -> bool:
    """Cells in strictly increasing (model, item) order, checked in chunks."""
    for s in range(0, mi.size - 1, _CHUNK):
        e = min(s + _CHUNK + 1, mi.size)
        lin = mi[s:e].astype(np.int64)
        lin *= n_i
        lin += ii[s:e]
        if not np.all(lin[1:] > lin[:-1]):
            return False
    return True


def _codes(col: pl.Series) -> tuple[pl.Series, np.ndarray]:
    """Names and codes: the names in sorted order (text ids by their text, integer ids by
    value), or the categories' order for an Enum.

    Sorted order, not order of first appearance, because a response file is written sorted
    by (model, item) (the ``responses`` stage, ``curate responses import --out``): its
    cells then come out of :func:`cells_of` already sorted, with no re-sort of a
    leaderboard's 100 M cells (with first-appearance codes, the items a first model did
    not answer were numbered late and every later model's cells came out of order). No
    cell-sized copy of a name is made. An Enum column is coded without a pass over
    strings; a Categorical column from its physical codes (one hash pass to find the
    names that occur, then a gather); a string or integer column by one hash pass. Codes
    are the smallest unsigned integer type that holds them (the names are few, the cells
    many).
    """
    if isinstance(col.dtype, pl.Enum):
        phys = col.to_physical().to_numpy()
        cats = pl.Series(list(col.dtype.categories), dtype=pl.String)
        used = bincount(phys, None, cats.len()) > 0
        if used.all():  # the physical codes as they are (uint8/16/32: no cell-sized copy)
            return cats, phys
        remap = np.cumsum(used, dtype=np.int32) - 1
        return cats.filter(pl.Series(used)), remap[phys]
    if isinstance(col.dtype, pl.Categorical):
        physical = col.to_physical()
        at = physical.arg_unique()  # each name's first row: one hash pass over integers
        first = physical.gather(at).to_numpy()
        names = col.gather(at).cast(pl.String)
        order = names.arg_sort().to_numpy()
        remap = np.zeros(int(first.max()) + 1, dtype=_index_dtype(first.size))
        remap[first[order]] = np.arange(first.size)
        codes = remap[physical.to_numpy()]
        names = names.gather(order)
    else:
        names = col.unique().sort()
        if col.dtype == pl.String:
            codes = col.cast(pl.Enum(names)).to_physical().to_numpy()
        else:  # integer ids: coded by value, named by their text
            codes = col.replace_strict(
                names, pl.Series(np.arange(names.len(), dtype=_index_dtype(names.len())))
            ).to_numpy()
    if codes.size <= _COMPACT_CELLS:
        codes = codes.astype(np.int32)  # small frames: the codes every caller was given
    return names.cast(pl.String), codes


_COMPACT_CELLS = 2_000_000
"""Above this many cells the counts are kept as uint8/uint16 (float64 below: bit-identical
arithmetic either way, since numpy promotes them exactly)."""


def _compact(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    top = float(n.max())
    dtype = np.uint8 if top <= 0xFF else np.uint16 if top <= 0xFFFF else np.uint32
    return k.astype(dtype, copy=False), n.astype(dtype, copy=False)


def _counts(k: pl.Series, n: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    if k.len() > _COMPACT_CELLS:
        return _compact(k.to_numpy(), n.to_numpy())
    return k.to_numpy().astype(np.float64), n.to_numpy().astype(np.float64)


def log_binom_const(k: np.ndarray, n: np.ndarray) -> float:
    """Sum of log C(n, k) over cells: the part of the binomial log-likelihood with no parameters."""
    total = 0.0
    if n.size == 0 or int(n.max()) <= 1:  # binary: every term is log 1
        return total
    lf = log_factorials(int(n.max()))
    for s in range(0, k.size, _CHUNK):
        kc, nc = k[s : s + _CHUNK], n[s : s + _CHUNK]
        inner = (kc > 0) & (kc < nc)  # log C(n, 0) = log C(n, n) = 0
        kk, nn = kc[inner].astype(np.int64), nc[inner].astype(np.int64)
        total += float(np.sum(lf[nn] - lf[kk] - lf[nn - kk]))
    return total


class Dense:
    """Model × item matrix storage; a missing cell has ``N == 0`` and contributes nothing."""

    kind = "dense"

    def __init__(self, cells: Cells) -> None:
        self.shape = (cells.n_models, cells.n_items)
        lin = cells.mi.astype(np.int64) * cells.n_items + cells.ii
        size = cells.n_models * cells.n_items
        self.K = np.bincount(lin, weights=cells.k, minlength=size).reshape(self.shape)
        self.N = np.bincount(lin, weights=cells.n, minlength=size).reshape(self.shape)

    @staticmethod
    def rows(v: np.ndarray) -> NDArray[np.float64]:
        return v[:, None]

    @staticmethod
    def cols(v: np.ndarray) -> NDArray[np.float64]:
        return v[None, :]

    @staticmethod
    def row_sum(x: np.ndarray) -> NDArray[np.float64]:
        total: NDArray[np.float64] = x.sum(axis=1)
        return total

    @staticmethod
    def col_sum(x: np.ndarray) -> NDArray[np.float64]:
        total: NDArray[np.float64] = x.sum(axis=0)
        return total

    @staticmethod
    def cross(x: np.ndarray, y: np.ndarray) -> NDArray[np.float64]:
        """``sum_i x[:, i] y[:, i]^T`` (model × model)."""
        product: NDArray[np.float64] = x @ y.T
        return product

    @staticmethod
    def left(q: np.ndarray, x: np.ndarray) -> NDArray[np.float64]:
        """``q @ x`` for a small dense ``q`` (r × models): r × items."""
        product: NDArray[np.float64] = q @ x
        return product

    @staticmethod
    def mv(x: np.ndarray, v: np.ndarray) -> NDArray[np.float64]:
        """``x @ v`` for an item vector ``v``: one number per model."""
        product: NDArray[np.float64] = x @ v
        return product

    @staticmethod
    def rmv(x: np.ndarray, u: np.ndarray) -> NDArray[np.float64]:
        """``x.T @ u`` for a model vector ``u``: one number per item."""
        product: NDArray[np.float64] = u @ x
        return product


class Sparse:
    """Cell-list storage (CSR order) for thin matrices; same interface as :class:`Dense`."""

    kind = "sparse"

    def __init__(self, cells: Cells) -> None:
        self.shape = (cells.n_models, cells.n_items)
        self.mi, self.ii = cells.mi, cells.ii
        self.K, self.N = cells.k, cells.n
        self._indptr = np.concatenate(
            [[0], np.cumsum(np.bincount(self.mi, minlength=self.shape[0]))]
        )

    def _csr(self, x: np.ndarray) -> sp.csr_array:
        import scipy.sparse as sp  # only sparse layouts need it (0.4 s to import)

        return sp.csr_array((x, self.ii, self._indptr), shape=self.shape)

    def rows(self, v: np.ndarray) -> NDArray[np.float64]:
        per_cell: NDArray[np.float64] = v[self.mi]
        return per_cell

    def cols(self, v: np.ndarray) -> NDArray[np.float64]:
        per_cell: NDArray[np.float64] = v[self.ii]
        return per_cell

    # A weighted bincount is float64; numpy's stubs type every bincount as integer.
    def row_sum(self, x: np.ndarray) -> NDArray[np.float64]:
        total = np.bincount(self.mi, weights=x, minlength=self.shape[0])
        return cast("NDArray[np.float64]", total)

    def col_sum(self, x: np.ndarray) -> NDArray[np.float64]:
        total = np.bincount(self.ii, weights=x, minlength=self.shape[1])
        return cast("NDArray[np.float64]", total)

    def cross(self, x: np.ndarray, y: np.ndarray) -> NDArray[np.float64]:
        product: NDArray[np.float64] = (self._csr(x) @ self._csr(y).T).toarray()
        return product

    def left(self, q: np.ndarray, x: np.ndarray) -> NDArray[np.float64]:
        product: NDArray[np.float64] = (self._csr(x).T @ q.T).T
        return product

    def mv(self, x: np.ndarray, v: np.ndarray) -> NDArray[np.float64]:
        return self.row_sum(x * v[self.ii])

    def rmv(self, x: np.ndarray, u: np.ndarray) -> NDArray[np.float64]:
        return self.col_sum(x * u[self.mi])


def layout_kind(cells: Cells, layout: Layout = "auto") -> str:
    """``"dense"`` or ``"sparse"``: what :func:`make_layout` builds, without building it."""
    if layout not in ("auto", "dense", "sparse", "chunked"):
        raise ValueError(f"layout must be 'auto', 'dense', 'sparse' or 'chunked', got {layout!r}")
    if layout in ("auto", "chunked"):  # chunked fits build their own storage
        size = cells.n_models * cells.n_items
        return "dense" if size <= max(_DENSE_MAX_CELLS, 2 * cells.k.size) else "sparse"
    return layout


def make_layout(cells: Cells, layout: Layout = "auto") -> Dense | Sparse:
    """Dense unless the matrix is both large and mostly missing."""
    return Dense(cells) if layout_kind(cells, layout) == "dense" else Sparse(cells)
