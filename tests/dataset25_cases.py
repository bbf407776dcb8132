"""Tiny dataset files in Keras' formats (wave 25), written the same way by
tests/tf_reference/make_keras25_datasets_reference.py (which runs Keras 3.15's loaders on them) and
tests/test_keras25_datasets.py (which runs tapeflow's): npz files of arrays, CIFAR's pickled
python batches, IMDB/Reuters npz files of object arrays of word-id lists."""
import hashlib
import json
import os
import pickle

import numpy as np


def _rng(seed):
    return np.random.RandomState(seed)


def write_boston(d):
    r = _rng(1)
    np.savez(os.path.join(d, "boston_housing.npz"), x=r.uniform(0, 100, (11, 13)), y=r.uniform(5, 50, 11))


def write_california(d):
    r = _rng(2)
    np.savez(os.path.join(d, "california_housing.npz"), x=r.uniform(0, 10, (9, 8)).astype("float32"),
             y=r.uniform(1e4, 5e5, 9).astype("float32"))


def _batch(path, n, r, labels):
    d = {b"data": r.randint(0, 256, (n, 3072)).astype("uint8"), b"batch_label": b"tiny"}
    d.update({k.encode(): [int(v) for v in r.randint(0, m, n)] for k, m in labels.items()})
    with open(path, "wb") as f:
        pickle.dump(d, f, protocol=4)   # (protocol 2 from Python 3 pickles bytes by _codecs.encode)


def write_cifar10(d):
    """Keras' extracted layout: <d>/cifar-10-batches-py-target/cifar-10-batches-py/."""
    r = _rng(3)
    root = os.path.join(d, "cifar-10-batches-py-target", "cifar-10-batches-py")
    os.makedirs(root, exist_ok=True)
    for i in range(1, 6):
        _batch(os.path.join(root, f"data_batch_{i}"), 2, r, {"labels": 10})
    _batch(os.path.join(root, "test_batch"), 3, r, {"labels": 10})
    return root


def write_cifar100(d):
    r = _rng(4)
    root = os.path.join(d, "cifar-100-python-target", "cifar-100-python")
    os.makedirs(root, exist_ok=True)
    _batch(os.path.join(root, "train"), 4, r, {"fine_labels": 100, "coarse_labels": 20})
    _batch(os.path.join(root, "test"), 2, r, {"fine_labels": 100, "coarse_labels": 20})
    return root


def _seqs(r, n, lo, hi, vocab):
    out = np.empty(n, dtype=object)
    out[:] = [[int(w) for w in r.randint(1, vocab, r.randint(lo, hi))] for _ in range(n)]
    return out


def write_imdb(d):
    r = _rng(5)
    np.savez(os.path.join(d, "imdb.npz"), x_train=_seqs(r, 6, 2, 8, 12), y_train=r.randint(0, 2, 6),
             x_test=_seqs(r, 5, 2, 8, 12), y_test=r.randint(0, 2, 5))
    with open(os.path.join(d, "imdb_word_index.json"), "w") as f:
        json.dump({"the": 1, "and": 2, "film": 7}, f)


def write_reuters(d):
    r = _rng(6)
    np.savez(os.path.join(d, "reuters.npz"), x=_seqs(r, 10, 2, 9, 15), y=r.randint(0, 46, 10))
    with open(os.path.join(d, "reuters_word_index.json"), "w") as f:
        json.dump({"said": 1, "oil": 9}, f)


WRITERS = {"boston_housing": write_boston, "california_housing": write_california, "cifar10": write_cifar10,
           "cifar100": write_cifar100, "imdb": write_imdb, "reuters": write_reuters}

# (module, kwargs of load_data): each run by Keras and by tapeflow on the files above
CASES = [
    ("boston_housing", {}), ("boston_housing", {"test_split": 0.3, "seed": 1}), ("boston_housing", {"test_split": 0}),
    ("boston_housing", {"test_split": 1.0}),
    ("california_housing", {}), ("california_housing", {"version": "small", "seed": 7}),
    ("california_housing", {"version": "medium"}),
    ("cifar10", {}), ("cifar100", {}), ("cifar100", {"label_mode": "coarse"}), ("cifar100", {"label_mode": "x"}),
    ("imdb", {}), ("imdb", {"num_words": 9, "skip_top": 5}), ("imdb", {"maxlen": 6, "seed": 3}),
    ("imdb", {"start_char": None, "oov_char": None, "index_from": 0, "num_words": 6}), ("imdb", {"maxlen": 2}),
    ("reuters", {}), ("reuters", {"num_words": 10, "test_split": 0.5, "seed": 9}),
    ("reuters", {"maxlen": 7, "oov_char": None, "start_char": 4}),
    ("reuters", {"start_char": None, "index_from": 0}),
]


def describe(out):
    """A loader's result as JSON: each array's dtype, shape and values (lists for object arrays)."""
    def arr(a):
        a = np.asarray(a)
        if a.dtype == object:
            return {"dtype": "object", "shape": list(a.shape), "values": [list(map(int, v)) for v in a.reshape(-1)]
                    if a.ndim == 1 else a.tolist()}
        if a.size > 200:    # images: their bytes' SHA-256 (C order), so the JSON stays small
            return {"dtype": a.dtype.name, "shape": list(a.shape),
                    "sha256": hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}
        return {"dtype": a.dtype.name, "shape": list(a.shape), "values": a.tolist()}
    (xtr, ytr), (xte, yte) = out
    return [arr(xtr), arr(ytr), arr(xte), arr(yte)]
