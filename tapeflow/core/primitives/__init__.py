"""The primitive table, one module per family. Importing this package
registers every primitive in ``tapeflow.core.primitive.REGISTRY``."""
from . import elementwise, reductions, shape, indexing, linalg, dense_linalg, dense, random, effects, print_op, pycall, conv, scatter, segment, assert_op, special, cephes, strings, fft  # noqa: F401
