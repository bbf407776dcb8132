"""IMDB movie reviews: 25,000 training and 25,000 test reviews as word-id lists, sentiment 0/1.

``load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1,
oov_char=2, index_from=3)`` as Keras 3.15's: Keras' ``imdb.npz`` (found as ``_files.keras_file``
says; its object arrays unpickled with NumPy's globals only), train and test each shuffled by one
``RandomState(seed)``, then Keras' rewrite of the ids (``_files.word_sequences``, ``clip_words``).
``get_word_index()`` reads Keras' ``imdb_word_index.json``.
"""
from __future__ import annotations

import json

import numpy as np

from . import _files

NAME = "imdb"
ORIGIN = _files.KERAS_ORIGIN + "imdb.npz"
FILE_HASH = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
INDEX_ORIGIN = _files.KERAS_ORIGIN + "imdb_word_index.json"
INDEX_HASH = "bfafd718b763782e994055a2d397834f"


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3, **kwargs):
    """``((x_train, y_train), (x_test, y_test))``: object arrays of word-id lists, int labels."""
    p = _files.keras_file("imdb", NAME, [_files.Path(path).name], ORIGIN, FILE_HASH, path, given=path)
    f = _files.load_npz(p)
    rng = np.random.RandomState(seed)
    parts = []
    for split in ("train", "test"):
        x, y = f[f"x_{split}"], f[f"y_{split}"]
        idx = np.arange(len(x))
        rng.shuffle(idx)
        xs, labels = _files.word_sequences(x[idx], y[idx], maxlen, start_char, index_from)
        parts.append((xs, labels))
    (x_train, labels_train), (x_test, labels_test) = parts
    if maxlen and (not x_train or not x_test):
        raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. "
                         "Increase maxlen.")
    labels = np.concatenate([labels_train, labels_test])
    xs = _files.clip_words(x_train + x_test, num_words, skip_top, oov_char)
    n = len(x_train)
    return (_files.object_array(xs[:n]), labels[:n]), (_files.object_array(xs[n:]), labels[n:])


def get_word_index(path="imdb_word_index.json"):
    """{word: id} (ids before ``index_from``'s shift)."""
    p = _files.keras_file("imdb", NAME, [_files.Path(path).name], INDEX_ORIGIN, INDEX_HASH, path, given=path)
    with open(p) as f:
        return json.load(f)


__all__ = ["load_data", "get_word_index"]
