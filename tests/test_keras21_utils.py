"""keras.utils names added in wave 21: get_source_inputs (and FeatureSpace, below)."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras


def test_get_source_inputs_as_keras():
    # Keras 3.15 (TF 2.21), the same graph: [a, b] for e and for a + b; [a] for a and c; 5 for 5
    a, b = K.Input((3,)), K.Input((3,), name="b")
    c = K.layers.Dense(2)(a)
    d = K.layers.Concatenate()([c, b, a])
    e = K.layers.Dense(1)(d)
    src = K.utils.get_source_inputs(e)
    assert len(src) == 2 and src[0] is a and src[1] is b
    assert K.utils.get_source_inputs(a) == [a] and K.utils.get_source_inputs(c)[0] is a
    assert K.utils.get_source_inputs(5) == 5
    s2 = K.utils.get_source_inputs(a + b)
    assert len(s2) == 2 and s2[0] is a and s2[1] is b
    m = K.Model(K.utils.get_source_inputs(e), e)        # the use Keras documents: rebuild a model
    out = m([np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)])
    assert tuple(out.shape) == (2, 1)


# --- FeatureSpace vs Keras 3.15 on TF 2.21 (tests/tf_reference/make_keras21_featurespace_reference.py) ---

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tf_reference"))
from make_keras21_featurespace_reference import spec  # noqa: E402

FSREF = json.load(open(os.path.join(HERE, "data", "keras21_featurespace_reference.json")))
FS = K.utils.FeatureSpace


def _ds():
    return tf.data.Dataset.from_tensor_slices({k: np.array(v) for k, v in FSREF["data"].items()})


def _query(drop=("zip",)):
    return {k: np.array(v) for k, v in FSREF["query"].items() if k not in drop}


def _concat_space():
    s = spec(FS)
    del s["features"]["zip"]
    fs = FS(**s, output_mode="concat")
    fs.adapt(_ds())
    return fs


def test_feature_space_concat_matches_keras():
    fs = _concat_space()
    np.testing.assert_allclose(fs(_query()).numpy(), np.array(FSREF["concat"], np.float32), rtol=1e-6, atol=1e-7)
    enc = fs.get_encoded_features()
    assert [None if d is None else d for d in enc.shape] == FSREF["encoded_shape"]
    one = fs({k: v[0] for k, v in _query().items()})          # one sample: rebatched, squeezed
    np.testing.assert_allclose(one.numpy(), np.array(FSREF["single"], np.float32), rtol=1e-6, atol=1e-7)


def test_feature_space_dict_matches_keras():
    fs = FS(**spec(FS), output_mode="dict")
    fs.adapt({k: np.array(v) for k, v in FSREF["data"].items()})      # (a dict of arrays adapts too)
    out = fs(_query(drop=()))
    assert set(out) == set(FSREF["dict"])
    for k, want in FSREF["dict"].items():
        assert out[k].dtype.name == want["dtype"], k
        np.testing.assert_allclose(np.asarray(out[k]), np.array(want["values"]), rtol=1e-6, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("name", sorted(FSREF["errors"]))
def test_feature_space_errors_as_keras(name):
    fns = {"bad_output_mode": lambda: FS(features={"a": "float"}, output_mode="x"),
           "bad_feature": lambda: FS(features={"a": "floaty"}),
           "empty": lambda: FS(features={}),
           "not_adapted": lambda: FS(features={"a": "float_normalized"})({"a": np.array([1.0])}),
           "concat_int": lambda: FS(features={"z": FS.integer_hashed(4, output_mode="int")})({"z": np.array([1])}),
           "call_not_dict": lambda: FS(features={"a": "float"})(np.array([1.0]))}
    want = FSREF["errors"][name]
    with pytest.raises(Exception) as info:
        fns[name]()
    assert type(info.value).__name__ == want["error"]
    assert str(info.value)[:40] == want["message"][:40], (str(info.value), want["message"])


def test_feature_space_model_save_load_and_discretized(tmp_path):
    fs = _concat_space()
    x = fs.get_encoded_features()
    model = K.Model(fs.get_inputs(), K.layers.Dense(1)(x))
    q = _query()
    y = model({k: v.reshape(-1, 1) for k, v in q.items()})
    assert tuple(y.shape) == (2, 1)
    # save / load: the reloaded space is adapted and encodes as the original
    path = str(tmp_path / "fs.keras")
    fs.save(path)
    fs2 = K.models.load_model(path)
    assert isinstance(fs2, FS)
    np.testing.assert_array_equal(fs2(q).numpy(), fs(q).numpy())
    for n in ("city", "code"):
        assert fs2.preprocessors[n].get_vocabulary() == fs.preprocessors[n].get_vocabulary()
    assert fs2.output_mode == "concat" and [c.name for c in fs2.crosses] == ["city_X_code"]
    # float_discretized with fixed boundaries needs no adapt (Keras 3.15 adapts it and fails)
    d = FS(features={"s": FS.float_discretized(num_bins=None, bin_boundaries=[0.3, 0.6])})
    got = d({"s": np.array([0.1, 0.3, 0.59, 0.9])}).numpy()
    np.testing.assert_array_equal(got, np.eye(3, dtype=np.float32)[np.digitize([0.1, 0.3, 0.59, 0.9], [0.3, 0.6])])


def test_feature_space_in_dataset_map():
    """The usual pipeline: ds.map(lambda x: feature_space(x)) (traced by tf.data's map)."""
    fs = _concat_space()
    ds = tf.data.Dataset.from_tensor_slices(_query()).batch(2).map(lambda x: fs(x))
    got = next(iter(ds)).numpy()
    np.testing.assert_allclose(got, np.array(FSREF["concat"], np.float32), rtol=1e-6, atol=1e-7)
