"""Hand-run commands behind ``curate`` that are not pipeline stages (progress test, power)."""
