"""Records TF 2.21's outputs of tests/nn21_cases.py's CALLS (wave 21, branch nn21) for
tests/test_nn21.py (tests cannot import TF).

Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_nn21_reference.py
Writes tests/data/nn21_reference.npz: ``NAME/i`` per output (a SparseTensor output is three:
``NAME/i.indices``, ``.values``, ``.dense_shape``).
"""
import os
import sys

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from nn21_cases import CALLS, RECORD  # noqa: E402


class _TF:
    """tf, with TF 2.21's kernel-less ops (Conv2DBackpropFilterV2/InputV2 raise NotFoundError on CPU: no
    registered kernels) recorded as what they are defined to be: conv2d's gradients (TF's tape; its v1
    Conv2DBackpropFilter refuses dilations > 1 on CPU, so no dilated case is recorded)."""

    def __getattr__(self, name):
        return getattr(tf, name)

    @staticmethod
    def _grad(wrt, input, filter, out_backprop, strides, padding, dilations=(1, 1, 1, 1), **kw):  # noqa: A002
        with tf.GradientTape() as t:
            t.watch([input, filter])
            y = tf.nn.conv2d(input, filter, strides, padding, dilations=dilations)
        return t.gradient(y, filter if wrt == "filter" else input, output_gradients=out_backprop)

    @staticmethod
    def conv2d_backprop_filter_v2(*a, **kw):
        return _TF._grad("filter", *a, **kw)

    @staticmethod
    def conv2d_backprop_input_v2(*a, **kw):
        return _TF._grad("input", *a, **kw)


TF = _TF()


def flat(r):
    if isinstance(r, (tuple, list)):
        out = []
        for x in r:
            out += flat(x)
        return out
    return [r]


out = {}
for name, (fn, inputs, _) in list(CALLS.items()) + list(RECORD.items()):
    r = fn(TF, *[tf.constant(x) for x in inputs])
    for i, a in enumerate(flat(r)):
        if isinstance(a, tf.SparseTensor):
            for part in ("indices", "values", "dense_shape"):
                out[f"{name}/{i}.{part}"] = getattr(a, part).numpy()
        else:
            out[f"{name}/{i}"] = np.asarray(a)
        print(name, i, {k: v.shape for k, v in out.items() if k.startswith(f"{name}/{i}")})
np.savez_compressed(os.path.join(os.path.dirname(HERE), "data", "nn21_reference.npz"), **out)
