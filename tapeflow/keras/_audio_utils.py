"""``keras.utils.audio_dataset_from_directory`` (Keras 3.15, TF 2.21's): a ``tf.data.Dataset`` of
(audio, labels) batches from a directory of class sub-directories of ``.wav`` files.

The listing, labels, seeded global shuffle and split are the image and text versions'
(``_image_utils.index_directory``: Keras' ``dataset_utils``). Each file is read and decoded with
``tf.audio.decode_wav(desired_samples=output_sequence_length)`` (16-bit PCM), so an element is
float32 (samples, channels). Keras' pipeline order is kept: shuffle the (path, label) pairs, map the
decoder, prefetch, then ``padded_batch`` to the longest clip of each batch when no
``output_sequence_length`` is given, else ``batch``. ``sampling_rate`` needs tensorflow-io in Keras
(its ImportError, here too); ``ragged=True`` is refused (the batch would be a RaggedTensor).
"""
from __future__ import annotations

import numpy as np

from ._image_utils import _check_split, _split, index_directory, read_labelled_files

ALLOWED_FORMATS = (".wav",)


def _audio_dataset(paths, labels, label_mode, num_classes, output_sequence_length, shuffle, buffer, seed):
    from .. import audio as _audio, io as _io
    n = -1 if output_sequence_length is None else int(output_sequence_length)

    def read(path):
        return _audio.decode_wav(_io.read_file(path), desired_samples=n)[0]
    return read_labelled_files(paths, labels, label_mode, num_classes, shuffle, buffer, seed, read)


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                 sampling_rate=None, output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None, follow_links=False, verbose=True):
    """Keras 3's ``audio_dataset_from_directory`` (see the module docstring); TF 2.21's errors."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError("The `labels` argument should be a list/tuple of integer labels, of the same size as the "
                             "number of audio files in the target directory. If you wish to infer the labels from "
                             'the subdirectory names in the target directory, pass `labels="inferred"`. If you wish '
                             "to get a dataset that only contains audio samples (no labels), pass `labels=None`.")
        if class_names:
            raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels}, and '
                             f"class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. Received: '
                         f"label_mode={label_mode}")
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError(f"`sampling_rate` should have an integer value. Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
        # Keras resamples with tensorflow-io, which TF 2.21 does not ship either
        raise ImportError("To use the argument `sampling_rate`, you should install tensorflow_io. You can install it "
                          "via `pip install tensorflow-io`.")
    if ragged:
        raise NotImplementedError("audio_dataset_from_directory(ragged=True) is not supported by tapeflow: batches of "
                                  "RaggedTensors; pass output_sequence_length, or leave it None to pad each batch")
    if labels is None or label_mode is None:
        labels = label_mode = None
    _check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, ALLOWED_FORMATS, class_names=class_names,
                                                 shuffle=shuffle, seed=seed, follow_links=follow_links,
                                                 verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")
    buffer = batch_size * 8 if batch_size is not None else 1024
    common = dict(label_mode=label_mode, num_classes=len(class_names) if class_names else 0,
                  output_sequence_length=output_sequence_length)

    def finish(ds):
        ds = ds.prefetch(-1)
        if batch_size is not None:
            if output_sequence_length is None:
                # Keras: padded_batch to the longest clip (zeros after the end)
                ds = ds.padded_batch(batch_size)
                ds._kind = "_PaddedBatchDataset"
            else:
                ds = ds.batch(batch_size)
        ds.class_names = class_names
        return ds
    if subset == "both":
        p_train, l_train = _split(paths, labels, validation_split, "training")
        p_val, l_val = _split(paths, labels, validation_split, "validation")
        if not p_train:
            raise ValueError(f"No training audio files found in directory {directory}. Allowed format(s): "
                             f"{ALLOWED_FORMATS}")
        if not p_val:
            raise ValueError(f"No validation audio files found in directory {directory}. Allowed format(s): "
                             f"{ALLOWED_FORMATS}")
        return [finish(_audio_dataset(p_train, l_train, shuffle=shuffle, buffer=buffer, seed=seed, **common)),
                finish(_audio_dataset(p_val, l_val, shuffle=False, buffer=None, seed=None, **common))]
    paths, labels = _split(paths, labels, validation_split, subset)
    if not paths:
        raise ValueError(f"No audio files found in directory {directory}. Allowed format(s): {ALLOWED_FORMATS}")
    return finish(_audio_dataset(paths, labels, shuffle=shuffle, buffer=buffer, seed=seed, **common))
