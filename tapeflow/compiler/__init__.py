"""tapeflow.function: trace, optimize, compile."""
