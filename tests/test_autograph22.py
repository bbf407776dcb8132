"""AutoGraph's liveness rule for block variables, and tf.data iterators pulled inside tapeflow.function
(wave 22: TF's input tutorial, cell 9). Expected values and error classes are TF 2.21's (noted)."""
from __future__ import annotations

import pytest

import tapeflow as tf
from tapeflow import errors


# -- TF's rule: a block carries only the names live into it or after it ---------------------------------------
def loop_local_obj(n):
    s = tf.constant(0)
    for i in tf.range(n):
        box = [i, i * 2]          # a Python list each iteration makes and uses: not a loop variable
        s += box[1]
    return s


def loop_obj_used_after(n):
    s = tf.constant(0)
    for i in tf.range(n):
        box = [i, i * 2]          # read after the loop: carried, starting as zeros of its structure
        s += box[1]
    return s + box[0]


def loop_read_before_assign(n):
    s = tf.constant(0)
    for i in tf.range(n):
        if i > 0:
            s += t                # the previous iteration's t: a loop variable, undefined before the loop
        t = i
    return s


def if_one_branch_local(x):
    if x > 0:
        y = x * 2                 # only this branch, only read in it: not the if's output
        z = y + 1
    else:
        z = x
    return z


def if_one_branch_used_after(x):
    if x > 0:
        y = x * 2
    return y


def while_local(n):
    i = tf.constant(0)
    acc = tf.constant(0)
    while i < n:
        d = {"v": i}              # a dict: iteration-local
        acc += d["v"]
        i += 1
    return acc


def loop_tensor_used_after(n):
    for i in tf.range(n):
        last = i * 3
    return last


def loop_local_optional(ds_iter):
    count = tf.constant(0, tf.int64)
    for _ in tf.range(10):
        opt = ds_iter.get_next_as_optional()   # an Optional: no loop could carry it, and none needs to
        if not opt.has_value():
            break
        got = opt.get_value()
        count += tf.reduce_sum(got)
    return count


@pytest.mark.parametrize("fn,arg,want", [
    (loop_local_obj, 4, 12), (loop_obj_used_after, 4, 15), (if_one_branch_local, 3, 7),
    (if_one_branch_local, -3, -3), (while_local, 5, 10), (loop_tensor_used_after, 4, 9),
])   # TF 2.21: 12, 15, 7, -3, 10, 9
def test_block_variables_as_tf(fn, arg, want):
    assert int(fn(tf.constant(arg))) == want                      # eager: Python's semantics
    assert int(tf.function(fn)(tf.constant(arg))) == want         # compiled: TF's AutoGraph rule


@pytest.mark.parametrize("fn,needle", [
    (loop_read_before_assign, "'t' must be defined before"),            # TF 2.21: "'t' must be defined before the loop"
    (if_one_branch_used_after, "'y' is assigned in only one branch"),   # TF 2.21: "'y' must also be initialized in the else branch"
])
def test_block_variables_errors_stay_where_tf_raises(fn, needle):
    with pytest.raises(ValueError, match=needle):                       # TF 2.21: ValueError
        tf.function(fn)(tf.constant(3))


def test_loop_local_optional_from_an_iterator():
    ds = tf.data.Dataset.range(9).batch(4)
    assert int(loop_local_optional(iter(ds))) == 36
    f = tf.function(loop_local_optional)
    assert int(f(iter(ds))) == 36
    it = iter(ds)
    next(it)
    assert int(f(it)) == 36 - 6                                         # the rest of the batches, pulled at run time


# -- iterators made outside a compiled function, pulled inside it -----------------------------------------
def test_next_inside_function_pulls_on_every_call():
    # the function guide's good_consume_next: TF 2.21 prints 1, 2, 3 and then raises OutOfRangeError
    @tf.function
    def consume(iterator):
        return next(iterator)
    iterator = iter(tf.data.Dataset.from_tensor_slices([1, 2, 3]))
    assert [int(consume(iterator)) for _ in range(3)] == [1, 2, 3]
    assert consume.experimental_get_tracing_count() == 1
    with pytest.raises(errors.OutOfRangeError, match="End of sequence"):
        consume(iterator)


def test_get_next_as_optional_inside_function():
    @tf.function
    def pull(it):
        o = it.get_next_as_optional()
        return o.has_value(), o.get_value()
    it = iter(tf.data.Dataset.range(5).batch(2))
    got = [pull(it) for _ in range(4)]
    assert [bool(h) for h, _ in got] == [True, True, True, False]
    assert [v.numpy().tolist() for _, v in got[:3]] == [[0, 1], [2, 3], [4]]   # TF 2.21: the last batch short
    assert got[3][1].shape == (0,)


def test_iterator_made_inside_the_function_starts_each_call():
    ds = tf.data.Dataset.from_tensor_slices([5, 6])

    @tf.function
    def first():
        return next(iter(ds))
    assert [int(first()), int(first())] == [5, 5]


def test_for_loop_over_outside_iterator_inside_function_is_refused():
    @tf.function
    def loop(it):
        s = tf.constant(0)
        for x in it:
            s += x
        return s
    with pytest.raises(NotImplementedError, match="for` loop over a tf.data iterator made outside"):
        loop(iter(tf.data.Dataset.from_tensor_slices([1, 2])))


def test_distributed_iterator_pulls_inside_function():
    # TF's input tutorial, cell 9, over two replicas (TF 2.21 prints ([0 1], [2 3]), ([4 5], [6 7]), ([8], []))
    strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
    dataset = tf.data.Dataset.range(9).batch(4)
    seen = []

    @tf.function
    def train_fn(distributed_iterator):
        for _ in tf.range(5):
            optional_data = distributed_iterator.get_next_as_optional()
            if not optional_data.has_value():
                break
            per_replica_results = strategy.run(lambda x: x, args=(optional_data.get_value(),))
            tf.numpy_function(lambda a, b: seen.append((a.tolist(), b.tolist())) or 0,
                              list(strategy.experimental_local_results(per_replica_results)), tf.int64)
    train_fn(iter(strategy.experimental_distribute_dataset(dataset)))
    assert seen == [([0, 1], [2, 3]), ([4, 5], [6, 7]), ([8], [])]

    @tf.function
    def g(it):
        return next(it)
    it = iter(strategy.experimental_distribute_dataset(dataset))
    assert [[v.numpy().tolist() for v in g(it).values] for _ in range(3)] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]],
                                                                            [[8], []]]
