"""benchcurate: well-measured LLM benchmarks."""
