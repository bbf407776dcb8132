"""tapeflow.math.special: TF's tf.math.special namespace (Cephes' functions: ops/special_ops.py,
core/primitives/cephes.py)."""
from .ops.special_ops import (bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, bessel_k0, bessel_k0e,  # noqa: F401
                              bessel_k1, bessel_k1e, bessel_j0, bessel_j1, bessel_y0, bessel_y1, dawsn, expint,
                              fresnel_cos, fresnel_sin, spence)
