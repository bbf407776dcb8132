"""``import tensorflow.experimental.numpy as tnp`` ported: out of scope, and the import says so."""
raise ImportError(
    "tf.experimental.numpy: tapeflow does not implement TF's NumPy API (tnp, with NumPy's type promotion and "
    "ndarray methods on tensors); it is out of scope (see docs/differences.md). Use tapeflow's ops on tensors, "
    "or NumPy on t.numpy() values (np.asarray(t) works too)")
