"""Every file the pipeline reads or writes, in one place.

The names here are the ones ``dvc.yaml`` declares as deps and outs; a stage, a command
(``curate summary``, ``curate review``) or a test that needs a pipeline file asks this
module instead of spelling the path again. All paths are relative to the project root
(the folder holding ``dvc.yaml``), where DVC runs every stage.

Templates (``*_TEMPLATE``) keep a literal ``{benchmark}`` for settings that let the user
override a path per benchmark in params.yaml (the review section).
"""

from __future__ import annotations

from pathlib import Path

# --- ingest / responses -------------------------------------------------------------

ITEMS_TEMPLATE = "data/items/{benchmark}.parquet"


def raw_dir(benchmark: str) -> Path:
    """The benchmark's own raw inputs (git-tracked): files `curate benchmark add` copied."""
    return Path("data/raw") / benchmark


def imports_dir(benchmark: str) -> Path:
    """Imported responses (`curate responses import`): a dep of the responses stage, one
    ``<model>.parquet`` per imported model, overlaid on the configured matrix."""
    return raw_dir(benchmark) / "imports"


IMPORTS_REPLACE_MARKER = "REPLACES_BASE"
"""A file in :func:`imports_dir`: the imports replace the configured matrix entirely."""


def items_path(benchmark: str) -> Path:
    """The ingested items (schema ``item``)."""
    return Path(ITEMS_TEMPLATE.format(benchmark=benchmark))


def responses_path(benchmark: str) -> Path:
    """The response matrix in long form (schema ``response``)."""
    return Path("data/responses") / f"{benchmark}.parquet"


def samples_path(benchmark: str) -> Path:
    """The per-sample collection log (schema ``sample``; empty when imported)."""
    return Path("data/collect") / f"{benchmark}.samples.parquet"


def collect_metrics_path(benchmark: str) -> Path:
    """What collecting or importing the responses did and cost (schema ``collect_metrics``)."""
    return Path("metrics/collect") / f"{benchmark}.json"


# --- check ----------------------------------------------------------------------------


def check_metrics_path(benchmark: str) -> Path:
    """The response-matrix diagnostics of the check stage (schema ``check_metrics``)."""
    return Path("metrics/check") / f"{benchmark}.json"


def check_report_path(benchmark: str) -> Path:
    """The check stage's diagnostics as Markdown, for a person to read."""
    return Path("reports/check") / f"{benchmark}.md"


def check_plot_path(benchmark: str) -> Path:
    """The check stage's overview figure (its other formats beside it)."""
    return Path("plots/check") / f"{benchmark}.png"


# --- annotate -------------------------------------------------------------------------


def difficulty_path(benchmark: str) -> Path:
    """Every item's fitted difficulty and z (schema ``difficulty``): what gaps, fill,
    subsets and estimate read."""
    return Path("data/difficulty") / f"{benchmark}.parquet"


def draws_path(benchmark: str) -> Path:
    """Posterior (or Laplace) draws of every item's b and z: gaps reads them for its
    intervals."""
    return Path("data/difficulty") / f"{benchmark}.draws.npz"


def calibration_path(benchmark: str) -> Path:
    """The fitted panel and its fixed logit → z map (``irt.Calibration``): later items
    land on the same z scale through it."""
    return Path("data/calibration") / f"{benchmark}.json"


def irt_metrics_path(benchmark: str) -> Path:
    """What the annotate fit chose and how it converged (schema ``irt_metrics``)."""
    return Path("metrics/irt") / f"{benchmark}.json"


def irt_plot_path(benchmark: str, kind: str) -> Path:
    """An annotate figure; ``kind`` is ``icc`` (item curves) or ``wright`` (difficulty vs
    ability)."""
    return Path("plots/irt") / f"{benchmark}-{kind}.png"


# --- gaps (all benchmarks at once) ----------------------------------------------------

GAPS_METRICS = Path("metrics/gaps.json")
GAPS_REPORT_MD = Path("reports/gaps.md")
GAPS_REPORT_HTML = Path("reports/gaps.html")
GAPS_ECDF_DATA = Path("plots/gaps-data/ecdf.csv")


GAPS_PLOT_DIR = Path("plots/gaps")
"""The gaps stage's figures: a DVC output folder, written whole by every run."""


def gaps_plot_path(benchmark: str, kind: str) -> Path:
    """A per-benchmark gaps figure; ``kind`` is ``ecdf`` or ``strip``."""
    return GAPS_PLOT_DIR / f"{benchmark}-{kind}.png"


# --- mirt (all benchmarks at once) ----------------------------------------------------

MIRT_METRICS = Path("metrics/mirt.json")
MIRT_REPORT = Path("reports/mirt.md")
MIRT_MODELS_PAGE = Path("reports/mirt-models.html")
"""Every model's ability vector, one searchable table (the Markdown report lists a
leaderboard's extremes only)."""
MIRT_PLOT_DIR = Path("plots/mirt")
MIRT_LOADINGS = Path("data/mirt/loadings.parquet")

# --- fill / judge -----------------------------------------------------------------------


def fill_dir(benchmark: str) -> Path:
    """BenchFill's output folder (a DVC output): the candidates and the memory snapshot of
    the last finished run, nothing else (the resume journal lives in
    :func:`fill_journal_dir`)."""
    return Path("data/fill") / benchmark


STATE_DIR = Path(".curate-state")
"""Run state kept across runs for resuming (git-ignored, in no DVC output or dependency):
a killed run picks up here, and nothing in it changes an output's bytes."""


def fill_journal_dir(benchmark: str) -> Path:
    """Where BenchFill's search journal lives (``journal.jsonl``): outside the stage's
    output folder, so a killed search leaves ``data/fill/<b>/`` exactly as it was and
    the resumed run's outputs are those of a fresh clone."""
    return STATE_DIR / "fill" / benchmark


def candidates_path(benchmark: str) -> Path:
    """The items BenchFill proposed for the gaps (schema ``candidate``), before judging."""
    return fill_dir(benchmark) / "candidates.parquet"


def memory_path(benchmark: str) -> Path:
    """BenchFill's memory after a run (schema ``fill_memory``): a snapshot for inspection;
    the search resumes from its journal (:func:`fill_journal_dir`), not from this."""
    return fill_dir(benchmark) / "memory.parquet"


def fill_metrics_path(benchmark: str) -> Path:
    """What gap filling achieved and cost (schema ``fill_metrics``)."""
    return Path("metrics/fill") / f"{benchmark}.json"


def fill_plot_path(benchmark: str) -> Path:
    """The fill stage's figure: the benchmark's z strip, then each method's inserted items."""
    return Path("plots/fill") / f"{benchmark}.png"


JUDGED_TEMPLATE = "data/judged/{benchmark}.parquet"


def judged_path(benchmark: str) -> Path:
    """Candidates with the judge's verdicts (schema ``candidate``): what review seeds from."""
    return Path(JUDGED_TEMPLATE.format(benchmark=benchmark))


def judge_metrics_path(benchmark: str) -> Path:
    """What the judge stage passed, why it failed the rest and what it cost (schema
    ``judge_metrics``)."""
    return Path("metrics/judge") / f"{benchmark}.json"


# --- human review (defaults of params.yaml ``review:``) -------------------------------

REVIEW_DB = Path("data/review/queue.sqlite")
REVIEW_EXPORT_DIR = Path("data/review/export")
"""What `curate review export` writes and the build stage depends on (one folder, so a
benchmark nobody reviewed yet and an empty decision log are no missing or empty deps)."""
REVIEW_DECISIONS = REVIEW_EXPORT_DIR / "decisions.jsonl"
REVIEW_ACCEPTED_TEMPLATE = "data/review/export/{benchmark}.parquet"
"""Every reviewed candidate of a benchmark with its review_status (not only the accepted
ones: the card counts the others); only accepted rows are built."""
REVIEW_EDITED_TEMPLATE = "data/review/edited/{benchmark}.parquet"
REVIEW_RECALIBRATED_TEMPLATE = "data/review/recalibrated/{benchmark}.parquet"

# --- subsets / build ----------------------------------------------------------------


def subsets_dir(benchmark: str) -> Path:
    """The folder of one benchmark's calibrated subsets, one parquet per subset."""
    return Path("data/subsets") / benchmark


def subset_path(benchmark: str, name: str) -> Path:
    """One calibrated subset ``name`` (schema ``subset_item``)."""
    return subsets_dir(benchmark) / f"{name}.parquet"


def subsets_metrics_path(benchmark: str) -> Path:
    """Every subset's DDM, gaps and ranking agreement with the full benchmark (schema
    ``subsets_metrics``)."""
    return Path("metrics/subsets") / f"{benchmark}.json"


def build_metrics_path(benchmark: str) -> Path:
    """One dataset build (schema ``build_metrics``), with every file's hash: publish
    checks dist/ against this record, kept in git outside dist/."""
    return Path("metrics/build") / f"{benchmark}.json"


HEADLINE_METRICS = Path("metrics/headline.json")
"""Three figures per benchmark, keyed by benchmark: the one DVC metrics file."""


RELEASES_DIR = Path("releases")


def release_path(benchmark: str) -> Path:
    """The released state of a benchmark's dataset (git-tracked, written by `curate release`):
    version, content hash and date; `build.version: auto` bumps from it."""
    return RELEASES_DIR / f"{benchmark}.json"


DIST_ROOT = Path("dist")

# --- hand-run commands ------------------------------------------------------------------


def power_plot_path(benchmark: str) -> Path:
    """``curate power``'s curves (Theorem 2.3 on this benchmark; a hand-run command)."""
    return Path("plots/power") / f"{benchmark}.png"
