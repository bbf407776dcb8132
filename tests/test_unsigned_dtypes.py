"""uint16, uint32, uint64 (and uint8) as TF 2.21 has them: values, dtypes, wrap-around, TF's truediv
dtypes, the integer mean, dtype attributes; eagerly and inside tapeflow.function. TF's results are
recorded by tests/tf_reference/make_unsigned_reference.py from tests/unsigned_cases.py."""
import json
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
import unsigned_cases

WANT = json.loads((Path(__file__).parent / "data" / "unsigned_tf.json").read_text())


def _outcome(f):
    try:
        return unsigned_cases.summary(f())
    except tf.errors.InvalidArgumentError:   # tapeflow's subclasses (…TypeError) are TF's class too
        return "!! InvalidArgumentError"


@pytest.mark.parametrize("dt", unsigned_cases.DTYPES)
@pytest.mark.parametrize("compiled", [False, True])
def test_ops_match_tf(dt, compiled):
    d = getattr(tf, dt)
    a, b = tf.constant([3, 5], d), tf.constant([2, 7], d)
    bad = {}
    for name, f in unsigned_cases.OPS.items():
        g = tf.function(lambda a, b, f=f: f(tf, a, b)) if compiled else (lambda a, b, f=f: f(tf, a, b))
        got = _outcome(lambda: g(a, b))
        if got != WANT[f"{dt} {name}"]:
            bad[name] = (got, WANT[f"{dt} {name}"])
    assert not bad, bad


@pytest.mark.parametrize("dt", unsigned_cases.DTYPES)
def test_dtype_attributes_match_tf(dt):
    d = getattr(tf, dt)
    assert [int(d.min), int(d.max), d.size, d.is_unsigned, d.is_integer, d.is_floating, repr(d), str(d)] == \
        WANT[f"{dt} attributes"]
    assert tf.as_dtype(dt) is d and tf.as_dtype(np.dtype(dt)) is d and tf.dtypes.as_dtype(d.np.type) is d
    assert not tf.bool.is_unsigned and not tf.int8.is_unsigned   # TF 2.21: False for both


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
def test_values_outside_the_dtype_are_an_error_not_a_wrap(dt):
    # TF 2.21 wraps tf.constant(-1, tf.uint32) to 4294967295 (and fails oddly for uint64); tapeflow
    # refuses, as it does for uint8 (docs/differences.md)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        tf.constant(-1, getattr(tf, dt))


def test_unsigned_tensors_save_and_load(tmp_path):
    v = tf.Variable(tf.constant([1, 2**32 + 5], tf.uint64))
    path = tf.train.Checkpoint(v=v).save(str(tmp_path / "ck"))
    w = tf.Variable(tf.zeros([2], tf.uint64))
    tf.train.Checkpoint(v=w).restore(path)
    assert w.dtype == tf.uint64 and w.numpy().tolist() == [1, 2**32 + 5]
