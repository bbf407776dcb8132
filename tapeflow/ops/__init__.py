"""Public ops: thin wrappers over primitives plus compositions of them."""
