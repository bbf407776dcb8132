"""``tf.experimental``: out of scope in tapeflow (TF's NumPy API ``tf.experimental.numpy``, DTensor,
extension types). Its names raise an error that says so, as the other out-of-scope namespaces do
(``tapeflow._unsupported``); ``import tapeflow.experimental.numpy`` raises an ImportError saying so."""
from .._unsupported import UnsupportedFeatureError

_WHAT = ("tf.experimental (TF's NumPy API tf.experimental.numpy with NumPy's type promotion, DTensor, "
         "extension types)")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedFeatureError(
        f"tf.experimental.{name}: tapeflow does not implement {_WHAT}; it is out of scope (see docs/differences.md, "
        "'Differences from TensorFlow')")
