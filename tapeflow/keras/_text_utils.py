"""``keras.utils.text_dataset_from_directory`` (Keras 3.15, TF 2.21's): a ``tf.data.Dataset`` of
(texts, labels) batches from a directory of class sub-directories of ``.txt`` files.

The listing, the labels, the seed's global shuffle and the training/validation split are the image
version's (``_image_utils.index_directory``: Keras' ``dataset_utils``), so the same files land in
the same subset as under TF. Each element is the file's bytes as a ``tf.string`` scalar (the first
``max_length`` bytes when given: Keras' ``tf.strings.substr``). As for images, the within-epoch
order of a shuffled dataset is tapeflow's ``Dataset.shuffle``'s, not TF's.
"""
from __future__ import annotations

import numpy as np

from ._image_utils import _check_split, _split, index_directory, read_labelled_files


def _text_dataset(paths, labels, label_mode, num_classes, max_length, shuffle, buffer, seed):
    from .. import io as _io
    from .. import strings as _strings

    def read(path):
        text = _io.read_file(path)
        return _strings.substr(text, 0, max_length) if max_length is not None else text
    return read_labelled_files(paths, labels, label_mode, num_classes, shuffle, buffer, seed, read)


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):
    """Keras 3's ``text_dataset_from_directory`` (see the module docstring); TF 2.21's errors."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError("`labels` argument should be a list/tuple of integer labels, of the same size as the "
                             "number of text files in the target directory. If you wish to infer the labels from the "
                             'subdirectory names in the target directory, pass `labels="inferred"`. If you wish to get '
                             "a dataset that only contains text samples (no labels), pass `labels=None`. Received: "
                             f"labels={labels}")
        if class_names:
            raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels}, and '
                             f"class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. Received: '
                         f"label_mode={label_mode}")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if format == "grain":
        raise ValueError('format="grain" is not supported by tapeflow: use format="tf" (a tf.data.Dataset)')
    if labels is None or label_mode is None:
        labels = label_mode = None
    _check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, (".txt",), class_names=class_names,
                                                 shuffle=shuffle, seed=seed, follow_links=follow_links,
                                                 verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")
    buffer = batch_size * 8 if batch_size is not None else 1024
    common = dict(label_mode=label_mode, num_classes=len(class_names) if class_names else 0, max_length=max_length)

    def finish(ds):
        if batch_size is not None:
            ds = ds.batch(batch_size)
        ds = ds.prefetch(-1)
        ds._kind = "_PrefetchDataset"   # as image_dataset_from_directory: TF's object is a prefetch dataset
        ds.class_names = class_names
        return ds
    if subset == "both":
        p_train, l_train = _split(paths, labels, validation_split, "training")
        p_val, l_val = _split(paths, labels, validation_split, "validation")
        if not p_train:
            raise ValueError(f"No training text files found in directory {directory}. Allowed format: .txt")
        if not p_val:
            raise ValueError(f"No validation text files found in directory {directory}. Allowed format: .txt")
        return [finish(_text_dataset(p_train, l_train, shuffle=shuffle, buffer=buffer, seed=seed, **common)),
                finish(_text_dataset(p_val, l_val, shuffle=False, buffer=None, seed=None, **common))]
    paths, labels = _split(paths, labels, validation_split, subset)
    if not paths:
        raise ValueError(f"No text files found in directory {directory}. Allowed format: .txt")
    return finish(_text_dataset(paths, labels, shuffle=shuffle, buffer=buffer, seed=seed, **common))
