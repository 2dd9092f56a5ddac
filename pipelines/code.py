"""Stage `code`: one fingerprint per stage of the code it runs -> code-hashes/<stage>.txt.

Each file lists the md5 of ``pipelines/<stage>.py`` and of every file of ``curation`` it
can import (:mod:`curation.stage_code`), and each stage depends on its own file instead
of listing ~20 code folders in ``dvc.yaml``: DVC rewrites the whole ``dvc.lock`` after
every stage, and those entries were most of it. Only a fingerprint whose text changed
is written (the outputs are ``persist``), so only the stages whose code changed run again.
"""

from __future__ import annotations

import sys
from pathlib import Path

from curation.failure import guarded
from curation.io.atomic import write_text
from curation.stage_code import fingerprint, hashes_path, stage_scripts


def run(root: Path) -> str:
    """Rewrite the fingerprints whose text changed; returns which stages' fingerprints moved."""
    changed = []
    scripts = stage_scripts(root)
    for script in scripts:
        target = root / hashes_path(script.stem)
        text = fingerprint(root, script)
        old = target.read_text(encoding="utf-8") if target.is_file() else None
        if old != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_text(target, text)
            changed.append(script.stem)
    return (
        f"{len(scripts)} stage code fingerprints -> code-hashes/ "
        f"({'changed: ' + ', '.join(changed) if changed else 'none changed'})"
    )


def main() -> int:
    """Console entry: fingerprint every stage; exit 0, or 2 with one message on bad input."""
    return guarded(lambda: print(run(Path.cwd()), flush=True), doing=lambda: "code")


if __name__ == "__main__":
    sys.exit(main())
