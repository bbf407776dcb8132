"""tapeflow.summary: event files read back with TensorBoard's own reader
(EventAccumulator): values, steps, tags, histograms, text, images, graphs."""
from __future__ import annotations

import io
import os
import struct
import zlib

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util import tensor_util

import tapeflow as tf
import tapeflow.summary  # noqa: F401  (tf.summary)

_ALL = {"scalars": 0, "histograms": 0, "tensors": 0, "images": 0, "compressedHistograms": 0}


def _read(logdir):
    acc = EventAccumulator(str(logdir), size_guidance=_ALL)
    acc.Reload()
    return acc


def _scalars(acc, tag):
    return [(e.step, e.value) for e in acc.Scalars(tag)]


@pytest.fixture
def writer(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path / "logs"))
    yield w
    w.close()
    tf.summary.experimental.set_step(None)


def test_scalars_of_every_value_kind_with_namespaced_tags(writer, tmp_path):
    v = tf.Variable(3.0)
    with writer.as_default():
        assert tf.summary.scalar("losses/td_loss", tf.constant(0.5), step=0)
        assert tf.summary.scalar("losses/td_loss", np.float64(0.25), step=1)
        assert tf.summary.scalar("losses/td_loss", 0.125, step=2)
        assert tf.summary.scalar("losses/td_loss", np.array([1.5]), step=3)
        assert tf.summary.scalar("q/value", v, step=np.int64(7))
        assert tf.summary.scalar("q/int", tf.constant(4), step=tf.constant(8))
    writer.flush()   # everything is on disk after flush (no close needed)
    acc = _read(tmp_path / "logs")
    assert set(acc.Tags()["scalars"]) == {"losses/td_loss", "q/value", "q/int"}
    assert _scalars(acc, "losses/td_loss") == [(0, 0.5), (1, 0.25), (2, 0.125), (3, 1.5)]
    assert _scalars(acc, "q/value") == [(7, 3.0)]
    assert _scalars(acc, "q/int") == [(8, 4.0)]


def test_default_step_set_step_and_as_default_step(writer, tmp_path):
    with pytest.raises(ValueError, match="no step set"):
        with writer.as_default():
            tf.summary.scalar("a", 1.0)
    step = tf.Variable(0, dtype=tf.int64)
    tf.summary.experimental.set_step(step)
    assert tf.summary.experimental.get_step() is step
    with writer.as_default():
        for i in range(3):
            step.assign(i * 10)
            tf.summary.scalar("a", float(i))       # the Variable's current value at each call
    with writer.as_default(step=100):
        tf.summary.scalar("b", 1.0)
    assert tf.summary.experimental.get_step() is step   # restored after the block
    writer.flush()
    acc = _read(tmp_path / "logs")
    assert _scalars(acc, "a") == [(0, 0.0), (10, 1.0), (20, 2.0)]
    assert _scalars(acc, "b") == [(100, 1.0)]


def test_no_default_writer_and_record_if(writer, tmp_path):
    assert tf.summary.scalar("x", 1.0, step=0) is False          # no default writer: nothing, no error
    with writer.as_default():
        with tf.summary.record_if(False):
            assert tf.summary.scalar("x", 1.0, step=1) is False
        with tf.summary.record_if(lambda: True):
            assert tf.summary.scalar("x", 2.0, step=2)
        with tf.summary.record_if(tf.constant(False)):
            assert not tf.summary.histogram("h", [1.0, 2.0], step=2)
        for s in range(10):
            with tf.summary.record_every_n_steps(4, step=s):
                tf.summary.scalar("every4", float(s), step=s)
        tf.summary.experimental.set_step(0)
        with tf.summary.record_every_n_steps(3):
            for s in range(7):
                tf.summary.experimental.set_step(s)
                tf.summary.scalar("every3", float(s))
    writer.flush()
    acc = _read(tmp_path / "logs")
    assert _scalars(acc, "x") == [(2, 2.0)]
    assert [s for s, _ in _scalars(acc, "every4")] == [0, 4, 8]
    assert [s for s, _ in _scalars(acc, "every3")] == [0, 3, 6]
    assert "h" not in acc.Tags()["histograms"]


def test_set_as_default_and_nested_as_default(tmp_path):
    a = tf.summary.create_file_writer(str(tmp_path / "a"))
    b = tf.summary.create_file_writer(str(tmp_path / "b"))
    try:
        a.set_as_default(step=5)
        tf.summary.scalar("s", 1.0)
        with b.as_default():
            tf.summary.scalar("s", 2.0)
        tf.summary.scalar("s", 3.0, step=6)
        a.flush()
        b.flush()
        assert _scalars(_read(tmp_path / "a"), "s") == [(5, 1.0), (6, 3.0)]
        assert _scalars(_read(tmp_path / "b"), "s") == [(5, 2.0)]
    finally:
        a.close()
        b.close()
        tf.summary.experimental.set_step(None)
    assert tf.summary.scalar("s", 1.0, step=0) is False      # closed writers are no longer default
    with pytest.raises(RuntimeError, match="closed"):
        a.add_summary(None, 0)


def test_histogram_buckets_and_stats(writer, tmp_path):
    data = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    with writer.as_default():
        tf.summary.histogram("weights/kernel", tf.constant(data), step=3)
        tf.summary.histogram("weights/kernel", data * 2, step=4, buckets=10)
        tf.summary.histogram("const", np.full(5, 2.0), step=0)
        tf.summary.histogram("empty", np.zeros(0), step=0)
    writer.flush()
    acc = _read(tmp_path / "logs")
    h3, h4 = acc.Histograms("weights/kernel")
    assert (h3.step, h4.step) == (3, 4)
    hv = h3.histogram_value
    assert hv.num == 1000 and len(hv.bucket) == 30 and sum(hv.bucket) == 1000
    assert hv.min == pytest.approx(data.min()) and hv.max == pytest.approx(data.max())
    assert hv.sum == pytest.approx(float(data.astype(np.float64).sum()), rel=1e-5)
    assert hv.sum_squares == pytest.approx(float(np.dot(data.astype(np.float64), data)), rel=1e-5)
    assert hv.bucket_limit[-1] == pytest.approx(data.max())
    assert len(h4.histogram_value.bucket) == 10
    c = acc.Histograms("const")[0].histogram_value
    assert c.num == 5 and sum(c.bucket) == 5 and c.min == c.max == 2.0
    assert acc.Histograms("empty")[0].histogram_value.num == 0


def test_text(writer, tmp_path):
    with writer.as_default():
        tf.summary.text("notes/config", "lr = **1e-3**", step=0)
        tf.summary.text("notes/table", np.array([["a", "b"], ["c", "d"]]), step=1)
    writer.flush()
    acc = _read(tmp_path / "logs")
    (e,) = acc.Tensors("notes/config")
    assert e.step == 0 and tensor_util.make_ndarray(e.tensor_proto).item() == b"lr = **1e-3**"
    assert acc.SummaryMetadata("notes/config").plugin_data.plugin_name == "text"
    t = tensor_util.make_ndarray(acc.Tensors("notes/table")[0].tensor_proto)
    assert t.shape == (2, 2) and t[1, 0] == b"c"


def _decode_png(b):
    """Minimal PNG decoder for 8-bit images written with filter 0 (ours)."""
    assert b[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(b):
        (n,) = struct.unpack(">I", b[pos:pos + 4])
        kind, data = b[pos + 4:pos + 8], b[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", data)
        elif kind == b"IDAT":
            idat += data
    w, h, _, color, *_ = ihdr
    c = {0: 1, 2: 3, 6: 4}[color]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * c)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, c)


def test_images_float_and_uint8_max_outputs(writer, tmp_path):
    rng = np.random.default_rng(0)
    floats = rng.random((5, 6, 7, 3)).astype(np.float32)
    gray = rng.integers(0, 256, (2, 4, 5, 1)).astype(np.uint8)
    with writer.as_default():
        tf.summary.image("obs/rgb", tf.constant(floats), step=1, max_outputs=2)
        tf.summary.image("obs/gray", gray, step=2)
    writer.flush()
    acc = _read(tmp_path / "logs")
    assert acc.SummaryMetadata("obs/rgb").plugin_data.plugin_name == "images"
    (e,) = acc.Tensors("obs/rgb")
    arr = tensor_util.make_ndarray(e.tensor_proto)
    assert e.step == 1 and arr.shape == (4,) and arr[0] == b"7" and arr[1] == b"6"
    for i in range(2):
        img = _decode_png(arr[2 + i])
        np.testing.assert_array_equal(img, np.clip(floats[i] * 255 + 0.5, 0, 255).astype(np.uint8))
    g = tensor_util.make_ndarray(acc.Tensors("obs/gray")[0].tensor_proto)
    assert len(g) == 4
    np.testing.assert_array_equal(_decode_png(g[3]), gray[1])
    try:  # an independent decoder agrees, when Pillow is around
        from PIL import Image
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(arr[2]))),
                                      _decode_png(arr[2]))
    except ImportError:
        pass
    with pytest.raises(ValueError, match="channels"):
        with writer.as_default():
            tf.summary.image("bad", np.zeros((1, 4, 4, 2)), step=0)


def test_summaries_inside_traced_function_raise_a_clear_error(writer):
    @tf.function
    def step(x):
        tf.summary.scalar("loss", tf.reduce_sum(x), step=0)
        return x

    with writer.as_default():
        with pytest.raises(RuntimeError, match="(?i)return the value from the function and log it outside"):
            step(tf.constant([1.0, 2.0]))


def test_flush_millis_and_max_queue(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path / "q"), max_queue=3, flush_millis=10 ** 7)
    try:
        with w.as_default():
            tf.summary.scalar("s", 1.0, step=0)
            tf.summary.scalar("s", 2.0, step=1)
            tf.summary.scalar("s", 3.0, step=2)       # the third outstanding event triggers a flush
        assert [s for s, _ in _scalars(_read(tmp_path / "q"), "s")] == [0, 1, 2]
    finally:
        w.close()
    import time
    w2 = tf.summary.create_file_writer(str(tmp_path / "t"), max_queue=1000, flush_millis=50)
    try:
        with tf.summary.record_if(True):
            w2.set_as_default()
            tf.summary.scalar("s", 1.0, step=0)
        deadline = time.time() + 5
        while time.time() < deadline and not _read(tmp_path / "t").Tags()["scalars"]:
            time.sleep(0.05)
        assert _scalars(_read(tmp_path / "t"), "s") == [(0, 1.0)]   # flushed by the timer
    finally:
        w2.close()


def test_two_writers_in_one_logdir_get_separate_files(tmp_path):
    a = tf.summary.create_file_writer(str(tmp_path))
    b = tf.summary.create_file_writer(str(tmp_path))
    assert a.file_path != b.file_path
    with a.as_default(step=0):
        tf.summary.scalar("a", 1.0)
    with b.as_default(step=0):
        tf.summary.scalar("b", 2.0)
    a.close()
    b.close()
    files = [f for f in os.listdir(tmp_path) if "tfevents" in f]
    assert len(files) == 2


# -- graphs -----------------------------------------------------------------------------------------------

def _mlp():
    w1 = tf.Variable(np.ones((4, 8), np.float32), name="dense/kernel")
    w2 = tf.Variable(np.ones((8, 2), np.float32), name="out/kernel")

    @tf.function
    def forward(x):
        h = tf.maximum(tf.matmul(x, w1), 0.0)
        return tf.matmul(h, w2)
    return forward


def _graph_nodes(logdir):
    acc = _read(logdir)
    assert acc.Tags()["graph"]
    return {n.name: n for n in acc.Graph().node}


def test_graph_of_a_concrete_function(writer, tmp_path):
    forward = _mlp()
    cf = forward.get_concrete_function(tf.constant(np.ones((3, 4), np.float32)))
    with writer.as_default():
        assert tf.summary.graph(cf, step=0)
    writer.flush()
    nodes = _graph_nodes(tmp_path / "logs")
    ops = [n.op for n in nodes.values()]
    assert ops.count("matmul") == 2 and "maximum" in ops and ops.count("read_variable") == 2
    assert ops.count("Placeholder") == 1 and "Identity" in ops
    assert {"variables/dense/kernel", "variables/out/kernel"} <= set(nodes)
    mm = [n for n in nodes.values() if n.op == "matmul"]
    # inputs by name, output shapes with unknown batch as -1, source line
    first = min(mm, key=lambda n: n.name)
    assert first.input[0] == "forward/input_0" and first.input[1] in nodes
    shape = first.attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shape.dim] == [3, 8]
    assert b"test_summary.py" in first.attr["_src"].s
    for n in nodes.values():
        for i in n.input:
            assert i.split(":")[0] in nodes, f"{n.name} has a dangling input {i}"


def test_graph_unknown_dims_and_dtypes(writer, tmp_path):
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float64), tf.TensorSpec([None], tf.int32)])
    def g(x, i):
        return tf.reduce_sum(x, axis=1) * tf.cast(i, tf.float64)

    with writer.as_default():
        tf.summary.graph(g.get_concrete_function(), step=0)
    writer.flush()
    nodes = _graph_nodes(tmp_path / "logs")
    from tensorboard.compat.proto import types_pb2
    ph = [n for n in nodes.values() if n.op == "Placeholder"]
    assert sorted(n.attr["dtype"].type for n in ph) == sorted([types_pb2.DT_DOUBLE, types_pb2.DT_INT32])
    assert sorted([d.size for d in n.attr["shape"].shape.dim] for n in ph) == [[-1], [-1, 3]]


def test_trace_on_trace_export(writer, tmp_path):
    forward = _mlp()
    tf.summary.trace_on(graph=True, profiler=True)
    forward(tf.constant(np.ones((3, 4), np.float32)))
    with writer.as_default():
        assert tf.summary.trace_export("forward_trace", step=0, profiler_outdir=str(tmp_path / "prof"))
    nodes = _graph_nodes(tmp_path / "logs")
    assert any(n.op == "matmul" for n in nodes.values())
    assert all(k.startswith(("forward/", "variables/")) for k in nodes)
    assert os.path.exists(tmp_path / "prof" / "forward_trace.trace.json")
    acc = _read(tmp_path / "logs")
    assert "forward_trace/profile" in acc.Tags()["tensors"]
    from tapeflow.compiler.function import TRACE_LISTENERS
    assert TRACE_LISTENERS == []                             # graph recording stopped again
    from tapeflow.summary import _TRACE
    recorded = len(_TRACE["graphs"])
    forward(tf.constant(np.ones((2, 4), np.float32)))        # a new trace after export: not recorded
    assert len(forward._cache) == 2 and len(_TRACE["graphs"]) == recorded


def test_graph_with_control_flow_subgraphs(writer, tmp_path):
    @tf.function
    def f(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)

    f(tf.constant([1.0, 2.0]))
    with writer.as_default():
        tf.summary.graph(f, step=0)
    writer.flush()
    nodes = _graph_nodes(tmp_path / "logs")
    assert any(n.op == "cond" for n in nodes.values())
    assert any(n.op == "mul" and "/" in n.name[len("f/"):] for n in nodes.values())   # nested branch ops
    with pytest.raises(ValueError, match="not been traced"):
        with writer.as_default():
            tf.summary.graph(tf.function(lambda x: x), step=0)
