"""Array creation, shape and indexing ops (TF names), composed from the
shape and indexing primitives. Creation ops (zeros, range, eye...) make
constants: they have no tensor inputs, so even inside a traced function they
are concrete values that the graph captures."""
from __future__ import annotations

import builtins

import numpy as np

from ..core import dtypes as _dt
from ..core.aval import fmt_shape, shapes_compatible
from ..core.primitive import bind, aval_of, _only_python, CompositeTensor, CompositeOperand
from ..core.primitives import elementwise as E
from ..core.primitives import indexing as I
from ..core.primitives import reductions as R
from ..core.primitives import scatter as SC
from ..core.primitives import shape as S
from ..core.primitives._rules import norm_axis, check_size
from ..errors import InvalidArgumentError, InvalidArgumentIndexError, InvalidArgumentTypeError
from ..core.state import STATE
from ..core.tensor import Tensor, Variable, constant, convert_to_tensor, _to_array
from . import math_ops as M


_RUNTIME_SIZE = ("a size known only when the function runs (tf.shape of a dimension an input_signature "
                 "leaves None, or one computed from the inputs): shapes are static within a trace in tapeflow; "
                 "give the input_signature that dimension, or call the function without one (it traces per shape)")


def _shape_arg(shape, op="shape"):
    if isinstance(shape, Tensor):
        if shape._v is None:
            raise TypeError(f"{op}: the shape is {_RUNTIME_SIZE}")
        shape = shape.numpy().tolist()
    elif isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) and d._v is None for d in shape):
        raise TypeError(f"{op}: a dimension of the shape is {_RUNTIME_SIZE}")
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if shape.__class__ is tuple or shape.__class__ is list:
        # the common case (every reshape of an eager step): plain ints, no generators (~2 us)
        for d in shape:
            if d.__class__ is not int:
                break
        else:
            return tuple(shape)
    try:
        if isinstance(shape, (str, bytes)) or any(isinstance(d, (str, bytes, float)) for d in shape):
            raise TypeError
        return tuple(int(d) for d in shape)
    except CompositeOperand:
        raise   # (a tf.experimental.DynamicRaggedShape: the op's ragged form, _ragged_shape_op)
    except TypeError:
        raise InvalidArgumentTypeError(f"{op}: a shape must be a list of ints, got {shape!r}") from None


def _scalar_int(v):
    """``v``, or its value when it is an eager scalar integer tensor (TF takes
    ``depth=tf.shape(x)[1]``): for the caller's own int check."""
    n = I.known_int(v)
    return v if n is None else n


def _index_dtype(op, what, dtype):
    """``dtype`` as a NumPy dtype, which must be int32 or int64 (an ``out_type``, an index dtype)."""
    d = np.dtype(_dt.np_dtype(dtype))
    if d not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise InvalidArgumentTypeError(f"{op}: {what} must be int32 or int64, got {d.name}")
    return d


# -- creation --------------------------------------------------------------------------------

def _sized(op, shape, dtype):
    """The shape argument of a creation op, checked to fit in memory before allocating."""
    shape = _shape_arg(shape, op)
    check_size(op, shape, dtype)
    return shape


def _runtime_dims(shape):
    """The dims of a creation op's shape when some are sizes the trace computes (tf.shape of a None
    dimension, a tensor argument): a list of ints and traced scalars (those the trace can evaluate as
    ints: ``_run_time_sizes``); None when no dim is traced."""
    if isinstance(shape, Tensor) and shape._v is None and (len(aval_of(shape).shape) != 1
                                                           or aval_of(shape).dtype.kind not in "iu"):
        return None   # (the static path's error names it)
    return _run_time_sizes(shape, "shape")


def _runtime_filled(op, dims, value, dtype):
    """A tensor of ``value`` whose shape is known when the function runs: each dim a vector of zeros (a
    range primitive for a traced dim, so its length is a value), added into one grid by broadcasting,
    then ``value`` selected over it; the trace's shape has None where the dim is traced."""
    d = np.dtype(dtype)
    if not any(isinstance(dim, Tensor) for dim in dims):   # every size evaluated while tracing
        return constant(np.full(_sized(op, dims, d), _string_value(value, d), d))
    if d.kind not in "biuf":
        raise InvalidArgumentTypeError(f"{op}: a shape with a dimension {_RUNTIME_SIZE}, for a {d.name} fill")
    grid, n = None, len(dims)
    for i, dim in enumerate(dims):
        if isinstance(dim, Tensor) and dim._v is None:
            v = M.multiply(_traced_range(0, M.maximum(dim, np.zeros((), aval_of(dim).dtype)), 1, None), 0)
            v = M.cast(v, np.int32)
        else:
            v = constant(np.zeros(int(I.known_int(dim) if isinstance(dim, Tensor) else dim), np.int32))
        v = reshape(v, [-1 if j == i else 1 for j in builtins.range(n)])
        grid = v if grid is None else M.add(grid, v)
    grid = constant(np.zeros((), np.int32)) if grid is None else grid
    return bind(E.select_p, True, constant(np.asarray(value, d)), M.cast(grid, d))


def zeros(shape, dtype=np.float32, name=None):
    d = _dt.np_dtype(dtype)
    dims = _runtime_dims(shape)
    if dims is not None:
        return _runtime_filled("zeros", dims, 0, d)
    try:
        return constant(np.full(_sized("zeros", shape, d), _string_value(0, d), d))
    except CompositeOperand:
        return _ragged_shape_op("zeros", shape, dtype)


def ones(shape, dtype=np.float32, name=None):
    d = _dt.np_dtype(dtype)
    dims = _runtime_dims(shape)
    if dims is not None:
        return _runtime_filled("ones", dims, 1, d)
    try:
        return constant(np.full(_sized("ones", shape, d), _string_value(1, d), d))
    except CompositeOperand:
        return _ragged_shape_op("ones", shape, dtype)


def _ragged_shape_op(op, shape, *args):
    """tf.reshape/zeros/ones/fill of a tf.experimental.DynamicRaggedShape: a RaggedTensor."""
    from ..ragged.dynamic_ragged_shape import ragged_form
    r = ragged_form(op, shape, *args)
    if r is None:
        raise
    return r


def _string_value(value, d):
    """A creation op's fill value: for tf.string, zeros are b'' (TF's zero string) and ones
    TF's TypeError."""
    if d.kind != "O":
        return value
    if value == 0:
        return b""
    from ..errors import InvalidArgumentTypeError  # (TF: TypeError for ones, InvalidArgumentError for ones_like)
    raise InvalidArgumentTypeError(f"Cannot convert {value} to EagerTensor of dtype string")


def fill(dims, value, name=None):
    try:
        return _fill(dims, value)
    except CompositeOperand:
        return _ragged_shape_op("fill", dims, value)


def _fill(dims, value):
    runtime = _runtime_dims(dims)
    if runtime is not None:
        if isinstance(value, Tensor):   # (broadcast over the grid, so the value's gradient sums as TF's FillGrad)
            grid = _runtime_filled("fill", runtime, 0, aval_of(value).dtype)
            return M.add(grid, value) if aval_of(value).dtype.kind in "iuf" else \
                bind(E.select_p, True, value, grid)
        v = _to_array(value)
        return _runtime_filled("fill", runtime, v, v.dtype)
    if isinstance(value, Tensor):   # a tensor value: broadcast, so its gradient flows (TF's FillGrad sums)
        av = aval_of(value)
        if av.shape != ():
            raise ValueError(f"fill: value must be a scalar, got shape {fmt_shape(av.shape)}")
        return S.broadcast_to(value, _sized("fill", dims, av.dtype))
    v = _to_array(value)
    return constant(np.full(_sized("fill", dims, v.dtype), v, v.dtype))


def _like(x, value, dtype):
    try:
        av = aval_of(x)
    except CompositeOperand:   # TF's unary elementwise dispatch (an ExtensionType's registered handler)
        from ..extension_type import unary_dispatch
        r = unary_dispatch(lambda v: _like(v, value, dtype), x)
        if r is NotImplemented:
            raise
        return r
    d = _dt.np_dtype(dtype) if dtype is not None else av.dtype
    value = _string_value(value, d)
    if all(s is not None for s in av.shape):
        return constant(np.full(av.shape, value, d))
    if av.dtype.kind not in "OSU":   # (in x's dtype: a Python 0 does not combine with a bool tensor)
        value = np.asarray(value).astype(av.dtype)[()]
    r = bind(E.select_p, True, value, x)  # unknown traced dims: shape at run time
    return r if d == av.dtype else M.cast(r, d)


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    return _like(input, 0, dtype)


def ones_like(input, dtype=None, name=None):  # noqa: A002
    return _like(input, 1, dtype)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    if any(_symbolic(v) for v in (start, limit, delta)):
        return _traced_range(start, limit, delta, dtype)
    vals = [v.numpy()[()] if isinstance(v, Tensor) else v for v in (start, limit, delta)]
    # (NumPy would raise ZeroDivisionError, naming no op.) A start past the limit gives an
    # empty range, as Python's range and TF's compiled `for i in tf.range(n)` loops do; TF's
    # eager Range kernel raises there, so a loop over tf.range(-3) would fail eagerly only
    if vals[2] == 0:
        raise InvalidArgumentError(f"range: delta must not be 0 (start {vals[0]}, limit {vals[1]})")
    if dtype is None:
        # TF: the tensor bounds' dtype (an int64 n gives int64 indices); else int32,
        # or float32 when a bound is a Python float
        tensor_dts = [aval_of(v).dtype for v in (start, limit, delta) if isinstance(v, Tensor)]
        dtype = np.result_type(*tensor_dts) if tensor_dts else \
            np.float32 if any(isinstance(v, float) for v in vals) else np.int32
    return constant(np.arange(*vals, dtype=_dt.np_dtype(dtype)))


def _symbolic(v):
    return isinstance(v, Tensor) and v.__class__ is not Tensor and v.__class__ is not Variable


def _traced_range(start, limit, delta, dtype):
    """tf.range with a bound the trace computes: the range primitive, whose result's length is known when
    the function runs (TF builds a dynamic shape there too). The dtype as eagerly: the tensor bounds'
    (a Python float among Python bounds makes it float32)."""
    bounds = (start, limit, delta)
    if dtype is None:
        dtype = np.result_type(*[aval_of(v).dtype for v in bounds if isinstance(v, Tensor)])
        if dtype.kind in "iu" and any(isinstance(v, float) for v in bounds):
            raise InvalidArgumentTypeError(f"range: a Python float bound beside {dtype.name} tensor bounds; cast the "
                                           "tensor bound or give dtype")
    d = _dt.np_dtype(dtype)
    vals = [M.cast(v, d) if isinstance(v, Tensor) else constant(np.asarray(v, d)) for v in bounds]
    return bind(S.range_p, *vals, dtype=d)


def _linspace_run_time(first, last, num, ax, nd):
    """linspace's steps for a ``num`` known when the function runs: the same ops, the steps a range."""
    from ..core.primitives import assert_op as AS
    dt = aval_of(first).dtype
    n = M.cast(num, np.int64)
    bind(AS.assert_p, M.greater_equal(n, np.int64(0)), n, template=("linspace: num must be >= 0, got ", None),
         summarize=3)
    delta = M.divide(M.subtract(last, first), M.cast(M.maximum(n - 1, np.int64(1)), dt))
    steps = reshape(M.cast(_traced_range(np.int64(1), M.maximum(n - 1, np.int64(1)), np.int64(1), np.int64), dt),
                    [-1 if i == ax else 1 for i in builtins.range(nd + 1)])
    whole = concat([first, M.add(first, M.multiply(delta, steps)), last], ax)
    return I.getitem(whole, (builtins.slice(None),) * ax + (builtins.slice(None, n),))


def linspace(start, stop, num, axis=0, name=None):
    """TF's linspace_nd, op for op (so float32 sequences have TF's bits, the bounds may be tensors
    a trace computes, and a tape differentiates it): delta = (stop - start) / max(num - 1, 1);
    start, start + delta * i for i in 1..num-2, then stop, cut to ``num`` along ``axis``. The
    dtype: a float bound's (a Python float is float32); integer bounds give float64. ``num``
    must be known when tracing (the result's length)."""
    traced = I._traced_bound(num)   # a count the trace computes (tf.shape(x)[0] of a None batch)
    num = num if traced else int(num.numpy()) if isinstance(num, Tensor) else int(num)
    if not traced and num < 0:   # (NumPy's ValueError named no op)
        raise InvalidArgumentError(f"linspace: num must be >= 0, got {num}")
    # (a Python float is float32, a NumPy scalar keeps its dtype; stop takes start's, as TF converts it)
    start = start if isinstance(start, Tensor) else convert_to_tensor(
        start, np.float32 if start.__class__ is float else None)
    stop = stop if isinstance(stop, Tensor) else convert_to_tensor(
        stop, aval_of(start).dtype if stop.__class__ in (int, float) else None)
    da, db = aval_of(start).dtype, aval_of(stop).dtype
    if da != db:   # (TF converts stop to start's dtype, which fails for another dtype's tensor)
        raise InvalidArgumentTypeError(f"linspace: start is {da.name} and stop is {db.name}; give both one dtype "
                                       "(cast one)")
    if da.kind != "f":
        start, stop = M.cast(start, np.float64), M.cast(stop, np.float64)
    sa, sb = aval_of(start).shape, aval_of(stop).shape
    if sa != sb:   # (TF broadcasts the bounds)
        try:
            sa = np.broadcast_shapes(sa, sb)
        except (ValueError, TypeError):
            raise InvalidArgumentError(f"linspace: start {fmt_shape(sa)} and stop {fmt_shape(sb)} do not "
                                       "broadcast to one shape") from None
        start, stop = broadcast_to(start, sa), broadcast_to(stop, sa)
    nd = len(sa)
    if not -(nd + 1) <= axis <= nd:
        raise InvalidArgumentError(f"linspace: axis {axis} is out of range for bounds of shape {fmt_shape(sa)} "
                                   f"(valid: {-(nd + 1)} to {nd})")
    ax = axis % (nd + 1)
    first, last = expand_dims(start, ax), expand_dims(stop, ax)
    if traced:
        return _linspace_run_time(first, last, num, ax, nd)
    delta = M.divide(M.subtract(last, first), np.asarray(max(num - 1, 1), aval_of(first).dtype))
    steps = np.arange(1, max(num - 1, 1), dtype=aval_of(first).dtype).reshape(
        [max(num - 2, 0) if i == ax else 1 for i in builtins.range(nd + 1)])
    whole = concat([first, M.add(first, M.multiply(delta, steps)), last], ax)
    return whole if num == aval_of(whole).shape[ax] else \
        I.getitem(whole, (builtins.slice(None),) * ax + (builtins.slice(0, num),))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=np.float32, name=None):
    sizes = [num_rows, num_rows if num_columns is None else num_columns] + list(batch_shape or ())
    if any(I._traced_bound(v) for v in sizes):
        # a size the trace computes (tf.eye(tf.shape(x)[0])): row == column over run-time positions
        rows, cols = (_traced_range(0, v, 1, np.int64) if I._traced_bound(v) else constant(np.arange(int(v)))
                      for v in sizes[:2])
        e = M.cast(M.equal(expand_dims(rows, 1), expand_dims(cols, 0)), _dt.np_dtype(dtype))
        return broadcast_to(e, list(batch_shape) + [shape(e)[0], shape(e)[1]]) if batch_shape else e
    check_size("eye", (num_rows, num_rows if num_columns is None else num_columns), _dt.np_dtype(dtype))
    e = np.eye(num_rows, num_columns, dtype=_dt.np_dtype(dtype))
    if batch_shape:
        e = np.broadcast_to(e, tuple(batch_shape) + e.shape).copy()
    return constant(e)


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    if dtype is None:
        # TF: the dtype of on_value / off_value when given (Python ints: int32), else float32
        given = [v for v in (on_value, off_value) if v is not None]
        dtype = convert_to_tensor(given[0]).dtype if given else np.float32
    d = _dt.np_dtype(dtype)
    idx = indices
    ia = aval_of(idx)
    if ia.dtype.kind not in "iu" or ia.dtype.name in ("int16", "uint16", "uint32", "uint64"):  # TF's kernels' list
        raise InvalidArgumentTypeError(f"one_hot: indices must be uint8, int8, int32 or int64, got "
                                       f"{ia.dtype.name} {fmt_shape(ia.shape)}; cast them: "
                                       "tapeflow.cast(indices, tapeflow.int32)")
    depth = _scalar_int(depth)
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool):
        raise InvalidArgumentTypeError(f"one_hot: depth must be a Python int, got {type(depth).__name__} {depth!r}")
    if depth < 0:  # np.arange(-1) is empty: every row would silently be all off_value
        raise InvalidArgumentError(f"one_hot: depth must be >= 0, got {depth}")
    nd = len(ia.shape)
    if not -1 <= axis <= nd:
        raise InvalidArgumentError(f"one_hot: axis {axis} is out of range for indices of rank {nd} "
                                   f"(valid: -1 to {nd}; -1 appends the new axis)")
    ax = nd if axis == -1 else axis
    shape = [1] * (nd + 1)
    shape[ax] = depth
    # labels outside [0, depth), -1 included, match no column: a row of off_value, as TF
    ar = constant(np.arange(depth, dtype=ia.dtype).reshape(shape))
    hit = M.equal(expand_dims(idx, ax), ar)
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    return bind(E.select_p, hit, constant(np.asarray(on, d)), constant(np.asarray(off, d)))


def identity(input, name=None):  # noqa: A002
    x = input
    if isinstance(x, Variable):
        return x.read_value()
    return S.reshape(x, tuple(-1 if d is None else d for d in aval_of(x).shape)) if isinstance(x, Tensor) \
        else convert_to_tensor(x)


# -- shape --------------------------------------------------------------------------------------

def shape(input, out_type=np.int32, name=None):  # noqa: A002
    try:
        s = aval_of(input).shape
    except CompositeOperand:   # a RaggedTensor (TF's ragged dispatch; see CompositeTensor)
        from ..ragged.ops import shape as _ragged_shape
        return _ragged_shape(input, out_type)
    dt = _index_dtype("shape", "out_type", out_type)
    if any(d is None for d in s):   # a dimension known only at run time (an input_signature's None)
        return bind(S.shape_p, input, out_type=dt)
    return constant(np.asarray(s, dtype=dt))


shape_fn = shape   # (for functions whose locals shadow the name)


def size(input, out_type=np.int32, name=None):  # noqa: A002
    s = aval_of(input).shape
    if any(d is None for d in s):
        return M.reduce_prod(shape(input, out_type))
    return constant(np.asarray(int(np.prod(s)), _dt.np_dtype(out_type)))


def rank(input, name=None):  # noqa: A002
    return constant(np.int32(len(aval_of(input).shape)))


def reshape(tensor, shape, name=None):
    try:
        sizes = _run_time_sizes(shape, "reshape")
        if sizes is not None:
            if not any(isinstance(d, Tensor) for d in sizes):  # every size known while tracing after all
                return S.reshape(tensor, _shape_arg(sizes, "reshape"))
            return _reshape_run_time(tensor, sizes)
        return S.reshape(tensor, _shape_arg(shape, "reshape"))
    except CompositeOperand:
        return _ragged_shape_op("reshape", shape, tensor)


def _run_time_sizes(shape, op):
    """``shape`` as a list of Python ints and traced int scalars when some entry is a size the
    trace computes (``[tf.shape(x)[0], -1]``, ``tf.shape(x)``, ``tf.stack([n, 4])``; those it can evaluate,
    ``tf.shape(x)[1]`` of a known axis, as ints), else None (no traced entry: the caller's static path)."""
    if isinstance(shape, Tensor) and shape._v is None:
        a = aval_of(shape)
        if len(a.shape) != 1 or a.shape[0] is None:
            raise TypeError(f"{op}: the shape is a vector of a length known only when the function runs "
                            f"({fmt_shape(a.shape)}); its length, the result's rank, must be known while tracing")
        return [_evaluated(I.getitem(shape, i)) for i in builtins.range(a.shape[0])]
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) and d._v is None for d in shape):
        out = []
        for d in shape:
            if isinstance(d, Tensor) and d._v is None:
                a = aval_of(d)
                if a.shape not in ((), (1,)) or a.dtype.kind not in "iu":
                    raise InvalidArgumentTypeError(f"{op}: a size must be an integer scalar, got {a.dtype.name} "
                                                   f"{fmt_shape(a.shape)}")
                out.append(_evaluated(d if a.shape == () else I.getitem(d, 0)))
            else:
                out.append(int(_to_array(d)) if isinstance(d, Tensor) else int(d))
        return out
    return None


def _evaluated(d):
    """The traced size ``d``, or its value where the trace can tell it (tf.shape(x)[k] of an axis known while
    tracing is that number, as in TF's shape inference)."""
    n = _known_size(d)
    return d if n is None else n


def _known_size(d):
    """The value of the traced int scalar ``d`` when the trace can tell it, else None: TF's shape inference
    evaluates shape arithmetic the same way (``tf.shape(x)[1] * 4`` of an axis known while tracing is 12,
    ``tf.concat([[-1], tf.shape(x)[1:]], 0)`` is [-1, 3, 4] beside x's None batch)."""
    var, trace = getattr(d, "_var", None), getattr(d, "_trace", None)
    if var is None or trace is None:
        return None
    producer = {o: e for e in trace.eqns[-96:] for o in e.outputs}
    consts = {id(v): val for v, val in trace.consts}
    v = _known(var, producer, consts, 0)
    return v if isinstance(v, int) else None


def _known(var, producer, consts, depth):
    """An int, a list of ints and Nones (a vector, entry by entry), or None: what the trace knows of
    ``var``'s value, walking back over shape, cast, slices, concatenation and size arithmetic."""
    if depth > 8:
        return None
    val = getattr(var, "val", None) if not hasattr(var, "count") else None  # a Literal
    if val is None:
        val = consts.get(id(var))
    if val is not None:
        a = np.asarray(val)
        if a.dtype.kind not in "iu" or a.ndim > 1:
            return None
        return int(a) if a.ndim == 0 else [int(v) for v in a]
    e = producer.get(var)
    if e is None:
        return None
    if e.prim is S.shape_p:
        return list(e.inputs[0].aval.shape)
    if e.prim is E.cast_p:
        return _known(e.inputs[0], producer, consts, depth + 1)
    if e.prim is S.reshape_p and len(e.inputs) == 1:
        # a scalar <-> a one-entry vector (tf.stack's parts); an unknown scalar is a [None] entry
        v = _known(e.inputs[0], producer, consts, depth + 1)
        out = e.outputs[0].aval.shape
        if out == (1,):
            return v if isinstance(v, list) else [v]
        if out == ():
            return (v[0] if len(v) == 1 else None) if isinstance(v, list) else v
        return v if isinstance(v, list) else None
    if e.prim is I.getitem_p and len(e.inputs) == 1 and len(e.params["key"]) == 1:
        v = _known(e.inputs[0], producer, consts, depth + 1)
        k = e.params["key"][0]
        if not isinstance(v, list):
            return None
        if k[0] == "i":
            return v[k[1]]
        if k[0] == "s":
            return v[builtins.slice(k[1], k[2], k[3])]
        return None
    if e.prim is S.concat_p and e.params.get("axis") == 0:
        parts = [_known(u, producer, consts, depth + 1) for u in e.inputs]
        if any(not isinstance(p, list) for p in parts):
            return None
        return [d for p in parts for d in p]
    if e.prim.fusion == "elementwise" and e.outputs[0].aval.shape == () and e.outputs[0].aval.dtype.kind in "iu":
        # size arithmetic on known scalars (tf.shape(x)[1] * 4): the primitive's own kernel on them
        ab = [_known(u, producer, consts, depth + 1) for u in e.inputs]
        if all(isinstance(u, int) for u in ab):
            try:
                with np.errstate(all="ignore"):
                    r = np.asarray(e.prim.impl(*[np.asarray(u, e.outputs[0].aval.dtype) for u in ab], **e.params))
            except Exception:  # noqa: BLE001  (a division by zero: the run-time op raises it)
                return None
            return int(r) if r.ndim == 0 else None
    return None


def _reshape_run_time(x, sizes):
    """tf.reshape with sizes the trace computes: one reshape equation taking them as operands, the result's
    dimensions None where they are run-time sizes (a -1 beside them too: TF 2.21 infers none there either,
    ``tf.reshape(x, [tf.shape(x)[0], -1])`` of a (None, 3, 4) is (None, None)); the kernel checks them."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if sum(1 for d in sizes if isinstance(d, int) and d == -1) > 1 or any(isinstance(d, int) and d < -1 for d in sizes):
        raise InvalidArgumentError(f"reshape: the shape {['?' if isinstance(d, Tensor) else d for d in sizes]} "
                                   "may hold one -1 (the rest of the elements) and no other negative size")
    return _bind_sizes(S.reshape_p, x, sizes)


def _bind_sizes(prim, x, sizes):
    """``prim`` (reshape or broadcast_to) of ``x`` to ``sizes`` (ints and traced scalars): the traced ones
    are int64 operands, None in the primitive's ``shape`` template."""
    dims = [M.cast(d, np.int64) for d in sizes if isinstance(d, Tensor)]
    return bind(prim, x, *dims, shape=tuple(None if isinstance(d, Tensor) else d for d in sizes))


def _sizes_of(x):
    """``x``'s dimensions: ints, and for each one an input_signature leaves None its run-time size."""
    xs = aval_of(x).shape
    run = shape(x, np.int64) if None in xs else None
    return [d if d is not None else I.getitem(run, i) for i, d in enumerate(xs)]


def _size_product(a, b):
    return a * b if isinstance(a, int) and isinstance(b, int) else M.multiply(M.cast(a, np.int64), M.cast(b, np.int64))


def transpose(a, perm=None, conjugate=False, name=None):
    n = len(aval_of(a).shape)
    if perm is None:
        perm = tuple(builtins.range(n - 1, -1, -1))
    else:
        # TF counts a negative entry from the end; anything outside [-n, n) is an error (no modulo)
        perm = tuple(int(p) + n if -n <= int(p) < 0 else int(p) for p in perm)
    return S.transpose(a, perm)


def expand_dims(input, axis, name=None):  # noqa: A002
    s = list(aval_of(input).shape)
    n = len(s)
    if not -n - 1 <= axis <= n:
        raise InvalidArgumentError(f"expand_dims: axis {axis} is out of range for a tensor of rank {n} "
                                   f"(valid: {-n - 1} to {n})")
    ax = axis % (n + 1)
    s.insert(ax, 1)
    if None in s and (s.count(None) > 1 or 0 in s):
        # more than one unknown dimension, or an empty tensor (-1 for the unknown one is then
        # ambiguous): a new axis by indexing, which keeps every dimension as it is when it runs
        return I.getitem(input, (builtins.Ellipsis,) + (None,) + (builtins.slice(None),) * (n - ax)
                         if ax < n else (builtins.Ellipsis, None))
    return S.reshape(input, tuple(-1 if d is None else d for d in s))


def squeeze(input, axis=None, name=None):  # noqa: A002
    s = aval_of(input).shape
    if axis is None:
        axes = [i for i, d in enumerate(s) if d == 1]
        if None in s:
            # TF squeezes an unknown dimension that is 1 when it runs (its result has an unknown rank); a
            # traced result's rank is fixed here, so the unknown ones are kept, and checked not to be 1 then
            from ..core.primitives import assert_op as AS
            run = shape(input, np.int64)
            for i in (i for i, d in enumerate(s) if d is None):
                n = I.getitem(run, i)
                bind(AS.assert_p, M.not_equal(n, np.int64(1)), template=(
                    f"squeeze: axis {i} of {fmt_shape(s)} is 1 when the function runs; with axis=None tapeflow "
                    "squeezes only the dimensions known to be 1 while tracing (TF would squeeze it too): give "
                    "axis",), summarize=3)
    else:
        axes = list(norm_axis("squeeze", axis, len(s)))
        for a in axes:
            if s[a] != 1:
                raise InvalidArgumentError(f"squeeze: axis {a} has size {s[a]}, not 1 (shape {fmt_shape(s)})")
    new = tuple(-1 if d is None else d for i, d in enumerate(s) if i not in axes)
    if new.count(-1) > 1:   # several unknown dims: the axes picked at 0 (a view), not a reshape of one -1
        return I.getitem(input, tuple(0 if i in axes else builtins.slice(None) for i in builtins.range(len(s))))
    return S.reshape(input, new)


def broadcast_to(input, shape, name=None):  # noqa: A002
    sizes = _run_time_sizes(shape, "broadcast_to")
    if sizes is not None and any(isinstance(d, Tensor) for d in sizes):
        # (tf.broadcast_to(x, tf.shape(y)) under an input_signature's None batch)
        if any(isinstance(d, int) and d < 0 for d in sizes):
            raise InvalidArgumentError(f"broadcast_to: the shape {['?' if isinstance(d, Tensor) else d for d in sizes]} "
                                       "has a negative size")
        x = input if isinstance(input, Tensor) else convert_to_tensor(input)
        return _bind_sizes(S.broadcast_to_p, x, sizes)
    return S.broadcast_to(input, _shape_arg(shape if sizes is None else sizes, "broadcast_to"))


def concat(values, axis, name=None):
    values = list(values)
    if not values:
        raise ValueError("concat: needs at least one tensor")
    try:
        nd = len(aval_of(values[0]).shape)
        if len(values) == 1:
            return convert_to_tensor(values[0])
        return bind(S.concat_p, *values, axis=norm_axis("concat", axis, nd)[0])
    except CompositeOperand:   # RaggedTensors among the values: TF's ragged concat
        if not any(isinstance(v, CompositeTensor) for v in values):
            raise
        from ..extension_type import api_dispatch   # (tf.experimental.dispatch_for_api's handlers)
        r = api_dispatch(concat, (values, axis), {})
        if r is not NotImplemented:
            return r
        from ..ragged.ops import concat as _ragged_concat
        return _ragged_concat(values, axis)


def stack(values, axis=0, name=None):
    try:
        return _stack(values, axis)
    except CompositeOperand:
        if not any(isinstance(v, CompositeTensor) for v in values):
            raise
        from ..extension_type import api_dispatch   # (tf.experimental.dispatch_for_api's handlers)
        r = api_dispatch(stack, (values, axis), {})
        if r is not NotImplemented:
            return r
        from ..ragged.ops import stack as _ragged_stack
        return _ragged_stack(values, axis)


def _stack(values, axis):
    if axis == 0 and isinstance(values, (list, tuple)) and values and _only_python(values):
        # as TF: Python numbers are converted as one list (tf.stack([1, 2.5]) is float32)
        return convert_to_tensor(values)
    values = list(values)
    if not values:
        raise ValueError("stack: needs at least one tensor")
    shapes = {aval_of(v).shape for v in values}
    # compatible, not equal: a dimension an input_signature leaves None stacks with a known one
    # (TF's rule); the kernel checks the sizes when the function runs
    if len(shapes) > 1 and not all(shapes_compatible(a, b) for a in shapes for b in shapes):
        raise InvalidArgumentError("stack: all tensors need the same shape, got " + ", ".join(fmt_shape(s) for s in shapes))
    nd = len(aval_of(values[0]).shape)
    if not -nd - 1 <= axis <= nd:
        raise InvalidArgumentError(f"stack: axis {axis} is out of range for stacking tensors of rank {nd}")
    ax = axis % (nd + 1)
    return bind(S.concat_p, *[expand_dims(v, ax) for v in values], axis=ax) if len(values) > 1 \
        else expand_dims(values[0], ax)


def unstack(value, num=None, axis=0, name=None):
    s = aval_of(value).shape
    ax = norm_axis("unstack", axis, len(s))[0]
    n = s[ax]
    if n is None:
        raise ValueError("unstack: the axis length must be known")
    if num is not None and num != n:
        raise InvalidArgumentError(f"unstack: num={num}, but axis {ax} of a tensor of shape {fmt_shape(s)} has "
                                   f"{n} entries; pass num={n} or leave num out")
    return [I.getitem(value, (builtins.slice(None),) * ax + (i,)) for i in builtins.range(n)]


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    s = aval_of(value).shape
    ax = norm_axis("split", axis, len(s))[0]
    n = s[ax]
    if n is None:
        return _split_run_time(value, num_or_size_splits, ax)
    if isinstance(num_or_size_splits, int):
        if num_or_size_splits < 1:   # (0 raised Python's ZeroDivisionError from the modulo below)
            raise InvalidArgumentError(f"split: num_or_size_splits must be at least 1 (a number of parts), got "
                                       f"{num_or_size_splits}")
        if n % num_or_size_splits:
            raise InvalidArgumentError(f"split: axis {ax} of size {n} does not divide into {num_or_size_splits} parts")
        sizes = [n // num_or_size_splits] * num_or_size_splits
    else:
        sizes = [int(v) for v in num_or_size_splits]
        if sizes.count(-1) > 1 or any(v < -1 for v in sizes):
            raise InvalidArgumentError(f"split: size_splits {sizes} may hold one -1 (the rest of axis {ax}) and "
                                       "no other negative size")
        if -1 in sizes:
            # (a -1 that would be negative is an error in TF: [5, -1, 2] of 6 gave a (5,), a (0,) and a (2,))
            sizes[sizes.index(-1)] = max(n - (sum(sizes) + 1), 0) if n is not None else -1
        if sum(sizes) != n:
            raise InvalidArgumentError(f"split: sizes {sizes} do not add up to {n}, the size of axis {ax} "
                                       f"of a tensor of shape {fmt_shape(s)}")
    out, start = [], 0
    for k in sizes:
        out.append(I.getitem(value, (builtins.slice(None),) * ax + (builtins.slice(start, start + k),)))
        start += k
    return out


def _tile_run_time(x, m):
    """tf.tile with multiples the trace computes (``[tf.shape(y)[0], 1]``): the static tiling's
    reshape, broadcast and reshape, with run-time sizes where they are unknown."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    d = _sizes_of(x)
    if len(m) != len(d):
        raise InvalidArgumentError(f"tile: multiples has length {len(m)}, tensor has rank {len(d)} (shape "
                                   f"{fmt_shape(aval_of(x).shape)}); give one multiple per axis")
    if any(isinstance(k, int) and k < 0 for k in m):
        raise InvalidArgumentError(f"tile: multiples {['?' if isinstance(k, Tensor) else k for k in m]} has a "
                                   "negative entry; each must be >= 0")
    ok = M.reduce_all(stack([M.greater_equal(M.cast(k, np.int64), 0) for k in m if isinstance(k, Tensor)]))
    from ..core.primitives import assert_op as AS
    bind(AS.assert_p, ok, template=("tile: multiples has a negative entry; each must be >= 0",), summarize=3)
    inter = [s for n in d for s in (1, n)]
    big = [s for k, n in zip(m, d) for s in (k, n)]
    y = _reshape_sizes_mixed(x, inter)
    y = _bind_sizes(S.broadcast_to_p, y, big)
    return _reshape_sizes_mixed(y, [_size_product(k, n) for k, n in zip(m, d)])


def _reshape_sizes_mixed(x, sizes):
    if not any(isinstance(s, Tensor) for s in sizes):
        return S.reshape(x, tuple(sizes))
    return _bind_sizes(S.reshape_p, x, sizes)


def _split_run_time(x, num_or_size_splits, ax):
    """tf.split of an axis an input_signature leaves None, TF's checks made when it runs: k equal parts are
    a reshape of the axis into (k, n / k) and k picks; given sizes, static slices (from the end after a -1),
    each part of a known size given its static shape."""
    from ..core.primitives import assert_op as AS
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    sizes = _sizes_of(x)
    n = M.cast(sizes[ax], np.int64)
    if isinstance(num_or_size_splits, int):
        k = num_or_size_splits
        if k < 1:
            raise InvalidArgumentError(f"split: num_or_size_splits must be at least 1 (a number of parts), got {k}")
        bind(AS.assert_p, M.equal(M.floormod(n, np.int64(k)), np.int64(0)), n,
             template=(f"split: axis {ax} of size ", None, f" does not divide into {k} parts"), summarize=3)
        y = _reshape_sizes_mixed(x, sizes[:ax] + [k, M.floordiv(n, np.int64(k))] + sizes[ax + 1:])
        return [I.getitem(y, (builtins.slice(None),) * ax + (i,)) for i in builtins.range(k)]
    parts = [int(v) for v in num_or_size_splits]
    if parts.count(-1) > 1 or any(v < -1 for v in parts):
        raise InvalidArgumentError(f"split: size_splits {parts} may hold one -1 (the rest of axis {ax}) and "
                                   "no other negative size")
    known = sum(v for v in parts if v != -1)
    ok = M.greater_equal(n, np.int64(known)) if -1 in parts else M.equal(n, np.int64(known))
    bind(AS.assert_p, ok, n, template=(f"split: sizes {parts} do not add up to ", None, f", the size of axis {ax}"),
         summarize=3)
    out, start = [], 0
    j = parts.index(-1) if -1 in parts else len(parts)
    after = sum(parts[j + 1:])
    for i, k in enumerate(parts):
        if i < j:
            key = builtins.slice(start, start + k)
        elif i == j:
            key = builtins.slice(start, -after if after else None)
        else:   # after the -1: counted from the end
            end = start + k - known
            key = builtins.slice(start - known, end if end else None)
        piece = I.getitem(x, (builtins.slice(None),) * ax + (key,))
        if i != j and None not in [d for a, d in enumerate(aval_of(x).shape) if a != ax]:
            piece = S.reshape(piece, tuple(k if a == ax else d for a, d in enumerate(aval_of(x).shape)))
        out.append(piece)
        start += k if k != -1 else 0
    return out


def tile(input, multiples, name=None):  # noqa: A002
    try:
        s = aval_of(input).shape
    except CompositeOperand:
        from ..ragged.ops import tile as _ragged_tile
        return _ragged_tile(input, multiples)
    sizes = _run_time_sizes(multiples, "tile")
    if sizes is not None and any(isinstance(k, Tensor) for k in sizes):
        return _tile_run_time(input, sizes)
    m = _shape_arg(multiples if sizes is None else sizes, "tile")
    if any(k < 0 for k in m):
        raise InvalidArgumentError(f"tile: multiples {list(m)} has a negative entry; each must be >= 0")
    if len(m) != len(s):
        raise InvalidArgumentError(f"tile: multiples has length {len(m)}, tensor has rank {len(s)} (shape {fmt_shape(s)}); "
                                   "give one multiple per axis")
    check_size("tile", tuple(None if d is None else d * k for d, k in zip(s, m)), aval_of(input).dtype)
    if None in s:
        # an input_signature's None: copies concatenated along each tiled axis (the reshapes below
        # need static sizes); an axis tiled 0 times is sliced empty
        x = input if isinstance(input, Tensor) else convert_to_tensor(input)
        for ax, k in enumerate(m):
            if k == 0:
                x = I.getitem(x, (builtins.slice(None),) * ax + (builtins.slice(0, 0),))
            elif k > 1:
                x = bind(S.concat_p, *([x] * k), axis=ax)
        return x
    # (a, b) tiled (2, 3) = reshape(broadcast_to(reshape(x, (1, a, 1, b)), (2, a, 3, b)), (2a, 3b))
    inter = []
    big = []
    for d, k in zip(s, m):
        inter += [1, d]
        big += [k, d]
    x = S.reshape(input, tuple(inter))
    x = S.broadcast_to(x, tuple(big))
    return S.reshape(x, tuple(d * k for d, k in zip(s, m)))


def repeat(input, repeats, axis=None):  # noqa: A002
    x = input if axis is not None else reshape(input, (-1,))
    if axis is not None and not aval_of(x).shape:   # (TF repeats a scalar as a vector of one)
        x = reshape(x, (1,))
    ax = 0 if axis is None else axis
    s = aval_of(x).shape
    if not -len(s) <= ax < len(s):   # (TF 2.21's ValueError; the modulo took any axis)
        raise ValueError(f"repeat: axis={ax} out of bounds: expected {-len(s)}<=axis<{len(s)}")
    ax = ax % len(s)
    if isinstance(repeats, (list, tuple, np.ndarray)) or (isinstance(repeats, Tensor) and aval_of(repeats).shape):
        # one count per entry of the axis (TF): a gather of each index repeated its count
        r = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats).reshape(-1)
        if r.dtype.kind not in "iu" and r.size:
            raise InvalidArgumentTypeError(f"repeat: repeats must be integers, got {r.dtype.name}")
        if r.size != 1:
            if s[ax] is not None and r.size != s[ax]:
                raise InvalidArgumentError(f"repeat: {r.size} repeats for axis {ax} of size {s[ax]} (shape "
                                           f"{fmt_shape(s)}); give one count per entry, or a single count")
            if (r < 0).any():
                raise InvalidArgumentError(f"repeat: repeats must be >= 0, got {r.tolist()}")
            return gather(x, constant(np.repeat(np.arange(r.size), r).astype(np.int32)), axis=ax)
        repeats = int(r[0])
    if s[ax] is None or (None in s and int(repeats) > 1):
        # an input_signature's None: each index repeated, gathered (the reshape below needs the sizes)
        k = int(repeats)
        if k < 0:
            raise InvalidArgumentError(f"repeat: repeats must be >= 0, got {k}")
        if k == 0:
            return I.getitem(x, (builtins.slice(None),) * ax + (builtins.slice(0, 0),))
        n = shape(x, np.int64)[ax]
        return gather(x, M.floordiv(range(M.multiply(n, np.int64(k)), dtype=np.int64), np.int64(k)), axis=ax)
    x = expand_dims(x, ax + 1)
    tgt = list(s)
    tgt.insert(ax + 1, int(repeats))
    x = S.broadcast_to(x, tuple(tgt))
    out = list(s)
    out[ax] = s[ax] * int(repeats)
    return S.reshape(x, tuple(out))


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    mode = str(mode).upper()
    pa = np.asarray(paddings.numpy() if isinstance(paddings, Tensor) else paddings)
    if pa.ndim != 2 or pa.shape[1] != 2:   # ([] for a scalar was taken as no padding; [1, 1] failed to unpack)
        raise InvalidArgumentError(f"pad: paddings must be a matrix with 2 columns, one (before, after) pair per "
                                   f"axis, got shape {list(pa.shape)}: e.g. [[1, 1]] for a vector")
    p = tuple((int(a), int(b)) for a, b in pa.tolist())
    if mode == "CONSTANT":
        return bind(S.pad_p, tensor, paddings=p, constant_values=constant_values)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', got {mode!r}")
    # REFLECT / SYMMETRIC compose from slices, reverses and a concat per axis (their gradients
    # then add the mirrored entries' cotangents back): no primitive of their own
    x = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    s = aval_of(x).shape
    S.check_paddings(p, len(s))  # (the CONSTANT rule's errors: rows, negatives)
    edge = 1 if mode == "REFLECT" else 0  # REFLECT leaves the edge entry out of the mirror
    for ax, (a, b) in enumerate(p):
        n = s[ax]
        if not a and not b:   # (an unpadded axis may be one an input_signature leaves None)
            continue
        need = f"pad: {mode} padding ({a}, {b}) of axis {ax} needs at most {'n - 1' if edge else 'n'} entries " \
               f"each side for a tensor of shape "
        if n is None:
            # an input_signature's None: the mirrored slices count from the ends (static bounds), the
            # length they need checked when the function runs
            from ..core.primitives import assert_op as AS
            nt = M.cast(shape(x)[ax], np.int64)
            bind(AS.assert_p, M.less_equal(constant(np.int64(max(a, b) + edge)), nt), shape(x),
                 template=(need, None), summarize=len(s))
        elif a > n - edge or b > n - edge:
            raise InvalidArgumentError(need + fmt_shape(s))
        lead = (builtins.slice(None),) * ax
        parts = [reverse(I.getitem(x, lead + (builtins.slice(edge, edge + a),)), [ax])] if a else []
        parts.append(x)
        if b:   # (the last b entries before the edge: -edge - b to -edge, counted from the end)
            parts.append(reverse(I.getitem(x, lead + (builtins.slice(-edge - b, -edge or None),)), [ax]))
        x = bind(S.concat_p, *parts, axis=ax)
    return x


def roll(input, shift, axis, name=None):  # noqa: A002
    """Elements shifted along ``axis`` by ``shift``, wrapping around (TF's tf.roll, NumPy's
    np.roll); lists shift several axes, and shifts of a repeated axis add up. A gather at the
    rotated indices, so the gradient rolls back and a tensor shift works in compiled code."""
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    s = aval_of(x).shape
    shifts = shift if isinstance(shift, (list, tuple)) else [shift]
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    if len(shifts) != len(axes):
        raise InvalidArgumentError(f"roll: shift {shift} and axis {axis} must have the same length")
    for sh, ax in zip(shifts, axes):
        ax = norm_axis("roll", ax, len(s))[0]
        n = s[ax]
        if n == 0:
            continue
        if n is None:   # an input_signature's None: the rotated indices when the function runs
            nt = shape(x, np.int64)[ax]
            idx = M.floormod(M.subtract(range(nt, dtype=np.int64), M.cast(sh, np.int64)), nt)
        elif isinstance(sh, Tensor) and sh._v is None:
            idx = M.floormod(M.subtract(constant(np.arange(n, dtype=np.int64)), M.cast(sh, np.int64)), n)
        else:
            idx = constant((np.arange(n) - int(sh.numpy() if isinstance(sh, Tensor) else sh)) % n)
        x = gather(x, idx, axis=ax)
    return x


def reverse(tensor, axis, name=None):
    try:
        nd = len(aval_of(tensor).shape)
    except CompositeOperand:
        from ..ragged.ops import reverse as _ragged_reverse
        return _ragged_reverse(tensor, axis)
    if nd == 0 and isinstance(axis, (list, tuple)) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) and a in (0, -1) for a in axis):
        return identity(tensor)   # TF's eager kernel reverses a scalar over axis 0 or -1 as the scalar itself
    axes = norm_axis("reverse", axis, nd)
    return I.getitem(tensor, tuple(builtins.slice(None, None, -1) if i in axes else builtins.slice(None)
                                   for i in builtins.range(nd)))


def traced_slices(x, key):
    """x[key] where a slice's bound is a tensor the trace computes (x[:, :t + 1] in a loop over
    tf.range, x[:n] of a tensor argument): each such axis is masked by Python's slice rule on the
    positions (negative bounds count from the end, then clipped to [0, n]; a static positive step
    keeps every step-th), so its length is known when the function runs, as boolean_mask's; then
    the rest of the key, all static, indexes as usual. Keys of slices, ints, None and Ellipsis."""
    nd = len(aval_of(x).shape)
    if any(not (isinstance(k, (builtins.slice, int, np.integer)) or k is None or k is Ellipsis) for k in key):
        raise TypeError("getitem: a slice bound computed by the trace combines with slices, ints, None and "
                        "Ellipsis in one key; index with tensors in a second step")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    axis, rest = 0, []
    for k in key:
        if k is Ellipsis:
            axis += nd - consumed
            rest.append(k)
            continue
        if k is None:
            rest.append(k)
            continue
        if isinstance(k, builtins.slice) and any(I._traced_bound(v) for v in (k.start, k.stop, k.step)):
            x = boolean_mask(x, _slice_mask(x, axis, k), axis=axis)
            k = builtins.slice(None)
        rest.append(k)
        axis += 1
    return I.getitem(x, tuple(rest))


def _axis_positions(x, axis):
    """0, 1, ... along ``axis`` as int64: a constant, or for an axis an input_signature leaves None a range
    of the length the function runs with."""
    n = aval_of(x).shape[axis]
    return (constant(np.arange(n, dtype=np.int64)) if n is not None
            else _traced_range(0, M.cast(shape(x)[axis], np.int64), 1, np.int64))


def _assert_slice_bounds(axis, begin, end, n):
    """TF's tf.slice bounds, 0 <= begin <= end <= n (int64 scalars), checked when the function runs."""
    from ..core.primitives import assert_op as AS
    ok = M.logical_and(M.logical_and(M.greater_equal(begin, 0), M.less_equal(begin, end)), M.less_equal(end, n))
    bind(AS.assert_p, ok, begin, end, n, template=(f"slice: axis {axis} needs 0 <= begin <= begin + size <= size "
                                                   "of the axis, got begin ", None, ", begin + size ", None,
                                                   ", axis size ", None), summarize=3)


def _slice_mask(x, axis, k):
    step = I.known_int(k.step) if I._traced_bound(k.step) else k.step
    if I._traced_bound(k.step) and step is None or step is not None and step <= 0:
        raise NotImplementedError(f"getitem: a slice with a bound the trace computes takes a positive Python step, "
                                  f"got {k.step!r}; reverse with tf.reverse first")
    n = aval_of(x).shape[axis]
    pos = _axis_positions(x, axis)
    size = M.cast(shape(x)[axis], np.int64) if n is None else constant(np.int64(n))
    zero = constant(np.int64(0))

    def bound(v, default):
        if v is None:
            return default
        v = M.cast(v, np.int64) if isinstance(v, Tensor) else constant(np.int64(v))
        # Python's rule: a negative bound counts from the end; then clipped into [0, n]
        return M.minimum(M.maximum(M.where(M.less(v, zero), M.add(v, size), v), zero), size)
    lo, hi = bound(k.start, zero), bound(k.stop, size)
    mask = M.logical_and(M.greater_equal(pos, lo), M.less(pos, hi))
    if step not in (None, 1):
        mask = M.logical_and(mask, M.equal(M.floormod(M.subtract(pos, lo), np.int64(step)), zero))
    return mask


def slice(input_, begin, size, name=None):  # noqa: A001
    s = aval_of(input_).shape
    traced = any(I._traced_bound(v) for v in list(begin) + list(size))
    for ax, (b, k) in enumerate(zip(begin, size)):
        if I._traced_bound(b) or I._traced_bound(k):
            continue  # checked when the function runs (_traced_slice)
        b, k, n = int(b), int(k), s[ax] if ax < len(s) else None
        if b < 0 or k < -1 or (n is not None and (b > n or (k != -1 and b + k > n))):
            # a Python slice would clip silently: tf.slice(x, [2], [5]) of 3 values gave 1
            shown = [["?" if I._traced_bound(v) else int(v) for v in vs] for vs in (begin, size)]
            raise InvalidArgumentError(f"slice: begin {shown[0]} and size {shown[1]} do not fit the shape "
                                       f"{fmt_shape(s)} (axis {ax}: need 0 <= begin <= begin + size <= "
                                       f"{'its size' if n is None else n}; size -1 takes the rest)")
    if traced:
        return _traced_slice(input_, begin, size)
    if None in s and any(n is None and not (int(b) == 0 and int(k) == -1) for n, b, k in zip(s, begin, size)):
        # (static bounds on an axis an input_signature leaves None: TF's bounds are checked when it
        # runs, where a Python slice clipped silently)
        return _traced_slice(input_, begin, size)
    key = tuple(builtins.slice(int(b), None if int(s) == -1 else int(b) + int(s)) for b, s in zip(begin, size))
    return I.getitem(input_, key)


def _traced_slice(x, begin, size):
    """tf.slice with a begin or size the trace computes: an axis with a traced begin and a static size
    is a gather of begin + [0, size) (a static length; an index past the axis raises when it runs), one
    with a traced size (or size -1 after a traced begin) a mask of [begin, begin + size), its length
    known when the function runs; TF's bounds (0 <= begin <= begin + size <= n) are checked then."""
    s = aval_of(x).shape
    for ax, (b, k) in enumerate(zip(begin, size)):
        tb, tk = I._traced_bound(b), I._traced_bound(k)
        if not (tb or tk):
            b, k = int(b), int(k)
            if s[ax] is None and not (b == 0 and k == -1):
                # static bounds on an axis an input_signature leaves None: the slice, and TF's bounds
                # checked when the function runs (a Python slice clips silently)
                n = M.cast(shape(x)[ax], np.int64)
                _assert_slice_bounds(ax, constant(np.int64(b)), n if k == -1 else constant(np.int64(b + k)), n)
            x = I.getitem(x, (builtins.slice(None),) * ax + (builtins.slice(b, None if k == -1 else b + k),))
            continue
        n = M.cast(shape(x)[ax], np.int64)
        b64 = M.cast(b, np.int64) if isinstance(b, Tensor) else constant(np.int64(b))
        if not tk and int(k) >= 0:
            x = gather(x, M.add(b64, constant(np.arange(int(k), dtype=np.int64))), axis=ax)
            end = M.add(b64, np.int64(int(k)))
        else:
            k64 = M.cast(k, np.int64) if isinstance(k, Tensor) else constant(np.int64(k))
            end = M.where(M.equal(k64, -1), n, M.add(b64, k64))
            pos = _axis_positions(x, ax)
            x = boolean_mask(x, M.logical_and(M.greater_equal(pos, b64), M.less(pos, end)), axis=ax)
        _assert_slice_bounds(ax, b64, end, n)
    return x


# -- indexing -----------------------------------------------------------------------------------

def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """params gathered along ``axis`` at ``indices`` (TF semantics, batch_dims too).

    Out-of-range indices raise (TF on CPU raises too); repeated indices are fine
    and their gradients accumulate.
    """
    if params.__class__ is Tensor and indices.__class__ is Tensor and not batch_dims and (axis is None or axis.__class__ is int and axis == 0):
        v = params._v
        if v is not None and v.ndim:
            # the common eager gather (Q at the actions): the getitem _gather binds, without
            # its shape reads and key encoding (~3 us a call)
            return bind(I.getitem_p, params, indices, key=_FIRST_AXIS, bounds="gather")
    try:
        return _gather(params, indices, axis, batch_dims, "gather")
    except CompositeOperand:
        if not isinstance(params, CompositeTensor):
            raise
        from ..ragged.ops import gather as _ragged_gather
        return _ragged_gather(params, indices, axis or 0)


#: indexing's key template of x[indices] (encode_key of one index tensor)
_FIRST_AXIS = (("a", 0),)


def _gather(params, indices, axis, batch_dims, op):
    """gather, with ``op`` (the TF op or layer the user called) named in index errors."""
    ps = aval_of(params).shape
    ids = aval_of(indices).shape
    if axis is None:
        axis = batch_dims
    if not -len(ps) <= axis < len(ps):
        raise InvalidArgumentError(f"{op}: axis {axis} is out of range for params of shape {fmt_shape(ps)} "
                                   f"(valid: {-len(ps)} to {len(ps) - 1})")
    axis = axis % len(ps)
    if batch_dims < 0:
        batch_dims += len(ids)
    if not 0 <= batch_dims <= len(ids):   # (TF: "Expected batch_dims in the range [0, rank(indices)]")
        raise InvalidArgumentError(f"{op}: batch_dims ({batch_dims}) must be in [0, {len(ids)}], the rank of "
                                   f"indices of shape {fmt_shape(ids)}")
    if batch_dims > axis:
        raise InvalidArgumentError(f"{op}: batch_dims ({batch_dims}) must be <= axis ({axis})")
    if batch_dims == 0:
        return I.getitem(params, (builtins.slice(None),) * axis + (indices,), bounds=op)
    # batch_dims > 0: index the leading batch axes with broadcast aranges, so
    # params[b, ..., indices[b, ...], ...] is one advanced-indexing expression.
    key = []
    nidx = len(ids) - batch_dims
    for _ in builtins.range(batch_dims, axis):
        raise NotImplementedError("gather: batch_dims < axis with axes between them is not supported")
    for b in builtins.range(batch_dims):
        shp = [1] * (batch_dims + nidx)
        if ps[b] is None:   # an input_signature's None batch: its positions when the function runs
            shp[b] = -1
            key.append(S.reshape(range(shape(params)[b]), tuple(shp)))
            continue
        shp[b] = ps[b]
        key.append(constant(np.arange(ps[b]).reshape(shp)))
    key.append(indices)
    return I.getitem(params, tuple(key), bounds=op)


def gather_nd(params, indices, batch_dims=0, name=None):
    if batch_dims:
        return _gather_nd_batched(params, indices, batch_dims)
    comps = _index_components("gather_nd", indices, aval_of(params).shape)
    if not comps:
        # index depth 0: each index row selects the whole of params (TF: the result has shape
        # indices.shape[:-1] + params.shape); getitem with an empty key would return params
        # once, dropping the batch of rows. Zero row ids into params with a leading axis
        # (the sum over the empty last axis is 0 for every row, of the rows' own shape)
        rows = M.multiply(M.reduce_sum(indices, -1), 0)
        return gather(expand_dims(params, 0), rows, axis=0)
    return I.getitem(params, comps, bounds="gather_nd")


def _gather_nd_batched(params, indices, b):
    """TF's gather_nd with ``batch_dims=b``: ``result[i..] = gather_nd(params[i..], indices[i..])`` over the
    first b axes of both, as one gather whose index components lead with each batch axis's positions
    (broadcast over the indices' other axes). The batch sizes must agree (checked when it runs where
    one is unknown: broadcasting would silently repeat a batch of one)."""
    params = params if isinstance(params, Tensor) else convert_to_tensor(params)
    indices = indices if isinstance(indices, Tensor) else convert_to_tensor(indices)
    ps, ia = aval_of(params).shape, aval_of(indices)
    if not isinstance(b, (int, np.integer)) or b < 0:
        raise InvalidArgumentError(f"gather_nd: batch_dims must be a non-negative int, got {b!r}")
    if b >= len(ia.shape) or b > len(ps):
        raise InvalidArgumentError(f"gather_nd: batch_dims {b} must be less than the rank of indices "
                                   f"{fmt_shape(ia.shape)} and at most the rank of params {fmt_shape(ps)}")
    inner = _index_components("gather_nd", indices, ps[b:])
    lead = len(ia.shape) - 1
    comps = []
    for a in builtins.range(b):
        p, q = ps[a], ia.shape[a]
        if p is not None and q is not None and p != q:
            raise InvalidArgumentError(f"gather_nd: batch dimension {a} differs: params {fmt_shape(ps)}, indices "
                                       f"{fmt_shape(ia.shape)} (batch_dims={b})")
        if p is None or q is None:
            from ..core.primitives import assert_op as AS
            np_, nq = (M.cast(shape(t)[a], np.int64) for t in (params, indices))
            bind(AS.assert_p, M.equal(np_, nq), np_, nq, template=(
                f"gather_nd: batch dimension {a} differs: params ", None, ", indices ", None), summarize=3)
        pos = M.cast(_axis_positions(indices, a), ia.dtype)
        comps.append(reshape(pos, [-1 if j == a else 1 for j in builtins.range(lead)]))
    return I.getitem(params, tuple(comps) + inner, bounds="gather_nd")


def _index_components(op, indices, shape):
    """The columns of a gather_nd/scatter_nd index tensor (..., k), one per indexed axis."""
    ia = aval_of(indices)
    if ia.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(f"{op}: indices must be integers, got {ia.dtype.name} {fmt_shape(ia.shape)}")
    k = ia.shape[-1] if ia.shape else None
    if k is None:
        raise InvalidArgumentError(f"{op}: indices need a known last dim (the index depth), got shape "
                                   f"{fmt_shape(ia.shape)}")
    if k > len(shape):
        raise InvalidArgumentError(f"{op}: index depth {k} (last dim of indices {fmt_shape(ia.shape)}) exceeds "
                                   f"the rank {len(shape)} of shape {fmt_shape(shape)}")
    return tuple(I.getitem(indices, (Ellipsis, j)) for j in builtins.range(k))


def take_along_axis(arr, indices, axis, _op="take_along_axis"):
    s = aval_of(arr).shape
    if not -len(s) <= axis < len(s):
        raise InvalidArgumentError(f"{_op}: axis {axis} is out of range for a tensor of shape {fmt_shape(s)}")
    ax = axis % len(s)
    key = []
    for i in builtins.range(len(s)):
        if i == ax:
            key.append(indices)
        elif s[i] is None:   # an input_signature's None: the positions along it when the function runs
            shp = [1] * len(s)
            shp[i] = -1
            key.append(S.reshape(range(shape(arr)[i]), tuple(shp)))
        else:
            shp = [1] * len(s)
            shp[i] = s[i]
            key.append(constant(np.arange(s[i]).reshape(shp)))
    return I.getitem(arr, tuple(key), bounds=_op)


def scatter_nd(indices, updates, shape, name=None, _op="scatter_nd", _like=None):
    """zeros(shape) with updates added at indices (duplicates add, as TF). ``_like``: a tensor
    of that shape whose dims an input_signature may leave None (tensor_scatter_nd_add/sub)."""
    sizes = _run_time_sizes(shape, _op) if _like is None else None
    if _like is not None and None in tuple(shape):   # (zeros of its shape when the function runs)
        like = zeros_like(_like, aval_of(updates).dtype)
    elif sizes is not None and any(isinstance(d, Tensor) for d in sizes):
        # a shape known when the function runs (tf.sparse.to_dense of a None batch): zeros of it
        like = zeros(sizes, aval_of(updates).dtype)
        shape = tuple(None if isinstance(d, Tensor) else d for d in sizes)
    else:
        shape = shape if sizes is None else sizes
        shape = _sized(_op, shape, aval_of(updates).dtype)
        like = constant(np.zeros(shape, aval_of(updates).dtype))
    comps = _index_components(_op, indices, shape)
    if not comps:
        _depth0(_op, indices)
    # (TF's rule, no broadcasting: NumPy's add.at broadcast scatter_nd([[0], [1]], [1.0], [3]) to [1, 1, 0])
    SC.check_updates(_op, aval_of(indices).shape, aval_of(updates).shape, shape)
    tpl, args = I.encode_key(comps)
    return bind(I.getitem_add_p, like, updates, *args, key=tpl, bounds=_op)


def _depth0(op, indices):
    """TF's scatter kernels take no index of depth 0 (indices of shape (..., 0)): each row would
    address the whole tensor. (tapeflow added every update over the whole tensor for one row,
    and NumPy's broadcast error for more.)"""
    raise InvalidArgumentError(f"{op}: indices of shape {fmt_shape(aval_of(indices).shape)} have index depth 0 "
                               "(last dim 0): a scatter needs at least one index per row (TF: 'Indices and updates "
                               "specified for empty output shape'); to update the whole tensor use tf.where or "
                               "arithmetic")


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    return M.add(tensor, scatter_nd(indices, updates, aval_of(tensor).shape, _op="tensor_scatter_nd_add", _like=tensor))


def slice_assigned(var, key, value):
    """``var``'s value with ``value`` written into ``var[key]``: TF's sliced assignment
    (``v[1:3, 0].assign(x)``) as a tensor_scatter_nd_update at the slice's indices. Ints,
    slices, Ellipsis and scalar integer tensors index (a ring buffer's position inside a
    compiled step is one); ``value`` broadcasts to the slice's shape."""
    if key.__class__ is list:
        key = tuple(key)
    elif not isinstance(key, tuple):
        key = (key,)
    shape = tuple(var.shape)
    nd = len(shape)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("slice assignment: an index can only have a single ellipsis ('...')")
    if any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (builtins.slice(None),) * (nd - len(key) + 1) + key[i + 1:]
    if len(key) > nd:
        raise InvalidArgumentIndexError(f"slice assignment: {len(key)} indices for a variable of shape "
                                        f"{fmt_shape(shape)}")
    key = key + (builtins.slice(None),) * (nd - len(key))
    axes, out_shape, static = [], [], True
    for ax, k in enumerate(key):
        n = shape[ax]
        if isinstance(k, Variable):
            k = k.read_value()
        k = _scalar_int(k)  # an eager scalar tensor: a static index
        if isinstance(k, builtins.slice):
            ix = np.arange(n)[k]
            axes.append(ix)
            out_shape.append(len(ix))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            if not -n <= k < n:
                raise InvalidArgumentIndexError(f"slice assignment: index {k} is out of bounds for axis {ax} with "
                                                f"size {n} (variable shape {fmt_shape(shape)})")
            axes.append(np.array([k % n]))
        elif isinstance(k, Tensor) and aval_of(k).shape == () and aval_of(k).dtype.kind in "iu":
            t = M.cast(k, np.int64)
            axes.append(reshape(M.where(M.less(t, 0), M.add(t, n), t), (1,)))
            static = False
        else:
            raise TypeError(f"slice assignment: index {k!r} on axis {ax}: use ints, slices, '...' or scalar integer "
                            "tensors (for other indices, tensor_scatter_nd_update)")
    if static:
        grid = constant(np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, nd).astype(np.int64))
    else:
        ts = [a if isinstance(a, Tensor) else constant(a.astype(np.int64)) for a in axes]
        grid = reshape(stack(meshgrid(*ts, indexing="ij"), -1), (-1, nd))
    if not isinstance(value, Tensor):
        value = convert_to_tensor(np.asarray(value, dtype=var.dtype.as_numpy_dtype))
    updates = reshape(S.broadcast_to(value, tuple(out_shape)), (-1,))
    return _scatter_update_unique(var.read_value(), grid, updates)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """tensor with the entries (or slices) at indices replaced by updates; where an index
    repeats, the last update wins, as TF 2.21's CPU kernel (TF: 'order unspecified').
    The sum of the repeated updates (ints) or their mean (floats) was none of them:
    [5, 6, 7] at index 0 three times gave 18 where TF gives 7."""
    t = convert_to_tensor(tensor) if not isinstance(tensor, Tensor) else tensor
    idx = indices if isinstance(indices, Tensor) else convert_to_tensor(np.asarray(indices))
    ishape, shape = aval_of(idx).shape, aval_of(t).shape
    if len(ishape) >= 1 and ishape[-1] == 0:
        _depth0("tensor_scatter_nd_update", idx)
    if len(ishape) >= 1 and ishape[-1] is not None and None not in ishape and aval_of(idx).dtype.kind in "iu" \
            and ishape[-1] <= len(shape) and (None not in shape[:ishape[-1]] or 0 not in shape[ishape[-1]:]):
        k, lead = ishape[-1], tuple(ishape[:-1])
        n = int(np.prod(lead, dtype=np.int64))
        if n > 1:
            # each update's position; the largest position at each target is the one that stays
            pos = constant(np.arange(n, dtype=np.int32).reshape(lead))
            if None in shape[:k]:   # an input_signature's None: -1s of t's first k dims when the function runs
                base = M.subtract(zeros_like(I.getitem(t, (builtins.slice(None),) * k + (0,) * (len(shape) - k)),
                                             np.int32), constant(np.int32(1)))
            else:
                base = constant(np.full(shape[:k], -1, np.int32))
            last = tensor_scatter_nd_max(base, idx, pos)
            keep = M.equal(gather_nd(last, idx), pos)
            upd = updates if isinstance(updates, Tensor) else convert_to_tensor(np.asarray(updates, aval_of(t).dtype))
            ushape = aval_of(upd).shape
            SC.check_updates("tensor_scatter_nd_update", ishape, ushape, shape)
            if len(ushape) >= len(lead):
                keep = reshape(keep, lead + (1,) * (len(ushape) - len(lead)))
                zeros = M.zeros_like_(upd)
                return _scatter_update_unique(t, idx, M.where(keep, upd, zeros), M.where(keep, M.ones_like_(upd), zeros))
    return _scatter_update_unique(t, idx, updates)


def _scatter_update_unique(tensor, indices, updates, ones=None):
    """tensor_scatter_nd_update for indices that do not repeat (slice assignment's, a
    TensorArray's write): a scatter of the updates and of ones, and a select."""
    t = convert_to_tensor(tensor) if not isinstance(tensor, Tensor) else tensor
    shape = aval_of(t).shape
    upd_shape = aval_of(updates).shape
    op = "tensor_scatter_nd_update"
    hit = scatter_nd(indices, ones if ones is not None else M.ones_like_(updates) if isinstance(updates, Tensor) else
                     np.ones(upd_shape, aval_of(t).dtype), shape, _op=op, _like=t)
    placed = scatter_nd(indices, updates, shape, _op=op, _like=t)
    # (a repeated index would sum its updates: divide by the count. The callers' indices do
    # not repeat, or carry ones only for the updates that stay, so the count is 0 or 1)
    return bind(E.select_p, M.greater(hit, 0), M.divide(placed, M.maximum(hit, 1)) if aval_of(t).dtype.kind == "f"
                else placed, t)


def boolean_mask(tensor, mask, axis=None, name=None):
    try:
        ms = aval_of(mask).shape
        ts = aval_of(tensor).shape
    except CompositeOperand:
        from ..ragged import boolean_mask as _ragged_mask
        return _ragged_mask(tensor, mask)
    ax = 0 if axis is None else axis
    part = tuple(ts[ax:ax + len(ms)])
    if not ms or len(part) != len(ms) or any(t is not None and m is not None and t != m for t, m in zip(part, ms)):
        raise InvalidArgumentError(f"boolean_mask: mask shape {tuple(ms)} does not match the tensor's shape "
                                   f"{tuple(ts)} at axis {ax} (dims {part}); the mask must cover those dims exactly")
    if aval_of(mask).dtype.kind != "b":
        # TF masks by tf.where(mask): a numeric mask selects its nonzero entries (an integer array
        # index would gather rows instead)
        mask = M.not_equal(mask, constant(np.zeros((), aval_of(mask).dtype)))
    return I.getitem(tensor, (builtins.slice(None),) * ax + (mask,))


def _where_indices(condition):
    """tf.where(condition): the (N, rank) int64 coordinates of the true (nonzero) entries, in
    row-major order. Traced, N is data-dependent: the coordinates of every entry (a constant
    of the static shape) masked by the condition, through boolean_mask's unknown-dimension path."""
    c = condition if hasattr(condition, "aval") else convert_to_tensor(condition)
    if not aval_of(c).shape:   # (TF's WhereOp: "Unhandled input dimensions: 0"; traced, boolean_mask failed)
        raise InvalidArgumentError("where: a condition of rank 0 has no coordinates to return; give a tensor of "
                                   "rank >= 1 (e.g. tf.reshape(c, [1])), or where(c, x, y) to select")
    if c._v is not None:
        return constant(np.argwhere(c.numpy()).astype(np.int64))
    shape = tuple(aval_of(c).shape)
    if None in shape:
        # an input_signature's None: every entry's coordinates when the function runs (the flat
        # position unravelled by the run-time shape), masked as below
        st = M.cast(shape_fn(c), np.int64)
        flat_pos = range(M.reduce_prod(st), dtype=np.int64)
        st1 = M.maximum(st, constant(np.ones((), np.int64)))   # (an empty tensor has no positions: no divisor 0)
        cols = [M.floormod(M.floordiv(flat_pos, M.reduce_prod(st1[j + 1:])), st1[j]) for j in builtins.range(len(shape))]
        return boolean_mask(stack(cols, axis=1), reshape(c, (-1,)))
    coords = np.indices(shape, dtype=np.int64).reshape(len(shape), -1).T
    flat = reshape(c, (-1,))
    return boolean_mask(constant(np.ascontiguousarray(coords)), flat)


# -- sorting ----------------------------------------------------------------------------------

def _direction(op, direction):
    d = str(direction).upper()
    if d not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"{op}: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return d


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    direction = _direction("argsort", direction)
    nd = len(aval_of(values).shape)
    return bind(R.argsort_p, values, axis=norm_axis("argsort", axis, nd)[0], descending=direction == "DESCENDING")


def sort(values, axis=-1, direction="ASCENDING", name=None):
    _direction("sort", direction)
    return take_along_axis(values, argsort(values, axis, direction), axis)


def searchsorted(sorted_sequence, values, side="left", out_type=np.int32, name=None):
    """For each row of values (last axis), the positions in the matching sorted row where
    they would be inserted: before equal entries (side 'left') or after them ('right')."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    d = _index_dtype("searchsorted", "out_type", out_type)
    s = sorted_sequence if isinstance(sorted_sequence, Tensor) else convert_to_tensor(sorted_sequence)
    v = values if isinstance(values, Tensor) else convert_to_tensor(values)
    return bind(R.searchsorted_p, s, v, side=side, out_type=d)


class TopKResult(tuple):
    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    k = int(k)
    s = aval_of(input).shape
    n = s[-1] if s else None
    if not s or k < 0 or (n is not None and k > n):
        # a slice [:k] past the end (or from the end, k < 0) would return fewer than k without a word
        raise InvalidArgumentError(f"top_k: k={k} for an input of shape {fmt_shape(s)}: the input needs rank >= 1 "
                                   f"and at least k entries in its last axis, and k must be >= 0")
    if n is None:   # (a last axis an input_signature leaves None: the same check when it runs)
        from ..core.primitives import assert_op as AS
        m = M.cast(shape(input)[-1], np.int64)
        bind(AS.assert_p, M.greater_equal(m, np.int64(k)), m, template=(
            f"top_k: k={k} for an input whose last axis has ", None, " entries: it needs at least k"), summarize=3)
    idx = argsort(input, -1, "DESCENDING")
    idx = I.getitem(idx, (Ellipsis, builtins.slice(0, k)))
    return TopKResult((take_along_axis(input, idx, -1), idx))


def sequence_mask(lengths, maxlen=None, dtype=np.bool_, name=None):
    L = convert_to_tensor(lengths)
    # (TF: maxlen = maximum(0, max(lengths)), so negative lengths give an empty mask)
    if maxlen is None and _symbolic(L) and L.shape.num_elements() != 0:
        maxlen = M.maximum(M.reduce_max(L), np.zeros((), aval_of(L).dtype))
    if maxlen is None:
        maxlen = max(int(L.numpy().max()), 0) if L.shape.num_elements() else 0
    maxlen = _scalar_int(maxlen)
    if _symbolic(maxlen):
        # the mask's width is a value (the longest length, or a maxlen the trace computes): a range of a
        # length known when the function runs
        positions = _traced_range(0, M.cast(maxlen, aval_of(L).dtype), 1, aval_of(L).dtype)
        r = M.less(positions, expand_dims(L, -1))
        return r if _dt.np_dtype(dtype) == np.bool_ else M.cast(r, dtype)
    if not isinstance(maxlen, (int, np.integer)) or isinstance(maxlen, bool):
        raise InvalidArgumentTypeError(f"sequence_mask: maxlen must be an int, got {type(maxlen).__name__} "
                                       f"{maxlen!r}")
    if maxlen < 0:
        raise InvalidArgumentError(f"sequence_mask: maxlen must be >= 0, got {maxlen} (TF: 'Requires start <= "
                                   "limit when delta > 0')")
    # the positions in the lengths' dtype (TF casts maxlen to it): int32 lengths against an int64
    # arange raised a dtype mismatch
    r = M.less(constant(np.arange(maxlen, dtype=aval_of(L).dtype)), expand_dims(L, -1))
    return r if _dt.np_dtype(dtype) == np.bool_ else M.cast(r, dtype)


def meshgrid(*args, indexing="xy", name=None):
    """N-D coordinate grids from 1-D tensors (as np.meshgrid / TF): 'xy' swaps
    the first two output axes, 'ij' keeps argument order."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ts = [convert_to_tensor(a) if not isinstance(a, Tensor) else a for a in args]
    for i, t in enumerate(ts):
        if len(aval_of(t).shape) != 1:
            raise ValueError(f"meshgrid: argument {i} must be 1-D, got shape {aval_of(t).shape}")
        if aval_of(t).dtype != aval_of(ts[0]).dtype:   # (TF's grids multiply by ones: no silent promotion)
            raise InvalidArgumentTypeError(f"meshgrid: argument {i} is {aval_of(t).dtype.name}, argument 0 "
                                           f"{aval_of(ts[0]).dtype.name}; cast them to one dtype")
    sizes = [aval_of(t).shape[0] for t in ts]
    n = len(ts)
    out_shape = list(sizes)
    if indexing == "xy" and n >= 2:
        out_shape[0], out_shape[1] = out_shape[1], out_shape[0]
    grids = []
    for i, t in enumerate(ts):
        pos = i if not (indexing == "xy" and i < 2 and n >= 2) else 1 - i
        shape = [1] * n
        shape[pos] = -1 if sizes[i] is None else sizes[i]
        if None in sizes:   # an input_signature's None: the grid's shape from adding the others' zeros
            g = reshape(t, shape)
            for j, u in enumerate(ts):
                if j != i:
                    sh = [1] * n
                    sh[j if not (indexing == "xy" and j < 2 and n >= 2) else 1 - j] = -1
                    g = M.add(g, zeros_like(reshape(u, sh)))
            grids.append(g)
            continue
        grids.append(broadcast_to(reshape(t, shape), out_shape))
    return grids


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    return M.subtract(tensor, scatter_nd(indices, updates, aval_of(tensor).shape, _op="tensor_scatter_nd_sub",
                                         _like=tensor))


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """tensor with each entry (or slice) at indices the max of itself and the updates there."""
    if aval_of(indices).shape[-1:] == (0,):
        _depth0("tensor_scatter_nd_max", indices)
    return bind(SC.tensor_scatter_max_p, tensor, indices, updates, op="tensor_scatter_nd_max")


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """tensor with each entry (or slice) at indices the min of itself and the updates there."""
    if aval_of(indices).shape[-1:] == (0,):
        _depth0("tensor_scatter_nd_min", indices)
    return bind(SC.tensor_scatter_min_p, tensor, indices, updates, op="tensor_scatter_nd_min")


# -- small tf.* array functions TF programs call (compositions) ---------------------------------------

def identity_n(input, name=None):  # noqa: A002
    """Each tensor of the list, as identity."""
    return [identity(t) for t in input]


def get_static_value(tensor, partial=False):
    """The NumPy value of ``tensor`` when it is known now (a concrete tensor, an array, a Python
    value; values known while tracing are folded into concrete tensors), else None."""
    if isinstance(tensor, Tensor):
        return None if tensor._v is None else np.asarray(tensor._v)
    if isinstance(tensor, (np.ndarray, np.generic)):
        return tensor
    try:
        return np.asarray(convert_to_tensor(tensor).numpy())
    except Exception:  # noqa: BLE001 - "not a static value" is the answer here
        return None


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=0, name=None):  # noqa: A002
    """For each batch entry b, the first seq_lengths[b] elements along ``seq_axis`` reversed,
    the rest left in place (TF's ReverseSequence)."""
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    shape = aval_of(x).shape
    nd = len(shape)
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis is required")
    sa, ba = seq_axis % nd, batch_axis % nd
    if sa == ba:
        raise InvalidArgumentError(f"reverse_sequence: seq_axis ({seq_axis}) and batch_axis ({batch_axis}) must differ")
    lens = seq_lengths if isinstance(seq_lengths, Tensor) else convert_to_tensor(np.asarray(seq_lengths))
    n = shape[sa]
    _seq_lengths_checked(lens, n, sa)
    j = np.arange(n, dtype=np.int64)
    lens64 = M.cast(lens, np.int64)
    # index[b, j] = len_b - 1 - j for j < len_b, else j; broadcast over the other axes
    bshape = [1] * nd
    bshape[ba] = -1
    jshape = [1] * nd
    jshape[sa] = n
    lb = reshape(lens64, bshape)
    jj = j.reshape(jshape)
    idx = M.where(M.less(jj, lb), M.subtract(M.subtract(lb, 1), jj), M.add(M.multiply(lb, 0), jj))
    full = [s if s is not None else 1 for s in shape]
    tgt = [d if i in (sa, ba) else full[i] for i, d in enumerate(shape)]
    if tgt[ba] is None:   # an input_signature's None batch: one length per entry
        tgt[ba] = aval_of(lens).shape[0] if aval_of(lens).shape else None
    if None in tgt:
        raise ValueError(f"reverse_sequence: the batch and sequence axes of the input of shape {fmt_shape(shape)} "
                         f"need known sizes; one is {_RUNTIME_SIZE}")
    idx = broadcast_to(idx, tgt)
    return take_along_axis(x, idx, sa)


def _seq_lengths_checked(lens, n, seq_axis):
    """TF's ReverseSequence checks: each length in [0, n]. A negative length reversed nothing and one past n
    was clipped by the gather, silently: eagerly TF's InvalidArgumentError, traced an assert that raises
    it when the function runs."""
    if n is None:
        return
    if not _symbolic(lens):
        v = np.asarray(lens.numpy()).reshape(-1)
        for i, ln in enumerate(v.tolist()):
            if ln < 0 or ln > n:
                raise InvalidArgumentError(f"reverse_sequence: seq_lens({i}) = {ln} " +
                                           ("< 0" if ln < 0 else f"> input.dims({seq_axis}) = {n}"))
        return
    flat = reshape(lens, [-1])
    assert_no_bad_entry(flat, M.logical_or(M.less(flat, 0), M.greater(flat, n)),
                        ("reverse_sequence: seq_lens(", None, ") = ", None, f" is not in [0, {n}] (input.dims({seq_axis}))"))


def assert_no_bad_entry(flat, bad, template):
    """An assert, checked when the function runs, that no entry of the vector ``flat`` is ``bad``; its
    message ``template`` names the first bad entry's position and value (its two None slots)."""
    from ..core.primitives import assert_op as AS
    # (argmax of an empty vector raises: pad one good entry, never chosen when a bad one exists)
    first = M.argmax(M.cast(concat([bad, [False]], 0), np.int32), output_type=np.int32)
    value = gather(concat([flat, M.cast([0], aval_of(flat).dtype)], 0), first)
    bind(AS.assert_p, M.logical_not(M.reduce_any(bad)), first, value, template=template, summarize=3)


def broadcast_static_shape(shape_x, shape_y):
    """The broadcast of two TensorShapes (unknown dimensions allowed); ValueError if they do not
    broadcast."""
    from ..core.tensor import TensorShape
    a, b = TensorShape(shape_x), TensorShape(shape_y)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    la, lb = list(a.as_list()), list(b.as_list())
    n = max(len(la), len(lb))
    la, lb = [1] * (n - len(la)) + la, [1] * (n - len(lb)) + lb
    out = []
    for p, q in zip(la, lb):
        if p == 1:
            out.append(q)
        elif q == 1 or q == p:
            out.append(p)
        elif p is None or q is None:
            out.append(p if q is None else q)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension "
                             f"pair they are either equal or one of them is 1. Received: {a} and {b}.")
    return TensorShape(out)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shapes given as 1-D integer tensors or lists, as an int32 tensor."""
    def vals(s):
        return [int(v) for v in (s.numpy() if isinstance(s, Tensor) else np.asarray(s)).reshape(-1)]
    try:
        out = np.broadcast_shapes(tuple(vals(shape_x)), tuple(vals(shape_y)))
    except ValueError:
        raise InvalidArgumentError(f"broadcast_dynamic_shape: incompatible shapes {vals(shape_x)} and "
                                   f"{vals(shape_y)}") from None
    return convert_to_tensor(np.asarray(out, np.int32))


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """TF's strided_slice with its masks, as the Python slice it stands for (begin/end/strides
    known now)."""
    def vals(v):
        return [int(a) for a in (v.numpy() if isinstance(v, Tensor) else np.asarray(v)).reshape(-1)]
    b, e = vals(begin), vals(end)
    s = [1] * len(b) if strides is None else vals(strides)
    if not len(b) == len(e) == len(s):
        raise InvalidArgumentError(f"strided_slice: begin, end and strides must have the same length, got "
                                   f"{len(b)}, {len(e)} and {len(s)}")
    key = []
    for i in builtins.range(len(b)):     # (this module's range is tf.range)
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(b[i])
        else:
            if s[i] == 0:
                raise InvalidArgumentError("strided_slice: strides must be non-zero")
            key.append(builtins.slice(None if begin_mask & bit else b[i], None if end_mask & bit else e[i], s[i]))
    x = input_ if isinstance(input_, Tensor) else convert_to_tensor(input_)
    return x[tuple(key)]


def parallel_stack(values, name=None):
    """stack, inside a tf.function; TF refuses it eagerly (RuntimeError), and so does tapeflow."""
    from ..core.state import STATE
    if STATE.trace is None:
        raise RuntimeError("tf.parallel_stack() is not compatible with eager execution.")
    return stack(values)


def shape_n(input, out_type=np.int32, name=None):  # noqa: A002
    """The shapes of a list of tensors."""
    return [shape(t, out_type=out_type) for t in input]


def is_symbolic_tensor(tensor):
    """True for a tensor of a function being traced (no value yet)."""
    return isinstance(tensor, Tensor) and tensor._v is None

