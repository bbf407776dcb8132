"""keras.datasets' boston_housing, california_housing, cifar10, cifar100, imdb, reuters (wave 25) on
tiny files in Keras' formats and cache layout (tests/dataset25_cases.py), against Keras 3.15's
outputs on the same files (tests/data/keras25_datasets_tf.json); no network."""
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras.datasets import _files

from dataset25_cases import CASES, WRITERS, describe, write_cifar10

REF = json.loads((Path(__file__).parent / "data" / "keras25_datasets_tf.json").read_text())


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Keras' cache in tmp_path, no Debian copy, no network."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    monkeypatch.setenv("TAPEFLOW_DATASETS_DOWNLOAD", "0")
    monkeypatch.delenv("TAPEFLOW_DATASETS", raising=False)
    real = _files.search_dirs
    monkeypatch.setattr(_files, "search_dirs",
                        lambda name, given=None: [d for d in real(name, given) if "/usr/share" not in str(d)])


@pytest.fixture
def cache(tmp_path):
    d = tmp_path / "keras_home" / "datasets"
    d.mkdir(parents=True)
    for write in WRITERS.values():
        write(str(d))
    return d


def _same(got, want):
    assert got["dtype"] == want["dtype"] and got["shape"] == want["shape"]
    assert got.get("values") == want.get("values") and got.get("sha256") == want.get("sha256")


@pytest.mark.parametrize("name, kw", [c for c in CASES if c[0] != "cifar10"], ids=lambda v: str(v))
def test_loader_matches_keras(cache, name, kw):
    want = REF[f"{name}|{json.dumps(kw, sort_keys=True)}"]
    load = getattr(tf.keras.datasets, name).load_data
    if "error" in want:
        with pytest.raises(getattr(__builtins__, want["error"], ValueError)) as info:
            load(**kw)
        assert str(info.value) == want["message"]
        return
    for g, w in zip(describe(load(**kw)), want["value"]):
        _same(g, w)


def test_cifar10_layout(cache):
    """Keras' cifar10 fills arrays of 10,000 images per batch (the tiny batches make it raise, recorded);
    tapeflow concatenates the batches: the same arrays for the real files, and these checked against
    Keras' load_batch steps written out: (n, 3, 32, 32) -> channels_last, labels (n, 1) uint8."""
    assert "could not broadcast" in REF["cifar10|{}"]["message"]
    root = cache / "cifar-10-batches-py-target" / "cifar-10-batches-py"

    def batch(f):
        with open(root / f, "rb") as fh:
            d = pickle.load(fh, encoding="bytes")
        return d[b"data"].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), np.asarray(d[b"labels"], "uint8")[:, None]
    (xtr, ytr), (xte, yte) = tf.keras.datasets.cifar10.load_data()
    parts = [batch(f"data_batch_{i}") for i in range(1, 6)]
    np.testing.assert_array_equal(xtr, np.concatenate([p[0] for p in parts]))
    np.testing.assert_array_equal(ytr, np.concatenate([p[1] for p in parts]))
    want_x, want_y = batch("test_batch")
    np.testing.assert_array_equal(xte, want_x)
    np.testing.assert_array_equal(yte, want_y)
    assert xtr.dtype == ytr.dtype == xte.dtype == yte.dtype == np.uint8 and xtr.shape == (10, 32, 32, 3)


def test_word_index_and_labels(cache):
    assert tf.keras.datasets.imdb.get_word_index() == REF["imdb|word_index"]
    assert tf.keras.datasets.reuters.get_word_index() == REF["reuters|word_index"]
    assert list(tf.keras.datasets.reuters.get_label_names()) == REF["reuters|label_names"]


def test_search_dirs_and_path_argument(tmp_path, monkeypatch):
    """Found as the MNIST loaders find their files: TAPEFLOW_DATASETS (the directory or its <name>
    subdirectory), a path given to load_data; CIFAR's unpacked directory without Keras' -target."""
    env = tmp_path / "env"
    (env / "imdb").mkdir(parents=True)
    WRITERS["imdb"](str(env / "imdb"))
    WRITERS["cifar100"](str(env))
    os.rename(env / "cifar-100-python-target" / "cifar-100-python", env / "cifar-100-python")
    monkeypatch.setenv("TAPEFLOW_DATASETS", str(env))
    assert len(tf.keras.datasets.imdb.load_data()[0][0]) == 6
    assert tf.keras.datasets.cifar100.load_data()[0][0].shape == (4, 32, 32, 3)
    other = tmp_path / "other"
    other.mkdir()
    WRITERS["boston_housing"](str(other))
    (x, _), _ = tf.keras.datasets.boston_housing.load_data(path=str(other / "boston_housing.npz"))
    assert x.shape == (8, 13)


def test_missing_file_says_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        tf.keras.datasets.reuters.load_data()
    msg = str(info.value)
    assert "reuters: could not find reuters.npz" in msg and str(tmp_path / "keras_home" / "datasets") in msg
    assert "Download disabled (TAPEFLOW_DATASETS_DOWNLOAD=0)" in msg
    assert "https://storage.googleapis.com/tensorflow/tf-keras-datasets/reuters.npz" in msg
    with pytest.raises(FileNotFoundError, match="cifar10: could not find cifar-10-batches-py-target"):
        tf.keras.datasets.cifar10.load_data()


def test_download_through_get_file(tmp_path, monkeypatch):
    """A download is Keras' get_file: the hash checked, the file put in Keras' cache; CIFAR's archive
    extracted to datasets/cifar-10-batches-py-target/ as Keras 3 does. file:// origins, no network."""
    import tarfile
    monkeypatch.setenv("TAPEFLOW_DATASETS_DOWNLOAD", "1")
    (tmp_path / "keras_home").mkdir()     # (get_file falls back on /tmp/.keras when KERAS_HOME is absent, as Keras)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    WRITERS["california_housing"](str(mirror))
    src = mirror / "california_housing.npz"
    monkeypatch.setattr(tf.keras.datasets.california_housing, "ORIGIN", src.as_uri())
    monkeypatch.setattr(tf.keras.datasets.california_housing, "FILE_HASH", _files.file_sha256(src))
    (x, _), _ = tf.keras.datasets.california_housing.load_data()
    assert x.shape == (7, 8)
    assert (tmp_path / "keras_home" / "datasets" / "california_housing.npz").is_file()
    # a wrong hash: get_file's error, listed under "Download failed"
    monkeypatch.setattr(tf.keras.datasets.boston_housing, "ORIGIN", src.as_uri())
    with pytest.raises(FileNotFoundError, match="(?s)Download failed:.*hash"):
        tf.keras.datasets.boston_housing.load_data()
    root = Path(write_cifar10(str(mirror)))
    with tarfile.open(mirror / "cifar-10-python.tar.gz", "w:gz") as t:
        t.add(root, arcname="cifar-10-batches-py")
    monkeypatch.setattr(tf.keras.datasets.cifar10, "ORIGIN", (mirror / "cifar-10-python.tar.gz").as_uri())
    monkeypatch.setattr(tf.keras.datasets.cifar10, "FILE_HASH", _files.file_sha256(mirror / "cifar-10-python.tar.gz"))
    (x, y), _ = tf.keras.datasets.cifar10.load_data()
    assert x.shape == (10, 32, 32, 3) and y.shape == (10, 1)
    assert (tmp_path / "keras_home" / "datasets" / "cifar-10-batches-py-target" / "cifar-10-batches-py").is_dir()


def test_pickles_name_only_numpy(cache):
    """CIFAR's and IMDB's pickles are read with NumPy's globals only (as Keras 3.15): a pickle naming
    anything else is refused, never run."""
    bad = cache / "cifar-100-python-target" / "cifar-100-python" / "train"
    with open(bad, "wb") as f:
        pickle.dump({b"data": os.system}, f, protocol=4)
    with pytest.raises(pickle.UnpicklingError, match="Refusing to deserialize `posix.system`"):
        tf.keras.datasets.cifar100.load_data()
