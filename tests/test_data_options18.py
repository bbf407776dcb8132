"""tf.data.Options / Dataset.with_options / Dataset.options (TF's distribute/input tutorial sets
an auto-shard policy). The options are kept, type-checked and merged as TF 2.21 does; they change
no element."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

D = tf.data


def test_defaults_and_aliases():
    o = D.Options()
    # TF 2.21: None 0 None
    assert o.deterministic is None
    assert o.experimental_distribute.auto_shard_policy == D.experimental.AutoShardPolicy.AUTO == 0
    assert o.threading.private_threadpool_size is None
    assert o.autotune.enabled is None and o.experimental_optimization.map_fusion is None
    o.experimental_deterministic = False          # TF's older name of `deterministic`
    assert o.deterministic is False
    # TF 2.21: [OFF -1, AUTO 0, FILE 1, DATA 2, HINT 3]; str() is the number
    assert [int(p) for p in D.experimental.AutoShardPolicy] == [-1, 0, 1, 2, 3]
    assert str(D.experimental.AutoShardPolicy.DATA) == "2"
    assert D.Options() == D.Options()


def test_with_options_keeps_elements_and_merges():
    a = D.Options()
    a.deterministic = False
    a.experimental_distribute.auto_shard_policy = D.experimental.AutoShardPolicy.DATA
    b = D.Options()
    b.deterministic = True
    b.threading.private_threadpool_size = 2
    ds = D.Dataset.range(4).with_options(a).map(lambda x: x * 2).batch(2)
    o = ds.options()
    # TF 2.21: False 2 [0 2]
    assert o.deterministic is False and int(o.experimental_distribute.auto_shard_policy) == 2
    np.testing.assert_array_equal(list(ds.as_numpy_iterator())[0], [0, 2])
    o = ds.with_options(b).options()
    # TF 2.21: True 2 2 (the later with_options wins where both set a field)
    assert (o.deterministic, int(o.experimental_distribute.auto_shard_policy),
            o.threading.private_threadpool_size) == (True, 2, 2)
    z = D.Dataset.zip((D.Dataset.range(2), D.Dataset.range(2).with_options(b)))
    assert (z.options().deterministic, z.options().threading.private_threadpool_size) == (True, 2)  # TF 2.21
    assert D.Dataset.range(3).map(lambda x: x).options().deterministic is None   # TF 2.21: None
    assert ds.with_options(a).cardinality() == ds.cardinality()


def test_bad_options():
    o = D.Options()
    with pytest.raises(AttributeError, match="Cannot set the property foo on Options"):   # TF 2.21: same text
        o.foo = 1
    # TF 2.21: TypeError 'Property "deterministic" must be of type <class 'bool'>, got: 3 (type: <class 'int'>)'
    with pytest.raises(TypeError, match='Property "deterministic" must be of type'):
        o.deterministic = 3
    with pytest.raises(TypeError, match="private_threadpool_size"):
        o.threading.private_threadpool_size = True
    # TF 2.21 raises AttributeError ('int' object has no attribute '_to_proto'): differences.md
    with pytest.raises(TypeError, match="with_options: options must be a tf.data.Options"):
        D.Dataset.range(3).with_options(3)
