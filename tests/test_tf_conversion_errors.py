"""Conversion errors as TF 2.21 words them (the text real TF printed for the same call)."""
from __future__ import annotations

import pytest

import tapeflow as tf


@pytest.mark.parametrize("make", [tf.constant, tf.convert_to_tensor, tf.Variable,
                                  lambda v: tf.constant(v, tf.float32)])
@pytest.mark.parametrize("value", [[[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]], [[1., 2.], [3.]]])
def test_non_rectangular_list_is_tfs_value_error(make, value):
    with pytest.raises(ValueError) as e:
        make(value)
    assert str(e.value) == "Can't convert non-rectangular Python sequence to Tensor."
