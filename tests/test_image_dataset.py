"""keras.utils image files (load_img/img_to_array/array_to_img/save_img) and
image_dataset_from_directory against TF 2.21's recorded outputs
(tests/tf_reference/make_image_dataset_reference.py: the same trees, written by
tests/image_dir_cases.py, and the same calls)."""
import contextlib
import io
import json
import os
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import _image_utils as IU
from image_dir_cases import BAD, CONFIGS, checksum, write_extra, write_jpegs, write_tree

U = tf.keras.utils
REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "image_dataset_reference.json")))


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("imgdirs")
    r = {"tree": str(base / "tree"), "jpeg": str(base / "jpeg"), "empty": str(base / "empty"),
         "extra": str(base / "extra"), "base": str(base)}
    write_extra(r["extra"])
    write_tree(r["tree"])
    write_jpegs(r["jpeg"])
    os.makedirs(os.path.join(r["empty"], "x"))
    return r


def _run(root, kw):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = U.image_dataset_from_directory(root, **kw)
    return buf.getvalue().splitlines(), (r if isinstance(r, list) else [r])


def _spec(s):
    return [list(s.shape), s.dtype.name]


def _batches(ds, kw):
    out = []
    for el in ds:
        parts = [np.asarray(t) for t in tf.nest.flatten(el)]
        imgs = parts[0] if kw.get("batch_size", 32) is not None else parts[0][None]
        out.append({"shapes": [list(p.shape) for p in parts], "dtypes": [p.dtype.name for p in parts],
                    "images": [checksum(x) for x in imgs], "labels": parts[1].tolist() if len(parts) > 1 else None})
    return out


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_image_dataset_from_directory_matches_tf(roots, name):
    tree, kw = CONFIGS[name]
    ref = REF["configs"][name]
    printed, dss = _run(roots[tree], kw)
    assert printed == ref["printed"]
    assert len(dss) == len(ref["datasets"])
    jpeg = tree == "jpeg"
    for ds, want in zip(dss, ref["datasets"]):
        assert ds.class_names == want["class_names"]
        # the listing and, when shuffled, the seeded split: TF's file order exactly
        assert [os.path.relpath(p, roots[tree]) for p in ds.file_paths] == want["file_paths"]
        assert [_spec(s) for s in tf.nest.flatten(ds.element_spec)] == \
            [[[None if d is None else d for d in s], dt] for s, dt in want["element_spec"]]
        got = _batches(ds, kw)
        assert [b["shapes"] for b in got] == [b["shapes"] for b in want["batches"]]
        assert [b["dtypes"] for b in got] == [b["dtypes"] for b in want["batches"]]
        shuffled = kw.get("shuffle", True)
        if kw.get("batch_size", 32) is None:   # one element per step: its label is not a batch
            for b in got + want["batches"]:
                b["labels"] = None if b["labels"] is None else [b["labels"]]
        g_el = [(json.dumps(lab), im) for b in got for lab, im in zip(b["labels"] or [None] * len(b["images"]),
                                                                      b["images"])]
        w_el = [(json.dumps(lab), im) for b in want["batches"]
                for lab, im in zip(b["labels"] or [None] * len(b["images"]), b["images"])]
        if shuffled:
            # within an epoch tapeflow's shuffle draws its own order (docs/differences.md):
            # the same elements, compared as sorted multisets
            g_el, w_el = sorted(g_el), sorted(w_el)
        assert [g[0] for g in g_el] == [w[0] for w in w_el]
        for (_, gi), (_, wi) in zip(g_el, w_el):
            if jpeg:   # TF's fast IDCT: at most 5 of 255 per pixel (see test_decode_jpeg)
                n = np.prod(got[0]["shapes"][0][1:])
                assert abs(gi[0] - wi[0]) <= 5 * n
            else:
                np.testing.assert_allclose(gi, wi, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(BAD))
def test_image_dataset_bad_inputs_match_tf(roots, name):
    tree, kw = BAD[name]
    cls, msg = REF["bad"][name]
    with pytest.raises(Exception) as ei:
        with contextlib.redirect_stdout(io.StringIO()):
            for _ in U.image_dataset_from_directory(roots[tree], **kw):
                pass
    assert type(ei.value).__name__ == cls
    if cls == "ValueError":   # TF's message, its temporary directory replaced by ours
        want = msg
        for p in ("/tree", "/empty"):
            if p + "." in msg or p + " " in msg:
                i = msg.index(p + ("." if p + "." in msg else " "))
                start = msg.rindex(" ", 0, i) + 1
                want = msg[:start] + roots[p[1:]] + msg[i + len(p):]
        assert str(ei.value) == want
    else:
        assert "JPEG does not support 4 channels" in msg and "JPEG does not support 4 channels" in str(ei.value)


def test_decode_png_matches_tf_bit_for_bit(roots):
    for rel, per in REF["decode_png"].items():
        data = open(os.path.join(roots["base"], rel), "rb").read()
        for c, (shape, cs) in per.items():
            a = IU._decode_image(data, int(c), rel)
            assert a.dtype == np.uint8 and list(a.shape) == shape, (rel, c)
            assert checksum(a) == cs, (rel, c)


def test_decode_jpeg_vs_tf(roots):
    """Pillow's libjpeg-turbo with its accurate integer IDCT: TF's decode_jpeg(dct_method=
    "INTEGER_ACCURATE") bit for bit; TF's default (the fast IDCT) differs by at most 5 here
    (measured: 5 on the ramp, 4 on noise, 2 on the grayscale file)."""
    worst = 0
    for key, want in REF["decode_jpeg"].items():
        rel, c = key.split("|")
        a = IU._decode_image(open(os.path.join(roots["jpeg"], rel), "rb").read(), int(c), rel)
        np.testing.assert_array_equal(a, np.asarray(want["accurate"], np.uint8))
        worst = max(worst, int(np.abs(a.astype(int) - np.asarray(want["default"])).max()))
    assert 0 < worst <= 5


def test_load_img_matches_tf(roots):
    for key, (mode, shape, dtype, cs) in REF["load_img"].items():
        rel, cm, ts, interp, keep = key.split("|")
        im = U.load_img(os.path.join(roots["base"], rel), color_mode=cm, target_size=eval(ts),
                        interpolation=interp, keep_aspect_ratio=keep == "True")
        a = U.img_to_array(im)
        assert [im.mode, list(a.shape), a.dtype.name] == [mode, shape, dtype], key
        assert checksum(a) == cs, key


def test_load_img_errors(roots):
    p = os.path.join(roots["tree"], "top.png")
    # TF 2.21: ValueError color_mode must be "grayscale", "rgb", or "rgba"
    with pytest.raises(ValueError, match='color_mode must be "grayscale", "rgb", or "rgba"'):
        U.load_img(p, color_mode="hsv")
    # TF 2.21: ValueError Invalid interpolation method area specified. Supported methods are nearest, ...
    with pytest.raises(ValueError, match="Invalid interpolation method area specified. Supported methods are "
                                         "nearest, bilinear, bicubic, hamming, box, lanczos"):
        U.load_img(p, target_size=(3, 3), interpolation="area")
    with pytest.raises(TypeError, match="path should be path-like or io.BytesIO, not <class 'int'>"):
        U.load_img(3)
    with pytest.raises(FileNotFoundError):
        U.load_img(os.path.join(roots["tree"], "nope.png"))
    assert U.load_img(io.BytesIO(open(p, "rb").read())).size == (9, 9)


def test_array_to_img_img_to_array_save_img(tmp_path):
    x = np.arange(24, dtype=np.float64).reshape(2, 4, 3)
    p = U.array_to_img(x)
    # TF 2.21: mode RGB, size (4, 2), scaled to [0, 255] and truncated to uint8
    assert p.mode == "RGB" and p.size == (4, 2)
    assert np.asarray(p).ravel().tolist() == [0, 11, 22, 33, 44, 55, 66, 77, 88, 99, 110, 121, 133, 144, 155, 166,
                                              177, 188, 199, 210, 221, 232, 243, 255]
    assert np.asarray(U.array_to_img(x, scale=False)).ravel().tolist() == list(range(24))
    assert U.array_to_img(tf.constant(x)).mode == "RGB"          # a tensor converts
    big = U.array_to_img(np.full((2, 2, 1), 300.0), scale=False)  # TF 2.21: mode "I", values kept
    assert big.mode == "I" and np.asarray(big).ravel().tolist() == [300] * 4
    assert U.array_to_img(np.zeros((3, 2, 2)), data_format="channels_first").size == (2, 2)
    assert U.array_to_img(np.zeros((2, 2, 4))).mode == "RGBA"
    assert U.array_to_img(np.zeros((2, 2, 1))).mode == "L"
    with pytest.raises(ValueError, match=r"Expected image array to have rank 3 \(single image\). Got array with "
                                         r"shape: \(2, 3\)"):
        U.array_to_img(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="Unsupported channel number: 2"):
        U.array_to_img(np.zeros((2, 3, 2)))
    a = U.img_to_array(p)
    assert a.dtype == np.float32 and a.shape == (2, 4, 3) and isinstance(a, np.ndarray)
    assert U.img_to_array(p, data_format="channels_first").shape == (3, 2, 4)
    assert U.img_to_array(p, dtype="uint8").dtype == np.uint8
    assert U.img_to_array(p.convert("L")).shape == (2, 4, 1)
    assert U.img_to_array(p.convert("L"), data_format="channels_first").shape == (1, 2, 4)
    with pytest.raises(ValueError, match=r"The `data_format` argument must be one of \{'channels_first', "
                                         r"'channels_last'\}. Received: data_format=nchw"):
        U.img_to_array(p, data_format="nchw")
    U.save_img(str(tmp_path / "out.png"), x)
    assert np.asarray(U.load_img(str(tmp_path / "out.png"))).ravel().tolist()[:6] == [0, 11, 22, 33, 44, 55]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        U.save_img(str(tmp_path / "out.jpg"), np.zeros((2, 2, 4)))
    assert [str(i.message) for i in w] == ["The JPEG format does not support RGBA images, converting to RGB."]
    assert U.load_img(str(tmp_path / "out.jpg")).size == (2, 2)


def test_image_dataset_trains_a_model(roots):
    """The port's point: the dataset feeds Model.fit."""
    with contextlib.redirect_stdout(io.StringIO()):
        ds = U.image_dataset_from_directory(roots["tree"], image_size=(8, 8), batch_size=4, seed=1)
    # TF 2.21: <_PrefetchDataset element_spec=(TensorSpec(shape=(None, 8, 8, 3), dtype=tf.float32, ...
    assert repr(ds).startswith("<_PrefetchDataset element_spec=(TensorSpec(shape=(None, 8, 8, 3), dtype=tf.float32")
    # the tutorial's pipeline: cache, shuffle, a Rescaling map (its spec traced on the static spec)
    ds = ds.cache().shuffle(100).prefetch(tf.data.AUTOTUNE)
    mapped = ds.map(lambda x, y: (tf.keras.layers.Rescaling(1 / 255.)(x), y))
    assert repr(mapped.element_spec[0]) == "TensorSpec(shape=(None, 8, 8, 3), dtype=tf.float32, name=None)"
    x, _ = next(iter(mapped))
    assert 0.0 <= float(np.min(x)) and float(np.max(x)) <= 1.0
    model = tf.keras.Sequential([tf.keras.layers.Rescaling(1 / 255.), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    h = model.fit(ds, epochs=2, verbose=0)
    assert len(h.history["loss"]) == 2 and np.isfinite(h.history["loss"]).all()


def _cs(a):
    a = np.asarray(a, np.float64)
    return [float(a.sum()), float((a * (1 + np.arange(a.size).reshape(a.shape) % 7)).sum())]


def test_smart_resize_and_preprocessing_aliases():
    P = tf.keras.preprocessing
    assert P.image_dataset_from_directory is U.image_dataset_from_directory      # TF 2.21: the same function
    assert P.timeseries_dataset_from_array is U.timeseries_dataset_from_array
    assert P.image.load_img is U.load_img and P.image.save_img is U.save_img
    assert P.sequence.pad_sequences is U.pad_sequences
    x = np.arange(2 * 5 * 7 * 3, dtype=np.uint8).reshape(2, 5, 7, 3)
    r = P.image.smart_resize(x, (4, 4))
    # TF 2.21: ndarray float32 (2, 4, 4, 3), checksum [10032.0, 39906.5]
    assert isinstance(r, np.ndarray) and r.dtype == np.float32 and r.shape == (2, 4, 4, 3)
    np.testing.assert_allclose(_cs(r), [10032.0, 39906.5], rtol=1e-7)
    r = P.image.smart_resize(tf.constant(x[0]), (6, 3), interpolation="nearest")
    # TF 2.21: a uint8 tensor (6, 3, 3) summing to 2754
    assert isinstance(r, tf.Tensor) and r.dtype == tf.uint8 and tuple(r.shape) == (6, 3, 3)
    assert float(np.asarray(r, np.float64).sum()) == 2754.0
    r = P.image.smart_resize(x[0].transpose(2, 0, 1).astype(np.float32), (4, 6), data_format="channels_first")
    # TF 2.21: float32 (3, 4, 6), checksum [2988.0, 11781.749985158443]
    assert r.shape == (3, 4, 6)
    np.testing.assert_allclose(_cs(r), [2988.0, 11781.749985158443], rtol=1e-6)
    with pytest.raises(ValueError, match=r"incorrect rank, of shape \(7, 3\)"):
        P.image.smart_resize(x[0, 0], (4, 4))


def test_get_file_offline(tmp_path, capsys):
    """get_file on file:// URLs and its cache (TF 2.21's behaviour, recorded by running the same
    calls: paths, printed lines, errors). No network: the http case is a refused local port."""
    import hashlib
    import tarfile
    import zipfile
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    cache.mkdir()
    (src / "a.txt").write_text("hello")
    with tarfile.open(src / "arch.tar.gz", "w:gz") as t:
        t.add(src / "a.txt", arcname="d/a.txt")
    with zipfile.ZipFile(src / "z.zip", "w") as z:
        z.writestr("e/b.txt", "bye")
    G, C, url = U.get_file, str(cache), f"file://{src}/"
    assert G("a.txt", url + "a.txt", cache_dir=C) == f"{C}/datasets/a.txt"
    assert capsys.readouterr().out.startswith(f"Downloading data from {url}a.txt")
    assert G("a.txt", url + "a.txt", cache_dir=C) == f"{C}/datasets/a.txt"     # cached: nothing printed
    assert capsys.readouterr().out == ""
    assert G(origin=url + "a.txt", cache_dir=C, cache_subdir="sub") == f"{C}/sub/a.txt"
    # TF 2.21: extract with fname "arch" -> <C>/datasets/arch (archive kept as arch_archive);
    # "arch.tar.gz" -> arch_extracted; no fname and a zip -> <C>/datasets/z.zip (a directory)
    assert G("arch", url + "arch.tar.gz", cache_dir=C, extract=True) == f"{C}/datasets/arch"
    assert (cache / "datasets" / "arch" / "d" / "a.txt").read_text() == "hello"
    assert os.path.exists(f"{C}/datasets/arch_archive")
    assert G("arch.tar.gz", url + "arch.tar.gz", cache_dir=C, extract=True) == f"{C}/datasets/arch_extracted"
    assert G(origin=url + "z.zip", cache_dir=C, extract=True) == f"{C}/datasets/z.zip"
    assert (cache / "datasets" / "z.zip" / "e" / "b.txt").read_text() == "bye"
    assert G("u", url + "arch.tar.gz", cache_dir=C, untar=True) == f"{C}/datasets/u"
    sha, md5 = hashlib.sha256(b"hello").hexdigest(), hashlib.md5(b"hello").hexdigest()
    assert G("h.txt", url + "a.txt", cache_dir=C, file_hash=sha) == f"{C}/datasets/h.txt"
    assert G("h2.txt", url + "a.txt", cache_dir=C, md5_hash=md5) == f"{C}/datasets/h2.txt"
    assert G("b.txt", url + "a.txt", cache_dir=C, file_hash=md5) == f"{C}/datasets/b.txt"   # auto: 32 hex = md5
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected. The auto file hash does not match "
                                         "the provided value of 0{64}."):
        G("h3.txt", url + "a.txt", cache_dir=C, file_hash="0" * 64)
    (cache / "datasets" / "a.txt").write_text("stale")
    capsys.readouterr()
    assert G("a.txt", url + "a.txt", cache_dir=C, file_hash=sha) == f"{C}/datasets/a.txt"
    assert capsys.readouterr().out.startswith("A local file was found, but it seems to be incomplete or outdated "
                                              "because the auto file hash does not match the original value of "
                                              + sha + " so we will re-download the data.")
    assert (cache / "datasets" / "a.txt").read_text() == "hello"
    # TF 2.21: Exception "URL fetch failure on http://127.0.0.1:9/x.txt: None -- [Errno 111] Connection refused"
    with pytest.raises(Exception, match=r"URL fetch failure on http://127.0.0.1:9/x.txt: None -- .*with no "
                                        r"network, put the file at .*/datasets/x.txt"):
        G("x.txt", "http://127.0.0.1:9/x.txt", cache_dir=C)
    assert not os.path.exists(f"{C}/datasets/x.txt")
    with pytest.raises(Exception, match="URL fetch failure on .*missing.txt: None -- .*No such file"):
        G("y.txt", url + "missing.txt", cache_dir=C)
    with pytest.raises(ValueError, match=r'Please specify the "origin" argument \(URL of the file to download\).'):
        G("a.txt")
    with pytest.raises(ValueError, match="Can't parse the file name from the origin provided: "
                                         "'http://127.0.0.1:9/'.Please specify the `fname` argument."):
        G(origin="http://127.0.0.1:9/", cache_dir=C)
    with pytest.raises(ValueError, match="Paths are no longer accepted as the `fname` argument."):
        G("d/a.txt", url + "a.txt", cache_dir=C)
    (src / "a.txt").write_text("new")
    assert G("a.txt", url + "a.txt", cache_dir=C, force_download=True) == f"{C}/datasets/a.txt"
    assert (cache / "datasets" / "a.txt").read_text() == "new"


def test_get_file_refuses_paths_escaping_the_archive(tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "evil.zip", "w") as z:
        z.writestr("../evil.txt", "x")
        z.writestr("ok.txt", "y")
    cache = tmp_path / "cache"
    cache.mkdir()
    with pytest.warns(UserWarning, match="Skipping invalid path during archive extraction: '../evil.txt'"):
        out = U.get_file("evil", f"file://{tmp_path}/evil.zip", cache_dir=str(cache), extract=True)
    assert os.path.exists(os.path.join(out, "ok.txt"))
    assert not os.path.exists(cache / "datasets" / "evil.txt")
