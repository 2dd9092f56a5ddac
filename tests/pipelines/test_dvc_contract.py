"""The DVC contract a user relies on, with real DVC on the toy project: committed metrics
that `dvc exp show` / `dvc metrics diff` compare, imports that survive `dvc repro`, a
`dvc push` / `dvc pull` round trip through a local remote, dataset versions every clone
agrees on, and builds the `datasets` cache keeps apart.

Every test starts from a copy of the one built repo of the session (conftest.py)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.conftest import REPO
from tests.pipelines._dvc import OUTS, BuiltRepo, curate, digests, dvc, ran, run


def _lm_eval_log(folder: Path, *, task: str, model: str, solved: set[int]) -> Path:
    """An lm-eval --log_samples file for the toy items q0..q5 (doc.id is the item id)."""
    folder = folder / model.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "doc_id": i,
                "doc": {"id": f"q{i}"},
                "target": str(2 * i),
                "arguments": {"gen_args_0": {"arg_0": "x", "arg_1": {}}},
                "resps": [["x"]],
                "filtered_resps": ["x"],
                "filter": "none",
                "metrics": ["exact_match"],
                "exact_match": 1.0 if i in solved else 0.0,
            }
        )
        for i in range(6)
    ]
    path = folder / f"samples_{task}_2024-05-01T10-00-00.000001.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _add_toy3(repo: Path, src: Path) -> None:
    """`curate benchmark add` toy3 (items + a wide matrix of models the others never saw)."""
    src.mkdir()
    (src / "items.jsonl").write_text(
        "".join(
            json.dumps({"id": f"t{i}", "prompt": f"{i} * 3?", "target": str(3 * i)}) + "\n"
            for i in range(6)
        )
    )
    # models the others never saw: mirt pools without it (no common model), not fails
    rows = {"w3": "1,0,0,0,0,1", "m3": "1,1,1,0,0,1", "s3": "1,1,1,1,0,1"}
    header = "model," + ",".join(f"t{i}" for i in range(6))
    (src / "matrix.csv").write_text(
        "\n".join([header, *(f"{m},{v}" for m, v in rows.items())]) + "\n"
    )
    typo = curate(repo, "benchmark", "add", "toy3", "--items", str(src / "missing.jsonl"), ok=False)
    assert typo.returncode == 2 and "Traceback" not in typo.stderr
    proc = curate(
        repo, "benchmark", "add", "toy3", "--items", str(src / "items.jsonl"),
        "--responses", str(src / "matrix.csv"), "--format", "wide",
        "--field-map", "item=id,question=prompt,answer=target",
        "--domain", "math", "--answer-type", "numeric",
    )  # fmt: skip
    assert "next: dvc repro" in proc.stdout
    assert (repo / "data/raw/toy3/items.jsonl").is_file()


@pytest.mark.long(seconds=250)
def test_import_and_benchmark_add_then_one_repro(repo: Path, tmp_path: Path):
    """Two edits a user makes before one `dvc repro` (one repro of the toy chain, not two,
    is what CI can afford): an lm-eval import into toy -- an input that survives repro --
    and `curate benchmark add` toy3 with no other edit. toy2's numbers do not move, the
    ECDF plot gains toy3's column, a second repro does nothing."""
    # a log of another task is refused, naming both, and nothing is written
    ner = _lm_eval_log(tmp_path / "logs-ner", task="conll2003", model="org/new", solved={0})
    proc = curate(
        repo, "responses", "import", "-b", "toy", "--path", str(ner), "--item-field", "id",
        ok=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'conll2003'" in proc.stderr and "'toy'" in proc.stderr
    assert not list((repo / "data/raw/toy/imports").glob("*.parquet"))

    log = _lm_eval_log(tmp_path / "logs", task="toy", model="org/new", solved={0, 1, 5})
    proc = curate(
        repo, "responses", "import", "-b", "toy", "--path", str(log), "--item-field", "id",
        "--model", "org/new",
    )  # fmt: skip
    assert "model 'org/new' added: 6 cells" in proc.stdout
    assert (repo / "data/raw/toy/imports/org_new.parquet").is_file()

    before = {
        name: (repo / "metrics" / name).read_text()
        for name in ("subsets/toy2.json", "build/toy2.json")
    }
    toy2_headline = json.loads((repo / "metrics/headline.json").read_text())["toy2"]
    _add_toy3(repo, tmp_path / "incoming")

    out = dvc(repo, "repro")
    assert "mirt" in ran(out)
    responses = pl.read_parquet(repo / "data/responses/toy.parquet")
    assert set(responses["model"]) == {"weak", "mid", "strong", "org/new"}
    toy2 = pl.read_parquet(repo / "data/responses/toy2.parquet")
    assert "org/new" not in set(toy2["model"])  # only the benchmark imported into
    assert responses.height == 24  # added, nothing replaced
    assert "org/new" in (repo / "data/calibration/toy.json").read_text()

    headline = json.loads((repo / "metrics/headline.json").read_text())
    assert set(headline) == {"toy", "toy2", "toy3"} and headline["toy2"] == toy2_headline
    assert (repo / "dist/toy3/toy3-1.0.0/README.md").is_file()
    for name, text in before.items():
        assert (repo / "metrics" / name).read_text() == text, name
    mirt = (repo / "reports/mirt.md").read_text()
    assert "toy3" in mirt and "no model in common" in mirt
    (ecdf,) = (p for p in yaml.safe_load((repo / "dvc.yaml").read_text())["plots"] if "y" in str(p))
    assert "toy3" in next(iter(ecdf.values()))["y"]["plots/gaps-data/ecdf.csv"]
    assert "toy3" in (repo / "plots/gaps-data/ecdf.csv").read_text().splitlines()[0].split(",")

    second = dvc(repo, "repro")
    assert "Data and pipelines are up to date" in second
    assert "org/new" in set(pl.read_parquet(repo / "data/responses/toy.parquet")["model"])

    # re-importing the model replaces only its own cells, and says so
    log2 = _lm_eval_log(tmp_path / "logs2", task="toy", model="org/new", solved={0})
    proc = curate(
        repo, "responses", "import", "-b", "toy", "--path", str(log2), "--item-field", "id",
        "--model", "org/new",
    )  # fmt: skip
    assert "model 'org/new' was already in the matrix: its 6 cells are replaced" in proc.stdout


@pytest.mark.long(seconds=30)
def test_metrics_in_git_and_remote_round_trip(repo: Path, tmp_path: Path):
    shown = dvc(repo, "metrics", "show")
    assert "metrics/headline.json" in shown and "toy.ddm" in shown
    assert max(len(line) for line in shown.splitlines()) <= 200
    tracked = run(repo, "git", "ls-files", "metrics", "plots").stdout.split()
    assert "metrics/headline.json" in tracked and "plots/gaps-data/ecdf.csv" in tracked

    # push every cached output to a local remote, pull it into a second clone
    remote = tmp_path / "remote"
    dvc(repo, "remote", "add", "-d", "local", str(remote))
    dvc(repo, "push", "-q")
    clone = tmp_path / "clone"
    run(tmp_path, "git", "clone", "-q", str(repo), str(clone))
    dvc(clone, "remote", "add", "-d", "local", str(remote))
    dvc(clone, "pull", "-q")
    assert digests(clone, OUTS) == digests(repo, OUTS)
    assert "up to date" in dvc(clone, "status")


def _headline(row: dict) -> dict:
    return row["data"]["metrics"]["metrics/headline.json"]["data"]["toy"]


@pytest.mark.long(seconds=55)
def test_experiment_show_and_metrics_diff(repo: Path):
    """`dvc exp run -S` on a real param: `dvc exp show` has numbers for the workspace, the
    baseline and the experiment; applied to the workspace, `dvc metrics diff` prints what
    moved against HEAD.

    The param is the primary gap target (``gaps.targets``: Beta(2, 2) first), which moves
    the headline DDM and reruns gaps, headline and the builds (whose cards quote the gaps
    intervals) only. (``annotate.scale=items`` moves nothing
    on this toy: the panel's ability range equals the items' b range, z = 0, ½, ½, 1 either
    way, so `dvc metrics diff` rightly prints nothing -- what an earlier test ran into.)"""
    out = dvc(repo, "exp", "run", "-n", "beta-first", "-S", "gaps.targets=['beta(2, 2)',uniform]")
    # gaps, headline and the builds (each card quotes its benchmark's gaps intervals)
    assert {s for s in ran(out) if not s.startswith("build@")} == {"gaps", "headline"}
    assert any(s.startswith("build@") for s in ran(out))
    table = json.loads(dvc(repo, "exp", "show", "--json"))
    rows = [
        row
        for entry in table
        for row in [entry, *[e for exp in entry.get("experiments") or [] for e in exp["revs"]]]
    ]
    # workspace, the baseline commit, and the experiment under it
    assert len(rows) >= 3 and any(row.get("name") == "beta-first" for row in rows)
    for row in rows:
        data = _headline(row)
        assert isinstance(data["ddm"], float) and isinstance(data["top3"], float)
    (exp,) = (row for row in rows if row.get("name") == "beta-first")
    (baseline,) = (entry for entry in table if entry["rev"] != "workspace")
    assert _headline(exp)["ddm"] != _headline(baseline)["ddm"]

    # what the README shows: one line per row at 120 columns, the moved figures by name
    shown = run(repo, "dvc", "exp", "show", "--no-pager", "--only-changed", env={"COLUMNS": "120"})
    lines = shown.stdout.splitlines()
    assert max(len(line) for line in lines) <= 120, shown.stdout
    assert "toy.ddm" in shown.stdout and "gaps.targets" in shown.stdout, shown.stdout
    assert "beta-first" in shown.stdout and "0." in shown.stdout

    dvc(repo, "exp", "apply", "beta-first")
    diff = json.loads(dvc(repo, "metrics", "diff", "--json"))
    moved = diff["metrics/headline.json"]["toy.ddm"]
    assert moved["old"] == _headline(baseline)["ddm"] and moved["new"] == _headline(exp)["ddm"]
    text = dvc(repo, "metrics", "diff")
    assert "metrics/headline.json" in text and "toy.ddm" in text

    # the README's undo recipe: back to HEAD, with `dvc status` and `git status` clean
    (undo,) = (
        line.split("#")[0].strip()
        for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("git checkout HEAD -- ")
    )
    assert run(repo, "git", "status", "--porcelain").stdout.strip()  # the experiment is there
    run(repo, "bash", "-c", undo)
    assert "up to date" in dvc(repo, "status")
    assert run(repo, "git", "status", "--porcelain").stdout.strip() == ""
    assert _headline(json.loads(dvc(repo, "exp", "show", "--json"))[0]) == _headline(baseline)


RELEASE_SCRIPT = """\
from curation.params_model import read_params
from curation.review import ReviewStore
from curation.review._store import ReviewError

store = ReviewStore.open(read_params("params.yaml").review.db)
rows, _ = store.queue(benchmark="toy", status="pending")
for row in rows:  # the first one a reviewer may accept (measured, judge passed)
    try:
        store.decide("toy", row.candidate, decision="accepted", reviewer="alice",
                     version=row.version, supersedes=None)
    except ReviewError:
        continue
    print(row.candidate)
    break
else:
    raise SystemExit("no acceptable candidate")
"""


def _versions(root: Path) -> dict[str, str]:
    return {
        b: json.loads((root / "metrics" / "build" / f"{b}.json").read_text())["version"]
        for b in ("toy", "toy2")
    }


@pytest.mark.long(seconds=125)
def test_versions_come_from_committed_releases(repo: Path, tmp_path: Path):
    """Released state in git: a review decision for toy bumps toy alone, and a fresh
    clone of the commit, built without any dist/ folder, reports the same versions."""
    # the candidates are in the review queue (pending), the build is released as 1.0.0
    curate(repo, "review", "seed")
    curate(repo, "review", "export")
    dvc(repo, "repro", "-q")
    for b in ("toy", "toy2"):
        proc = curate(repo, "release", b, "--version", "1.0.0", "--date", "2026-01-01")
        assert f"releases/{b}.json" in proc.stdout
    toy2_build = digests(repo, ["dist/toy2"])

    # one decision, for toy: toy moves on, toy2 stays (same version, same files)
    run(repo, sys.executable, "-c", RELEASE_SCRIPT)
    curate(repo, "review", "export")
    dvc(repo, "repro", "-q")
    versions = _versions(repo)
    assert versions == {"toy": "1.1.0", "toy2": "1.0.0"}  # minor: an item added to `filled`
    assert digests(repo, ["dist/toy2"]) == toy2_build
    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-q", "-m", "one review decision for toy")

    # a fresh clone, built without any dist/ folder: its versions equal the original's
    clone = tmp_path / "clone"
    run(tmp_path, "git", "clone", "-q", str(repo), str(clone))
    dvc(clone, "cache", "dir", "--local", str(repo / ".dvc" / "cache"))
    dvc(clone, "checkout", "-q")
    shutil.rmtree(clone / "dist")  # the version must not come from old builds
    dvc(clone, "repro", "-f", "-s", "build@toy", "build@toy2")
    assert _versions(clone) == versions
    assert (clone / "dist" / "toy" / f"toy-{versions['toy']}" / "README.md").is_file()


LOAD_SCRIPT = """\
import json, sys
import datasets
out = {}
for b in ("toy", "toy2"):
    ds = datasets.load_dataset(f"dist/{b}/{b}-1.0.0", "original", split="test")
    out[b] = sorted(ds["question"])
print(json.dumps(out))
"""


# its own call takes seconds; the shared build it may wait for takes ~50 (conftest.py)
@pytest.mark.long(seconds=55)
def test_datasets_cache_keeps_builds_apart(built_repo: BuiltRepo, tmp_path: Path):
    """Two builds loaded in a row through one fresh `datasets` cache: each its own rows."""
    root = built_repo.path
    cache = tmp_path / "hf-cache"
    proc = run(
        root,
        sys.executable,
        "-c",
        LOAD_SCRIPT,
        env={"HF_DATASETS_CACHE": str(cache), "HF_HOME": str(tmp_path / "hf-home")},
    )
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    for b in ("toy", "toy2"):
        shards = sorted((root / "dist" / b / f"{b}-1.0.0" / "data" / "original").glob("*.parquet"))
        own = sorted(pl.concat([pl.read_parquet(s) for s in shards])["question"].to_list())
        assert loaded[b] == own
    assert loaded["toy"] != loaded["toy2"]
    assert any(cache.iterdir())  # it did go through the fresh cache


def test_metrics_show_of_the_bundled_benchmarks_fits_200_columns():
    """The committed headline metrics of the three bundled benchmarks, as a user sees them."""
    proc = run(REPO, "dvc", "metrics", "show")
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("metrics/headline.json")
    for b in ("gsm8k", "math-l5", "crux"):
        assert f"{b}.ddm" in lines[0] and f"{b}.fill_pct" in lines[0], b
    assert max(len(line) for line in lines) <= 200


@pytest.mark.long(seconds=15)
def test_plots_show_draws_each_figure_once_and_the_ecdf_per_series(built_repo, tmp_path):
    """`dvc plots show` was a 62,743 px page: every figure twice (PNG and SVG) at 3000 px,
    and the vega ECDF drew every series in one colour with a y axis titled `y`."""
    import re

    out = tmp_path / "plots"
    run(built_repo.path, "dvc", "plots", "show", "-o", str(out))
    html = (out / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'<div\s+id="(plots_[^"]+)"', html))
    svgs = {i for i in ids if i.endswith("_svg")}
    assert svgs and {i.removesuffix("_svg") + "_png" for i in svgs} <= ids
    assert 'div[id$="_svg"] { display: none; }' in html  # shown once: the PNG
    assert re.search(r"img \{ width: \d+px; max-width: \d+vw; height: auto; \}", html)

    spec = json.loads(run(built_repo.path, "dvc", "plots", "show", "--json").stdout)
    (ecdf,) = (v for k, v in spec["data"].items() if k.startswith("ECDF"))
    encoding = ecdf[0]["content"]["encoding"]
    assert encoding["color"]["field"] == "field"  # one colour per series
    assert encoding["y"]["title"] == "share of items at or below z"
    assert encoding["x"]["title"] == "difficulty z"
