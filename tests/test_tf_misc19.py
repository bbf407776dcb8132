"""Wave 19's smaller TF-parity fixes (lead), each against TF 2.21's behaviour."""
import numpy as np

import tapeflow as tf


def test_map_element_spec_traces_the_function_without_reading(tmp_path):
    # TF 2.21 (the data guide): a mapped CsvDataset of a file that does not exist yet has an
    # element_spec, TensorSpec(shape=(4,), dtype=tf.int32); the file is opened when iterated
    ds = tf.data.experimental.CsvDataset(str(tmp_path / "missing.csv"), [999] * 4).map(lambda *c: tf.stack(c))
    assert repr(ds.element_spec) == "TensorSpec(shape=(4,), dtype=tf.int32, name=None)"
    # unknown dims stay unknown: (None, 2) after batch(2) and a slice, as TF
    d3 = tf.data.Dataset.from_tensor_slices(tf.ones([4, 3])).batch(2).map(lambda x: x[:, :2])
    assert d3.element_spec.shape == (None, 2)
    # a function that cannot be traced (it reads a value) still gets a spec, from its first element
    d4 = tf.data.Dataset.range(3).map(lambda x: tf.constant([float(x.numpy())] * 2))
    assert d4.element_spec.shape == (2,) and d4.element_spec.dtype == tf.float32
    assert [v.tolist() for v in d4.as_numpy_iterator()] == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
