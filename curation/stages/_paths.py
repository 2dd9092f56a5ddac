"""Where each stage reads and writes, per benchmark (the same names dvc.yaml declares)."""

from __future__ import annotations

from pathlib import Path


def items_path(benchmark: str) -> Path:
    return Path("data/items") / f"{benchmark}.parquet"


def responses_path(benchmark: str) -> Path:
    return Path("data/responses") / f"{benchmark}.parquet"


def check_metrics_path(benchmark: str) -> Path:
    return Path("metrics/check") / f"{benchmark}.json"


def check_report_path(benchmark: str) -> Path:
    return Path("reports/check") / f"{benchmark}.md"


def check_plot_path(benchmark: str) -> Path:
    return Path("plots/check") / f"{benchmark}.png"


def difficulty_path(benchmark: str) -> Path:
    return Path("data/difficulty") / f"{benchmark}.parquet"


def draws_path(benchmark: str) -> Path:
    return Path("data/difficulty") / f"{benchmark}.draws.npz"


def calibration_path(benchmark: str) -> Path:
    return Path("data/calibration") / f"{benchmark}.json"


def irt_metrics_path(benchmark: str) -> Path:
    return Path("metrics/irt") / f"{benchmark}.json"


def irt_plot_path(benchmark: str, kind: str) -> Path:
    return Path("plots/irt") / f"{benchmark}-{kind}.png"


GAPS_METRICS = Path("metrics/gaps.json")
GAPS_REPORT_MD = Path("reports/gaps.md")
GAPS_REPORT_HTML = Path("reports/gaps.html")
GAPS_ECDF_DATA = Path("plots/gaps-data/ecdf.csv")


def gaps_plot_path(benchmark: str, kind: str) -> Path:
    return Path("plots/gaps") / f"{benchmark}-{kind}.png"


def fill_dir(benchmark: str) -> Path:
    """BenchFill's working folder: memory and search state persist here so a killed run
    resumes where it stopped."""
    return Path("data/fill") / benchmark


def candidates_path(benchmark: str) -> Path:
    return fill_dir(benchmark) / "candidates.parquet"


def fill_metrics_path(benchmark: str) -> Path:
    return Path("metrics/fill") / f"{benchmark}.json"


def fill_plot_path(benchmark: str) -> Path:
    return Path("plots/fill") / f"{benchmark}.png"


def judged_path(benchmark: str) -> Path:
    return Path("data/judged") / f"{benchmark}.parquet"


def judge_metrics_path(benchmark: str) -> Path:
    return Path("metrics/judge") / f"{benchmark}.json"
