"""Reuters newswires: 11,228 word-id lists labelled with 46 topics.

``load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113,
start_char=1, oov_char=2, index_from=3)`` as Keras 3.15's: Keras' ``reuters.npz`` (found as
``_files.keras_file`` says; object arrays unpickled with NumPy's globals only), shuffled by
``RandomState(seed)``, Keras' rewrite of the ids, then the first ``int(n * (1 - test_split))`` train.
``get_word_index()`` reads Keras' ``reuters_word_index.json``; ``get_label_names()`` the topics.
"""
from __future__ import annotations

import json

import numpy as np

from . import _files

NAME = "reuters"
ORIGIN = _files.KERAS_ORIGIN + "reuters.npz"
FILE_HASH = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
INDEX_ORIGIN = _files.KERAS_ORIGIN + "reuters_word_index.json"
INDEX_HASH = "4d44cc38712099c9e383dc6e5f11a921"
LABEL_NAMES = ("cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee",
               "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx",
               "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock",
               "retail", "ipi", "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem",
               "dlr", "gas", "silver", "wpi", "hog", "lead")


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113,
              start_char=1, oov_char=2, index_from=3):
    """``((x_train, y_train), (x_test, y_test))``: object arrays of word-id lists, int labels."""
    p = _files.keras_file("reuters", NAME, [_files.Path(path).name], ORIGIN, FILE_HASH, path, given=path)
    f = _files.load_npz(p)
    xs, labels = f["x"], f["y"]
    idx = np.arange(len(xs))
    np.random.RandomState(seed).shuffle(idx)
    xs, labels = _files.word_sequences(xs[idx], labels[idx], maxlen, start_char, index_from)
    xs = _files.clip_words(xs, num_words, skip_top, oov_char)
    cut = int(len(xs) * (1 - test_split))
    return ((_files.object_array(xs[:cut]), np.array(labels[:cut])),
            (_files.object_array(xs[cut:]), np.array(labels[cut:])))


def get_word_index(path="reuters_word_index.json"):
    """{word: id} (ids before ``index_from``'s shift)."""
    p = _files.keras_file("reuters", NAME, [_files.Path(path).name], INDEX_ORIGIN, INDEX_HASH, path, given=path)
    with open(p) as f:
        return json.load(f)


def get_label_names():
    return LABEL_NAMES


__all__ = ["load_data", "get_word_index", "get_label_names"]
