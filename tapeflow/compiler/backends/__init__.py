"""Backends turn an optimized Graph into a callable ``f(*arrays) -> list``.

* ``python``: straight-line Python source calling the primitives' NumPy
  kernels, writing into preallocated buffers where the buffer plan allows;
* ``numba``: whole graphs (typically loops) lowered to machine code with
  fused elementwise loops, used when every equation is supported.
"""
