"""Checkpoints written by both TF 2.21 and tapeflow, then read back as TF's readers show them:
`make_checkpoint_inspection_reference.py` runs them under TF (peers venv) into
tests/data/checkpoint_inspection_tf.json; tests/test_checkpoint_inspection.py runs them under
tapeflow and compares. Each takes the framework module as ``tf`` and a directory, writes one
checkpoint and returns its path. ``order_names(n)``: the dict keys of the reader-order cases.
"""
from __future__ import annotations

import hashlib

import numpy as np


def guide_cell2(tf, d):
    # migrating_checkpoints.ipynb cell 2: a name_scope'd variable's name is in the object graph
    a = tf.Variable(5.0, name='a')
    b = tf.Variable(6.0, name='b')
    with tf.name_scope('scoped'):
        c = tf.Variable(7.0, name='c')
    return tf.train.Checkpoint(variables=[a, b, c]).save(d + '/tf2-ckpt')


def guide_cell4(tf, d):
    # migrating_checkpoints.ipynb cell 4: keyword children sorted (c, module, v), then save_counter
    a, b, c = tf.Variable(0.), tf.Variable(0.), tf.Variable(0.)
    module = tf.Module()
    module.d = tf.Variable(0.)
    ck = tf.train.Checkpoint(v={'a': a, 'b': b}, c=c, module=module)
    return ck.save(d + '/root-tf2-ckpt')


def late_attributes(tf, d):
    # children in the order they were tracked: the sorted keywords, a later attribute, the
    # save counter (created by the first save), an attribute set after it
    ck = tf.train.Checkpoint(z=tf.Variable(1.), a=tf.Variable(2.))
    ck.m = tf.Variable(3.)
    ck.save(d + '/late')
    ck.b = tf.Variable([4., 5.], name='bee')
    return ck.save(d + '/late')


def written(tf, d):
    # write(): no save counter; dtypes and shapes of several kinds
    ck = tf.train.Checkpoint(f=tf.Variable(np.zeros((2, 3), np.float64)), i=tf.Variable(np.int32(7)),
                             h=tf.Variable(np.ones(4, np.float16), name='half'), b=tf.Variable(True))
    return ck.write(d + '/written')


def nested(tf, d):
    # a deeper graph, breadth first: net's attributes (assigned in sorted order), a list
    # holding a module and a dict
    net = tf.Module()
    net.sub = [tf.Module(), {'k': tf.Variable(1, name='k')}]
    net.sub[0].x = tf.Variable(np.zeros((2, 3), np.float32))
    net.w = tf.Variable([[1., 2.]], name='w')
    return tf.train.Checkpoint(net=net, step=tf.Variable(0, dtype=tf.int64)).save(d + '/nested')


def mutable_table(tf, d):
    # a MutableHashTable saves keys and values; its object graph attribute is 'table'
    m = tf.Module()
    m.t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    m.t.insert(tf.constant(['p', 'q']), tf.constant([1, 2], tf.int64))
    m.v = tf.Variable(1.0)
    return tf.train.Checkpoint(m=m).save(d + '/tab')


def aliased(tf, d):
    # one variable under two of the checkpoint's attributes: one node, two references to it
    v = tf.Variable(2.0, name='shared')
    return tf.train.Checkpoint(listed=[v, tf.Variable(1.0)], mapped={'one': v}).write(d + '/aliased')


PROGRAMS = {f.__name__: f for f in (guide_cell2, guide_cell4, late_attributes, written, nested, mutable_table,
                                    aliased)}

#: sizes of the reader-order cases: around libstdc++'s bucket counts (13, 29, 59, 127, ...)
ORDER_SIZES = [1, 2, 3, 4, 10, 11, 12, 13, 27, 28, 29, 58, 59, 60, 126, 127, 200, 1000, 3000]


def order_names(n):
    """n distinct dict keys of varied lengths (1 to 13 hex digits: keys cross 8-byte words)."""
    out, i = [], 0
    seen = set()
    while len(out) < n:
        s = hashlib.md5(str(i).encode()).hexdigest()[:1 + i % 13]
        i += 1
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def order_case(tf, d, n):
    ck = tf.train.Checkpoint(v={s: tf.Variable(0.0) for s in order_names(n)})
    return ck.write(f'{d}/order{n}')
