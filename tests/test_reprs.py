"""Tensor / Variable / TensorShape / symbolic-tensor text is TF 2.21's, character for character.

The expected strings were recorded by running the same expressions under real TF 2.21 (NumPy 2.4)
in .venv-peers (issue 11, item 3); they are literals here, the test never runs TF. NumPy's print
options apply to tensors as they do in TF (TF formats with NumPy's str/repr).
"""
import numpy as np
import pytest

import tapeflow as tf

EAGER = [
    ('tf.constant(3)', 'tf.Tensor(3, shape=(), dtype=int32)',
     '<tf.Tensor: shape=(), dtype=int32, numpy=3>'),
    ('tf.constant(3, dtype=tf.int64)', 'tf.Tensor(3, shape=(), dtype=int64)',
     '<tf.Tensor: shape=(), dtype=int64, numpy=3>'),
    ('tf.constant(27.3)', 'tf.Tensor(27.3, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=27.299999237060547>'),
    ('tf.constant(21.0)', 'tf.Tensor(21.0, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=21.0>'),
    ('tf.constant(27.3, dtype=tf.float64)', 'tf.Tensor(27.3, shape=(), dtype=float64)',
     '<tf.Tensor: shape=(), dtype=float64, numpy=27.3>'),
    ('tf.constant(0.1, dtype=tf.float16)', 'tf.Tensor(0.1, shape=(), dtype=float16)',
     '<tf.Tensor: shape=(), dtype=float16, numpy=0.0999755859375>'),
    ('tf.constant(True)', 'tf.Tensor(True, shape=(), dtype=bool)',
     '<tf.Tensor: shape=(), dtype=bool, numpy=True>'),
    ('tf.constant(200, dtype=tf.uint8)', 'tf.Tensor(200, shape=(), dtype=uint8)',
     '<tf.Tensor: shape=(), dtype=uint8, numpy=200>'),
    ('tf.constant(-5, dtype=tf.int8)', 'tf.Tensor(-5, shape=(), dtype=int8)',
     '<tf.Tensor: shape=(), dtype=int8, numpy=-5>'),
    ("tf.constant(float('nan'))", 'tf.Tensor(nan, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=nan>'),
    ("tf.constant(-float('inf'))", 'tf.Tensor(-inf, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=-inf>'),
    ('tf.constant(1e-8)', 'tf.Tensor(1e-08, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=9.99999993922529e-09>'),
    ('tf.constant(-0.0)', 'tf.Tensor(-0.0, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=-0.0>'),
    ('tf.constant([1, 2, 3])', 'tf.Tensor([1 2 3], shape=(3,), dtype=int32)',
     '<tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>'),
    ('tf.constant([1, 2, 3], dtype=tf.int64)', 'tf.Tensor([1 2 3], shape=(3,), dtype=int64)',
     '<tf.Tensor: shape=(3,), dtype=int64, numpy=array([1, 2, 3])>'),
    ('tf.constant([1.5, 2.0])', 'tf.Tensor([1.5 2. ], shape=(2,), dtype=float32)',
     '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.5, 2. ], dtype=float32)>'),
    ('tf.constant([1.5, 2.0], dtype=tf.float64)', 'tf.Tensor([1.5 2. ], shape=(2,), dtype=float64)',
     '<tf.Tensor: shape=(2,), dtype=float64, numpy=array([1.5, 2. ])>'),
    ('tf.constant([1.5, 2.0], dtype=tf.float16)', 'tf.Tensor([1.5 2. ], shape=(2,), dtype=float16)',
     '<tf.Tensor: shape=(2,), dtype=float16, numpy=array([1.5, 2. ], dtype=float16)>'),
    ('tf.constant([True, False])', 'tf.Tensor([ True False], shape=(2,), dtype=bool)',
     '<tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>'),
    ('tf.constant([1, 255], dtype=tf.uint8)', 'tf.Tensor([  1 255], shape=(2,), dtype=uint8)',
     '<tf.Tensor: shape=(2,), dtype=uint8, numpy=array([  1, 255], dtype=uint8)>'),
    ("tf.constant([1.0, float('nan'), float('inf'), -float('inf')])", 'tf.Tensor([  1.  nan  inf -inf], shape=(4,), dtype=float32)',
     '<tf.Tensor: shape=(4,), dtype=float32, numpy=array([  1.,  nan,  inf, -inf], dtype=float32)>'),
    ('tf.constant([27.3, 1.0 / 3])', 'tf.Tensor([27.3         0.33333334], shape=(2,), dtype=float32)',
     '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([27.3       ,  0.33333334], dtype=float32)>'),
    ('tf.constant([1e-8, 1.0, 1000.0])', 'tf.Tensor([1.e-08 1.e+00 1.e+03], shape=(3,), dtype=float32)',
     '<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1.e-08, 1.e+00, 1.e+03], dtype=float32)>'),
    ('tf.constant([[1, 2], [3, 4]])', 'tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)',
     '<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>'),
    ('tf.constant([[1.0, 2.0], [3.0, 4.5]])', 'tf.Tensor(\n[[1.  2. ]\n [3.  4.5]], shape=(2, 2), dtype=float32)',
     '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1. , 2. ],\n       [3. , 4.5]], dtype=float32)>'),
    ('tf.reshape(tf.range(24), (2, 3, 4))', 'tf.Tensor(\n[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]], shape=(2, 3, 4), dtype=int32)',
     '<tf.Tensor: shape=(2, 3, 4), dtype=int32, numpy=\narray([[[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]],\n\n       [[12, 13, 14, 15],\n        [16, 17, 18, 19],\n        [20, 21, 22, 23]]], dtype=int32)>'),
    ('tf.range(2000)', 'tf.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)',
     '<tf.Tensor: shape=(2000,), dtype=int32, numpy=\narray([   0,    1,    2, ..., 1997, 1998, 1999],\n      shape=(2000,), dtype=int32)>'),
    ('tf.reshape(tf.cast(tf.range(2000), tf.float32), (40, 50))', 'tf.Tensor(\n[[0.000e+00 1.000e+00 2.000e+00 ... 4.700e+01 4.800e+01 4.900e+01]\n [5.000e+01 5.100e+01 5.200e+01 ... 9.700e+01 9.800e+01 9.900e+01]\n [1.000e+02 1.010e+02 1.020e+02 ... 1.470e+02 1.480e+02 1.490e+02]\n ...\n [1.850e+03 1.851e+03 1.852e+03 ... 1.897e+03 1.898e+03 1.899e+03]\n [1.900e+03 1.901e+03 1.902e+03 ... 1.947e+03 1.948e+03 1.949e+03]\n [1.950e+03 1.951e+03 1.952e+03 ... 1.997e+03 1.998e+03 1.999e+03]], shape=(40, 50), dtype=float32)',
     '<tf.Tensor: shape=(40, 50), dtype=float32, numpy=\narray([[0.000e+00, 1.000e+00, 2.000e+00, ..., 4.700e+01, 4.800e+01,\n        4.900e+01],\n       [5.000e+01, 5.100e+01, 5.200e+01, ..., 9.700e+01, 9.800e+01,\n        9.900e+01],\n       [1.000e+02, 1.010e+02, 1.020e+02, ..., 1.470e+02, 1.480e+02,\n        1.490e+02],\n       ...,\n       [1.850e+03, 1.851e+03, 1.852e+03, ..., 1.897e+03, 1.898e+03,\n        1.899e+03],\n       [1.900e+03, 1.901e+03, 1.902e+03, ..., 1.947e+03, 1.948e+03,\n        1.949e+03],\n       [1.950e+03, 1.951e+03, 1.952e+03, ..., 1.997e+03, 1.998e+03,\n        1.999e+03]], shape=(40, 50), dtype=float32)>'),
    ('tf.zeros((0,))', 'tf.Tensor([], shape=(0,), dtype=float32)',
     '<tf.Tensor: shape=(0,), dtype=float32, numpy=array([], dtype=float32)>'),
    ('tf.zeros((2, 0))', 'tf.Tensor([], shape=(2, 0), dtype=float32)',
     '<tf.Tensor: shape=(2, 0), dtype=float32, numpy=array([], shape=(2, 0), dtype=float32)>'),
    ('tf.ones((3, 1))', 'tf.Tensor(\n[[1.]\n [1.]\n [1.]], shape=(3, 1), dtype=float32)',
     '<tf.Tensor: shape=(3, 1), dtype=float32, numpy=\narray([[1.],\n       [1.],\n       [1.]], dtype=float32)>'),
    ('tf.cast(tf.range(30), tf.float32) / 3', 'tf.Tensor(\n[0.         0.33333334 0.6666667  1.         1.3333334  1.6666666\n 2.         2.3333333  2.6666667  3.         3.3333333  3.6666667\n 4.         4.3333335  4.6666665  5.         5.3333335  5.6666665\n 6.         6.3333335  6.6666665  7.         7.3333335  7.6666665\n 8.         8.333333   8.666667   9.         9.333333   9.666667  ], shape=(30,), dtype=float32)',
     '<tf.Tensor: shape=(30,), dtype=float32, numpy=\narray([0.        , 0.33333334, 0.6666667 , 1.        , 1.3333334 ,\n       1.6666666 , 2.        , 2.3333333 , 2.6666667 , 3.        ,\n       3.3333333 , 3.6666667 , 4.        , 4.3333335 , 4.6666665 ,\n       5.        , 5.3333335 , 5.6666665 , 6.        , 6.3333335 ,\n       6.6666665 , 7.        , 7.3333335 , 7.6666665 , 8.        ,\n       8.333333  , 8.666667  , 9.        , 9.333333  , 9.666667  ],\n      dtype=float32)>'),
    ('tf.Variable(1.0)', "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>",
     "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"),
    ("tf.Variable([1.0, 2.0], name='w')", "<tf.Variable 'w:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>",
     "<tf.Variable 'w:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"),
    ('tf.Variable([[1, 2], [3, 4]])', "<tf.Variable 'Variable:0' shape=(2, 2) dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>",
     "<tf.Variable 'Variable:0' shape=(2, 2) dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>"),
    ('tf.Variable(True)', "<tf.Variable 'Variable:0' shape=() dtype=bool, numpy=True>",
     "<tf.Variable 'Variable:0' shape=() dtype=bool, numpy=True>"),
    ('tf.Variable([1, 2], dtype=tf.int64)', "<tf.Variable 'Variable:0' shape=(2,) dtype=int64, numpy=array([1, 2])>",
     "<tf.Variable 'Variable:0' shape=(2,) dtype=int64, numpy=array([1, 2])>"),
    ('tf.Variable(27.3)', "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=27.299999237060547>",
     "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=27.299999237060547>"),
    ('tf.Variable([1.0, 2.0]).assign([3.0, 4.0])', "<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, numpy=array([3., 4.], dtype=float32)>",
     "<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, numpy=array([3., 4.], dtype=float32)>"),
    ('tf.Variable([1.0, 2.0]).assign_add([3.0, 4.0])', "<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, numpy=array([4., 6.], dtype=float32)>",
     "<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, numpy=array([4., 6.], dtype=float32)>"),
    ('tf.Variable(1).assign_sub(3)', "<tf.Variable 'UnreadVariable' shape=() dtype=int32, numpy=-2>",
     "<tf.Variable 'UnreadVariable' shape=() dtype=int32, numpy=-2>"),
    ('tf.constant([[1, 2, 3], [4, 5, 6]]).shape', '(2, 3)',
     'TensorShape([2, 3])'),
    ('tf.constant(1).shape', '()',
     'TensorShape([])'),
    ('tf.TensorShape([None, 3])', '(None, 3)',
     'TensorShape([None, 3])'),
    ('tf.TensorShape(None)', '<unknown>',
     'TensorShape(None)'),
    ('tf.TensorShape([5])', '(5,)',
     'TensorShape([5])'),
    ('tf.Variable([[1.0]]).shape', '(1, 1)',
     'TensorShape([1, 1])'),
    ('[tf.constant(1), tf.constant([1.0, 2.0])]', '[<tf.Tensor: shape=(), dtype=int32, numpy=1>, <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>]',
     '[<tf.Tensor: shape=(), dtype=int32, numpy=1>, <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>]'),
]

PRINT_OPTIONS = [
    ({'precision': 2}, 'tf.constant(27.3)', 'tf.Tensor(27.3, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=27.299999237060547>'),
    ({'precision': 2}, 'tf.constant([27.3, 1.0 / 3])', 'tf.Tensor([27.3   0.33], shape=(2,), dtype=float32)',
     '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([27.3 ,  0.33], dtype=float32)>'),
    ({'precision': 2}, 'tf.constant([1e-8, 1.0, 1000.0])', 'tf.Tensor([1.e-08 1.e+00 1.e+03], shape=(3,), dtype=float32)',
     '<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1.e-08, 1.e+00, 1.e+03], dtype=float32)>'),
    ({'precision': 2}, 'tf.cast(tf.range(30), tf.float32) / 3', 'tf.Tensor(\n[0.   0.33 0.67 1.   1.33 1.67 2.   2.33 2.67 3.   3.33 3.67 4.   4.33\n 4.67 5.   5.33 5.67 6.   6.33 6.67 7.   7.33 7.67 8.   8.33 8.67 9.\n 9.33 9.67], shape=(30,), dtype=float32)',
     '<tf.Tensor: shape=(30,), dtype=float32, numpy=\narray([0.  , 0.33, 0.67, 1.  , 1.33, 1.67, 2.  , 2.33, 2.67, 3.  , 3.33,\n       3.67, 4.  , 4.33, 4.67, 5.  , 5.33, 5.67, 6.  , 6.33, 6.67, 7.  ,\n       7.33, 7.67, 8.  , 8.33, 8.67, 9.  , 9.33, 9.67], dtype=float32)>'),
    ({'precision': 2}, 'tf.reshape(tf.range(24), (2, 3, 4))', 'tf.Tensor(\n[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]], shape=(2, 3, 4), dtype=int32)',
     '<tf.Tensor: shape=(2, 3, 4), dtype=int32, numpy=\narray([[[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]],\n\n       [[12, 13, 14, 15],\n        [16, 17, 18, 19],\n        [20, 21, 22, 23]]], dtype=int32)>'),
    ({'precision': 2}, 'tf.constant([[1.0, 2.0], [3.0, 4.5]])', 'tf.Tensor(\n[[1.  2. ]\n [3.  4.5]], shape=(2, 2), dtype=float32)',
     '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1. , 2. ],\n       [3. , 4.5]], dtype=float32)>'),
    ({'precision': 2}, 'tf.Variable([0.125, 1.0 / 3])', "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.12, 0.33], dtype=float32)>",
     "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.12, 0.33], dtype=float32)>"),
    ({'suppress': True}, 'tf.constant(27.3)', 'tf.Tensor(27.3, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=27.299999237060547>'),
    ({'suppress': True}, 'tf.constant([27.3, 1.0 / 3])', 'tf.Tensor([27.3         0.33333334], shape=(2,), dtype=float32)',
     '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([27.3       ,  0.33333334], dtype=float32)>'),
    ({'suppress': True}, 'tf.constant([1e-8, 1.0, 1000.0])', 'tf.Tensor([   0.00000001    1.         1000.        ], shape=(3,), dtype=float32)',
     '<tf.Tensor: shape=(3,), dtype=float32, numpy=array([   0.00000001,    1.        , 1000.        ], dtype=float32)>'),
    ({'suppress': True}, 'tf.cast(tf.range(30), tf.float32) / 3', 'tf.Tensor(\n[0.         0.33333334 0.6666667  1.         1.3333334  1.6666666\n 2.         2.3333333  2.6666667  3.         3.3333333  3.6666667\n 4.         4.3333335  4.6666665  5.         5.3333335  5.6666665\n 6.         6.3333335  6.6666665  7.         7.3333335  7.6666665\n 8.         8.333333   8.666667   9.         9.333333   9.666667  ], shape=(30,), dtype=float32)',
     '<tf.Tensor: shape=(30,), dtype=float32, numpy=\narray([0.        , 0.33333334, 0.6666667 , 1.        , 1.3333334 ,\n       1.6666666 , 2.        , 2.3333333 , 2.6666667 , 3.        ,\n       3.3333333 , 3.6666667 , 4.        , 4.3333335 , 4.6666665 ,\n       5.        , 5.3333335 , 5.6666665 , 6.        , 6.3333335 ,\n       6.6666665 , 7.        , 7.3333335 , 7.6666665 , 8.        ,\n       8.333333  , 8.666667  , 9.        , 9.333333  , 9.666667  ],\n      dtype=float32)>'),
    ({'suppress': True}, 'tf.reshape(tf.range(24), (2, 3, 4))', 'tf.Tensor(\n[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]], shape=(2, 3, 4), dtype=int32)',
     '<tf.Tensor: shape=(2, 3, 4), dtype=int32, numpy=\narray([[[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]],\n\n       [[12, 13, 14, 15],\n        [16, 17, 18, 19],\n        [20, 21, 22, 23]]], dtype=int32)>'),
    ({'suppress': True}, 'tf.constant([[1.0, 2.0], [3.0, 4.5]])', 'tf.Tensor(\n[[1.  2. ]\n [3.  4.5]], shape=(2, 2), dtype=float32)',
     '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1. , 2. ],\n       [3. , 4.5]], dtype=float32)>'),
    ({'suppress': True}, 'tf.Variable([0.125, 1.0 / 3])', "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.125     , 0.33333334], dtype=float32)>",
     "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.125     , 0.33333334], dtype=float32)>"),
    ({'threshold': 5, 'edgeitems': 1}, 'tf.constant(27.3)', 'tf.Tensor(27.3, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=27.299999237060547>'),
    ({'threshold': 5, 'edgeitems': 1}, 'tf.constant([27.3, 1.0 / 3])', 'tf.Tensor([27.3         0.33333334], shape=(2,), dtype=float32)',
     '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([27.3       ,  0.33333334], dtype=float32)>'),
    ({'threshold': 5, 'edgeitems': 1}, 'tf.constant([1e-8, 1.0, 1000.0])', 'tf.Tensor([1.e-08 1.e+00 1.e+03], shape=(3,), dtype=float32)',
     '<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1.e-08, 1.e+00, 1.e+03], dtype=float32)>'),
    ({'threshold': 5, 'edgeitems': 1}, 'tf.cast(tf.range(30), tf.float32) / 3', 'tf.Tensor([0.       ... 9.666667], shape=(30,), dtype=float32)',
     '<tf.Tensor: shape=(30,), dtype=float32, numpy=array([0.      , ..., 9.666667], shape=(30,), dtype=float32)>'),
    ({'threshold': 5, 'edgeitems': 1}, 'tf.reshape(tf.range(24), (2, 3, 4))', 'tf.Tensor(\n[[[ 0 ...  3]\n  ...\n  [ 8 ... 11]]\n\n [[12 ... 15]\n  ...\n  [20 ... 23]]], shape=(2, 3, 4), dtype=int32)',
     '<tf.Tensor: shape=(2, 3, 4), dtype=int32, numpy=\narray([[[ 0, ...,  3],\n        ...,\n        [ 8, ..., 11]],\n\n       [[12, ..., 15],\n        ...,\n        [20, ..., 23]]], shape=(2, 3, 4), dtype=int32)>'),
    ({'threshold': 5, 'edgeitems': 1}, 'tf.constant([[1.0, 2.0], [3.0, 4.5]])', 'tf.Tensor(\n[[1.  2. ]\n [3.  4.5]], shape=(2, 2), dtype=float32)',
     '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1. , 2. ],\n       [3. , 4.5]], dtype=float32)>'),
    ({'threshold': 5, 'edgeitems': 1}, 'tf.Variable([0.125, 1.0 / 3])', "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.125     , 0.33333334], dtype=float32)>",
     "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.125     , 0.33333334], dtype=float32)>"),
    ({'linewidth': 20}, 'tf.constant(27.3)', 'tf.Tensor(27.3, shape=(), dtype=float32)',
     '<tf.Tensor: shape=(), dtype=float32, numpy=27.299999237060547>'),
    ({'linewidth': 20}, 'tf.constant([27.3, 1.0 / 3])', 'tf.Tensor(\n[27.3\n  0.33333334], shape=(2,), dtype=float32)',
     '<tf.Tensor: shape=(2,), dtype=float32, numpy=\narray([27.3       ,\n        0.33333334],\n      dtype=float32)>'),
    ({'linewidth': 20}, 'tf.constant([1e-8, 1.0, 1000.0])', 'tf.Tensor(\n[1.e-08 1.e+00\n 1.e+03], shape=(3,), dtype=float32)',
     '<tf.Tensor: shape=(3,), dtype=float32, numpy=\narray([1.e-08,\n       1.e+00,\n       1.e+03],\n      dtype=float32)>'),
    ({'linewidth': 20}, 'tf.cast(tf.range(30), tf.float32) / 3', 'tf.Tensor(\n[0.\n 0.33333334\n 0.6666667\n 1.\n 1.3333334\n 1.6666666\n 2.\n 2.3333333\n 2.6666667\n 3.\n 3.3333333\n 3.6666667\n 4.\n 4.3333335\n 4.6666665\n 5.\n 5.3333335\n 5.6666665\n 6.\n 6.3333335\n 6.6666665\n 7.\n 7.3333335\n 7.6666665\n 8.\n 8.333333\n 8.666667\n 9.\n 9.333333\n 9.666667  ], shape=(30,), dtype=float32)',
     '<tf.Tensor: shape=(30,), dtype=float32, numpy=\narray([0.        ,\n       0.33333334,\n       0.6666667 ,\n       1.        ,\n       1.3333334 ,\n       1.6666666 ,\n       2.        ,\n       2.3333333 ,\n       2.6666667 ,\n       3.        ,\n       3.3333333 ,\n       3.6666667 ,\n       4.        ,\n       4.3333335 ,\n       4.6666665 ,\n       5.        ,\n       5.3333335 ,\n       5.6666665 ,\n       6.        ,\n       6.3333335 ,\n       6.6666665 ,\n       7.        ,\n       7.3333335 ,\n       7.6666665 ,\n       8.        ,\n       8.333333  ,\n       8.666667  ,\n       9.        ,\n       9.333333  ,\n       9.666667  ],\n      dtype=float32)>'),
    ({'linewidth': 20}, 'tf.reshape(tf.range(24), (2, 3, 4))', 'tf.Tensor(\n[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]], shape=(2, 3, 4), dtype=int32)',
     '<tf.Tensor: shape=(2, 3, 4), dtype=int32, numpy=\narray([[[ 0,  1,\n          2,  3],\n        [ 4,  5,\n          6,  7],\n        [ 8,  9,\n         10, 11]],\n\n       [[12, 13,\n         14, 15],\n        [16, 17,\n         18, 19],\n        [20, 21,\n         22, 23]]],\n      dtype=int32)>'),
    ({'linewidth': 20}, 'tf.constant([[1.0, 2.0], [3.0, 4.5]])', 'tf.Tensor(\n[[1.  2. ]\n [3.  4.5]], shape=(2, 2), dtype=float32)',
     '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1. , 2. ],\n       [3. , 4.5]],\n      dtype=float32)>'),
    ({'linewidth': 20}, 'tf.Variable([0.125, 1.0 / 3])', "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=\narray([0.125     ,\n       0.33333334],\n      dtype=float32)>",
     "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=\narray([0.125     ,\n       0.33333334],\n      dtype=float32)>"),
]


@pytest.mark.parametrize("expr,want_str,want_repr", EAGER, ids=[c[0] for c in EAGER])
def test_eager_text_is_tf(expr, want_str, want_repr):
    obj = eval(expr)
    assert str(obj) == want_str
    assert repr(obj) == want_repr


@pytest.mark.parametrize("opts,expr,want_str,want_repr", PRINT_OPTIONS,
                         ids=[f"{c[0]}-{c[1]}" for c in PRINT_OPTIONS])
def test_numpy_print_options_are_honoured(opts, expr, want_str, want_repr):
    with np.printoptions(**opts):
        obj = eval(expr)
        assert str(obj) == want_str
        assert repr(obj) == want_repr


def test_set_printoptions_applies_until_reset():
    old = np.get_printoptions()
    try:
        np.set_printoptions(precision=3)
        assert str(tf.constant([27.3, 1.0 / 3])) == "tf.Tensor([27.3    0.333], shape=(2,), dtype=float32)"
        # a scalar prints with NumPy's scalar str, which ignores the precision (as in TF)
        assert str(tf.constant(27.3)) == "tf.Tensor(27.3, shape=(), dtype=float32)"
    finally:
        np.set_printoptions(**old)


def test_format_spec_and_numpy_scalar():
    assert f"{tf.constant(1.23456):.4f}" == "1.2346"
    assert f"{tf.constant(7):5d}" == "    7"
    assert f"{tf.constant(1.5)}" == "1.5"
    assert f"{tf.constant([1.5, 2.0])}" == "[1.5 2. ]"
    assert f"{tf.Variable(0.5)}" == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=0.5>"
    with pytest.raises(TypeError):  # TF 2.21's variables take no format spec
        f"{tf.Variable(0.5):.2f}"
    assert f"{tf.Variable(0.5).read_value():.2f}" == "0.50"
    with pytest.raises(TypeError):  # NumPy's error for a spec on an array (TF's too)
        f"{tf.constant([1.5, 2.0]):.2f}"
    for t, typ in ((tf.constant(1.5), np.float32), (tf.constant(1), np.int32), (tf.Variable(1.5), np.float32),
                   (tf.constant(True), np.bool_)):
        assert type(t.numpy()) is typ
    assert isinstance(tf.constant([1.0]).numpy(), np.ndarray)
    assert np.asarray(tf.Variable(2.0)).shape == ()  # __array__ still gives an array


def test_unread_variable_is_a_view_of_the_variable():
    v = tf.Variable([1.0, 2.0], name="w")
    r = v.assign([3.0, 4.0])
    assert isinstance(r, tf.Variable) and r.name == "UnreadVariable"
    v.assign([5.0, 6.0])  # r reads the variable's current value (TF's UnreadVariable shares the handle)
    assert repr(r) == ("<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, "
                       "numpy=array([5., 6.], dtype=float32)>")
    r.assign_add([1.0, 1.0])  # writes go to the variable
    np.testing.assert_array_equal(v.numpy(), [6.0, 7.0])
    np.testing.assert_array_equal((r * 2).numpy(), [12.0, 14.0])
    assert v.assign([0.0, 0.0], read_value=False) is None


def test_assign_under_a_tape_keeps_gradients_to_the_variable():
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        r = v.assign(3.0)
        y = r * r
    assert float(tape.gradient(y, v)) == 6.0  # TF 2.21 gives 6.0 too


def test_symbolic_tensor_text_is_tf():
    seen = []

    @tf.function
    def f(x, ys, k=None, *args):
        seen.extend([repr(x), str(x), str(ys), str(k), str(args)])
        z = x + 1
        seen.extend([str(z), repr(z), str(x * 2), str(z + 1), str(x.shape), repr(x.shape)])
        return z

    f(tf.constant([1, 2]), [tf.constant(2.0), tf.constant(3.0)], k=tf.constant(4))
    f(tf.constant([1, 2]), (tf.constant(2.0),), tf.constant(4), tf.constant(5))
    # recorded under TF 2.21
    assert seen[:11] == [
        "<tf.Tensor 'x:0' shape=(2,) dtype=int32>",
        'Tensor("x:0", shape=(2,), dtype=int32)',
        "[<tf.Tensor 'ys:0' shape=() dtype=float32>, <tf.Tensor 'ys_1:0' shape=() dtype=float32>]",
        'Tensor("k:0", shape=(), dtype=int32)',
        "()",
        'Tensor("add:0", shape=(2,), dtype=int32)',
        "<tf.Tensor 'add:0' shape=(2,) dtype=int32>",
        'Tensor("mul:0", shape=(2,), dtype=int32)',
        'Tensor("add_1:0", shape=(2,), dtype=int32)',
        "(2,)",
        "TensorShape([2])",
    ]
    assert seen[15] == "(<tf.Tensor 'args_0:0' shape=() dtype=int32>,)"

    @tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.int32)])
    def g(a):
        seen.extend([str(a), str(a.shape), repr(a.shape)])
        return a

    g(tf.constant([1]))
    assert seen[-3:] == ['Tensor("a:0", shape=(None,), dtype=int32)', "(None,)", "TensorShape([None])"]

    @tf.function
    def h(a):
        seen.append(f"a = {a}")
        with pytest.raises(TypeError):
            f"{a:.2f}"
        return a

    h(tf.constant(1.0))
    assert seen[-1] == 'a = Tensor("a:0", shape=(), dtype=float32)'


def test_variable_inside_a_function_prints_without_its_value():
    v = tf.Variable(1.0, name="v")
    seen = []

    @tf.function
    def f():
        seen.append(repr(v))
        return v + 1

    f()
    assert seen == ["<tf.Variable 'v:0' shape=() dtype=float32>"]


def test_unknown_rank_shape():
    s = tf.TensorShape(None)
    assert s.rank is None and s.ndims is None and not s.is_fully_defined()
    assert s.is_compatible_with((2, 3))
    with pytest.raises(ValueError, match="unknown TensorShape"):
        s.as_list()
    assert tf.TensorShape([2, None]).rank == 2 and tf.TensorShape([2, 3]) == (2, 3)
    assert s == tf.TensorShape(None) and s != tf.TensorShape([]) and s != ()
    assert tf.TensorShape([]) == () and tf.TensorShape([2]) != (3,)


def test_keras_weights_are_named_as_keras3():
    # TF 2.21 with Keras 3: name is the short name, path the layer path, and the repr is Keras's
    d = tf.keras.layers.Dense(2, kernel_initializer="ones", name="dense")
    d.build((None, 3))
    assert [v.name for v in d.variables] == ["kernel", "bias"]
    assert [v.path for v in d.variables] == ["dense/kernel", "dense/bias"]
    assert repr(d.kernel) == "<Variable path=dense/kernel, shape=(3, 2), dtype=float32, value=[[1. 1.]\n [1. 1.]\n [1. 1.]]>"
    assert str(d.bias) == "<Variable path=dense/bias, shape=(2,), dtype=float32, value=[0. 0.]>"

    class Scale(tf.keras.layers.Layer):
        def build(self, shape):
            self.s = self.add_weight(shape=(), initializer="ones", name="s")

        def call(self, x):
            return x * self.s

    m = Scale(name="scale")
    m(tf.ones((1,)))
    assert repr(m.s) == "<Variable path=scale/s, shape=(), dtype=float32, value=1.0>"
