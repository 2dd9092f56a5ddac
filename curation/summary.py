"""The terminal summary printed at the end of a run: one table per stage's metrics."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.paths import (
    GAPS_METRICS,
    check_metrics_path,
    fill_metrics_path,
    irt_metrics_path,
)
from curation.report.format import DASH, fixed, general, interval, percent, with_interval
from curation.report.text import table

if TYPE_CHECKING:
    from curation.params_model import ParamsFile


def _load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _short(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis: a table keeps to 100 columns."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _missing(name: str, header: tuple[str, ...]) -> tuple[str, ...]:
    return (name, *[DASH] * (len(header) - 1))


def check_table(names: list[str]) -> str:
    """The check stage's diagnostics per benchmark; a dash row where it has not run yet."""
    header = (
        "benchmark",
        "models",
        "items",
        "missing",
        "item-info",
        "model-info",
        "model-rev",
        "item-rev",
        "warnings",
    )
    rows: list[tuple[str, ...]] = []
    for name in names:
        m = _load(check_metrics_path(name))
        if m is None:
            rows.append(_missing(name, header))
            continue
        rows.append(
            (
                name,
                str(m["n_models"]),
                str(m["n_items"]),
                percent(m["missing_share"]),
                percent(m["item_informativeness"]),
                percent(m["model_informativeness"]),
                fixed(m["model_reversal_rate"]),
                fixed(m["item_reversal_rate"]),
                str(m["n_warnings"]),
            )
        )
    return table(header, rows)


def irt_table(names: list[str]) -> str:
    """The annotate fit per benchmark: model and method chosen, the BIC beside the
    held-out choice, the degenerate items and the leave-one-model-out sensitivity; then
    each benchmark's one-line reason for its model."""
    header = (
        "benchmark",
        "model",
        "method",
        "BIC 1PL",
        "BIC 2PL",
        "BIC 3PL",
        "all",
        "none",
        "LOO max|dz|",
        "most influential",
    )
    rows: list[tuple[str, ...]] = []
    reasons: list[str] = []
    for name in names:
        m = _load(irt_metrics_path(name))
        if m is None:
            rows.append(_missing(name, header))
            continue
        loo = m.get("loo") or {}
        rows.append(
            (
                name,
                m["model"].upper(),
                f"{m['method']}/{m['interval_source']}",
                fixed(m["bic_1pl"], 0),
                fixed(m["bic_2pl"], 0),
                fixed(m["bic_3pl"], 0) if m.get("bic_3pl") is not None else DASH,
                str(m["n_all_solved"]),
                str(m["n_none_solved"]),
                fixed(loo["max_abs_dz"]) if loo else DASH,
                _short(str(loo.get("most_influential_model", DASH)), 24),
            )
        )
        choice = m.get("choice")
        if choice and m.get("model_choice") != "params":
            reasons.append(
                textwrap.fill(
                    f"{name}: {choice['reason']}",
                    width=100,
                    initial_indent="  ",
                    subsequent_indent="    ",
                )
            )
    return table(header, rows) + "".join(f"\n{r}" for r in reasons)


def gaps_table(names: list[str]) -> str:
    """The gaps stage per benchmark: DDM against each target, the largest gap and where,
    the Top-3/Top-5 sums and the flags raised (plug-in values on the observed z)."""
    metrics = _load(GAPS_METRICS) or {}
    first: dict[str, Any] = next(iter(metrics.values()), {})
    targets = sorted(first.get("ddm", {}), key=lambda t: (t != "uniform", t))
    header = (
        "benchmark",
        "n",
        *[f"DDM {t}" for t in targets],
        "Max Gap",
        "largest gap at",
        "Top-3",
        "Top-5",
        "flags",
    )
    rows: list[tuple[str, ...]] = []
    for name in names:
        m = metrics.get(name)
        if m is None:
            rows.append(_missing(name, header))
            continue
        flags = [k for k in ("ddm", "max_gap", "top_5_sum") if m["flags"][k]]
        rows.append(
            (
                name,
                str(m["n"]),
                *[fixed(m["ddm"][t]) for t in targets],
                fixed(m["max_gap"]),
                interval(m["max_gap_left"], m["max_gap_right"]),
                fixed(m["top_3_sum"]),
                fixed(m["top_5_sum"]),
                ", ".join(flags) or DASH,
            )
        )
    return table(header, rows)


def _iv_cell(iv: dict[str, Any] | None) -> str:
    """ "estimate [low, high]", or "estimate, withheld" when the self-check withheld it."""
    if not iv:
        return DASH
    if (iv.get("self_check") or {}).get("status") == "withheld":
        return f"{fixed(iv['estimate'])} withheld"
    return with_interval(iv["estimate"], iv["low"], iv["high"])


def intervals_table(names: list[str]) -> str:
    """The gap figures as estimates of the truth, each with its interval (gaps.intervals)."""
    metrics = _load(GAPS_METRICS) or {}
    keys = (("ddm", "DDM"), ("max_gap", "Max Gap"), ("top_3_sum", "Top-3"))
    header = ("benchmark", "target", *[label for _, label in keys])
    rows: list[tuple[str, ...]] = []
    for name in names:
        ivs = (metrics.get(name) or {}).get("intervals")
        if not ivs:
            rows.append(_missing(name, header))
            continue
        cells = [_iv_cell(ivs.get(k)) for k, _ in keys]
        rows.append((name, str(ivs.get("target", DASH)), *cells))
    return table(header, rows)


_STATUS_MARK = {"ok": "", "widened": " w", "narrowed": " n", "withheld": " x"}


def self_check_table(names: list[str]) -> str:
    """Each interval's self-checked coverage, smooth / lattice truth (gaps.intervals.self_check)."""
    metrics = _load(GAPS_METRICS) or {}
    keys = (("ddm", "DDM"), ("max_gap", "Max Gap"), ("top_3_sum", "Top-3"), ("top_5_sum", "Top-5"))
    header = ("benchmark", "worlds", *[label for _, label in keys])
    rows: list[tuple[str, ...]] = []
    for name in names:
        ivs = (metrics.get(name) or {}).get("intervals") or {}
        checks = [(ivs.get(k) or {}).get("self_check") for k, _ in keys]
        if not any(checks):
            rows.append(_missing(name, header))
            continue
        worlds = next(c["worlds"] for c in checks if c)
        cells = [
            f"{c['coverage_smooth']:.2f}/{c['coverage_lattice']:.2f}{_STATUS_MARK[c['status']]}"
            if c
            else DASH
            for c in checks
        ]
        rows.append((name, str(worlds), *cells))
    return table(header, rows)


def panel_table(names: list[str]) -> str:
    """Another panel of as many similar models (gaps.intervals.panel), and leave-one-out."""
    metrics = _load(GAPS_METRICS) or {}
    header = ("benchmark", "models", "DDM", "Max Gap", "Top-3", "LOO DDM", "moves it most")
    rows: list[tuple[str, ...]] = []
    for name in names:
        panel = ((metrics.get(name) or {}).get("intervals") or {}).get("panel")
        if not panel:
            rows.append(_missing(name, header))
            continue
        cells = [
            interval(iv["low"], iv["high"]) if (iv := panel.get(k)) else DASH
            for k in ("ddm", "max_gap", "top_3_sum")
        ]
        loo = panel.get("loo")
        rows.append(
            (
                name,
                str(panel["n_models"]),
                *cells,
                interval(loo["ddm"]["low"], loo["ddm"]["high"]) if loo else DASH,
                _short(loo["most_influential_model"], 16) if loo else DASH,
            )
        )
    return table(header, rows)


# --- gaps: resolution and anchoring (issue 13) -------------------------------------------


def resolution_table(names: list[str]) -> str:
    """Levels, score step, clipped items and panel span of each benchmark's z."""
    metrics = _load(GAPS_METRICS) or {}
    header = (
        "benchmark",
        "trials/cell",
        "z levels",
        "resolution",
        "at z = 0",
        "at z = 1",
        "panel θ span",
        "resolved",
    )
    rows: list[tuple[str, ...]] = []
    for name in names:
        r = (metrics.get(name) or {}).get("resolution")
        if r is None:
            rows.append(_missing(name, header))
            continue
        p = r["panel"]
        rows.append(
            (
                name,
                general(r.get("trials_per_cell", 0)),
                str(r["n_levels"]),
                fixed(r.get("resolution")),
                f"{r['n_clipped_low']} ({percent(r.get('share_clipped_low', 0), 0)})",
                f"{r['n_clipped_high']} ({percent(r.get('share_clipped_high', 0), 0)})",
                f"{p['theta_min']:.2f}..{p['theta_max']:.2f} ({p['span']:.2f})",
                f"{r.get('largest_gaps_resolved', 0)}/{r.get('largest_gaps_listed', 0)}",
            )
        )
    return table(header, rows)


# --- end of gaps: resolution and anchoring -----------------------------------------------


def _fill_rows(names: list[str]) -> list[tuple[str, dict[str, Any] | None]]:
    out: list[tuple[str, dict[str, Any] | None]] = []
    for name in names:
        m = _load(fill_metrics_path(name))
        out.append((name, None if m is None or m.get("skipped") else m))  # matrix-only: none
    return out


def _reduction(methods: dict[str, Any], method: str, key: str) -> str:
    value = methods.get(method, {}).get(key)
    return DASH if value is None else fixed(-value, 1) + "%"


def _estimated(methods: dict[str, Any], method: str) -> str:
    """The Top-3 change a run can know: the median over the items' measurement and the
    panel's ability error (BenchFill's with its 90% interval) where the run has one,
    else the plug-in value on the confirmation estimates."""
    post = methods.get(method, {}).get("top_3_reduction")
    if post is None:
        return _reduction(methods, method, "top_3_reduction_pct")
    if method != "benchfill":
        return fixed(-post["estimate"], 1) + "%"
    return with_interval(-post["estimate"], -post["high"], -post["low"], 1) + "%"


def fill_table(names: list[str]) -> str:
    """The Top-3 Sum change per benchmark on the ESTIMATED z (what a real run can know:
    :func:`_estimated`); a simulated run adds a row on the world's TRUE z."""
    header = ("benchmark", "source", "z", "inserted", "Top-3 before", "BenchFill", "baseline",
              "oracle")  # fmt: skip
    rows: list[tuple[str, ...]] = []
    for name, m in _fill_rows(names):
        if m is None:
            rows.append(_missing(name, header))
            continue
        meth, bf = m["methods"], m["methods"]["benchfill"]
        rows.append(
            (
                name,
                m["source"],
                "estimated",
                f"{bf['n_inserted']}/{m['insertions']}",
                fixed(m["top_3_before"]),
                *[_estimated(meth, k) for k in ("benchfill", "baseline", "oracle")],
            )
        )
        if m.get("true") is not None:
            true = [
                _reduction(meth, k, "true_top_3_reduction_pct")
                for k in ("benchfill", "baseline", "oracle")
            ]
            rows.append(("", "", "true (sim.)", "", "", *true))
    return table(header, rows)


def fill_items_table(names: list[str]) -> str:
    """BenchFill's inserted items per benchmark: how far from their targets (estimated ±
    SE; true on a simulated run), how many on target, and the panel trials they cost."""
    header = ("benchmark", "z", "target dev", "on target", "trials/item", "of fixed")
    rows: list[tuple[str, ...]] = []
    for name, m in _fill_rows(names):
        if m is None:
            rows.append(_missing(name, header))
            continue
        bf = m["methods"]["benchfill"]
        se = bf.get("target_dev_se")
        dev = fixed(bf["target_dev"], 4) + (f" ± {se:.4f}" if se is not None else "")
        on = f"{bf['n_on_target']}/{bf['n_inserted']}" if "n_on_target" in bf else DASH
        trials = fixed(bf["trials_per_insertion"], 0, grouping=True)
        rows.append((name, "estimated", dev, on, trials, percent(bf["trials_vs_fixed"])))
        if m.get("true") is not None:
            rows.append(("", "true (sim.)", fixed(bf.get("true_target_dev"), 4), "", "", ""))
    return table(header, rows)


def print_summary(params: ParamsFile) -> int:
    """Print every stage's table for params' benchmarks (`curate summary`); returns 0.
    It reads only the metrics files, so it also works after a partial run."""
    names = list(params.benchmarks)
    print("Response-matrix checks (metrics/check/, reports/check/):")
    print(check_table(names))
    print("\nIRT difficulty (metrics/irt/, data/difficulty/, plots/irt/; all / none: items")
    print("solved by every / by no model):")
    print(irt_table(names))
    print("\nDifficulty distribution and gaps on the observed z (metrics/gaps.json; read")
    print("reports/gaps.md first):")
    print(gaps_table(names))
    print("\nThe same as estimates of the truth, with 90% intervals (gaps.intervals):")
    print(intervals_table(names))
    print("\nTheir coverage at each benchmark's own shape, if the truth is smooth / sits at the")
    print("score levels (w: widened, n: narrowed to the nominal level, x: withheld; see the")
    print("reason in reports/gaps.md):")
    print(self_check_table(names))
    print("\nAnother panel of as many similar models would give (90%, resampled panels), and")
    print("DDM's range when one model is left out:")
    print(panel_table(names))
    print("\nResolution and anchoring (items at z = 0 / 1: below the weakest / above the")
    print("strongest model; resolution: z change of one score step; resolved: of the 5")
    print("largest gaps, those wider than one step):")
    print(resolution_table(names))
    print("\nGap filling, Top-3 Sum change (metrics/fill/, plots/fill/; simulated = offline")
    print("backend; z: estimated = median [90% interval] over the items' measurement and the")
    print("panel's ability error, true = the simulated world's truth):")
    print(fill_table(names))
    print("\nThe inserted items: distance to their targets and panel trials per item:")
    print(fill_items_table(names))
    return 0
