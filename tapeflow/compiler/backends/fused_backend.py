"""The second tier, ``python+fused``: the python backend over a graph whose
elementwise chains were fused (passes/fusion.py) into native numba loops.
Chosen for hot functions (pipeline.tier_up), not by 'auto' at first compile."""
from __future__ import annotations

from ..passes.buffers import plan_buffers
from ..passes.fusion import fuse_elementwise, has_fused
from ..passes.sink import sink
from . import Backend, get_backend, register_backend
from . import numba_backend


class FusedBackend(Backend):
    name = "python+fused"
    extra = "native"

    def available(self):
        return numba_backend.available()

    def fuse(self, graph):
        """The graph with its elementwise groups fused, or None when nothing fused."""
        def compile_group(sub):
            try:
                return numba_backend.try_compile(sub, "fused", required=True)
            except Exception:  # a group numba cannot lower or compile stays unfused
                return None

        # sink first: start values such as Adam's ``0.9 * m`` move next to their user, so the
        # update loop computes them instead of the forward loop writing them out (passes/sink.py)
        fused = fuse_elementwise(sink(graph), compile_group, can_fuse=numba_backend.can_lower_in_loop)
        return fused if has_fused(fused) else None

    def lower(self, graph, plan, name, required=False):
        fused = self.fuse(graph)
        if fused is None:
            if required:
                raise NotImplementedError("python+fused backend: no elementwise chain to fuse in this graph")
            return None
        return get_backend("python").lower(fused, plan_buffers(fused), name)


register_backend(FusedBackend())
