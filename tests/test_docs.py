"""The README and docs/ point at what exists: every relative link (and its #anchor), every
`curate …` command (its --help runs), nothing outside the repository; the README stays a
first page (issue 32, item 5: 858 lines that cited a SPEC the repository does not have)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from curation.cli import build_parser
from curation.commands.help import walk
from tests.conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
COMMAND = re.compile(r"(?<![\w/-])curate((?: [a-z][a-z-]*)+)")
COMMANDS = {path for path, _ in walk(build_parser())}


def _text(page: Path) -> str:
    """The page with line breaks as spaces (a command may wrap)."""
    return re.sub(r"\s*\n\s*", " ", page.read_text(encoding="utf-8"))


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of the page's headings."""
    heads = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in heads}


def test_the_readme_is_a_first_page():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    heads = [line for line in lines if line.startswith("## ")]
    assert heads[:2] == ["## Quickstart", "## Your own benchmark in three commands"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_exists(page: Path):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or not dest.is_relative_to(REPO):
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_curate_command_exists_and_its_help_runs(page: Path, capsys):
    found = set()
    for words in COMMAND.findall(_text(page)):
        words = words.split()
        path = next(
            (
                " ".join(words[:n])
                for n in range(len(words), 0, -1)
                if " ".join(words[:n]) in COMMANDS
            ),
            None,
        )
        assert path is not None, f"{page.name}: `curate {' '.join(words)}` is no command"
        found.add(path)
    for path in sorted(found):
        with pytest.raises(SystemExit) as done:
            build_parser().parse_args([*path.split(), "--help"])
        assert done.value.code == 0, path
    capsys.readouterr()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_cites_a_document_the_repository_lacks(page: Path):
    assert not re.search(r"\bSPEC\b", page.read_text(encoding="utf-8")), page.name


def test_every_figure_dvc_metrics_show_prints_is_in_the_metrics_table():
    """`sub_ddm`, `tau` and `fill_top3_pct` were printed with no word on what they are."""
    import json

    table = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    headline = json.loads((REPO / "metrics" / "headline.json").read_text(encoding="utf-8"))
    names = {key for figures in headline.values() for key in figures}
    assert names and all(f"| `<b>.{name}` |" in table for name in names), names
