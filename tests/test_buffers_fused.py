"""Fused loops write results that do not escape into planned buffers
(passes/buffers.py plans a slot per such result, the numba kernel takes it as
an argument). Checked: which results get slots, that the values equal the
unfused graph's and eager's on every call, and that nothing a caller or a
Variable holds is ever a buffer a later call overwrites."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tapeflow as tf
from conftest import fused_tier
from tapeflow.compiler.backends.numba_noalias import NoAliasCompiler
from tapeflow.compiler.passes import fusion
from tapeflow.compiler.passes.buffers import plan_buffers
from tapeflow.ir.interpreter import eval_graph

pytest.importorskip("numba")


def _model():
    rs = np.random.default_rng(0)
    W = tf.Variable(rs.standard_normal((64, 48)).astype(np.float32) * 0.1, name="W")
    m = tf.Variable(np.zeros((64, 48), np.float32), name="m")

    def step(z):
        h = tf.sigmoid(z * 2.0 + 1.0)          # a fused loop whose result only the GEMM reads
        y = tf.matmul(h, W)
        g = tf.matmul(tf.transpose(h), y * y * 0.5 + y)
        m.assign(0.9 * m + 0.1 * g)            # a fused result written into a Variable
        W.assign_sub(0.01 * m / (tf.sqrt(m * m) + 1.0))
        return y * 3.0 + 1.0 - y * y           # a fused result returned to the caller
    return (W, m), step


def _inputs(n):
    rs = np.random.default_rng(1)
    return [rs.standard_normal((32, 64)).astype(np.float32) for _ in range(n)]


def test_only_results_that_do_not_escape_get_slots():
    (W, m), step = _model()
    zs = _inputs(1)
    _, cf = fused_tier(step, zs[0])
    g = cf.fused_graph
    plan = plan_buffers(g)
    fused = [e for e in g.eqns if e.prim is fusion.fused_elementwise_p]
    assert fused
    written = {e.inputs[0] for e in g.eqns if e.prim.name == "assign_variable"}
    outs = set(g.outputs)
    planned = [o for e in fused for o in e.outputs if o in plan.buffers]
    assert planned, "the sigmoid loop's result (read by the GEMM only) got no slot"
    for e in fused:
        slots = [plan.buffers[o] for o in e.outputs if o in plan.buffers]
        assert len({s.index for s in slots}) == len(slots), "two results of one loop share a slot"
        for o in e.outputs:
            if o in written or o in outs:
                assert o not in plan.buffers, f"{o} escapes but has a slot"


def test_values_match_eager_on_every_call_and_nothing_held_is_overwritten():
    (W_e, m_e), step_e = _model()
    (W_c, m_c), step_c = _model()
    zs = _inputs(4)
    fn, cf = fused_tier(step_c, zs[0])
    # undo the tracing call's update so both runs start from the same state
    W_c.assign(W_e.numpy())
    m_c.assign(m_e.numpy())
    kernels = [v for k, v in cf.compiled.__globals__.items() if k.startswith("_fk")]
    assert any("_ob" in getattr(k, "__tapeflow_wrapper__", "") for k in kernels), \
        "no fused kernel call writes into a planned buffer"
    held, held_vars = [], []
    for z in zs:
        want = step_e(tf.constant(z)).numpy()
        got = fn(z)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(W_c.numpy(), W_e.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m_c.numpy(), m_e.numpy(), rtol=1e-5, atol=1e-6)
        held.append((got, got.numpy().copy()))
        held_vars.append((W_c.read_value(), W_c.numpy().copy()))
    # results and variable snapshots of earlier calls are intact after later calls
    for t, copy in held + held_vars:
        np.testing.assert_array_equal(t.numpy(), copy)


def test_fused_graph_with_planned_results_runs_in_the_reference_interpreter():
    (W, m), step = _model()
    zs = _inputs(1)
    _, cf = fused_tier(step, zs[0])
    g = cf.fused_graph
    snap = W.numpy().copy(), m.numpy().copy()
    want = cf.compiled(zs[0])
    W.assign(snap[0])
    m.assign(snap[1])
    got = eval_graph(g, [zs[0]])
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-6, atol=1e-6)


def test_impl_out_writes_into_given_buffers_and_ignores_unfit_ones():
    (W, m), step = _model()
    zs = _inputs(1)
    _, cf = fused_tier(step, zs[0])
    e = next(e for e in cf.fused_graph.eqns if e.prim is fusion.fused_elementwise_p
             and e.inputs and e.inputs[0] in cf.fused_graph.inputs)
    x = zs[0]
    want = e.prim.impl(x, **e.params)
    shape, dtype = e.outputs[0].aval.shape, e.outputs[0].aval.dtype
    buf = np.full(shape, np.nan, dtype)
    got = e.prim.impl_out([buf] + [None] * (len(e.outputs) - 1), x, **e.params)
    assert got[0] is buf
    np.testing.assert_array_equal(buf, want[0])
    # a buffer of another dtype, or not C-contiguous: the kernel makes its own array
    for bad in (np.zeros(shape, np.float64), np.zeros(shape[::-1], dtype).T):
        got = e.prim.impl_out([bad] + [None] * (len(e.outputs) - 1), x, **e.params)
        assert got[0] is not bad
        np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("case", ["only_loop_results", "twice_and_scalars", "input_passed_through"])
def test_numba_kernel_results_written_into_arguments_come_back_fresh_and_right(case):
    """The native kernel writes its loop results into arrays the wrapper passes and
    returns only the rest (scalars, reductions): every combination comes back in the
    graph's order, shapes and dtypes, a new array per call where nothing was planned."""
    def f(x, y):
        u = tf.sigmoid(x * 2.0 + y) - 0.5
        v = tf.tanh(u * y) * 3.0
        if case == "only_loop_results":
            return u, v
        if case == "twice_and_scalars":
            return (v, tf.reduce_sum(v), u, v, tf.reduce_max(u), tf.reduce_sum(v, axis=0),
                    tf.reduce_max(u, axis=0, keepdims=True))
        return x, v, y
    rs = np.random.default_rng(5)
    x, y = (rs.standard_normal((16, 8)).astype(np.float32) for _ in range(2))
    want = [t.numpy() for t in f(tf.constant(x), tf.constant(y))]
    fn = tf.function(f, backend="numba")
    first = fn(x, y)
    assert fn.get_concrete_function(x, y).backend == "numba"
    first_copy = [t.numpy().copy() for t in first]
    second = fn(x * 0.5, y)
    for got, w in zip(first, want):
        assert got.shape == w.shape and got.dtype == w.dtype
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-5, atol=1e-6)
    for t, c in zip(first, first_copy):
        np.testing.assert_array_equal(t.numpy(), c)   # the second call wrote elsewhere
    want2 = [t.numpy() for t in f(tf.constant(x * 0.5), tf.constant(y))]
    for got, w in zip(second, want2):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-5, atol=1e-6)


def test_kernels_declare_their_array_arguments_noalias_and_stay_vectorized():
    """A kernel writing four results into arguments (Adam's shape of loop) is compiled with
    noalias array arguments (numba_noalias.py), so LLVM vectorizes it without run-time
    overlap checks: 8-lane float32 vector code, no scalar fallback loop for the division.
    Without the flag the loop keeps a scalar copy behind a run-time overlap test."""
    def adam(g, m, v, w):
        m2 = 0.9 * m + 0.1 * g
        v2 = 0.999 * v + 0.001 * g * g
        w2 = w - 0.01 * m2 / (tf.sqrt(v2) + 1e-8)
        return m2, v2, w2, 0.5 * w2 + 0.5 * w
    rs = np.random.default_rng(2)
    args = [rs.random((64, 128)).astype(np.float32) for _ in range(4)]
    fn = tf.function(adam, backend="numba")
    got = fn(*args)
    want = adam(*[tf.constant(a) for a in args])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    run = fn.get_concrete_function(*args).compiled
    kernel = run.__globals__["_kernel"]
    pipeline = kernel._compiler.pipeline_class
    assert pipeline is NoAliasCompiler
    # compiled again here: numba shows no IR for machine code loaded from its disk cache
    fresh = type(kernel)(py_func=kernel.py_func, locals={}, targetoptions=dict(kernel.targetoptions),
                         pipeline_class=pipeline)
    fresh.compile(kernel.signatures[0])
    (ir,) = fresh.inspect_llvm().values()
    define = next(ln for ln in ir.splitlines() if ln.startswith("define") and "%arg.out" in ln)
    # an array argument is passed as its struct's fields; the data pointer is the 5th (an
    # input of 2 or more dims is the parameter a<k>_nd, flattened in the kernel)
    data = re.findall(r"ptr ([^%]*)%arg\.(a|out)\d+(?:_nd)?\.4\b", define)
    assert len(data) == 8 and all("noalias" in attrs for attrs, _ in data), define
    assert re.search(r"<(8|16) x float>", ir), "the loop is not vectorized"  # AVX2: 8 lanes, AVX-512: 16
    assert not [ln for ln in ir.splitlines() if "fdiv" in ln and " float " in ln and "<" not in ln], \
        "a scalar division is left: the loop has a scalar fallback path"


@pytest.mark.parametrize("n", [6, 12])
def test_slot_arrays_of_several_pages_start_at_different_offsets_in_a_page(n):
    """Slots are placed SLOT_STAGGER bytes apart within a 4 KiB page (a loop streaming
    through arrays at one page offset stalls in the CPU's 4K aliasing check); each is a
    C-ordered, writable, 64-byte aligned array of its slot's shape and dtype, and no two
    overlap. 6 slots of 256 KiB are malloc's arrays; 12 (over 2 MiB) share one buffer
    that starts on a huge-page boundary; a small slot among them is malloc's either way."""
    from tapeflow.compiler.backends.python_backend import SLOT_STAGGER, _slot_arrays
    from tapeflow.compiler.passes.buffers import Slot
    from tapeflow.util import placement
    slots = [Slot(k, (256, 256), np.dtype(np.float32)) for k in range(n)]
    slots[3] = Slot(3, (8, 8), np.dtype(np.float64))
    arrays = _slot_arrays(slots)
    big = [a for k, a in enumerate(arrays) if k != 3]
    offsets = [a.ctypes.data % 4096 for k, a in enumerate(arrays) if k != 3]
    assert offsets == [k * SLOT_STAGGER % 4096 for k in range(n) if k != 3]
    for a in big:
        assert a.shape == (256, 256) and a.dtype == np.float32
        assert a.flags.c_contiguous and a.flags.writeable and a.ctypes.data % 64 == 0
    spans = sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in big)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:])), "slots overlap"
    small = arrays[3]
    assert small.shape == (8, 8) and small.dtype == np.float64 and small.base is None
    bases = {id(a.base) for a in big}
    if n == 6:
        assert len(bases) == n - 1                                   # one buffer each
    else:
        # (the shared base is the unaligned allocation; the buffer starts at the boundary
        # below the first slot, which lies in its first page)
        assert len(bases) == 1 and big[0].ctypes.data % placement.HUGE < 4096
    for k, a in enumerate(arrays):                                   # writable, apart
        a[...] = k
    for k, a in enumerate(arrays):
        assert (a == k).all()


def test_a_large_slab_is_advised_as_huge_pages_over_whole_aligned_blocks(monkeypatch):
    """placement.slab asks madvise for huge pages over exactly its buffer: a start on a
    HUGE boundary, a length of whole HUGE blocks covering every slot; a small plan is not
    advised. (Whether the kernel then gives huge pages is its setting, not asserted.)"""
    from tapeflow.util import placement
    calls = []

    def fake(addr, length, advice):
        calls.append((addr, length, advice))
        return 0
    monkeypatch.setattr(placement, "_MADVISE", [fake])
    spec = [((256, 256), np.float32)] * 12
    arrays = placement.slab(spec)
    assert len(calls) == 1
    addr, length, advice = calls[0]
    assert advice == placement._MADV_HUGEPAGE and addr % placement.HUGE == 0 and length % placement.HUGE == 0
    assert all(addr <= a.ctypes.data and a.ctypes.data + a.nbytes <= addr + length for a in arrays)
    placement.slab(spec[:6])
    assert len(calls) == 1


def test_the_huge_page_advice_is_taken_where_the_kernel_offers_them():
    """On Linux with transparent huge pages on (``always`` or ``madvise``), madvise takes
    the advice (the real libc call, on an aligned block)."""
    from tapeflow.util import placement
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            mode = f.read()
    except OSError:
        pytest.skip("no transparent huge pages here")
    if "[never]" in mode:
        pytest.skip("transparent huge pages are off")
    raw = np.empty(2 * placement.HUGE, np.uint8)
    block = raw[(-raw.ctypes.data) % placement.HUGE:][:placement.HUGE]
    assert placement.advise_huge(block)


def _mlp():
    """Layers whose loops read GEMM results: relu(h + b) reads h and nothing after it does
    (its result may take h's slot); sigmoid(y) * y reads y, which a GEMM reads again after
    the loop (it may not)."""
    rs = np.random.default_rng(3)
    Ws = [tf.Variable(rs.standard_normal(s).astype(np.float32) * 0.2) for s in ((24, 40), (40, 40), (40, 8), (40, 8))]
    b = tf.Variable(rs.standard_normal(40).astype(np.float32) * 0.1)

    def step(z):
        h = tf.matmul(z, Ws[0])
        a = tf.nn.relu(h + b)
        y = tf.matmul(a, Ws[1])
        c = tf.sigmoid(y) * y
        return tf.matmul(c, Ws[2]) - tf.matmul(y, Ws[3]) * 0.5, tf.reduce_sum(a, axis=0)
    return step


def _lifetimes(graph):
    """{Var: (index of the equation making it, last index where it or a view of it is
    read)}: graph inputs and outputs count as used before the first and after the last."""
    n = len(graph.eqns)
    born = {v: -1 for v in graph.inputs}
    roots = {}
    for i, e in enumerate(graph.eqns):
        for o in e.outputs:
            born[o] = i
            if e.prim.aliases:
                roots[o] = {r for v in e.inputs if hasattr(v, "aval") and v in born for r in roots.get(v, {v})} | {o}
    last = {}
    for i, e in enumerate(graph.eqns):
        for v in e.inputs:
            for r in roots.get(v, {v}) if v in born else ():
                last[r] = max(last.get(r, -1), i)
    for v in graph.outputs:
        for r in roots.get(v, {v}) if v in born else ():
            last[r] = n
    return {v: (born[v], last.get(v, born[v])) for v in born}


def test_a_loop_result_takes_the_slot_of_an_operand_read_by_nothing_after_it():
    """A fused loop writes its result over a GEMM result that nothing reads after the loop
    (relu(h + b) over h: the lines it writes are in cache, just read) and never over one
    read later (y). Any two values in one slot are never live at once, except a result and
    the operand it overwrites, which meet at that loop only."""
    step = _mlp()
    z = np.random.default_rng(4).standard_normal((32, 24)).astype(np.float32)
    _, cf = fused_tier(step, z)
    g = cf.fused_graph
    plan = plan_buffers(g)
    fused = [e for e in g.eqns if e.prim is fusion.fused_elementwise_p]
    over = {}
    for e in fused:
        for o in e.outputs:
            if o in plan.inplace:
                over[o] = e.inputs[plan.inplace[o].index]
    gemm_out = {e.outputs[0] for e in g.eqns if e.prim.name == "matmul"}
    assert any(v in gemm_out for v in over.values()), "no loop result took a GEMM result's slot"
    life = _lifetimes(g)
    for o, v in over.items():
        assert plan.buffers[o] is plan.buffers[v]
        assert life[v][1] == life[o][0], f"{v} is read after the loop that overwrites it"
    by_slot = {}
    for v, s in plan.buffers.items():
        by_slot.setdefault(s.index, []).append(v)
    for vs in by_slot.values():
        for i, u in enumerate(vs):
            for w in vs[i + 1:]:
                (a0, a1), (b0, b1) = life[u], life[w]
                if over.get(w) is u or over.get(u) is w:
                    continue
                assert a1 < b0 or b1 < a0, f"{u} and {w} share a slot while both are live"


def test_loop_results_over_their_operands_equal_eager_on_every_call():
    """The compiled step with results written over dead operands equals eager on several
    calls, and the results of earlier calls keep their values."""
    step = _mlp()
    rs = np.random.default_rng(6)
    zs = [rs.standard_normal((32, 24)).astype(np.float32) for _ in range(3)]
    fn, cf = fused_tier(step, zs[0])
    kernels = [v for k, v in cf.compiled.__globals__.items() if k.startswith("_fk")]
    assert any(re.search(r"return \[.*\ba\d+\b", getattr(k, "__tapeflow_wrapper__", "")) for k in kernels), \
        "no kernel returns a result written over its operand"
    held = []
    for z in zs:
        want = [t.numpy() for t in step(tf.constant(z))]
        got = fn(z)
        for t, w in zip(got, want):
            np.testing.assert_allclose(t.numpy(), w, rtol=1e-5, atol=1e-5)
        held += [(t, t.numpy().copy()) for t in got]
    for t, copy in held:
        np.testing.assert_array_equal(t.numpy(), copy)
