"""Build glue pyproject.toml cannot express: the packages are found automatically, and the
top-level ``schemas/`` folder (the one copy, which DVC stages list as deps) is shipped
inside the wheel as the package ``curation._schemas``, so an installed benchcurate can
validate records without a checkout. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["curation", "curation.*"]), "curation._schemas"],
    package_dir={"curation._schemas": "schemas"},
)
