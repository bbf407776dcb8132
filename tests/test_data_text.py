"""tf.data over text (wave 19): TextLineDataset, string CSV columns, string tensors through
from_tensor_slices / map / batch / unique; TF 2.21's values (recorded as literals)."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture
def files(tmp_path):
    txt = tmp_path / "t.txt"
    txt.write_bytes(b"line one\nline two\r\n\nlast")
    csv = tmp_path / "t.csv"
    csv.write_bytes(b'a,b,name\n1,2.5,x y\n3,,"q,r"\r\n')
    return str(txt), str(csv)


def test_text_line_dataset(files):
    txt, _ = files
    ds = tf.data.TextLineDataset(txt)
    assert ds.element_spec == tf.TensorSpec((), tf.string) and ds.cardinality().numpy() == -2   # TF 2.21
    assert list(ds.as_numpy_iterator()) == [b"line one", b"line two", b"", b"last"]
    assert repr(next(iter(ds))) == "<tf.Tensor: shape=(), dtype=string, numpy=b'line one'>"
    assert list(tf.data.TextLineDataset([txt, txt]).as_numpy_iterator())[:6] == \
        [b"line one", b"line two", b"", b"last", b"line one", b"line two"]
    lens = tf.data.TextLineDataset(txt).map(tf.strings.length)
    assert list(lens.as_numpy_iterator()) == [8, 8, 0, 4]
    words = tf.data.TextLineDataset(txt).map(lambda s: tf.strings.reduce_join(tf.strings.split(s, " ")))
    assert list(words.as_numpy_iterator()) == [b"lineone", b"linetwo", b"", b"last"]
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        list(tf.data.TextLineDataset(txt + ".missing"))


def test_csv_string_columns(files):
    _, csv = files
    c = tf.data.experimental.CsvDataset(csv, [tf.int32, 0.0, tf.string], header=True)
    assert c.element_spec == (tf.TensorSpec((), tf.int32), tf.TensorSpec((), tf.float32), tf.TensorSpec((), tf.string))
    rows = [tuple(t.numpy() for t in r) for r in c]
    assert rows == [(1, 2.5, b"x y"), (3, 0.0, b"q,r")]   # TF 2.21 (the empty b is its default 0.0)
    c2 = tf.data.experimental.CsvDataset(csv, [0, 0.0, "dflt"], header=True)
    assert [r[2].numpy() for r in c2] == [b"x y", b"q,r"]
    m = tf.data.experimental.make_csv_dataset(csv, batch_size=2, shuffle=False, num_epochs=1)
    spec = m.element_spec
    assert list(spec) == ["a", "b", "name"] and spec["name"] == tf.TensorSpec((None,), tf.string)
    (b,) = list(m)
    assert b["a"].numpy().tolist() == [1, 3] and b["name"].numpy().tolist() == [b"x y", b"q,r"]


def test_string_tensors_in_datasets():
    ds = tf.data.Dataset.from_tensor_slices(["a", "bb", "a"])
    assert ds.element_spec == tf.TensorSpec((), tf.string)
    assert list(ds.as_numpy_iterator()) == [b"a", b"bb", b"a"]
    assert list(ds.map(tf.strings.length).as_numpy_iterator()) == [1, 2, 1]
    assert list(ds.unique().as_numpy_iterator()) == [b"a", b"bb"]
    assert [b.tolist() for b in ds.batch(2).as_numpy_iterator()] == [[b"a", b"bb"], [b"a"]]
    labels = tf.data.Dataset.from_tensor_slices((["cat", "dog"], [0, 1]))
    assert [(s.numpy(), int(y)) for s, y in labels] == [(b"cat", 0), (b"dog", 1)]


def test_map_returning_a_list_gives_a_tuple():
    # TF 2.21 (StructuredFunctionWrapper): a returned list is a tuple, not one stacked tensor (the
    # data_performance guide's py_function outputs, of different shapes and dtypes)
    ds = tf.data.Dataset.range(2).map(lambda i: tf.py_function(lambda j: [tf.strings.as_string(j), j * 2.0],
                                                               [tf.cast(i, tf.float32)], [tf.string, tf.float32]))
    assert [(a.numpy(), float(b)) for a, b in ds] == [(b"0.000000", 0.0), (b"1.000000", 2.0)]
