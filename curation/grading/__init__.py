"""Answer extraction and grading (pure: no I/O, no randomness, no model calls).

Kept outside ``curation.llm`` because imported per-sample logs and BenchFill's
judge re-grade text too; nothing here talks to a model. :func:`answers_agree` compares
two bare answers with the same graders (the judge, BenchFill's validity rule);
:func:`restore_latex` puts back the LaTeX a JSON decoder read as escapes (the judge's
replies, BenchFill's rewrites).
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.grading._agree import (
        answers_agree,
    )
    from curation.grading._extract import (
        explicit_answer,
        extract_choice,
        extract_code,
        extract_exact,
        extract_numeric,
        last_boxed,
    )
    from curation.grading._grade import (
        TRUNCATED,
        CodeSandbox,
        Grade,
        grade,
        method_for,
        normalize_text,
        reference_letter,
        texts_match,
        values_match,
    )
    from curation.grading._latex import (
        restore_latex,
    )
    from curation.grading._numeric import (
        numbers_equal,
        parse_number,
    )
    from curation.grading._settings import (
        METHODS,
        GradingSettings,
        Method,
    )
    from curation.grading._symbolic import (
        symbolically_equal,
    )

_EXPORTS = {
    "METHODS": "_settings",
    "TRUNCATED": "_grade",
    "CodeSandbox": "_grade",
    "Grade": "_grade",
    "GradingSettings": "_settings",
    "Method": "_settings",
    "answers_agree": "_agree",
    "explicit_answer": "_extract",
    "extract_choice": "_extract",
    "extract_code": "_extract",
    "extract_exact": "_extract",
    "extract_numeric": "_extract",
    "grade": "_grade",
    "last_boxed": "_extract",
    "method_for": "_grade",
    "normalize_text": "_grade",
    "numbers_equal": "_numeric",
    "parse_number": "_numeric",
    "reference_letter": "_grade",
    "restore_latex": "_latex",
    "symbolically_equal": "_symbolic",
    "texts_match": "_grade",
    "values_match": "_grade",
}

__all__ = [
    "METHODS",
    "TRUNCATED",
    "CodeSandbox",
    "Grade",
    "GradingSettings",
    "Method",
    "answers_agree",
    "explicit_answer",
    "extract_choice",
    "extract_code",
    "extract_exact",
    "extract_numeric",
    "grade",
    "last_boxed",
    "method_for",
    "normalize_text",
    "numbers_equal",
    "parse_number",
    "reference_letter",
    "restore_latex",
    "symbolically_equal",
    "texts_match",
    "values_match",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
