"""tf.map_fn, tf.scan, tf.foldl/foldr, tf.switch_case and tf.case: compositions of ``scan``
and ``cond`` (tapeflow/ir/control_flow.py; JAX's carry-and-output scan, also ``tapeflow.lax.scan``).

map_fn is a scan with no carry: eagerly a Python loop whose results are stacked; in a
``tapeflow.function`` one ``scan`` equation (one compiled loop, not an unrolled body,
so a long leading dim costs one trace of ``fn``), differentiable through every
iteration. switch_case and case are chains of ``cond``: eagerly only the chosen branch
runs; traced, every branch is traced and one runs per call."""
from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import fmt_shape
from ..core.primitive import bind, aval_of, CompositeTensor
from ..core.primitives import assert_op as AS
from ..core.state import STATE
from ..core.tensor import Tensor, TensorShape, convert_to_tensor
from ..errors import InvalidArgumentError
from ..ir import control_flow as CF
from ..util import nest
from . import array_ops as A
from . import math_ops as M


# -- map_fn ------------------------------------------------------------------------------------

def _spec_dtype(spec):
    """The dtype a fn_output_signature leaf names (a DType, a NumPy dtype, or a TensorSpec)."""
    d = getattr(spec, "dtype", spec)
    return _dt.np_dtype(d)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """fn applied to each slice of ``elems`` (a tensor or a nested structure of tensors,
    sliced along axis 0 together); the results stacked. Without fn_output_signature
    the results must have elems' structure and dtypes, as in TF."""
    if fn_output_signature is None:
        fn_output_signature = dtype
    if isinstance(elems, CompositeTensor) and hasattr(type(elems), "_tf_fields"):   # a BatchableExtensionType
        from ..extension_type import map_rows
        return map_rows(fn, elems)
    if isinstance(elems, CompositeTensor):   # a RaggedTensor: fn on each row (TF's ragged map_fn)
        from ..ragged.ops import map_fn as _ragged_map_fn
        return _ragged_map_fn(fn, elems, fn_output_signature)
    leaves = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in nest.flatten(elems)]
    if not leaves:
        raise ValueError("map_fn: elems must hold at least one tensor")
    for x in leaves:
        if not aval_of(x).shape:
            raise ValueError(f"map_fn: elements in elems must be 1+ dimensional tensors, not scalars (got "
                             f"{aval_of(x).dtype.name} {fmt_shape(aval_of(x).shape)})")
    n = aval_of(leaves[0]).shape[0]
    for x in leaves[1:]:
        m = aval_of(x).shape[0]
        if n is not None and m is not None and m != n:
            raise ValueError(f"map_fn: the tensors in elems must have the same first dimension: {n} and {m}")
    if fn_output_signature is None:
        sig = nest.pack_sequence_as(elems, [aval_of(x).dtype for x in leaves])
    else:
        sig = fn_output_signature
    packed = nest.pack_sequence_as(elems, leaves)

    def body(carry, x):
        out = fn(x)
        if not _is_leaf(sig) and _shape_of(sig) != _shape_of(out):
            raise ValueError(f"map_fn: fn returned {_structure_text(out)}, but the output signature is "
                             f"{_structure_text(sig)}; the two structures must match (without "
                             "fn_output_signature, fn must return elems' structure)")
        if _is_leaf(sig):
            if not _is_single(out):
                raise ValueError(f"map_fn: fn returned {_structure_text(out)}, but the output signature is one "
                                 "tensor; give fn_output_signature with fn's structure")
            outs, sigs = [out], [sig]
        else:
            outs, sigs = nest.flatten(out), nest.flatten(sig)
        conv = []
        for o, s in zip(outs, sigs):
            want = _spec_dtype(s)
            if not isinstance(o, Tensor):
                o = convert_to_tensor(np.asarray(o, want))
            elif aval_of(o).dtype != want:
                raise InvalidArgumentError(f"map_fn: fn returned {aval_of(o).dtype.name}, but the output signature "
                                           f"says {want.name}; give fn_output_signature={aval_of(o).dtype.name} "
                                           "(without it the output dtype is elems' dtype)")
            conv.append(o)
        return carry, conv

    if n == 0:
        # no iteration to learn fn's output shapes from: (0,) of each signature dtype, as TF
        outs = [A.zeros((0,), _spec_dtype(s)) for s in ([sig] if _is_leaf(sig) else nest.flatten(sig))]
    else:
        _, outs = CF.scan(body, (), packed)
    return outs[0] if _is_leaf(sig) else nest.pack_sequence_as(sig, list(outs))


def _shape_of(s):
    """A structure's nesting, lists and tuples alike (TF's map_fn accepts either for the other)."""
    if isinstance(s, dict):
        return ("dict", tuple((k, _shape_of(s[k])) for k in sorted(s, key=str)))
    return tuple(_shape_of(v) for v in s) if isinstance(s, (list, tuple)) else None


def _is_leaf(sig):
    return not isinstance(sig, (list, tuple, dict))


def _is_single(out):
    return not isinstance(out, (list, tuple, dict))


def _structure_text(s):
    if isinstance(s, dict):
        return "a dict with keys " + str(sorted(s))
    if isinstance(s, (list, tuple)):
        return f"a {type(s).__name__} of {len(s)}"
    return "one value"


# -- switch_case / case -------------------------------------------------------------------------

def _branch_list(branch_fns):
    if isinstance(branch_fns, dict):
        keys = sorted(branch_fns)
        if keys != list(range(len(keys))):
            raise ValueError(f"switch_case: branch indices (keys) must form the contiguous range [0, {len(keys)}), "
                             f"got {keys}")
        fns = [branch_fns[k] for k in keys]
    else:
        fns = [f[1] if isinstance(f, tuple) else f for f in branch_fns]
    if not fns:
        raise ValueError("switch_case: give at least one branch in branch_fns")
    for f in fns:
        if not callable(f):
            raise TypeError(f"switch_case: every branch must be callable, got {type(f).__name__}")
    return fns


def switch_case(branch_index, branch_fns, default=None, name=None):
    """``branch_fns[branch_index]()``; an index out of [0, len) runs ``default``, or the
    last branch when there is none (TF's rule)."""
    fns = _branch_list(branch_fns)
    if not isinstance(branch_index, Tensor):
        raise TypeError(f"switch_case: 'branch_index' must be a Tensor, got {type(branch_index).__name__}; "
                        "wrap it: tapeflow.constant(i)")
    a = aval_of(branch_index)
    if a.dtype.kind not in "iu":
        raise TypeError(f"switch_case: 'branch_index' must be an integer tensor, got {a.dtype.name}")
    if a.shape != ():
        raise InvalidArgumentError(f"switch_case: 'branch_index' must be a scalar, got shape {fmt_shape(a.shape)}")
    if default is None:
        fns, default = fns[:-1], fns[-1]
    if branch_index._v is not None:   # eager (or a constant): run the one branch
        i = int(branch_index._v)
        return fns[i]() if 0 <= i < len(fns) else default()

    def chain(k):
        if k == len(fns):
            return default()
        return CF.cond(M.equal(branch_index, np.asarray(k, a.dtype)), fns[k], lambda: chain(k + 1))
    return chain(0)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name=None):
    """The fn of the first pred that holds (``exclusive``: at most one may hold); none
    holding runs ``default``, and raises InvalidArgumentError without one."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not pairs:
        if default is None:
            raise ValueError("case: give at least one (pred, fn) pair or a default")
        return default()
    preds = []
    for p, f in pairs:
        if not isinstance(p, Tensor):
            raise TypeError(f"case: pred must be a Tensor, got {p!r}")
        if aval_of(p).dtype != np.bool_ or aval_of(p).shape not in ((), (1,)):
            raise TypeError(f"case: pred must be a scalar bool tensor, got {aval_of(p).dtype.name} "
                            f"{fmt_shape(aval_of(p).shape)}")
        if not callable(f):
            raise TypeError(f"case: fn must be callable, got {type(f).__name__}")
        preds.append(A.reshape(p, ()))
    fns = [f for _, f in pairs]
    stacked = A.stack(preds) if len(preds) > 1 else A.reshape(preds[0], (1,))
    if exclusive:
        bind(AS.assert_p, M.less_equal(M.reduce_sum(M.cast(stacked, np.int32)), 1), stacked, summarize=len(preds),
             template=("case: exclusive=True: more than 1 conditions evaluated as True: ", None))
    if default is None:
        bind(AS.assert_p, M.reduce_any(stacked), stacked, summarize=len(preds),
             template=("case: none of the conditions evaluated as True: ", None))
        default = fns[-1]
        preds, fns = preds[:-1], fns[:-1]
    if all(p._v is not None for p in preds):   # eager: run the one branch
        for p, f in zip(preds, fns):
            if bool(p._v):
                return f()
        return default()

    def chain(k):
        if k == len(fns):
            return default()
        return CF.cond(preds[k], fns[k], lambda: chain(k + 1))
    return chain(0)


# -- tf.scan, tf.foldl, tf.foldr -------------------------------------------------------------------

def _scan_elems(elems, what):
    leaves = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in nest.flatten(elems)]
    if not leaves:
        raise ValueError(f"{what}: elems must hold at least one tensor")
    for x in leaves:
        if not aval_of(x).shape:
            raise ValueError(f"{what}: elements in elems must be 1+ dimensional tensors, not scalars (got "
                             f"{aval_of(x).dtype.name} {fmt_shape(aval_of(x).shape)})")
    # (None: an input_signature's None, the loop's trip count known when it runs)
    return nest.pack_sequence_as(elems, leaves), aval_of(leaves[0]).shape[0]


def _no_rows(t):
    """A stack of no ``t``s: (0,) + t's shape, t's dtype (a loop that ran no step)."""
    a = aval_of(t if isinstance(t, Tensor) else convert_to_tensor(t))
    return A.zeros((0,) + tuple(a.shape), a.dtype)


def _split_first(elems, reverse):
    """(the first element to use as the initial value, the rest) along axis 0."""
    first = nest.map_structure(lambda x: x[-1] if reverse else x[0], elems)
    rest = nest.map_structure(lambda x: x[:-1] if reverse else x[1:], elems)
    return first, rest


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """TF's tf.scan: ``fn(accumulated, element) -> accumulated`` over ``elems`` along axis 0, the
    accumulated values stacked (one per element). Without ``initializer`` the first element
    (the last with ``reverse``) starts the accumulation and is the first output. With
    ``reverse`` the elements are taken from the end and each output stays at its element's
    position. One ``scan`` loop in a tapeflow.function, differentiable."""
    elems, n = _scan_elems(elems, "scan")
    if initializer is None:
        if n == 0:
            raise ValueError("scan: elems is empty and there is no initializer")
        init, xs = _split_first(elems, reverse)
    else:
        init, xs = initializer, elems

    def step(acc, x):
        out = fn(acc, x)
        return out, out
    if initializer is None and n == 1:
        ys = None
    else:
        _, ys = CF.scan(step, init, xs, reverse=reverse)
    if initializer is not None:
        if ys is None:   # no element (eagerly: no step ran to stack): TF's (0,) + the accumulator's shape
            ys = nest.map_structure(_no_rows, init)
        return ys
    head = nest.map_structure(lambda t: A.expand_dims(t if isinstance(t, Tensor) else convert_to_tensor(t), 0),
                              init)
    if ys is None:
        return head
    return nest.map_structure(lambda h, y: A.concat([y, h] if reverse else [h, y], 0), head, ys)


def _fold(what, fn, elems, initializer, reverse):
    elems, n = _scan_elems(elems, what)
    if initializer is None:
        if n == 0:
            raise ValueError(f"{what}: elems is empty and there is no initializer")
        init, xs = _split_first(elems, reverse)
        if n == 1:
            return init
    else:
        init, xs = initializer, elems
    acc, _ = CF.scan(lambda a, x: (fn(a, x), None), init, xs, reverse=reverse)
    return acc


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``fn(acc, x)`` over ``elems`` from the first element; the final accumulator."""
    return _fold("foldl", fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``fn(acc, x)`` over ``elems`` from the last element; the final accumulator."""
    return _fold("foldr", fn, elems, initializer, True)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """TF's ``vectorized_map``: ``fn`` of each slice of ``elems`` along axis 0, stacked; its results'
    structure and dtypes are fn's own (no signature needed, unlike map_fn). TF vectorises fn with
    pfor; tapeflow runs it as the same loop map_fn does (one ``scan``): the same values, without
    pfor's speed."""
    leaves = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in nest.flatten(elems)]
    if not leaves or not aval_of(leaves[0]).shape:
        raise ValueError("vectorized_map: elems must hold tensors of rank 1 or more (sliced along axis 0)")
    packed = nest.pack_sequence_as(elems, leaves)

    def body(carry, x):
        out = fn(x)
        return carry, nest.map_structure(lambda o: o if isinstance(o, Tensor) else convert_to_tensor(o), out)
    _, outs = CF.scan(body, (), packed)
    if outs is None:   # no element (eagerly: no step ran): fn of a zero slice gives the results' (0, ...) form
        one = fn(nest.map_structure(lambda x: A.zeros(aval_of(x).shape[1:], aval_of(x).dtype), packed))
        outs = nest.map_structure(_no_rows, one)
    return outs
