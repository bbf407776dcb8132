"""Runtime of converted code: what ``ag__.if_stmt``/``while_stmt``/``for_stmt``
do with the functions the converter made.

Each statement decides when it runs, from its condition or iterable: a
symbolic tensor (inside ``tapeflow.function``) makes it a ``cond`` or
``while_loop``; anything else runs as the Python statement it was (TF's
AutoGraph rule: Python values keep Python semantics). State flows through
arguments and return values: a converted block takes the current values of the
names it assigns and returns their new values.
"""
from __future__ import annotations

import numpy as np

from ..core.state import STATE
from ..core.tensor import Tensor, convert_to_tensor
from ..ir import control_flow as _cf
from ..ir.tracer import Tracer


class Undefined:
    """The value of a name not yet assigned when a converted block starts."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"

    def _fail(self, *a, **k):
        raise UnboundLocalError(f"local variable '{self.name}' is used before it is assigned "
                                "(in code converted by tapeflow's AutoGraph)")

    __bool__ = __call__ = __getattr__ = __iter__ = __len__ = __float__ = __int__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __getitem__ = _fail


def _symbolic(x):
    return isinstance(x, Tracer)


def _undefined(v):
    return v.__class__ is Undefined


def _check_defined(names, values, what):
    for n, v in zip(names, values):
        if _undefined(v) and n == "retval__":
            raise ValueError(f"`return` inside {what} needs a value it can carry through the loop: store the "
                             "result in a variable defined before the loop, `break`, and return it after the "
                             "loop (TF's AutoGraph has the same rule)")
        if _undefined(v):
            raise ValueError(f"'{n}' must be defined before {what} (its value depends on a tensor condition, "
                             "so tapeflow needs a value on every path); assign it before the statement")


def _fill_undefined(names, state, one_iteration, element_aval=None):
    """TF's AutoGraph rule for a name a tensor loop's body assigns but nothing assigned before
    the loop (an inner loop's index, a temporary, a value used after the loop): one iteration
    is traced in a throwaway sub-trace to learn its shape and dtype, and the loop starts it
    at zeros of those (its value is always assigned before it is read, or the staging
    raised). ``one_iteration(element, *state)`` runs the body; ``element_aval`` is the
    loop element's (None: a while loop, no element). The state as given where nothing is
    undefined or the staging fails (the caller's check then names the variable)."""
    from ..ops.tensor_array import _LazyTensorArray, _TensorArray
    # (a fixed-size TensorArray made in the function, its element shape not given: its buffer's
    # shape comes from its first write, which the staged iteration makes, TF's `ta.write(i, x)` loop)
    todo = [i for i, (n, v) in enumerate(zip(names, state))
            if (_undefined(v) and n != "retval__") or isinstance(v, _LazyTensorArray)]
    if not todo:
        return state
    from ..core.primitive import aval_of
    from ..ir.tracer import Trace
    from ..util import nest
    sub = Trace(parent=STATE.trace, kind="loop")
    try:
        with sub:
            staged = [v if _undefined(v) else nest.map_structure(
                lambda x: sub.new_input(aval_of(x)) if isinstance(x, Tensor) else x, v) for v in state]
            el = () if element_aval is None else (sub.new_input(element_aval),)
            out = one_iteration(*el, *staged)
    except Exception:  # noqa: BLE001 (a read before the assignment: the caller's error says so)
        return state
    state = list(state)
    for i in todo:
        o = out[i]
        if isinstance(state[i], _LazyTensorArray):
            if isinstance(o, _TensorArray) and None not in o.buffer.shape:
                state[i] = _TensorArray(convert_to_tensor(np.zeros(o.buffer.shape, o.buffer.dtype.np)))
            continue
        # TF's _placeholder_value: zeros of a tensor's (or a number's) shape and dtype, and the same
        # structure of them for a list, tuple or dict (a loop's `box = [i, 2 * i]` read after it)
        leaves = nest.flatten(o) if isinstance(o, (list, tuple, dict)) else [o]
        if leaves and all(isinstance(x, (Tensor, int, float, bool)) and not _undefined(x) for x in leaves):
            avs = [aval_of(x) for x in leaves]
            if all(av.shape is not None and None not in av.shape for av in avs):
                zeros = [convert_to_tensor(np.zeros(av.shape, av.dtype)) for av in avs]
                state[i] = nest.pack_sequence_as(o, zeros) if isinstance(o, (list, tuple, dict)) else zeros[0]
    return tuple(state)


#: one entry per AutoGraph tensor loop being traced: the loop values its body got, and the options
#: ``set_loop_options`` gave inside it
_LOOP_OPTIONS = []


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None, shape_invariants=None):
    """TF's ``tf.autograph.experimental.set_loop_options``, called inside a loop's body: ``shape_invariants``
    ([(loop variable, shape)], a None dimension free to change between iterations) and
    ``maximum_iterations`` apply to the tensor loop it is in; parallel_iterations and swap_memory change
    nothing here (as in TF2 eager-style code). Outside a tensor loop it does nothing."""
    if _LOOP_OPTIONS:
        opts = _LOOP_OPTIONS[-1]["opts"]
        if shape_invariants is not None:
            opts["shape_invariants"] = list(shape_invariants)
        if maximum_iterations is not None:
            opts["maximum_iterations"] = maximum_iterations


def _loop(test, step, lv):
    """A tensor loop for ``for``/``while``: ``_cf.while_loop`` over the loop values ``lv``, with the shape
    invariants of a growing TensorArray, and the options ``set_loop_options`` gave in the body. Those are
    known only once the body was traced, so a loop that set any is traced again with them (TF's converter
    reads them from the source instead)."""
    from ..util import nest
    frame = {"args": None, "opts": {}}

    def body(*s):
        frame["args"] = s
        return step(*s)

    def run(invariants=None, maximum_iterations=None):
        _LOOP_OPTIONS.append(frame)
        try:
            return _cf.while_loop(test, body, lv, shape_invariants=invariants, maximum_iterations=maximum_iterations)
        finally:
            _LOOP_OPTIONS.pop()

    base = _growing_invariants(lv)
    try:
        out, err = run(base), None
    except ValueError as e:   # (a loop value that changes shape: the options may allow it)
        out, err = None, e
    opts = frame["opts"]
    if not opts:
        if err is not None:
            raise err
        return out
    flat_inv = list(nest.flatten_up_to(lv, base)) if base is not None else [None] * len(nest.flatten(lv))
    leaves = nest.flatten(list(frame["args"] or ()))
    for var, shape in opts.get("shape_invariants", ()):
        k = next((j for j, t in enumerate(leaves) if t is var), None)
        if k is None:
            raise ValueError("set_loop_options: a shape_invariants entry names a value that is not one of the "
                             "loop's variables (give the variable the loop updates, as it is in the body)")
        flat_inv[k] = shape
    invariants = None if all(v is None for v in flat_inv) else nest.pack_sequence_as(lv, flat_inv)
    return run(invariants, opts.get("maximum_iterations"))


def _growing_invariants(loop_vars):
    """TF's shape invariants for a loop carrying a TensorArray with dynamic_size=True (its buffer grows by a
    row per write past its end: its first dimension may change), else None."""
    from ..ops.tensor_array import _DynamicTensorArray
    from ..core.tensor import TensorShape
    from ..util import nest
    if not any(isinstance(v, _DynamicTensorArray) for v in loop_vars):
        return None
    return [_DynamicTensorArray(TensorShape((None,) + tuple(v.buffer.shape[1:]))) if isinstance(v, _DynamicTensorArray)
            else nest.map_structure(lambda _: None, v) for v in loop_vars]


def _tensors(values):
    # Python numbers carried through tensor control flow become tensors (as TF);
    # structures (a TensorArray is a namedtuple of its buffer) stay structures
    from ..ops.tensor_array import _GrowingTensorArray
    for v in values:
        if isinstance(v, _GrowingTensorArray):
            raise TypeError("a TensorArray with dynamic_size=True (or no element_shape) is carried through a loop "
                            "on a tensor inside tapeflow.function: tapeflow's graphs have static shapes, so give "
                            "it a fixed size known when tracing and an element_shape (TensorArray(dtype, size=n, "
                            "element_shape=[...]))")
    return tuple(v if isinstance(v, (Tensor, tuple, list, dict)) or hasattr(type(v), "_tf_from_components")
                 else convert_to_tensor(v) for v in values)   # (a composite: control flow takes it apart)


def not_(x):
    if _symbolic(x):
        from ..ops import math_ops
        return math_ops.logical_not(x)
    return not x


def and_(a, b_fn):
    """``a and b`` keeping Python's short circuit for Python values."""
    if _symbolic(a):
        from ..ops import math_ops
        return math_ops.logical_and(a, b_fn())
    return a and b_fn()


def or_(a, b_fn):
    if _symbolic(a):
        from ..ops import math_ops
        return math_ops.logical_or(a, b_fn())
    return a or b_fn()


def retval(v):
    """A function that ran off its end returns None."""
    return None if _undefined(v) else v


def if_stmt(cond, body, orelse, state, names):
    """``if cond: body else: orelse`` over the state ``names``."""
    if not _symbolic(cond):
        return body(*state) if cond else orelse(*state)
    seen = {}

    def branch(fn, key):
        def run():
            out = fn(*state)
            seen[key] = [i for i, v in enumerate(out) if _undefined(v)]
            return tuple(v for v in out if not _undefined(v))
        return run

    try:
        out = _cf.cond(cond, branch(body, "if"), branch(orelse, "else"))
    except ValueError:
        if seen.get("if") is not None and seen.get("else") is not None and seen["if"] != seen["else"]:
            only = sorted({names[i] for i in set(seen["if"]) ^ set(seen["else"])})
            raise ValueError(f"'{only[0]}' is assigned in only one branch of an `if` on a tensor; tapeflow needs "
                             "it on both paths: assign it before the `if` or in both branches") from None
        raise
    out = iter(out)
    return tuple(state[i] if i in seen["if"] else next(out) for i in range(len(state)))


def if_exp(cond, true_fn, false_fn):
    """``true_fn() if cond else false_fn()``: a cond when cond is symbolic."""
    if not _symbolic(cond):
        return true_fn() if cond else false_fn()
    return _cf.cond(cond, true_fn, false_fn)


def while_stmt(test, body, state, names, extra_test=None):
    """``while test: body`` over the state ``names``; ``extra_test`` is the
    converter's break/return flag check."""
    def full_test(*s):
        t = test(*s)
        if extra_test is None:
            return t
        return and_(extra_test(*s), lambda: t) if not _symbolic(t) else _and_tensor(t, extra_test(*s))

    first = full_test(*state)
    if not _symbolic(first):
        while first:
            state = body(*state)
            first = full_test(*state)
            if _symbolic(first):
                raise ValueError("a `while` loop whose condition became a tensor after the first iteration: "
                                 "make it a tensor from the start (tapeflow.constant)")
        return state
    state = _fill_undefined(names, state, body)
    _check_defined(names, state, "a `while` loop on a tensor condition")
    lv = list(_tensors(state))
    out = _loop(lambda *s: full_test(*s), lambda *s: _tensors(body(*s)), lv)
    return tuple(out)


def _and_tensor(a, b):
    from ..ops import math_ops
    return math_ops.logical_and(a, b) if _symbolic(b) or isinstance(b, Tensor) else (a if b else b)


class RangeSpec:
    """``range``/``tf.range`` with symbolic bounds, kept lazy so the loop can
    count in a ``while_loop`` instead of materialising the range."""

    __slots__ = ("start", "limit", "delta")

    def __init__(self, start, limit, delta):
        self.start, self.limit, self.delta = start, limit, delta


def _py_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def range_(fn, *args, **kwargs):
    """``fn(*args)`` (Python's range or tapeflow.range) unless a bound is
    symbolic, or the range is ``tapeflow.range`` of Python ints while tracing
    (TF's AutoGraph makes that a loop too, not one copy of the body per
    element): then a RangeSpec for ``for_stmt``."""
    from ..ops.array_ops import range as tf_range, _scalar_int
    if fn is tf_range and STATE.trace is not None:
        # a bound known while tracing (tf.shape(x)[0] of a known shape is folded to a value) counts
        # as the number it is: the loop is a counted loop, not one copy of the body per element
        args = tuple(_scalar_int(a) for a in args)
    tf_ints = fn is tf_range and STATE.trace is not None and args and all(_py_int(a) for a in args)
    if not tf_ints and not any(_symbolic(a) for a in args):
        return fn(*args, **kwargs)
    if len(args) == 1:
        start, limit, delta = 0, args[0], 1
    else:
        start, limit, delta = (tuple(args) + (1,))[:3]
    return RangeSpec(start, limit, delta)


def _shape_of(x):
    from ..ops.array_ops import shape
    return shape(x)


def for_stmt(iterable, body, state, names, extra_test=None, target=None):
    """``for target in iterable: body``; ``body(element, *state)`` returns the new state.
    ``target`` is the loop variable's name when it is a plain name (it is in ``names``)."""
    from ..ops import math_ops as M
    if isinstance(iterable, RangeSpec) and extra_test is None and \
            all(_py_int(b) for b in (iterable.start, iterable.limit, iterable.delta)):
        return _counted_for(iterable, body, state, names, target)
    if isinstance(iterable, RangeSpec):
        start, limit, delta = iterable.start, iterable.limit, iterable.delta
    elif _symbolic(iterable):
        n = iterable.shape[0]
        seq = iterable
        # (a length an input_signature leaves None: the loop runs to the length it has when it runs)
        start, limit, delta = 0, int(n) if n is not None else _shape_of(seq)[0], 1
    else:
        for el in iterable:
            if extra_test is not None:
                go = extra_test(*state)
                if _symbolic(go):
                    raise ValueError("`break`/`return` on a tensor condition inside a loop over a Python "
                                     "iterable: loop over tapeflow.range(n) instead, so the loop is a tensor loop")
                if not go:
                    break
            state = body(el, *state)
        return state

    idx_dtype = np.int32
    for b in (start, limit, delta):
        if isinstance(b, Tensor):
            idx_dtype = b.dtype.np if hasattr(b.dtype, "np") else b.dtype
    i0 = convert_to_tensor(np.asarray(start, idx_dtype)) if not isinstance(start, Tensor) else start
    if target is not None and _undefined(state[names.index(target)]):
        # the loop variable is a loop-carried value too (Python leaves its last value
        # bound after the loop): it starts as the first element's shape and dtype
        from ..ops import array_ops as A
        first = i0 if isinstance(iterable, RangeSpec) else (
            seq[0] if isinstance(limit, int) and start < limit else   # (an unknown length may be 0: zeros)
            A.zeros(A._sizes_of(seq)[1:], seq.dtype) if not isinstance(limit, int) else None)
        if first is not None:
            state = tuple(first if n == target else v for n, v in zip(names, state))
    from ..core.primitive import aval_of
    from ..core.aval import Aval
    el_aval = aval_of(i0) if isinstance(iterable, RangeSpec) else \
        Aval(aval_of(seq).shape[1:], aval_of(seq).dtype) if not isinstance(limit, int) or start < limit else None
    if el_aval is not None:
        state = _fill_undefined(names, state, body, el_aval)
    _check_defined(names, state, "a `for` loop over a tensor")
    positive = not (isinstance(delta, (int, float)) and delta < 0)

    def test(i, *s):
        go = M.less(i, limit) if positive else M.greater(i, limit)
        if extra_test is not None:
            go = _and_tensor(go, extra_test(*s))
        return go

    def step(i, *s):
        el = i if isinstance(iterable, RangeSpec) else seq[i]
        new = _tensors(body(el, *s))
        return (M.add(i, M.cast(delta, i.dtype) if isinstance(delta, Tensor) else delta),) + new

    lv = [i0] + list(_tensors(state))
    out = _loop(test, step, lv)
    return tuple(out[1:])


def _counted_for(rng, body, state, names, target):
    """``for i in tf.range(<Python ints>)`` with no break: a loop with a fixed trip
    count (a scan, as fori_loop with Python-int bounds: differentiable, and one
    native loop), the index an int32 tensor as TF's."""
    from ..ops import math_ops as M
    start, limit, delta = int(rng.start), int(rng.limit), int(rng.delta)
    n = len(range(start, limit, delta))  # delta 0: Python's ValueError, as tf.range raises
    if target is not None and _undefined(state[names.index(target)]):
        # the loop variable is carried too (Python leaves its last value bound)
        state = tuple(convert_to_tensor(np.int32(start)) if nm == target else v for nm, v in zip(names, state))
    from ..core.primitive import aval_of
    state = _fill_undefined(names, state, body, aval_of(convert_to_tensor(np.int32(start))))
    _check_defined(names, state, "a `for` loop over tapeflow.range")

    def step(k, s):
        el = M.add(M.multiply(k, delta), start) if delta != 1 else k
        return _tensors(body(el, *s))

    lo, hi = (start, limit) if delta == 1 else (0, n)
    return tuple(_cf.fori_loop(lo, hi, step, _tensors(state)))
