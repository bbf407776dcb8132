"""TF namespaces tapeflow does not implement (issue 11, item 9: out of scope, documented).

A ported program that reaches `tf.sparse.to_dense(...)` must stop with an error that names the
feature and says it is out of scope, not with `module 'tapeflow' has no attribute 'ragged'`,
which reads like a typo or a broken install. (String and ragged tensors left this list in
wave 19: tapeflow/strings.py, tapeflow/ragged/; so did tf.io: tapeflow/io.py; tf.lookup left in
wave 20: tapeflow/lookup.py.)
"""
from __future__ import annotations

# namespace -> what it is, as the error message names it
FEATURES = {
    # a sub-namespace (tapeflow.distribute makes it an UnsupportedNamespace): clusters of machines
    "distribute.cluster_resolver": "cluster resolvers (tf.distribute across machines; one machine's strategies "
                                   "need none)",
    "compat": "TF1's API (tf.compat.v1: sessions, placeholders, TF1 optimizers); tapeflow ports TF2 programs",
}


# top-level names of the same features: using the name raises at once
NAMES = {
    "complex64": "complex dtypes",
    "complex128": "complex dtypes",
    "dtypes.complex64": "complex dtypes",
    "dtypes.complex128": "complex dtypes",
    # TF1's API, reached through TF2's namespaces
    "Session": "TF1's API (sessions); tapeflow ports TF2 programs: call functions eagerly or through "
               "tapeflow.function",
    "placeholder": "TF1's API (placeholders); tapeflow ports TF2 programs: pass tensors as arguments",
    "train.AdamOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.Adam (the same update)",
    "train.GradientDescentOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.SGD",
    "train.MomentumOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.SGD(momentum=...)",
    "train.RMSPropOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.RMSprop",
    "train.AdagradOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.Adagrad",
    "train.Saver": "TF1's API (Saver); use tapeflow.train.Checkpoint",
    "train.get_or_create_global_step": "TF1's API (global steps); keep the step in a Variable",
}


class UnsupportedFeatureError(NotImplementedError, AttributeError):
    """Raised on any use of an out-of-scope TF namespace. Also an AttributeError, so that
    `hasattr(tf.ragged, "constant")` and getattr-with-default probes see a missing attribute."""


class UnsupportedNamespace:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        if attr.startswith("__"):   # copy/pickle/inspect probes: plain missing attributes
            raise AttributeError(attr)
        raise UnsupportedFeatureError(
            f"tf.{self._name}.{attr}: tapeflow does not implement {FEATURES[self._name]}; "
            f"it is out of scope (see docs/differences.md, 'Differences from TensorFlow')")

    def __repr__(self):
        return f"<unsupported namespace tf.{self._name}: {FEATURES[self._name]}>"


def module_getattr(prefix: str, module: str):
    """A module's ``__getattr__`` (PEP 562) for a TF namespace that exists in part
    (``tf.train``, ``tf.dtypes``): its out-of-scope names (``NAMES["train.Saver"]``) say so,
    any other missing name is a plain AttributeError."""
    def __getattr__(name):
        if f"{prefix}.{name}" in NAMES:
            raise unsupported_name(f"{prefix}.{name}")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__


def unsupported_name(name: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        f"tf.{name}: tapeflow does not implement {NAMES[name]}; it is out of scope "
        f"(see docs/differences.md, 'Differences from TensorFlow')")
