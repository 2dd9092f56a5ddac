"""One encoding whatever the ids' type or where the rows come from (issue 30 item 1), and
the out-of-core path of docs/scale.md giving the in-memory results (item 7).

Every way of handing responses to the fit -- string, integer, Categorical or Enum ids; a
frame in memory or a lazy scan of a parquet, CSV or JSONL file read in a streaming pass
-- must give the same cells (names in sorted order, cells sorted) and so the
same fit, to the last bit. The block sort that replaces ``np.unique`` for large
model-major inputs must give the cells ``np.unique`` gives.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from curation.irt import Cells, encode, fit, simulate_responses
from curation.irt._data import (
    _codes,
    _model_major,
    _models_in_code_order,
    _sort_blocks,
    _strictly_sorted,
    cells_of,
)
from curation.irt._scan import collect_coded


def _frame() -> pl.DataFrame:
    """40 models x 60 items, 20% missing, two trials a cell, rows in a scrambled order
    (model-major, items shuffled within each model, so first appearance is not sorted)."""
    df, _ = simulate_responses(n_models=40, n_items=60, n_trials=2, missing=0.2, seed=3)
    rng = np.random.default_rng(0)
    df = df.with_columns(pl.Series("key", rng.random(df.height))).sort("model", "key")
    return df.drop("key")


def _same(a: Cells, b: Cells) -> None:
    assert a.models == b.models and a.items == b.items
    for field in ("mi", "ii", "k", "n"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


def test_every_id_type_and_source_gives_the_same_cells(tmp_path: Path) -> None:
    df = _frame()
    ref = encode(df)
    assert ref.models == tuple(sorted(df["model"].unique().to_list()))
    assert ref.items == tuple(sorted(df["item"].unique().to_list()))
    as_cat = df.with_columns(pl.col("model", "item").cast(pl.Categorical))
    _same(encode(as_cat), ref)
    enum = df.with_columns(
        pl.col("model").cast(pl.Enum(list(ref.models))),
        pl.col("item").cast(pl.Enum(list(ref.items))),
    )
    _same(encode(enum), ref)
    df.write_parquet(tmp_path / "r.parquet")
    df.write_csv(tmp_path / "r.csv")
    df.write_ndjson(tmp_path / "r.jsonl")
    _same(encode(pl.scan_parquet(tmp_path / "r.parquet")), ref)
    _same(encode(pl.scan_csv(tmp_path / "r.csv")), ref)
    _same(encode(pl.scan_ndjson(tmp_path / "r.jsonl")), ref)
    assert encode(ref) is ref  # already encoded: passed through


def test_integer_ids_are_coded_without_text_and_named_by_their_text() -> None:
    df = _frame()
    ref = encode(df)
    numbered = df.with_columns(
        pl.col("model").str.extract(r"(\d+)$").cast(pl.Int64),
        pl.col("item").str.extract(r"(\d+)$").cast(pl.Int32),
    )
    got = encode(numbered)
    assert got.models == tuple(str(int(m.rsplit("-", 1)[-1])) for m in ref.models)
    np.testing.assert_array_equal(got.mi, ref.mi)
    np.testing.assert_array_equal(got.ii, ref.ii)
    np.testing.assert_array_equal(got.k, ref.k)


def test_a_scan_with_bad_rows_gets_the_eager_message(tmp_path: Path) -> None:
    df = _frame().with_columns(
        pl.when(pl.int_range(pl.len()) == 7)
        .then(pl.col("n_trials") + 5)
        .otherwise(pl.col("n_correct"))
        .alias("n_correct")
    )
    df.write_parquet(tmp_path / "bad.parquet")
    with pytest.raises(ValueError) as eager:
        encode(df, name="r")
    with pytest.raises(ValueError) as streamed:
        encode(pl.scan_parquet(tmp_path / "bad.parquet"), name="r")
    assert str(streamed.value) == str(eager.value)
    assert "1 of" in str(eager.value) and "rows violate" in str(eager.value)


def test_a_sorted_file_needs_no_re_sort(tmp_path: Path) -> None:
    """A file sorted by (model, item) whose first model skips items (first-appearance
    codes would number those late) comes out of the coding already sorted: the codes,
    taken as they are, are strictly increasing, so no sort or recount runs."""
    df = _frame().sort("model", "item")
    first = df["model"].min()
    skipped = df["item"].unique().sort().head(5)
    df = df.filter((pl.col("model") != first) | ~pl.col("item").is_in(skipped.implode()))
    assert df["item"].unique(maintain_order=True).to_list() != sorted(df["item"].unique())
    df.write_parquet(tmp_path / "r.parquet")
    coded = collect_coded(pl.scan_parquet(tmp_path / "r.parquet"))
    _, mi = _codes(coded["model"])
    items, ii = _codes(coded["item"])
    assert _strictly_sorted(mi, ii, items.len())
    cells = encode(pl.scan_parquet(tmp_path / "r.parquet"))
    np.testing.assert_array_equal(cells.mi, mi)
    np.testing.assert_array_equal(cells.ii, ii)


@pytest.mark.parametrize("duplicates", [False, True])
def test_block_sort_equals_the_global_sort(duplicates: bool) -> None:
    rng = np.random.default_rng(1)
    n_m, n_i = 37, 1100  # several blocks when a block holds 2^12 slots (below)
    seen = rng.random((n_m, n_i)) < 0.8
    mi, ii = np.nonzero(seen)
    perm = rng.permutation(n_i)  # first-appearance codes: out of order within a model
    ii = perm[ii]
    if duplicates:  # every 5th cell again, right after itself
        rep = np.repeat(np.arange(mi.size), np.where(np.arange(mi.size) % 5 == 0, 2, 1))
        mi, ii = mi[rep], ii[rep]
    k = rng.integers(0, 3, mi.size).astype(np.float64)
    n = np.full(mi.size, 2.0)
    assert _model_major(mi)
    lin = mi.astype(np.int64) * n_i + ii
    ulin, inv = np.unique(lin, return_inverse=True)
    got_mi, got_ii, got_k, got_n = _sort_blocks(mi, ii, k, n, n_m, n_i, block_cells=1 << 12)
    np.testing.assert_array_equal(got_mi, ulin // n_i)
    np.testing.assert_array_equal(got_ii, ulin % n_i)
    np.testing.assert_array_equal(got_k, np.bincount(inv, weights=k))
    np.testing.assert_array_equal(got_n, np.bincount(inv, weights=n))
    models = tuple(f"m{j}" for j in range(n_m))
    items = tuple(f"i{j}" for j in range(n_i))
    small = cells_of(models, items, mi, ii, k, n)  # the np.unique path (few cells)
    np.testing.assert_array_equal(small.mi, got_mi)
    np.testing.assert_array_equal(small.k, got_k)


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_out_of_core_fit_equals_the_in_memory_fit(tmp_path: Path, model: str) -> None:
    """docs/scale.md: the file streamed (ids coded as they stream) and fitted on the
    chunked storage gives, to the last bit, the fit of the frame held in memory."""
    df = _frame()
    df.write_parquet(tmp_path / "r.parquet")
    held = fit(df, model=model, layout="chunked")
    streamed = fit(pl.scan_parquet(tmp_path / "r.parquet"), model=model, layout="chunked")
    assert streamed.items.equals(held.items)
    assert streamed.models.equals(held.models)
    dense = fit(df, model=model)  # the small-panel solver: the same mode
    np.testing.assert_allclose(held.items["b"], dense.items["b"], atol=2e-4)


def test_models_listed_out_of_name_order_are_moved_whole() -> None:
    """A file written model by model in its own model order (a leaderboard's): each
    model's run is moved into code order, giving the cells the global sort gives."""
    rng = np.random.default_rng(2)
    n_m, n_i = 30, 200
    seen = rng.random((n_m, n_i)) < 0.85
    mi, ii = np.nonzero(seen)
    runs = np.split(np.arange(mi.size), np.flatnonzero(np.diff(mi)) + 1)
    rows = np.concatenate([runs[j] for j in rng.permutation(n_m)])
    mi, ii = mi[rows].astype(np.uint16), ii[rows].astype(np.uint16)
    k = rng.integers(0, 2, mi.size).astype(np.uint8)
    n = np.ones(mi.size, dtype=np.uint8)
    moved = _models_in_code_order(mi, ii, k, n, n_m)
    assert moved is not None
    order = np.lexsort((ii, mi))
    for got, want in zip(moved, (mi[order], ii[order], k[order], n[order]), strict=True):
        np.testing.assert_array_equal(got, want)
    split = np.concatenate([mi[10:], mi[:10]])  # the first model in two runs
    assert _models_in_code_order(split, ii, k, n, n_m) is None
