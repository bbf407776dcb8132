"""Native tier (filled in later): returns None when it does not apply."""


def try_compile(graph, name, required=False):
    if required:
        raise NotImplementedError("numba backend: not available for this graph")
    return None
