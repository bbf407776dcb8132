"""tapeflow's benchmark harness (see benchmarks/README.md)."""
