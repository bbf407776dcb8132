"""keras.layers.ReversibleEmbedding (wave 21): Keras 3's forward and reverse calls."""
from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


@pytest.mark.parametrize("tie,cap,rdt", [(True, None, None), (True, 2.5, None), (False, None, None),
                                         (True, None, "float64")])
def test_reverse_logits_vs_numpy(tie, cap, rdt):
    e = L.ReversibleEmbedding(7, 3, tie_weights=tie, logit_soft_cap=cap, reverse_dtype=rdt)
    ids = np.array([[1, 4, 6], [0, 2, 2]])
    h = e(ids)
    E = e.embeddings.numpy()
    np.testing.assert_array_equal(h.numpy(), E[ids])
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    got = e(x, reverse=True)
    K = E.T if tie else e.reverse_embeddings.numpy()
    want = x.astype(rdt or np.float32) @ K.astype(rdt or np.float32)
    if cap:
        want = np.tanh(want / cap) * cap
    assert got.dtype == (rdt or "float32") and got.shape == (2, 7)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-7)
    assert [w.name for w in e.weights] == (["embeddings"] if tie else ["embeddings", "reverse_embeddings"])


def test_tied_head_trains_both_ways_and_saves(tmp_path):
    """A tied language-model head: the embedding's gradient has both uses' contributions (vs finite
    differences); the model saves and loads with its config."""
    inp = tf.keras.Input((4,), dtype="int32")
    emb = L.ReversibleEmbedding(9, 5, logit_soft_cap=4.0)
    out = emb(L.Dense(5, activation="tanh")(emb(inp)), reverse=True)
    model = tf.keras.Model(inp, out)
    ids = np.array([[1, 2, 3, 8], [0, 5, 5, 7]], np.int32)
    y = np.array([[2, 3, 4, 0], [5, 5, 7, 1]], np.int32)
    lossf = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss():
        return lossf(y, model(ids))
    with tf.GradientTape() as tape:
        v = loss()
    g = tape.gradient(v, emb.embeddings).numpy()
    E0 = emb.embeddings.numpy().copy()
    for idx in [(1, 0), (3, 2), (8, 4), (5, 1)]:
        d = np.zeros_like(E0)
        d[idx] = 1e-3
        emb.embeddings.assign(E0 + d)
        lp = float(loss())
        emb.embeddings.assign(E0 - d)
        lm = float(loss())
        emb.embeddings.assign(E0)
        assert abs((lp - lm) / 2e-3 - g[idx]) < 2e-4 * max(1.0, abs(g[idx])), idx
    model.compile(optimizer="adam", loss=lossf)
    path = str(tmp_path / "m.keras")
    model.save(path)
    m2 = tf.keras.models.load_model(path)
    np.testing.assert_allclose(m2(ids).numpy(), model(ids).numpy(), rtol=1e-6)
    assert [c for c in m2.layers if isinstance(c, L.ReversibleEmbedding)][0].logit_soft_cap == 4.0


def test_max_num_bounding_boxes_as_keras():
    img = np.zeros((2, 4, 4, 3), np.float32)
    b = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    lab = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    data = {"images": img, "bounding_boxes": {"boxes": b, "labels": lab}}
    # Keras 3.15 (TF 2.21): max_number=5 pads with -1, 2 keeps the first two
    out = L.MaxNumBoundingBoxes(max_number=5, bounding_box_format="xyxy")(data)
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy(),
                                  np.concatenate([b, -np.ones((2, 2, 4), np.float32)], 1))
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"].numpy(), [[1, 2, 3, -1, -1], [4, 5, 6, -1, -1]])
    assert out["bounding_boxes"]["boxes"].dtype == "float32" and np.asarray(out["images"]).shape == (2, 4, 4, 3)
    out = L.MaxNumBoundingBoxes(max_number=2, bounding_box_format="xyxy")(data)
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy(), b[:, :2])
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"].numpy(), [[1, 2], [4, 5]])
    # unbatched, another fill value: Keras' [[0..3], [4..7], [8..11], [-2]*4] and [1, 2, 3, -2]
    out = L.MaxNumBoundingBoxes(max_number=4, fill_value=-2, bounding_box_format="xyxy")(
        {"images": img[0], "bounding_boxes": {"boxes": b[0], "labels": lab[0]}})
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy()[3], [-2, -2, -2, -2])
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"].numpy(), [1, 2, 3, -2])
    assert np.asarray(L.MaxNumBoundingBoxes(max_number=3)(img)).shape == (2, 4, 4, 3)
    with pytest.raises(ValueError, match="bounding box format"):
        L.MaxNumBoundingBoxes(max_number=3)(data)


def test_clahe_matches_keras():
    """Keras 3.15's CLAHE (tests/tf_reference/make_keras21_clahe_reference.py): the same bits."""
    import json
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "tf_reference"))
    from make_keras21_clahe_reference import inputs
    ref = np.load(os.path.join(here, "data", "keras21_clahe_reference.npz"))
    data = inputs()
    for i, (k, kw) in enumerate(json.loads(str(ref["cases"]))):
        layer = L.ContrastLimitedAdaptiveHistogramEqualization(**kw)
        got = np.asarray(layer(data[k]))
        want = ref[f"out{i}"]
        assert got.dtype == want.dtype and got.shape == want.shape, (k, kw)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6, atol=1e-4,
                                   err_msg=str(kw))
        comp = np.asarray(tf.function(lambda x: layer(x))(tf.constant(data[k])))   # traced: the same values
        np.testing.assert_allclose(comp.astype(np.float64), got.astype(np.float64), rtol=1e-6, atol=1e-4)
    cf = L.ContrastLimitedAdaptiveHistogramEqualization(data_format="channels_first")(
        np.transpose(data["img"], (0, 3, 1, 2)))
    np.testing.assert_allclose(np.transpose(np.asarray(cf), (0, 2, 3, 1)), ref["out0"], rtol=1e-6, atol=1e-4)
