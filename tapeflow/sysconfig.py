"""``tf.sysconfig`` (wave 25): ``get_build_info()`` answers as TF 2.21's CPU build does (programs read it to
learn whether CUDA/ROCm/TensorRT are there: tapeflow has none). The rest of TF's namespace (``get_include``,
``get_lib``, ``get_compile_flags``, ``get_link_flags``, ``CXX11_ABI_FLAG``, ``CXX_VERSION``,
``MONOLITHIC_BUILD``) is the build configuration for compiling custom C++ ops against TF: out of scope
(tapeflow has no C++ op registry), each name raising tapeflow's UnsupportedFeatureError."""
from __future__ import annotations

import collections


def get_build_info():
    """TF 2.21's CPU build's answer: no CUDA, no ROCm, no TensorRT (an OrderedDict, as TF's)."""
    return collections.OrderedDict([("is_cuda_build", False), ("is_rocm_build", False),
                                    ("is_tensorrt_build", False)])


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from ._unsupported import UnsupportedNamespace
    return getattr(UnsupportedNamespace("sysconfig"), name)


__all__ = ["get_build_info"]
