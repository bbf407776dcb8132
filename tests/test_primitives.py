"""Every primitive in the table, one by one.

* differentiable primitives: forward against NumPy, then first- and
  second-order gradients against float64 central finite differences
  (``GRAD_CASES``: primitive name -> case generator);
* non-differentiable primitives: forward against NumPy (``FORWARD_CASES``),
  and they must be listed in ``NON_DIFFERENTIABLE``;
* primitives with effects: behaviour tests (``EFFECT_TESTS``);
* a meta-test fails when a core primitive has no entry in these tables.

Primitives are called through ``bind`` directly so that each case exercises
exactly the primitive it is filed under (checked by ``test_case_uses_its_primitive``).
"""
from __future__ import annotations

import itertools
import math
import zlib
from typing import Callable, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tapeflow as tf
from tapeflow.core.primitive import NON_DIFFERENTIABLE, REGISTRY, bind
from tapeflow.core.primitives import indexing as I

import conv_reference
from conftest import assert_close, check_grads, np_of

P = REGISTRY
F64 = np.float64
HYP = settings(max_examples=20, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Case(NamedTuple):
    id: str
    fn: Callable           # tapeflow values -> tensor
    ref: Callable | None   # NumPy values -> array (None: gradient-only case)
    args: tuple            # NumPy arguments; float64 ones are differentiated
    order: int = 2
    rtol: float = 1e-5
    eps: float = 1e-5


def prim(name, **params):
    return lambda *a: bind(P[name], *a, **params)


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _signed(rng, shape, low=0.3, high=2.0):
    """Values with |v| in [low, high] and a random sign: away from 0 (kinks, poles)."""
    return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], size=shape)


def _distinct(rng, shape, scale=0.25):
    """Values pairwise at least ``scale`` apart (no ties for max/min/sort)."""
    n = int(np.prod(shape)) if shape else 1
    return (rng.permutation(n).reshape(shape) * scale + rng.uniform(0, 0.05, shape) - n * scale / 2).astype(F64)


UNARY_SHAPES = [(), (3,), (2, 3)]
BROADCAST_PAIRS = [((), ()), ((3,), ()), ((), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)),
                   ((4, 1, 3), (2, 1)), ((2, 3), (2, 3))]

# -- elementwise ---------------------------------------------------------------------------


def unary(name, ref, domain=lambda rng, s: rng.uniform(-2, 2, s)):
    def gen():
        rng = _rng(name)
        return [Case(f"{name}{s}", prim(name), ref, (domain(rng, s).astype(F64),)) for s in UNARY_SHAPES]
    return gen


def binary(name, ref, da=lambda rng, s: rng.uniform(-2, 2, s), db=None, scalar=2.5):
    db = db or da

    def gen():
        rng = _rng(name)
        cases = [Case(f"{name}{sa}{sb}", prim(name), ref, (da(rng, sa).astype(F64), db(rng, sb).astype(F64)))
                 for sa, sb in BROADCAST_PAIRS]
        # a Python scalar on either side (weak: adopts the tensor's dtype), a NumPy constant
        x = da(rng, (2, 3)).astype(F64)
        cases.append(Case(f"{name}(x,scalar)", lambda a: bind(P[name], a, scalar),
                          lambda a: ref(a, scalar), (x,)))
        y = db(rng, (2, 3)).astype(F64)
        cases.append(Case(f"{name}(scalar,y)", lambda b: bind(P[name], scalar, b),
                          lambda b: ref(np.float64(scalar), b), (y,)))
        c = db(rng, (3,)).astype(F64)
        cases.append(Case(f"{name}(x,ndarray)", lambda a: bind(P[name], a, c), lambda a: ref(a, c), (x,)))
        return cases
    return gen


def _pos(rng, s):
    return rng.uniform(0.3, 2.0, s)


def _mod_cases():
    rng = _rng("mod")
    cases = []
    for sx, sy in [((2, 3), (3,)), ((4,), ()), ((2, 3), (2, 3))]:
        y = _signed(rng, sy, 0.5, 2.0)
        shape = np.broadcast_shapes(sx, sy)
        # x = y * (k + f) with f in [0.15, 0.85]: away from mod's jumps
        x = np.broadcast_to(y, shape) * (rng.integers(-3, 3, shape) + rng.uniform(0.15, 0.85, shape))
        x = x.reshape(shape)
        cases.append(Case(f"mod{sx}{sy}", prim("mod"), np.mod, (x.astype(F64), y.astype(F64))))
    return cases


def _pow_cases():
    rng = _rng("pow")
    cases = binary("pow", np.power, da=_pos, db=lambda r, s: r.uniform(-2, 2, s), scalar=3)()
    # integer exponent on negative bases (no log(x) needed: exponent constant)
    x = _signed(rng, (2, 3))
    cases.append(Case("pow(neg,3)", lambda a: bind(P["pow"], a, 3), lambda a: a ** 3, (x,)))
    cases.append(Case("pow(x,2.0)", lambda a: bind(P["pow"], a, 2.0), lambda a: a ** 2.0, (x,)))
    return cases


def _select_cases():
    rng = _rng("select")
    cases = []
    for sc, sx, sy in [((2, 3), (2, 3), (2, 3)), ((3,), (2, 3), ()), ((2, 1), (1, 3), (2, 3)), ((), (3,), (3,))]:
        c = rng.random(sc) > 0.5
        if c.ndim:
            c.flat[0], c.flat[-1] = True, False
        cases.append(Case(f"select{sc}{sx}{sy}", prim("select"), np.where,
                          (c, rng.uniform(-2, 2, sx), rng.uniform(-2, 2, sy))))
    x = rng.uniform(-2, 2, (2, 3))
    cases.append(Case("select(c,x,scalar)", lambda c, a: bind(P["select"], c, a, 0.0),
                      lambda c, a: np.where(c, a, 0.0), (x > 0, x)))
    return cases


def _cast_cases():
    rng = _rng("cast")
    x = rng.uniform(-2, 2, (2, 3))
    f32 = np.dtype(np.float32)
    return [
        # float64 -> float64 (an identity cast), composed with something nonlinear for order 2
        Case("cast(f64->f64)", lambda a: bind(P["cast"], a * a, dtype=np.dtype(F64)), lambda a: a * a, (x,)),
        # float64 -> float32 -> float64: gradient goes back through both casts (float32 precision)
        Case("cast(f64->f32->f64)",
             lambda a: bind(P["cast"], bind(P["cast"], a, dtype=f32) * 3.0, dtype=np.dtype(F64)),
             lambda a: (a.astype(np.float32) * np.float32(3.0)).astype(F64), (x,), order=1, rtol=1e-3, eps=1e-2),
    ]


# -- reductions and scans ------------------------------------------------------------------

REDUCE_SHAPES = [(4,), (2, 3), (2, 3, 2)]


def _axis_sets(nd):
    sets = [None]
    for r in range(1, nd + 1):
        sets += list(itertools.combinations(range(nd), r))
    return sets


def reduction(name, ref, values=_distinct):
    def gen():
        rng = _rng(name)
        cases = []
        for shape in REDUCE_SHAPES:
            for axes in _axis_sets(len(shape)):
                for kd in (False, True):
                    ax = tuple(range(len(shape))) if axes is None else axes
                    if len(shape) == 3 and kd and axes is not None and len(axes) == 2:
                        continue  # keep the table small; hypothesis sweeps the rest
                    x = values(rng, shape)
                    cases.append(Case(f"{name}{shape}ax{axes}kd{int(kd)}", prim(name, axis=ax, keepdims=kd),
                                      lambda a, ax=ax, kd=kd: ref(a, axis=ax, keepdims=kd), (x,)))
        return cases
    return gen


def _prod_values(rng, shape):
    return _signed(rng, shape, 0.5, 1.5)


def _cumsum_ref(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    r = np.cumsum(x, axis=axis)
    if exclusive:
        r = r - x
    if reverse:
        r = np.flip(r, axis)
    return r


def _cumsum_cases():
    rng = _rng("cumsum")
    cases = []
    for shape, axis in [((5,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), 2)]:
        for ex, rev in itertools.product((False, True), repeat=2):
            cases.append(Case(f"cumsum{shape}ax{axis}ex{int(ex)}rev{int(rev)}",
                              prim("cumsum", axis=axis, exclusive=ex, reverse=rev),
                              lambda a, axis=axis, ex=ex, rev=rev: _cumsum_ref(a, axis, ex, rev),
                              (rng.uniform(-2, 2, shape),)))
    return cases


# -- shape ----------------------------------------------------------------------------------

def _reshape_cases():
    rng = _rng("reshape")
    out = []
    for src, dst in [((2, 3), (3, 2)), ((6,), (2, -1, 1)), ((), (1, 1)), ((2, 3, 4), (4, 6)), ((1, 4), (4,))]:
        out.append(Case(f"reshape{src}->{dst}", prim("reshape", shape=dst),
                        lambda a, dst=dst: np.reshape(a, dst), (rng.uniform(-2, 2, src),)))
    return out


def _transpose_cases():
    rng = _rng("transpose")
    x = rng.uniform(-2, 2, (2, 3, 4))
    return [Case(f"transpose{perm}", prim("transpose", perm=perm), lambda a, perm=perm: np.transpose(a, perm), (x,))
            for perm in itertools.permutations(range(3))] + \
        [Case("transpose2d", prim("transpose", perm=(1, 0)), np.transpose, (x[0],)),
         Case("transpose1d", prim("transpose", perm=(0,)), np.transpose, (x[0, 0],)),
         Case("transpose0d", prim("transpose", perm=()), np.transpose, (np.asarray(x[0, 0, 0]),))]


def _broadcast_to_cases():
    rng = _rng("broadcast_to")
    return [Case(f"broadcast_to{src}->{dst}", prim("broadcast_to", shape=dst),
                 lambda a, dst=dst: np.broadcast_to(a, dst), (rng.uniform(-2, 2, src),))
            for src, dst in [((3,), (2, 3)), ((2, 1), (2, 3)), ((), (2, 2)), ((1, 3), (4, 2, 3)),
                             ((2, 1, 3), (2, 4, 3))]]


def _concat_cases():
    rng = _rng("concat")
    cases = []
    for shapes, axis in [([(2, 3), (1, 3)], 0), ([(2, 1), (2, 3), (2, 2)], 1), ([(3,), (2,)], 0),
                         ([(2, 2, 1), (2, 2, 3)], 2)]:
        xs = tuple(rng.uniform(-2, 2, s) for s in shapes)
        cases.append(Case(f"concat{shapes}ax{axis}", prim("concat", axis=axis),
                          lambda *a, axis=axis: np.concatenate(a, axis=axis), xs))
    return cases


def _pad_cases():
    rng = _rng("pad")
    cases = []
    for shape, pads, cv in [((2, 3), ((1, 0), (0, 2)), 0), ((3,), ((2, 2),), 1.5), ((2, 2, 2), ((0, 0), (1, 1), (0, 3)), 0)]:
        cases.append(Case(f"pad{shape}{pads}cv{cv}", prim("pad", paddings=pads, constant_values=cv),
                          lambda a, pads=pads, cv=cv: np.pad(a, pads, constant_values=cv),
                          (rng.uniform(-2, 2, shape),)))
    return cases


# -- indexing ----------------------------------------------------------------------------------

def _getitem_cases():
    rng = _rng("getitem")
    x = rng.uniform(-2, 2, (4, 3, 2))
    cases = []
    keys = {
        "int": 1, "negint": -1, "slice": slice(1, 3), "step": slice(None, None, 2), "reverse": slice(None, None, -1),
        "tuple": (1, slice(0, 2)), "none": (None, slice(None), 0), "ellipsis": (Ellipsis, 1),
        "mixed": (slice(1, None), None, Ellipsis, -1),
    }
    for kname, key in keys.items():
        cases.append(Case(f"getitem[{kname}]", lambda a, key=key: I.getitem(a, key), lambda a, key=key: a[key], (x,)))
    # advanced: integer arrays (with repeats: gradients accumulate), boolean masks
    idx = np.array([0, 2, 2, 3, 0])
    cases.append(Case("getitem[int array repeats]", lambda a, i: I.getitem(a, (i,)), lambda a, i: a[i], (x, idx)))
    i2 = np.array([[0, 1], [1, 1]])
    cases.append(Case("getitem[:, int2d]", lambda a, i: I.getitem(a, (slice(None), i)),
                      lambda a, i: a[:, i], (x, i2)))
    j = np.array([1, 1, 0])
    k = np.array([0, 0, 2])
    cases.append(Case("getitem[i, :, j] separated", lambda a, i, jj: I.getitem(a, (i, slice(None), jj % 2)),
                      lambda a, i, jj: a[i, :, jj % 2], (x, k, j)))
    mask = rng.random((4, 3)) > 0.4
    cases.append(Case("getitem[mask2d]", lambda a, m: I.getitem(a, (m,)), lambda a, m: a[m], (x, mask)))
    m1 = np.array([True, False, True])
    cases.append(Case("getitem[:, mask]", lambda a, m: I.getitem(a, (slice(None), m)),
                      lambda a, m: a[:, m], (x, m1)))
    return cases


def _getitem_add_ref(like, g, *idx, key):
    z = np.zeros(like.shape, g.dtype)
    np.add.at(z, I.decode_key(key, idx), g)
    return z


def _tensor_scatter_cases(name, ufunc):
    def ref(t, u, idx):
        out = t.copy()
        ufunc.at(out, tuple(np.moveaxis(idx, -1, 0)), u)
        return out

    def cases():
        rng = _rng(name)
        # distinct values (a permutation), so no tie sits within eps of a finite difference
        t = rng.permutation(24).reshape(4, 6) / 7.0 - 1.5
        out = []
        for kname, idx in {"entries, repeated": np.array([[0, 1], [3, 5], [0, 1], [2, 2]]),
                           "rows, repeated": np.array([[1], [3], [1]])}.items():
            u_shape = idx.shape[:-1] + t.shape[idx.shape[-1]:]
            u = rng.permutation(int(np.prod(u_shape))).reshape(u_shape) / 5.0 - 1.3 + 1e-3
            out.append(Case(f"{name}[{kname}]", lambda tt, uu, ii: bind(P[name], tt, ii, uu, op=name),
                            ref, (t, u, idx)))
        return out
    return cases


def _cumprod_cases():
    def ref(x, axis, exclusive, reverse):
        if reverse:
            x = np.flip(x, axis)
        r = np.cumprod(x, axis=axis)
        if exclusive:
            r = np.concatenate([np.ones_like(np.take(r, [0], axis=axis)), np.delete(r, -1, axis=axis)], axis=axis)
        return np.flip(r, axis) if reverse else r
    rng = _rng("cumprod")
    cases = []
    for shape, axis in [((5,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), 2)]:
        for ex, rev in itertools.product((False, True), repeat=2):
            # (away from 0: TF's gradient formula, kept here, is 0 at a zero entry, not the derivative)
            cases.append(Case(f"cumprod{shape}ax{axis}ex{int(ex)}rev{int(rev)}",
                              prim("cumprod", axis=axis, exclusive=ex, reverse=rev),
                              lambda a, axis=axis, ex=ex, rev=rev: ref(a, axis, ex, rev), (_signed(rng, shape, 0.5, 1.5),)))
    return cases


def _searchsorted_cases():
    s = np.array([[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]], np.int32)
    v = np.array([[2, 4, 9], [0, 2, 6]], np.int32)
    sf = np.array([-1.0, 0.5, 0.5, 2.0])
    vf = np.array([0.5, -3.0, 7.0, 1.0, 2.0])
    return [Case(f"searchsorted[{side}]{a.dtype}", prim("searchsorted", side=side, out_type=np.dtype(np.int32)),
                 (lambda x, y, side=side: np.stack([np.searchsorted(r, q, side=side) for r, q in
                                                    zip(x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1]))])
                  .reshape(y.shape).astype(np.int32)), (a, b))
            for side in ("left", "right") for a, b in ((s, v), (sf, vf))]


def _segment_reduce_cases():
    """Every kind and ids rule against a NumPy loop: sorted ids (an empty segment is 0),
    unsorted (negative ids dropped; an empty max/min segment is the dtype's lowest/highest),
    bincount (ids >= maxlength dropped, minlength padding)."""
    def ref_for(kind, n, rule, maxlength=None):
        uf = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}[kind]

        def ref(d, ids):
            k = n if n is not None else int(ids.max()) + 1
            if maxlength is not None:
                k = min(k, maxlength)
            fill = {"sum": 0.0, "prod": 1.0, "max": np.finfo(d.dtype).min, "min": np.finfo(d.dtype).max}[kind]
            out = np.full((k,) + d.shape[ids.ndim:], fill, d.dtype)
            flat, rows = ids.reshape(-1), d.reshape((ids.size,) + d.shape[ids.ndim:])
            for i, r in zip(flat, rows):
                if 0 <= i < k:
                    out[i] = uf(out[i], r)
            if rule == "sorted" and kind in ("max", "min"):
                out[np.bincount(flat, minlength=k) == 0] = 0
            return out
        return ref

    rng = _rng("segment_reduce")
    out = []
    sorted_ids = np.array([0, 0, 2, 2, 2, 4], np.int32)
    unsorted_ids = np.array([[3, -1, 0], [2, 1, 0]], np.int64)
    for kind in ("sum", "max", "min", "prod"):
        d = _distinct(rng, (6, 2)) + 0.05
        out.append(Case(f"segment_reduce[{kind}, sorted]",
                        prim("segment_reduce", kind=kind, num_segments=None, ids_rule="sorted", op="segment_" + kind),
                        ref_for(kind, None, "sorted"), (d, sorted_ids)))
        d = _distinct(rng, (2, 3)) + 0.05
        # (max/min: no empty segment, whose fill, the dtype's lowest, swamps a finite difference)
        n = 4 if kind in ("max", "min") else 5
        out.append(Case(f"segment_reduce[{kind}, unsorted]",
                        prim("segment_reduce", kind=kind, num_segments=n, ids_rule="unsorted", op="u_" + kind),
                        ref_for(kind, n, "unsorted"), (d, unsorted_ids)))
    out.append(Case("segment_reduce[sum, bincount]",
                    prim("segment_reduce", kind="sum", num_segments=None, ids_rule="bincount", op="bincount",
                         minlength=0, maxlength=3),
                    ref_for("sum", None, "bincount", maxlength=3), (_distinct(rng, (5,)), np.array([1, 4, 0, 1, 2]))))
    return out


def _unique_forward_cases():
    x = np.array([3., 1., 3., np.nan, np.nan, 0., -0., 1.], np.float32)
    want = (np.array([0, 1, 3, 4, 5]), np.array([0, 1, 0, 2, 3, 4, 4, 1], np.int32), np.array([2, 2, 1, 1, 2], np.int32))
    xi = np.array([5, 5, 5], np.int64)
    want_i = (np.array([0]), np.array([0, 0, 0], np.int64), np.array([3], np.int64))
    return [Case(f"unique[{k}]{x.dtype}", (lambda a, k=k, d=d: bind(P["unique"], a, out_idx=d)[k]),
                 (lambda a, k=k, w=w: w[k]), (x,))
            for x, w, d in ((x, want, np.dtype(np.int32)), (xi, want_i, np.dtype(np.int64))) for k in range(3)]


def _strings(*items):
    out = np.empty(len(items), object)
    out[:] = list(items)
    return out


def _string_map_cases():
    """string_map: each element through a tapeflow.strings function (broadcast operands)."""
    from tapeflow import strings as S
    x = _strings(b"ab c", b"", b"\xc3\xa9!")
    bang = np.array(b"!", object)
    return [
        Case("string_map[length]", prim("string_map", fn=S._length_bytes, args=(), out=np.dtype(np.int32)),
             lambda a: np.array([len(s) for s in a], np.int32), (x,)),
        Case("string_map[length utf8]", prim("string_map", fn=S._length_chars, args=(), out=np.dtype(np.int32)),
             lambda a: np.array([len(s.decode()) for s in a], np.int32), (x,)),
        Case("string_map[join, broadcast]", prim("string_map", fn=S._join, args=(b"-",), out=np.dtype(object)),
             lambda a, b: _strings(*[s + b"-" + b[()] for s in a]), (x, bang)),
        Case("string_map[to_number]", prim("string_map", fn=S._to_number, args=("<f4",), out=np.dtype(np.float32)),
             lambda a: np.array([1.5, -2, 300], np.float32), (_strings(b"1.5", b" -2", b"3e2"),)),
    ]


def _string_split_cases():
    from tapeflow import strings as S
    x = _strings(b"a b  c", b"", b" d ")
    sp = S._words(None, -1)
    want = (_strings(b"a", b"b", b"c", b"d"), np.array([0, 3, 3, 4], np.int64))
    return [Case(f"string_split[{k}]", (lambda a, k=k: bind(P["string_split"], a, fn=sp, out=np.dtype(object))[k]),
                 (lambda a, k=k: want[k]), (x,)) for k in range(2)]


def _string_join_rows_cases():
    from tapeflow import strings as S
    vals = _strings(b"a", b"b", b"c")
    splits = np.array([0, 2, 2, 3], np.int64)
    return [Case("string_join_rows[reduce_join]",
                 prim("string_join_rows", fn=S._join_row_sep(b","), out=np.dtype(object)),
                 lambda v, s: _strings(b"a,b", b"", b"c"), (vals, splits))]


def _getitem_add_cases():
    rng = _rng("getitem_add")
    like = rng.uniform(-2, 2, (4, 3))
    cases = []
    for kname, key in {"slice": (slice(1, 3),), "int": (2, slice(None)), "ints repeated": (np.array([0, 3, 0, 0]),),
                       "pair": (np.array([0, 1, 0]), np.array([2, 2, 2]))}.items():
        tpl, idx = I.encode_key(key)
        g_shape = like[I.decode_key(tpl, idx)].shape
        g = rng.uniform(-2, 2, g_shape)
        cases.append(Case(f"getitem_add[{kname}]", lambda lk, gg, *ii, tpl=tpl: bind(P["getitem_add"], lk, gg, *ii, key=tpl),
                          lambda lk, gg, *ii, tpl=tpl: _getitem_add_ref(lk, gg, *ii, key=tpl),
                          (like, g) + tuple(idx)))
    return cases


# -- linear algebra ---------------------------------------------------------------------------

def _matmul_cases():
    rng = _rng("matmul")
    return [Case(f"matmul{sa}@{sb}", prim("matmul"), np.matmul, (rng.uniform(-1, 1, sa), rng.uniform(-1, 1, sb)))
            for sa, sb in [((2, 3), (3, 4)), ((1, 3), (3, 1)), ((5, 2, 3), (3, 4)), ((2, 3), (4, 3, 2)),
                           ((2, 1, 2, 3), (3, 3, 2)), ((3, 2, 2), (3, 2, 2))]]


def _dense_cases():
    # pre-activations kept away from relu's kink (finite differences straddle it otherwise)
    rng = _rng("dense")
    x, w = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 5))
    b = _signed(rng, (5,), 0.5, 1.0)
    assert min(np.abs(x @ w).min(), np.abs(x @ w + b).min()) > 1e-3
    cases = []
    for act in ("relu", "linear"):
        f = (lambda z: np.maximum(z, 0)) if act == "relu" else (lambda z: z)
        cases.append(Case(f"dense-{act}", prim("dense", activation=act), lambda x, w, b, f=f: f(x @ w + b),
                          (x, w, b)))
        cases.append(Case(f"dense-{act}-no-bias", prim("dense", activation=act), lambda x, w, f=f: f(x @ w),
                          (x, w)))
    return cases


EINSUM_SPECS = {
    "ij,jk->ik": [(2, 3), (3, 4)], "ij->j": [(2, 3)], "ij->ji": [(2, 3)], "bij,bjk->bik": [(2, 2, 3), (2, 3, 2)],
    "i,i->": [(4,), (4,)], "ij,kj->ik": [(2, 3), (4, 3)], "ijk->": [(2, 3, 2)], "ij,jk,kl->il": [(2, 3), (3, 2), (2, 2)],
    "i,j->ij": [(3,), (2,)], "ij,j->i": [(2, 3), (3,)], "ij,jk->k": [(2, 3), (3, 2)], "ij->": [(2, 2)],
}


def _einsum_cases():
    rng = _rng("einsum")
    return [Case(f"einsum[{spec}]", prim("einsum", spec=spec), lambda *a, spec=spec: np.einsum(spec, *a),
                 tuple(rng.uniform(-1, 1, s) for s in shapes)) for spec, shapes in EINSUM_SPECS.items()]


def _spd(rng, shape):
    a = rng.uniform(-1, 1, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _dense_linalg_cases(name):
    def gen():
        rng = _rng(name)
        shapes = [(3, 3), (2, 4, 4), (1, 1)]
        if name == "matrix_solve":
            return [Case(f"matrix_solve{s}", prim(name), np.linalg.solve,
                         (_spd(rng, s), rng.uniform(-1, 1, s[:-1] + (2,)))) for s in shapes]
        if name == "matrix_determinant":
            return [Case(f"det{s}", prim(name), np.linalg.det, (_spd(rng, s),)) for s in shapes]
        # Cholesky's input must stay symmetric under the finite-difference
        # perturbation: differentiate through a symmetrising map
        sym = lambda m: bind(P[name], 0.5 * (m + bind(P["transpose"], m, perm=tuple(range(m.ndim - 2)) +
                                                           (m.ndim - 1, m.ndim - 2))))  # noqa: E731
        return [Case(f"cholesky{s}", sym, lambda m: np.linalg.cholesky(0.5 * (m + np.swapaxes(m, -1, -2))),
                     (_spd(rng, s),)) for s in shapes]
    return gen


def _svd_cases():
    # singular vectors are defined up to sign: the cases read s, u*u, v*v and the reconstruction
    rng = _rng("svd")
    out = []
    for shape in [(3, 3), (4, 2), (2, 3, 4)]:
        a = rng.uniform(-1, 1, shape)
        out += [Case(f"svd_s{shape}", lambda m: bind(P["svd"], m, compute_uv=False, full_matrices=False)[0],
                     lambda m: np.linalg.svd(m, compute_uv=False), (a,)),
                Case(f"svd_uu{shape}", lambda m: bind(P["svd"], m, compute_uv=True, full_matrices=False)[1] ** 2,
                     lambda m: np.linalg.svd(m, full_matrices=False)[0] ** 2, (a,), rtol=1e-4),
                Case(f"svd_vv{shape}", lambda m: bind(P["svd"], m, compute_uv=True, full_matrices=False)[2] ** 2,
                     lambda m: np.swapaxes(np.linalg.svd(m, full_matrices=False)[2], -1, -2) ** 2, (a,), rtol=1e-4)]
    return out


# -- wave 18 (branch ops18): special functions, mul_no_nan, cumulative_logsumexp, qr, eigh ---------------

def _cumlse_cases():
    def ref(x, axis, exclusive, reverse):
        if reverse:
            x = np.flip(x, axis)
        r = np.logaddexp.accumulate(x, axis=axis)
        if exclusive:
            r = np.concatenate([np.full_like(np.take(r, [0], axis=axis), -np.inf), np.delete(r, -1, axis=axis)],
                               axis=axis)
        return np.flip(r, axis) if reverse else r
    rng = _rng("cumulative_logsumexp")
    cases = []
    for shape, axis in [((5,), 0), ((2, 3), 0), ((2, 3), 1)]:
        for ex, rev in itertools.product((False, True), repeat=2):
            x = rng.uniform(-2, 2, shape)
            # (an exclusive scan's first entry is -inf: its sum of gradients is checked, not its value)
            fn = prim("cumulative_logsumexp", axis=axis, exclusive=ex, reverse=rev)
            cases.append(Case(f"cumulative_logsumexp{shape}a{axis}{'x' if ex else ''}{'r' if rev else ''}",
                              fn if not ex else (lambda a, fn=fn: bind(P["select"], bind(P["isfinite"], fn(a)), fn(a), 0.0)),
                              (lambda a, axis=axis, ex=ex, rev=rev: ref(a, axis, ex, rev)) if not ex else None, (x,)))
    return cases


def _qr_eigh_cases():
    rng = _rng("qr")
    out = []
    for shape in [(4, 3), (3, 3), (2, 3, 5)]:
        a = rng.uniform(-1, 1, shape)
        out += [Case(f"qr_q{shape}", lambda m: bind(P["qr"], m, full_matrices=False)[0],
                     lambda m: np.linalg.qr(m)[0], (a,), rtol=1e-4),
                Case(f"qr_r{shape}", lambda m: bind(P["qr"], m, full_matrices=False)[1],
                     lambda m: np.linalg.qr(m)[1], (a,), rtol=1e-4)]
    return out


def _eigh_cases():
    # eigenvectors are defined up to sign: the cases read e and v*v; the input is symmetrised in the
    # case (the kernel reads the lower triangle)
    rng = _rng("eigh")
    out = []
    for n in (3, 4):
        a = rng.uniform(-1, 1, (n, n))
        sym = lambda m: (m + bind(P["transpose"], m, perm=(1, 0))) * 0.5  # noqa: E731
        out += [Case(f"eigh_e{n}", lambda m: bind(P["eigh"], sym(m))[0],
                     lambda m: np.linalg.eigh((m + m.T) / 2)[0], (a,), rtol=1e-4),
                Case(f"eigh_vv{n}", lambda m: bind(P["eigh"], sym(m))[1] ** 2,
                     lambda m: np.linalg.eigh((m + m.T) / 2)[1] ** 2, (a,), rtol=1e-4)]
    return out


_lgamma_ref = np.vectorize(math.lgamma)
_erfc_ref = np.vectorize(math.erfc)
_erf_ref = np.vectorize(math.erf)


# -- the table ----------------------------------------------------------------------------------

GRAD_CASES: dict[str, Callable[[], list[Case]]] = {
    "add": binary("add", np.add),
    "atan2": binary("atan2", np.arctan2),
    "sub": binary("sub", np.subtract),
    "mul": binary("mul", np.multiply),
    "div": binary("div", np.divide, db=_signed),
    "neg": unary("neg", np.negative),
    "pow": _pow_cases,
    "maximum": binary("maximum", np.maximum),
    "minimum": binary("minimum", np.minimum),
    "mod": _mod_cases,
    "exp": unary("exp", np.exp),
    "log": unary("log", np.log, _pos),
    "log1p": unary("log1p", np.log1p, lambda r, s: r.uniform(-0.7, 2, s)),
    "expm1": unary("expm1", np.expm1),
    "sin": unary("sin", np.sin),
    "cos": unary("cos", np.cos),
    "tan": unary("tan", np.tan, lambda r, s: r.uniform(-1.2, 1.2, s)),
    "tanh": unary("tanh", np.tanh),
    "sqrt": unary("sqrt", np.sqrt, _pos),
    "abs": unary("abs", np.abs, _signed),
    # (TF's gradient of sign is zeros, not None; away from 0 the finite differences are 0 too)
    "sign": unary("sign", np.sign, _signed),
    "atan": unary("atan", np.arctan),
    "asin": unary("asin", np.arcsin, lambda r, s: r.uniform(-0.9, 0.9, s)),
    "acos": unary("acos", np.arccos, lambda r, s: r.uniform(-0.9, 0.9, s)),
    "sinh": unary("sinh", np.sinh),
    "cosh": unary("cosh", np.cosh),
    "asinh": unary("asinh", np.arcsinh),
    "acosh": unary("acosh", np.arccosh, lambda r, s: r.uniform(1.1, 3, s)),
    "atanh": unary("atanh", np.arctanh, lambda r, s: r.uniform(-0.9, 0.9, s)),
    "sigmoid": unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), lambda r, s: r.uniform(-4, 4, s)),
    "select": _select_cases,
    "cast": _cast_cases,
    "reduce_sum": reduction("reduce_sum", np.sum),
    "reduce_max": reduction("reduce_max", np.max),
    "reduce_min": reduction("reduce_min", np.min),
    "reduce_prod": reduction("reduce_prod", np.prod, _prod_values),
    "cumsum": _cumsum_cases,
    "reshape": _reshape_cases,
    "transpose": _transpose_cases,
    "broadcast_to": _broadcast_to_cases,
    "concat": _concat_cases,
    "pad": _pad_cases,
    "getitem": _getitem_cases,
    "getitem_add": _getitem_add_cases,
    "tensor_scatter_max": _tensor_scatter_cases("tensor_scatter_max", np.maximum),
    "segment_reduce": _segment_reduce_cases,
    "cumprod": _cumprod_cases,
    "ensure_shape": lambda: [Case(f"ensure_shape{sh}", prim("ensure_shape", shape=sh), lambda a: a,
                                  (np.linspace(-1, 1, 6).reshape(2, 3),)) for sh in [(2, 3), (None, 3), (None, None)]],
    "tensor_scatter_min": _tensor_scatter_cases("tensor_scatter_min", np.minimum),
    "matmul": _matmul_cases,
    "dense": _dense_cases,
    "einsum": _einsum_cases,
    "matrix_solve": _dense_linalg_cases("matrix_solve"),
    "matrix_determinant": _dense_linalg_cases("matrix_determinant"),
    "cholesky": _dense_linalg_cases("cholesky"),
    "svd": _svd_cases,
    "lgamma": unary("lgamma", _lgamma_ref, lambda r, s: r.uniform(0.3, 4, s)),
    "polygamma": lambda: [Case(f"polygamma{n}{s}", prim("polygamma", n=n), None,
                               (np.random.default_rng(n).uniform(0.5, 4, s),)) for n in (0, 1) for s in UNARY_SHAPES],
    "erfc": unary("erfc", _erfc_ref),
    "erf": unary("erf", _erf_ref),
    "erfinv": lambda: [Case(f"erfinv{s}", prim("erfinv"), None, (np.random.default_rng(9).uniform(-0.8, 0.8, s),))
                       for s in UNARY_SHAPES],
    "nextafter": binary("nextafter", np.nextafter, db=lambda r, s: r.uniform(3, 5, s), scalar=9.5),
    "mul_no_nan": binary("mul_no_nan", np.multiply),
    "cumulative_logsumexp": _cumlse_cases,
    "qr": _qr_eigh_cases,
    # (differentiable in x only: a is a constant of the case)
    "igamma": lambda: [Case(f"igamma{a}", lambda x, a=a: bind(P["igamma"], np.full(3, a), x), None,
                            (np.array([0.3, 1.7, 6.0]),), order=1) for a in (0.6, 2.5)],
    "igammac": lambda: [Case(f"igammac{a}", lambda x, a=a: bind(P["igammac"], np.full(3, a), x), None,
                             (np.array([0.3, 1.7, 6.0]),), order=1) for a in (0.6, 2.5)],

    "eigh": _eigh_cases,
    # wave 21 (core/primitives/cephes.py): a sample of special_unary's functions (tests/test_cephes.py has them
    # all against TF); betainc in x only and zeta in q only, as TF
    "special_unary": lambda: [Case(f"special_{fn}{s}", prim("special_unary", fn=fn), None,
                                   (np.random.default_rng(len(fn)).uniform(0.4, 3.0, s),))
                              for fn in ("bessel_i0", "bessel_i1e", "bessel_k1e", "bessel_j1", "bessel_y0", "dawsn",
                                         "expint", "fresnel_sin", "spence") for s in UNARY_SHAPES],
    "betainc": lambda: [Case(f"betainc{a}", lambda x, a=a: bind(P["betainc"], np.full(3, a), np.full(3, 1.5), x),
                             None, (np.array([0.2, 0.5, 0.8]),)) for a in (0.7, 2.0)],
    "zeta": lambda: [Case(f"zeta{x}", lambda q, x=x: bind(P["zeta"], np.full(3, x), q), None,
                          (np.array([0.7, 1.5, 4.0]),)) for x in (1.5, 3.0)],
}


# complex numbers and FFTs (wave 21): float64 in and out, through complex128 in between (a complex
# weight makes every part of the complex value count in the loss)
_CW = np.array([0.3 + 1.0j, -1.0 + 0.25j, 2.0 - 0.5j, 0.5 + 2.0j, 1.5 - 1.0j])


def _complex_cases():
    rng = _rng("complex")
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    cplx, real, imag, conj = (P[n] for n in ("complex", "real", "imag", "conj"))
    return {
        "complex": [Case("complex", lambda x, y: bind(real, bind(cplx, x, y) * _CW), lambda x, y: np.real((x + 1j * y) * _CW),
                         (a, b)),
                    Case("complex_bcast", lambda x, y: bind(imag, bind(cplx, x, y) * _CW),
                         lambda x, y: np.imag((x + 1j * y) * _CW), (a, np.float64(0.7)))],
        "real": [Case("real", lambda x, y: bind(real, bind(cplx, x, y) * bind(cplx, y, x)),
                      lambda x, y: np.real((x + 1j * y) * (y + 1j * x)), (a, b))],
        "imag": [Case("imag", lambda x, y: bind(imag, bind(cplx, x, y) * bind(cplx, x, x)),
                      lambda x, y: np.imag((x + 1j * y) * (x + 1j * x)), (a, b))],
        "conj": [Case("conj", lambda x, y: bind(real, bind(conj, bind(cplx, x, y)) * _CW),
                      lambda x, y: np.real(np.conj(x + 1j * y) * _CW), (a, b))],
    }


def _fft_cases():
    rng = _rng("fft")
    fft, cplx, real, imag = (P[n] for n in ("fft", "complex", "real", "imag"))
    x5, y5 = rng.standard_normal(5), rng.standard_normal(5)
    x23, y23 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    w3 = _CW[:3]
    w = {n: rng.standard_normal(n) + 1j * rng.standard_normal(n) for n in (2, 3, 4, 5, 6, 8)}
    cases = [
        Case("fft", lambda x, y: bind(real, bind(fft, bind(cplx, x, y), kind="fft", ndims=1, lengths=(5,)) * _CW),
             lambda x, y: np.real(np.fft.fft(x + 1j * y) * _CW), (x5, y5)),
        Case("ifft", lambda x, y: bind(imag, bind(fft, bind(cplx, x, y), kind="ifft", ndims=1, lengths=(5,)) * _CW),
             lambda x, y: np.imag(np.fft.ifft(x + 1j * y) * _CW), (x5, y5)),
        Case("fft2d", lambda x, y: bind(real, bind(fft, bind(cplx, x, y), kind="fft", ndims=2, lengths=(2, 3)) * w3),
             lambda x, y: np.real(np.fft.fft2(x + 1j * y) * w3), (x23, y23)),
        Case("rfft", lambda x: bind(real, bind(fft, x, kind="rfft", ndims=1, lengths=(5,)) * w3),
             lambda x: np.real(np.fft.rfft(x) * w3), (x5,)),
        # fft_length crops (3 < 5) and zero-pads (8 > 5) the signal
        Case("rfft_crop", lambda x: bind(imag, bind(fft, x, kind="rfft", ndims=1, lengths=(3,)) * w[2]),
             lambda x: np.imag(np.fft.rfft(x[:3]) * w[2]), (x5,)),
        Case("rfft_pad", lambda x: bind(imag, bind(fft, x, kind="rfft", ndims=1, lengths=(8,)) * _CW),
             lambda x: np.imag(np.fft.rfft(x, 8) * _CW), (x5,)),
        Case("rfft2d_pad", lambda x: bind(real, bind(fft, x, kind="rfft", ndims=2, lengths=(3, 4)) * w3),
             lambda x: np.real(np.fft.rfft2(x, (3, 4)) * w3), (x23,)),
        # irfft of even and odd lengths, with the half spectrum cropped (4 -> 3 bins) and padded
        Case("irfft8", lambda x, y: bind(fft, bind(cplx, x, y), kind="irfft", ndims=1, lengths=(8,)) * w[8].real,
             lambda x, y: np.fft.irfft(x + 1j * y, 8) * w[8].real, (x5, y5)),
        Case("irfft5", lambda x, y: bind(fft, bind(cplx, x, y), kind="irfft", ndims=1, lengths=(5,)) * w[5].real,
             lambda x, y: np.fft.irfft((x + 1j * y)[:3], 5) * w[5].real, (x5, y5)),
        Case("irfft4", lambda x, y: bind(fft, bind(cplx, x, y), kind="irfft", ndims=1, lengths=(4,)) * w[4].real,
             lambda x, y: np.fft.irfft((x + 1j * y)[:3], 4) * w[4].real, (x5, y5)),
        Case("irfft12", lambda x, y: bind(fft, bind(cplx, x, y), kind="irfft", ndims=1, lengths=(12,)),
             lambda x, y: np.fft.irfft(x + 1j * y, 12), (x5, y5)),
        Case("irfft2d", lambda x, y: bind(fft, bind(cplx, x, y), kind="irfft", ndims=2, lengths=(2, 4)) * w[4].real,
             lambda x, y: np.fft.irfft2(x + 1j * y, (2, 4)) * w[4].real, (x23, y23)),
    ]
    return cases


GRAD_CASES.update({name: (lambda name=name: _complex_cases()[name]) for name in ("complex", "real", "imag", "conj")})
GRAD_CASES["fft"] = _fft_cases


def _eig_cases():
    eig, real, imag = P["eig"], P["real"], P["imag"]
    a = np.array([[1., 2., 0.], [-1., 3., 1.], [0.5, 0., 2.]])
    w = np.array([1.0, 2.0, 3.0])

    def phase_free(x):   # eigenvalues and |v|: the eigenvectors' phases are LAPACK's choice
        e, v = bind(eig, x)
        return bind(real, e) * w + bind(imag, e) * w * w, bind(P["abs"], v)
    return [Case("eig_values", lambda x: phase_free(x)[0],
                 lambda x: (lambda e: e.real * w + e.imag * w * w)(np.linalg.eig(x)[0]), (a,), order=1),
            Case("eig_vectors_abs", lambda x: phase_free(x)[1], lambda x: np.abs(np.linalg.eig(x)[1]), (a,), order=1)]


GRAD_CASES["eig"] = _eig_cases

# convolution and pooling: cases and naive references live with their tests (tests/conv_reference.py)
GRAD_CASES.update({name: (lambda name=name: [Case(**c) for c in conv_reference.primitive_cases()[name]])
                   for name in conv_reference.PRIMITIVES})


def _grad_params():
    out = []
    for name, gen in GRAD_CASES.items():
        for c in gen():
            out.append(pytest.param(name, c, id=c.id))
    return out


GRAD_PARAMS = _grad_params()


@pytest.mark.parametrize("name,case", GRAD_PARAMS)
def test_forward_matches_numpy(name, case):
    if case.ref is None:
        pytest.skip("gradient-only case")
    out = case.fn(*[tf.constant(a) for a in case.args])
    expected = np.asarray(case.ref(*case.args))
    assert_close(out, expected, rtol=1e-12, atol=1e-12, dtype=False)
    assert np_of(out).dtype == (np.float64 if expected.dtype.kind == "f" else expected.dtype)


@pytest.mark.parametrize("name,case", GRAD_PARAMS)
def test_gradient_matches_finite_differences(name, case):
    check_grads(case.fn, case.args, order=case.order, rtol=case.rtol, eps=case.eps)


# -- non-differentiable primitives: forward only ------------------------------------------------

def _fwd(name, ref, *args, **params):
    return Case(f"{name}{[np.shape(a) for a in args]}{params or ''}", prim(name, **params),
                (lambda *a: ref(*a, **params)) if params else ref, args)


def _nd_unary(name, ref, values):
    return lambda: [_fwd(name, ref, v) for v in values]


_R = np.random.default_rng(7)
_XF = _R.uniform(-3, 3, (3, 4)).astype(np.float32)
_HALF = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4999, -0.0], np.float32)
_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 3.0], np.float32)
_XI = _R.integers(-5, 6, (3, 4)).astype(np.int32)
_B1 = _R.random((3, 4)) > 0.5
_B2 = _R.random((4,)) > 0.5


def _cmp(name, ref):
    return lambda: [_fwd(name, ref, _XF, _XF[0]), _fwd(name, ref, _XI, _XI[::-1]), _fwd(name, ref, _XF, 0.5),
                    _fwd(name, ref, _XF, _XF)]


def _logic(name, ref):
    return lambda: [_fwd(name, ref, _B1, _B2), _fwd(name, ref, _B1, _B1[::-1]), _fwd(name, ref, _B1, True)]


def _arg_cases(name, ref):
    def gen():
        x = _distinct(np.random.default_rng(3), (3, 4, 2)).astype(np.float32)
        cases = []
        for axis in range(3):
            for ot in (np.int64, np.int32):
                cases.append(_fwd(name, lambda a, axis, output_type: ref(a, axis=axis).astype(output_type),
                                  x, axis=axis, output_type=np.dtype(ot)))
        return cases
    return gen


def _argsort_ref(x, axis, descending):
    if descending:
        return _stable_desc(x, axis)
    return np.argsort(x, axis=axis, kind="stable").astype(np.int32)


def _stable_desc(x, axis):
    # descending, ties in original order
    xm = np.moveaxis(x, axis, -1)
    out = np.empty(xm.shape, np.int32)
    for idx in np.ndindex(*xm.shape[:-1]):
        row = xm[idx]
        out[idx] = sorted(range(len(row)), key=lambda i: (-row[i], i))
    return np.moveaxis(out, -1, axis)


def _argsort_cases():
    ties = np.array([[3, 1, 3, 2, 1], [0, 0, 0, 5, 5]], np.float32)
    ints = np.array([[3, 1, 3, 2, 1], [0, -7, 0, 5, 5]], np.int32)
    out = []
    for x in (ties, ints, _XF):
        for axis in range(2):
            for desc in (False, True):
                out.append(_fwd("argsort", _argsort_ref, x, axis=axis, descending=desc))
    return out


def _floordiv_cases():
    xf = np.array([[7.0, -7.0, 7.5, -7.5], [0.5, -0.5, 3.0, -3.0]], np.float32)
    yf = np.array([2.0, 2.0, -2.0, -2.0], np.float32)
    xi = np.array([[7, -7, 7, -7], [0, -1, 3, -3]], np.int32)
    yi = np.array([2, 2, -2, -2], np.int32)
    return [_fwd("floordiv", np.floor_divide, xf, yf), _fwd("floordiv", np.floor_divide, xi, yi),
            _fwd("floordiv", lambda a, b: np.floor_divide(a, np.int32(b)), xi, 3)]


FORWARD_CASES: dict[str, Callable[[], list[Case]]] = {
    "shape": lambda: [Case(f"shape{np.shape(a)}{dt.__name__}", prim("shape", out_type=np.dtype(dt)),
                           lambda a, dt=dt: np.asarray(np.shape(a), dt), (a,))
                      for a in (_XF, _XI, np.float32(1.5), np.zeros((2, 0, 3), np.float32)) for dt in (np.int32, np.int64)],
    "unique": _unique_forward_cases,
    "string_map": _string_map_cases,
    "string_split": _string_split_cases,
    "string_join_rows": _string_join_rows_cases,
    "searchsorted": _searchsorted_cases,
    "floordiv": _floordiv_cases,
    # igamma's derivative in a, the series and continued-fraction branches (these bits; mpmath's values
    # are within 3e-16 of them, tests/test_special.py checks 15 points against mpmath and TF)
    "igamma_grad_a": lambda: [Case("igamma_grad_a", prim("igamma_grad_a"),
                                   lambda a, x: np.array([-0.1356193352039972, -0.025092260855637084,
                                                          -0.3320071009533714]),
                                   (np.array([0.5, 3.0, 1.5]), np.array([2.0, 7.5, 1.6])))],
    # range: the result's length is a value (int and float bounds, descending, empty, TF's dtypes)
    "range": lambda: [Case(f"range{a}-{dt.__name__}", prim("range", dtype=np.dtype(dt)),
                           lambda s, l, d, dt=dt: np.arange(s, l, d, dtype=dt),
                           tuple(np.asarray(v, dt) for v in a))
                      for a, dt in [((0, 5, 1), np.int32), ((5, 0, -2), np.int64), ((3, 1, 1), np.int32),
                                    ((0.5, 2.0, 0.25), np.float32), ((1.0, -1.0, -0.5), np.float64)]],
    "floor": _nd_unary("floor", np.floor, [_XF, _HALF]),
    "ceil": _nd_unary("ceil", np.ceil, [_XF, _HALF]),
    "round": _nd_unary("round", np.round, [_XF, _HALF]),  # half to even
    "isnan": _nd_unary("isnan", np.isnan, [_SPECIAL, _XF]),
    "isfinite": _nd_unary("isfinite", np.isfinite, [_SPECIAL, _XF]),
    "logical_not": _nd_unary("logical_not", np.logical_not, [_B1, np.array(True)]),
    "equal": _cmp("equal", np.equal),
    "not_equal": _cmp("not_equal", np.not_equal),
    "less": _cmp("less", np.less),
    "less_equal": _cmp("less_equal", np.less_equal),
    "greater": _cmp("greater", np.greater),
    "greater_equal": _cmp("greater_equal", np.greater_equal),
    "logical_and": _logic("logical_and", np.logical_and),
    "logical_or": _logic("logical_or", np.logical_or),
    "logical_xor": _logic("logical_xor", np.logical_xor),
    "argmax": _arg_cases("argmax", np.argmax),
    "argmin": _arg_cases("argmin", np.argmin),
    "argsort": _argsort_cases,
    "stop_gradient": _nd_unary("stop_gradient", lambda a: a, [_XF, _XI]),
    "bitwise_and": lambda: [_fwd("bitwise_and", np.bitwise_and, _XI, _XI[::-1]), _fwd("bitwise_and", np.bitwise_and, _XI, 3)],
    "bitwise_or": lambda: [_fwd("bitwise_or", np.bitwise_or, _XI, _XI[0])],
    "bitwise_xor": lambda: [_fwd("bitwise_xor", np.bitwise_xor, _XI, _XI[::-1])],
    "invert": _nd_unary("invert", np.invert, [_XI, _XI.astype(np.uint8)]),
    # (shifts clamped to [0, bits - 1], TF's rule: tests/test_bitwise.py has TF's numbers)
    "left_shift": lambda: [_fwd("left_shift", lambda a, b: np.left_shift(a, np.clip(b, 0, 31)), _XI, np.abs(_XI))],
    "right_shift": lambda: [_fwd("right_shift", lambda a, b: np.right_shift(a, np.clip(b, 0, 31)), _XI, np.abs(_XI))],
    # matmul's forms in fused loops (compiler-made; tests/test_fused_narrow.py runs them in loops)
    "outer_sum": lambda: [_fwd("outer_sum", np.matmul, _R.standard_normal((5, 3)).astype(np.float32),
                               _R.standard_normal((3, 4)).astype(np.float32))],
    "row_dots": lambda: [_fwd("row_dots", lambda a, bt: a @ bt.T, _R.standard_normal((5, 4)).astype(np.float32),
                              _R.standard_normal((3, 4)).astype(np.float32))],
    "col_dots": lambda: [_fwd("col_dots", lambda x, g: x.T @ g, _R.standard_normal((5, 4)).astype(np.float32),
                              _R.standard_normal((5, 3)).astype(np.float32))],
}

FWD_PARAMS = [pytest.param(name, c, id=c.id) for name, gen in FORWARD_CASES.items() for c in gen()]


@pytest.mark.parametrize("name,case", FWD_PARAMS)
def test_nondifferentiable_forward(name, case):
    out = case.fn(*[tf.constant(a) if isinstance(a, np.ndarray) else a for a in case.args])
    expected = np.asarray(case.ref(*case.args))
    a = np_of(out)
    assert a.shape == expected.shape
    if expected.dtype == np.float64 and a.dtype == np.float32:
        expected = expected.astype(np.float32)
    assert a.dtype == expected.dtype, f"{a.dtype} != {expected.dtype}"
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "stop_gradient", "floordiv"])
def test_nondifferentiable_primitives_block_gradients(name):
    x = tf.constant([1.3, -2.7, 0.4], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bind(P[name], x * 3.0, 2.0) if name == "floordiv" else bind(P[name], x * 3.0)
        z = tf.reduce_sum(y * y)
    assert tape.gradient(z, x) is None
    assert name in NON_DIFFERENTIABLE and not P[name].differentiable


# -- hypothesis sweeps: broadcasting shapes, axes, keepdims -------------------------------------

BINARY_FWD = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
              "minimum": np.minimum, "equal": np.equal, "less": np.less, "greater_equal": np.greater_equal,
              "mod": np.mod, "floordiv": np.floor_divide}


@HYP
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       name=st.sampled_from(sorted(BINARY_FWD)), seed=st.integers(0, 2**16))
def test_sweep_binary_broadcasting_forward(shapes, name, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = rng.uniform(-2, 2, sa).astype(np.float32)
    b = _signed(rng, sb, 0.5, 2).astype(np.float32)
    out = bind(P[name], tf.constant(a), tf.constant(b))
    expected = BINARY_FWD[name](a, b)
    assert tuple(out.shape) == shapes.result_shape
    assert_close(out, np.asarray(expected), rtol=1e-6, atol=1e-6)


@HYP
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       name=st.sampled_from(["add", "sub", "mul", "div", "pow"]), seed=st.integers(0, 2**16))
def test_sweep_binary_broadcasting_gradients(shapes, name, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = rng.uniform(0.5, 2, sa) if name == "pow" else rng.uniform(-2, 2, sa)
    b = _signed(rng, sb, 0.5, 2)
    check_grads(prim(name), (a, b), seed=seed)


@st.composite
def shape_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    nd = len(shape)
    if draw(st.booleans()) or nd == 0:
        axes = None
    else:
        axes = tuple(sorted(draw(st.sets(st.integers(0, nd - 1), min_size=1))))
    return shape, axes, draw(st.booleans())


REDUCE_FWD = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min, "reduce_prod": np.prod}


@HYP
@given(sak=shape_and_axes(), name=st.sampled_from(sorted(REDUCE_FWD)), seed=st.integers(0, 2**16))
def test_sweep_reductions(sak, name, seed):
    shape, axes, kd = sak
    rng = np.random.default_rng(seed)
    x = _prod_values(rng, shape) if name == "reduce_prod" else _distinct(rng, shape)
    ax = tuple(range(len(shape))) if axes is None else axes
    fn = prim(name, axis=ax, keepdims=kd)
    out = fn(tf.constant(x))
    assert_close(out, np.asarray(REDUCE_FWD[name](x, axis=ax, keepdims=kd)), rtol=1e-12)
    check_grads(fn, (x,), seed=seed)


@HYP
@given(sak=shape_and_axes(), seed=st.integers(0, 2**16))
def test_sweep_public_reductions_axes_keepdims(sak, seed):
    """The public ops normalise negative/None/list axes before binding."""
    shape, axes, kd = sak
    rng = np.random.default_rng(seed)
    x = _distinct(rng, shape).astype(np.float32)
    nd = len(shape)
    if axes is not None and seed % 2:
        axes = tuple(a - nd for a in axes)  # negative spelling
    axis = list(axes) if axes is not None else None
    for op, ref in [(tf.reduce_sum, np.sum), (tf.reduce_max, np.max), (tf.reduce_min, np.min),
                    (tf.reduce_mean, np.mean), (tf.reduce_prod, np.prod)]:
        want = ref(x, axis=None if axes is None else tuple(axes), keepdims=kd)
        assert_close(op(tf.constant(x), axis=axis, keepdims=kd), np.asarray(want, np.float32), rtol=1e-5, atol=1e-5)


@st.composite
def array_and_basic_index(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    return shape, draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))


@HYP
@given(case=array_and_basic_index(), seed=st.integers(0, 2**16))
def test_sweep_basic_indexing(case, seed):
    shape, key = case
    x = np.random.default_rng(seed).uniform(-2, 2, shape)
    fn = lambda a: I.getitem(a, key)  # noqa: E731
    assert_close(fn(tf.constant(x)), x[key], rtol=0, atol=0)
    check_grads(fn, (x,), seed=seed)


@st.composite
def array_and_int_index(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    return shape, draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(min_dims=1, max_dims=2,
                                                                                        max_side=5)))


@HYP
@given(case=array_and_int_index(), seed=st.integers(0, 2**16))
def test_sweep_integer_array_indexing(case, seed):
    """Advanced indexing, repeats included: forward as NumPy, gradients accumulate."""
    shape, key = case
    x = np.random.default_rng(seed).uniform(-2, 2, shape)
    fn = lambda a: I.getitem(a, key)  # noqa: E731
    assert_close(fn(tf.constant(x)), x[key], rtol=0, atol=0)
    check_grads(fn, (x,), seed=seed)


@HYP
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=3), data=st.data())
def test_sweep_transpose_reshape(shape, data):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    x = np.random.default_rng(len(shape)).uniform(-2, 2, shape)
    fn = lambda a: prim("reshape", shape=(-1,))(prim("transpose", perm=perm)(a)) ** 2  # noqa: E731
    assert_close(fn(tf.constant(x)), np.transpose(x, perm).reshape(-1) ** 2, rtol=1e-15)
    check_grads(fn, (x,))


# -- extra cases for specific rules ------------------------------------------------------------

def test_reduce_max_ties_share_the_gradient():
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bind(P["reduce_max"], x, axis=(1,), keepdims=False)
    g = tape.gradient(y, x)
    assert_close(g, np.array([[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]))


def test_reduce_prod_gradient_with_zeros():
    xv = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    x = tf.constant(xv)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bind(P["reduce_prod"], x, axis=(1,), keepdims=False)
    g = np_of(tape.gradient(y, x))
    expected = np.array([[6.0, 0, 0], [0, 0, 0], [8.0, 4.0, 2.0]])
    assert np.all(np.isfinite(g))
    assert_close(g, expected)


def test_maximum_ties_go_to_second_argument():
    x = tf.constant([0.0, 1.0, -1.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bind(P["maximum"], x, 0.0)
    assert_close(tape.gradient(y, x), np.array([0.0, 1.0, 0.0]))


def test_einsum_repeated_index_gradient_is_reported():
    x = tf.constant(np.eye(2))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bind(P["einsum"], x, spec="ii->")
    assert float(y) == 2.0
    with pytest.raises(NotImplementedError, match="diagonal"):
        tape.gradient(y, x)


def test_getitem_gradient_repeated_indices_accumulate():
    x = tf.constant([1.0, 2.0, 3.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = I.getitem(x, (np.array([2, 0, 2, 2]),))
    assert_close(tape.gradient(y, x), np.array([1.0, 0.0, 3.0]))


# -- primitives with effects: behaviour --------------------------------------------------------

def test_read_variable_snapshot_and_gradient():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        r = bind(P["read_variable"], var=v)    # the primitive itself
        r2 = v.read_value()                 # the method (records read_variable)
        y = tf.reduce_sum(r * r2)
        v.assign([10.0, 20.0])              # later writes do not change the reads
    assert_close(r, np.array([1.0, 2.0], np.float32))
    assert_close(r2, np.array([1.0, 2.0], np.float32))
    assert_close(v, np.array([10.0, 20.0], np.float32))
    names = [n[0].name for n in tape._nodes]
    assert "read_variable" in names
    assert_close(tape.gradient(y, v), np.array([2.0, 4.0], np.float32))
    assert P["read_variable"].effect == "read"


def test_read_variable_of_untrainable_variable_is_not_watched():
    v = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        y = v * v
    assert tape.gradient(y, v) is None
    assert tape.watched_variables() == ()


def test_assign_variable_replaces_buffer_and_keeps_dtype():
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    before = v.read_value()
    out = bind(P["assign_variable"], np.array([5.0, 6.0], np.float64), var=v)
    assert out == ()
    assert_close(v, np.array([5.0, 6.0], np.float32))
    assert_close(before, np.array([1.0, 2.0], np.float32))  # earlier read unchanged
    src = np.array([7.0, 8.0], np.float32)
    bind(P["assign_variable"], src, var=v)
    src[0] = 100.0                                           # the variable owns a copy
    assert_close(v, np.array([7.0, 8.0], np.float32))
    assert P["assign_variable"].effect == "write" and "assign_variable" in NON_DIFFERENTIABLE


def test_assign_variable_is_not_recorded_by_tapes():
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = v * 3.0
        bind(P["assign_variable"], np.float32(9.0), var=v)
    assert float(y) == 6.0
    assert all(n[0].name != "assign_variable" for n in tape._nodes)
    assert_close(tape.gradient(y, v), np.float32(3.0))


def test_print_writes_template_and_values(capsys):
    t = tf.constant([1, 2, 3])
    out = bind(P["print"], t, tf.constant(2.5), template=("x = ", None, " y = ", None),
               output_stream="stdout", summarize=3, end="\n")
    assert out == ()
    assert capsys.readouterr().out == "x = [1 2 3] y = 2.5\n"
    bind(P["print"], t, template=(None,), output_stream="stderr", summarize=3, end="\n")
    captured = capsys.readouterr()
    assert captured.err == "[1 2 3]\n" and captured.out == ""
    assert P["print"].effect == "io"


def test_assert_raises_with_its_message_only_when_the_condition_fails():
    t = tf.constant([1, -2, 3])
    assert bind(P["assert"], tf.constant([True, True]), t, template=("never",), summarize=3) == ()
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        bind(P["assert"], tf.constant([True, False]), t, template=("x has a negative entry: x = ", None),
             summarize=3)
    assert str(e.value).startswith("x has a negative entry: x = [1 -2 3]")
    with pytest.raises(tf.errors.InvalidArgumentError, match="the condition must be bool"):
        bind(P["assert"], t, template=("x",), summarize=3)
    assert P["assert"].effect == "io" and not P["assert"].differentiable


def test_random_normal_seeded_and_distribution():
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    a = bind(P["random_normal"], shape=(20000,), dtype=np.dtype(np.float32), mean=2.0, stddev=3.0, gen=g1)
    b = bind(P["random_normal"], shape=(20000,), dtype=np.dtype(np.float32), mean=2.0, stddev=3.0, gen=g2)
    c = bind(P["random_normal"], shape=(20000,), dtype=np.dtype(np.float32), mean=2.0, stddev=3.0, gen=g1)
    assert a.dtype == tf.float32 and tuple(a.shape) == (20000,)
    np.testing.assert_array_equal(np_of(a), np_of(b))            # same seed, same stream
    assert not np.array_equal(np_of(a), np_of(c))                 # the stream advances
    v = np_of(a).astype(np.float64)
    assert abs(v.mean() - 2.0) < 0.1 and abs(v.std() - 3.0) < 0.1
    d = bind(P["random_normal"], shape=(2, 3), dtype=np.dtype(np.float64), mean=0.0, stddev=1.0, gen=g1)
    assert d.dtype == tf.float64 and tuple(d.shape) == (2, 3)
    assert P["random_normal"].effect == "random"


def test_random_truncated_normal_seeded_and_distribution():
    # a NumPy generator redraws until every value is inside 2 standard deviations (the Philox
    # streams' TF numbers are checked in test_random_philox.py)
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    kw = dict(shape=(40000,), dtype=np.dtype(np.float32), mean=1.0, stddev=2.0)
    a = np_of(bind(P["random_truncated_normal"], gen=g1, **kw))
    np.testing.assert_array_equal(a, np_of(bind(P["random_truncated_normal"], gen=g2, **kw)))
    assert a.dtype == np.float32 and np.abs(a - 1.0).max() < 4.0
    assert abs(a.mean() - 1.0) < 0.05 and abs(a.std() - 2.0 * 0.8796) < 0.03
    assert not np.array_equal(a, np_of(bind(P["random_truncated_normal"], gen=g1, **kw)))
    assert P["random_truncated_normal"].effect == "random" and not P["random_truncated_normal"].differentiable


def test_random_uniform_seeded_and_distribution():
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    kw = dict(shape=(4, 5000), dtype=np.dtype(np.float32), minval=-1.0, maxval=3.0)
    a = np_of(bind(P["random_uniform"], gen=g1, **kw))
    b = np_of(bind(P["random_uniform"], gen=g2, **kw))
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and a.min() >= -1.0 and a.max() < 3.0
    assert abs(a.mean() - 1.0) < 0.05
    ints = np_of(bind(P["random_uniform"], shape=(10000,), dtype=np.dtype(np.int32), minval=2, maxval=6, gen=g1))
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {2, 3, 4, 5}
    assert P["random_uniform"].effect == "random"


def test_random_primitives_reject_unknown_shapes():
    with pytest.raises(ValueError, match="random.normal"):
        P["random_normal"].abstract(shape=(2, None), dtype=np.dtype(np.float32), mean=0.0, stddev=1.0, gen=None)


def test_py_call_runs_the_function_each_call_and_checks_declared_outputs():
    from tapeflow.core.aval import Aval
    calls = []

    def fn(x):
        calls.append(1)
        return np.sort(x)
    x = np.array([3., 1., 2.], np.float32)
    for _ in range(2):
        (y,) = bind(P["py_call"], x, fn=fn, out_avals=(Aval((3,), np.dtype(np.float32)),), name="numpy_function")
        np.testing.assert_array_equal(np_of(y), [1., 2., 3.])
    assert len(calls) == 2
    with pytest.raises(ValueError, match="Tout declares"):
        bind(P["py_call"], x, fn=fn, out_avals=(Aval((2,), np.dtype(np.float32)),), name="numpy_function")


EFFECT_TESTS = {
    "read_variable": [test_read_variable_snapshot_and_gradient, test_read_variable_of_untrainable_variable_is_not_watched],
    "assign_variable": [test_assign_variable_replaces_buffer_and_keeps_dtype, test_assign_variable_is_not_recorded_by_tapes],
    "print": [test_print_writes_template_and_values],
    "assert": [test_assert_raises_with_its_message_only_when_the_condition_fails],
    "random_normal": [test_random_normal_seeded_and_distribution, test_random_primitives_reject_unknown_shapes],
    "random_uniform": [test_random_uniform_seeded_and_distribution],
    "random_truncated_normal": [test_random_truncated_normal_seeded_and_distribution],
    "py_call": [test_py_call_runs_the_function_each_call_and_checks_declared_outputs],
}


# -- the meta-test ----------------------------------------------------------------------------------

#: Control-flow primitives owned by the compiler work (tapeflow/ir, tapeflow/compiler), tested there.
COMPILER_OWNED_NAMES = {"cond", "while", "while_loop", "scan", "fori_loop", "switch", "case", "call",
                        "call_function", "pcall"}
COMPILER_MODULES = ("tapeflow.ir", "tapeflow.compiler")


def _owned_by_compiler(name, p):
    if name in COMPILER_OWNED_NAMES:
        return True
    for fn in (p.impl, p.abstract, p.vjp):
        mod = getattr(fn, "__module__", None) or ""
        if mod.startswith(COMPILER_MODULES):
            return True
    return False


def uncovered(registry, non_differentiable):
    """Problems with the tables above for ``registry`` (empty list: all covered)."""
    problems = []
    for name, p in registry.items():
        if _owned_by_compiler(name, p):
            continue
        if p.effect is not None:
            if name not in EFFECT_TESTS:
                problems.append(f"{name}: primitive with effect {p.effect!r} has no behaviour test (EFFECT_TESTS)")
        elif p.differentiable:
            if name not in GRAD_CASES:
                problems.append(f"{name}: differentiable primitive has no gradient test (GRAD_CASES)")
        else:
            if name not in non_differentiable:
                problems.append(f"{name}: non-differentiable primitive missing from NON_DIFFERENTIABLE")
            if name not in FORWARD_CASES:
                problems.append(f"{name}: non-differentiable primitive has no forward test (FORWARD_CASES)")
    for table_name, table in (("GRAD_CASES", GRAD_CASES), ("FORWARD_CASES", FORWARD_CASES),
                              ("EFFECT_TESTS", EFFECT_TESTS)):
        for name in table:
            if name not in registry:
                problems.append(f"{name}: listed in {table_name} but not a registered primitive")
    for name in FORWARD_CASES:
        if name in registry and registry[name].differentiable:
            problems.append(f"{name}: differentiable, but only forward-tested (move it to GRAD_CASES)")
    return problems


def test_every_registered_primitive_is_tested():
    problems = uncovered(REGISTRY, NON_DIFFERENTIABLE)
    assert not problems, "primitives without tests:\n" + "\n".join(problems)


def test_meta_test_catches_untested_primitives():
    """The checker is not vacuous: unknown core primitives are reported,
    compiler-owned ones are not."""
    from types import SimpleNamespace as NS

    def impl(x):
        return x

    fake = dict(REGISTRY)
    fake["fancy_new_op"] = NS(name="fancy_new_op", impl=impl, abstract=impl, vjp=impl, differentiable=True, effect=None)
    fake["fancy_nondiff"] = NS(name="fancy_nondiff", impl=np.floor, abstract=impl, vjp=None, differentiable=False,
                               effect=None)
    fake["fancy_effect"] = NS(name="fancy_effect", impl=impl, abstract=impl, vjp=None, differentiable=False,
                              effect="io")
    problems = uncovered(fake, NON_DIFFERENTIABLE)
    assert any(p.startswith("fancy_new_op: differentiable") for p in problems)
    assert any(p.startswith("fancy_nondiff: non-differentiable primitive missing") for p in problems)
    assert any(p.startswith("fancy_nondiff: non-differentiable primitive has no forward") for p in problems)
    assert any(p.startswith("fancy_effect:") for p in problems)

    compiled = dict(REGISTRY)
    ir_impl = lambda *a: a  # noqa: E731
    ir_impl.__module__ = "tapeflow.compiler.control_flow"
    compiled["my_loop"] = NS(name="my_loop", impl=ir_impl, abstract=ir_impl, vjp=ir_impl, differentiable=True,
                             effect=None)
    compiled["cond"] = NS(name="cond", impl=impl, abstract=impl, vjp=impl, differentiable=True, effect=None)
    assert uncovered(compiled, NON_DIFFERENTIABLE) == uncovered(REGISTRY, NON_DIFFERENTIABLE)

    missing = {k: v for k, v in REGISTRY.items() if k != "reduce_sum"}
    assert "reduce_sum: listed in GRAD_CASES but not a registered primitive" in uncovered(missing, NON_DIFFERENTIABLE)


@pytest.mark.parametrize("name", sorted(set(GRAD_CASES) | set(FORWARD_CASES)))
def test_case_uses_its_primitive(name, monkeypatch):
    """Each table entry really calls the primitive it is filed under."""
    p = P[name]
    calls = []
    real = p.impl

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(p, "impl", counting)
    table = GRAD_CASES if name in GRAD_CASES else FORWARD_CASES
    cases = table[name]()
    assert cases, f"{name}: no cases"
    for c in cases:
        before = len(calls)
        c.fn(*[tf.constant(a) if isinstance(a, np.ndarray) else a for a in c.args])
        assert len(calls) > before, f"case {c.id} does not call primitive {name}"


# -- the checker itself can fail ------------------------------------------------------------------

def test_check_grads_detects_a_wrong_first_order_rule():
    @tf.custom_gradient
    def cube(x):
        return x * x * x, lambda up: up * 2.0 * x * x          # should be 3 x^2

    with pytest.raises(AssertionError, match="first-order"):
        check_grads(cube, (np.array([0.7, -1.2]),))


def test_check_grads_detects_a_wrong_second_order_rule():
    @tf.custom_gradient
    def cube(x):
        # right first derivative, but computed from a gradient-stopped x: d2/dx2 comes out 0, not 6x
        return x * x * x, lambda up: up * 3.0 * tf.stop_gradient(x * x)

    check_grads(cube, (np.array([0.7, -1.2]),), order=1)
    with pytest.raises(AssertionError, match="second-order"):
        check_grads(cube, (np.array([0.7, -1.2]),), order=2)


def test_sign_gradient_is_zeros_as_tf():
    """TF's _SignGrad returns zeros (a tensor a program can scale), where floor/round return None;
    an exact zero even where the cotangent is NaN."""
    x = tf.Variable([1.5, -2.0, 0.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.sign(x) * tf.constant([np.nan, 1.0, 2.0]))
    g = tape.gradient(y, x)
    assert g is not None and g.numpy().tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(tf.sign(tf.constant([3, -2, 0])).numpy(), [1, -1, 0])   # (ints still forward)


@pytest.mark.parametrize("compiled", [False, True])
def test_softsign_gradient_at_infinities_as_tf(compiled):
    """TF's SoftsignGrad is g / (1 + |x|)^2: 0 at +-inf (TF 2.21: [0, 0, nan, 0.25, 1, 0.0625] for these x).
    The quotient x / (1 + |x|) differentiated by the chain rule gives inf/inf = NaN there."""
    x = tf.constant([np.inf, -np.inf, np.nan, 1.0, 0.0, -3.0])

    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.softsign(x)
        return y, tape.gradient(y, x)
    y, g = (tf.function(grad) if compiled else grad)(x)
    np.testing.assert_array_equal(y.numpy(), [1.0, -1.0, np.nan, 0.5, 0.0, -0.75])
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, np.nan, 0.25, 1.0, 0.0625])


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_compiled_concat_of_matrix_columns_any_float(dtype):
    """The native column concat (TD3's critic input) is for float32/float64: a float16 pair of
    matrices joined along axis 1 failed to compile under numba (the fuzz's tf.stack(.., 1))."""
    x, y = tf.constant([[1.5]], dtype), tf.constant([[-2.0]], dtype)
    out = tf.function(lambda a, b: tf.concat([a, b], 1) * 2)(x, y)   # (an intermediate: a planned buffer)
    assert out.dtype == dtype and out.numpy().tolist() == [[3.0, -4.0]]
