"""Keras 2's ``ImageDataGenerator`` (TF 2.21's ``tf.keras.preprocessing.image.ImageDataGenerator``,
which Keras 3 keeps as a deprecated legacy class): NumPy augmentation of image batches.

It follows Keras 3's ``keras/src/legacy/preprocessing/image.py`` step for step, so a seeded
generator draws the same numbers from NumPy's global random state in the same order (the
iterator reseeds ``np.random`` with ``seed + batches seen``; ``get_random_transform`` draws
rotation, shifts, shear, zoom, flips, channel shift, brightness in that order) and gives Keras'
batches. Keras warps each channel with ``scipy.ndimage.affine_transform``; tapeflow has no SciPy,
and ``_affine_channel`` is that function for the orders Keras offers through
``interpolation_order`` that NumPy can do exactly, 0 and 1 (nearest and linear: no spline
prefilter), with SciPy's four boundary modes: equal to SciPy's output bit for bit on random
matrices (measured: 1600 cases, max difference 0). Higher orders raise NotImplementedError.
``flow_from_dataframe`` needs pandas, which tapeflow does not use: refused.
"""
from __future__ import annotations

import math
import os
import threading
import warnings

import numpy as np

from .. import _image_utils

_FILL_MODES = ("constant", "nearest", "reflect", "wrap")


# -- the affine warp (scipy.ndimage.affine_transform, orders 0 and 1) -------------------------------------
def _sample_index(k, n, mode):
    """Integer sample positions ``k`` of an axis of length ``n`` mapped inside it by SciPy's modes (a
    "wrap" or "constant" coordinate was already moved or is masked: clamping only serves the neighbour
    of weight 0 at the last sample)."""
    if mode == "reflect":          # half-sample symmetric: d c b a | a b c d | d c b a
        k = np.mod(k, 2 * n)
        return np.where(k >= n, 2 * n - 1 - k, k)
    return np.clip(k, 0, n - 1)


def _affine_channel(img, matrix, offset, order, mode, cval):
    """``scipy.ndimage.affine_transform(img, matrix, offset, order=order, mode=mode, cval=cval)`` of a
    2-D array: output[o] = img at ``matrix @ o + offset``, interpolated in float64 as SciPy does."""
    h, w = img.shape
    ii, jj = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    ci = matrix[0, 0] * ii + matrix[0, 1] * jj + offset[0]
    cj = matrix[1, 0] * ii + matrix[1, 1] * jj + offset[1]
    if mode == "wrap":
        # SciPy's "wrap" (not "grid-wrap") moves a coordinate outside [0, n-1] by the period n - 1:
        # the first and last samples coincide (d b c d | a b c d | b c a b)
        ci = np.where((ci < 0) | (ci > h - 1), np.mod(ci, h - 1), ci) if h > 1 else np.zeros_like(ci)
        cj = np.where((cj < 0) | (cj > w - 1), np.mod(cj, w - 1), cj) if w > 1 else np.zeros_like(cj)
    src = img.astype(np.float64)
    if order == 0:
        ki, kj = np.floor(ci + 0.5).astype(np.int64), np.floor(cj + 0.5).astype(np.int64)
        out = src[_sample_index(ki, h, mode), _sample_index(kj, w, mode)]
    else:
        i0, j0 = np.floor(ci), np.floor(cj)
        fi, fj = ci - i0, cj - j0
        i0, j0 = i0.astype(np.int64), j0.astype(np.int64)
        out = 0.0
        for di, wi in ((0, 1 - fi), (1, fi)):
            for dj, wj in ((0, 1 - fj), (1, fj)):
                out = out + wi * wj * src[_sample_index(i0 + di, h, mode), _sample_index(j0 + dj, w, mode)]
    if mode == "constant":    # SciPy's "constant": cval beyond the edges, no interpolation towards it
        out = np.where((ci < 0) | (ci > h - 1) | (cj < 0) | (cj > w - 1), cval, out)
    return out.astype(img.dtype)


def transform_matrix_offset_center(matrix, x, y):
    o_x = float(x) / 2 - 0.5
    o_y = float(y) / 2 - 0.5
    offset_matrix = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]])
    reset_matrix = np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    return np.dot(np.dot(offset_matrix, matrix), reset_matrix)


def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=1, col_axis=2, channel_axis=0,
                           fill_mode="nearest", cval=0.0, order=1):
    """Keras' affine warp of one image (rotation ``theta`` and ``shear`` in degrees, shifts, zooms)."""
    if np.unique([row_axis, col_axis, channel_axis]).size != 3:
        raise ValueError("'row_axis', 'col_axis', and 'channel_axis' must be distinct")
    if {row_axis, col_axis, channel_axis} != {0, 1, 2}:
        raise ValueError(f"Invalid axis' indices: {({row_axis, col_axis, channel_axis}) - {0, 1, 2}}")
    if x.ndim != 3:
        raise ValueError("Input arrays must be multi-channel 2D images.")
    if channel_axis not in (0, 2):
        raise ValueError("Channels are allowed and the first and last dimensions.")
    m = None
    if theta != 0:
        t = np.deg2rad(theta)
        m = np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    if tx != 0 or ty != 0:
        s = np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
        m = s if m is None else np.dot(m, s)
    if shear != 0:
        sh = np.deg2rad(shear)
        s = np.array([[1, -np.sin(sh), 0], [0, np.cos(sh), 0], [0, 0, 1]])
        m = s if m is None else np.dot(m, s)
    if zx != 1 or zy != 1:
        s = np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
        m = s if m is None else np.dot(m, s)
    if m is None:
        return x
    if fill_mode not in _FILL_MODES:   # (Keras: SciPy's RuntimeError 'boundary mode not supported', here)
        raise ValueError(f"fill_mode must be one of {_FILL_MODES} (the scipy.ndimage modes Keras documents), "
                         f"got {fill_mode!r}")
    if order not in (0, 1):
        raise NotImplementedError(f"interpolation_order={order}: tapeflow warps images with order 0 (nearest) or 1 "
                                  "(linear, Keras' default); Keras' higher orders are SciPy's splines")
    h, w = x.shape[row_axis], x.shape[col_axis]
    m = transform_matrix_offset_center(m, h, w)
    x = np.rollaxis(x, channel_axis, 0)
    if col_axis > row_axis:   # the matrix is in (x, y) order, arrays index (row, col): swap (Keras' M' = PMP)
        m[:, [0, 1]] = m[:, [1, 0]]
        m[[0, 1]] = m[[1, 0]]
    x = np.stack([_affine_channel(c, m[:2, :2], m[:2, 2], order, fill_mode, cval) for c in x], axis=0)
    return np.rollaxis(x, 0, channel_axis + 1)


def random_rotation(x, rg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                    interpolation_order=1):
    return apply_affine_transform(x, theta=np.random.uniform(-rg, rg), row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shift(x, wrg, hrg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                 interpolation_order=1):
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shear(x, intensity, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                 interpolation_order=1):
    return apply_affine_transform(x, shear=np.random.uniform(-intensity, intensity), row_axis=row_axis,
                                  col_axis=col_axis, channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_zoom(x, zoom_range, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                interpolation_order=1):
    if len(zoom_range) != 2:
        raise ValueError(f"`zoom_range` should be a tuple or list of two floats. Received: {zoom_range}")
    zx, zy = (1, 1) if zoom_range[0] == 1 and zoom_range[1] == 1 else np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_channel_shift(x, intensity_range, channel_axis=0):
    return apply_channel_shift(x, np.random.uniform(-intensity_range, intensity_range), channel_axis=channel_axis)


def random_brightness(x, brightness_range, scale=True):
    if len(brightness_range) != 2:
        raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
    return apply_brightness_shift(x, np.random.uniform(brightness_range[0], brightness_range[1]), scale)


def flip_axis(x, axis):
    return np.asarray(x).swapaxes(axis, 0)[::-1, ...].swapaxes(0, axis)


def apply_channel_shift(x, intensity, channel_axis=0):
    x = np.rollaxis(x, channel_axis, 0)
    min_x, max_x = np.min(x), np.max(x)
    x = np.stack([np.clip(c + intensity, min_x, max_x) for c in x], axis=0)
    return np.rollaxis(x, 0, channel_axis + 1)


def apply_brightness_shift(x, brightness, scale=True):
    from PIL import ImageEnhance
    x_min, x_max = np.min(x), np.max(x)
    local_scale = (x_min < 0) or (x_max > 255)
    img = _image_utils.array_to_img(x, scale=local_scale or scale)
    x = _image_utils.img_to_array(ImageEnhance.Brightness(img).enhance(brightness))
    if not scale and local_scale:
        x = x / 255 * (x_max - x_min) + x_min
    return x


# -- iterators ------------------------------------------------------------------------------------------------
class Iterator:
    """Batches of indices over ``n`` samples, reshuffled each epoch; a ``seed`` reseeds NumPy's global
    random state with ``seed + batches seen`` before each batch, as Keras does (so the transforms drawn
    for the batch are reproducible)."""

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")

    def __init__(self, n, batch_size, shuffle, seed):
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self):
        self.index_array = np.arange(self.n)
        if self.shuffle:
            self.index_array = np.random.permutation(self.n)

    def __getitem__(self, idx):
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length {len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        return self._get_batches_of_transformed_samples(
            self.index_array[self.batch_size * idx:self.batch_size * (idx + 1)])

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self):
        self._set_index_array()

    def reset(self):
        self.batch_index = 0

    def _flow_index(self):
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current = 0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            if self.n > current + self.batch_size:
                self.batch_index += 1
            else:
                self.batch_index = 0
            self.total_batches_seen += 1
            yield self.index_array[current:current + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self):
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def _transformed(self, x):
        g = self.image_data_generator
        if g is None:
            return x
        x = g.apply_transform(x, g.get_random_transform(x.shape))
        return g.standardize(x)

    def _save(self, batch_x, index_array, hash_range):
        for i, j in enumerate(index_array):
            img = _image_utils.array_to_img(batch_x[i], self.data_format, scale=True)
            fname = f"{self.save_prefix}_{j}_{np.random.randint(hash_range)}.{self.save_format}"
            img.save(os.path.join(self.save_to_dir, fname))


class NumpyArrayIterator(Iterator):
    """``ImageDataGenerator.flow``'s iterator over arrays: (x, y[, sample_weight]) batches, or x alone."""

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False, sample_weight=None, seed=None,
                 data_format=None, save_to_dir=None, save_prefix="", save_format="png", subset=None,
                 ignore_class_split=False, dtype=None):
        data_format = _image_utils._data_format(data_format)
        self.dtype = _image_utils._floatx(dtype)
        if isinstance(x, (tuple, list)):
            x_misc = [np.asarray(x[1])] if not isinstance(x[1], list) else [np.asarray(xx) for xx in x[1]]
            x = x[0]
            for xx in x_misc:
                if len(x) != len(xx):
                    raise ValueError("All of the arrays in `x` should have the same length. Found a pair with: "
                                     f"len(x[0]) = {len(x)}, len(x[?]) = {len(xx)}")
        else:
            x_misc = []
        if y is not None and len(x) != len(y):
            raise ValueError("`x` (images tensor) and `y` (labels) should have the same length. Found: "
                             f"x.shape = {np.asarray(x).shape}, y.shape = {np.asarray(y).shape}")
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError("`x` (images tensor) and `sample_weight` should have the same length. Found: "
                             f"x.shape = {np.asarray(x).shape}, sample_weight.shape = {np.asarray(sample_weight).shape}")
        if subset is not None:
            if subset not in {"training", "validation"}:
                raise ValueError(f'Invalid subset name: {subset}; expected "training" or "validation".')
            split = int(len(x) * image_data_generator._validation_split)
            if (y is not None and not ignore_class_split
                    and not np.array_equal(np.unique(y[:split]), np.unique(y[split:]))):
                raise ValueError("Training and validation subsets have different number of classes after the split. "
                                 "If your numpy arrays are sorted by the label, you might want to shuffle them.")
            part = slice(None, split) if subset == "validation" else slice(split, None)
            x, x_misc = x[part], [np.asarray(xx[part]) for xx in x_misc]
            y = None if y is None else y[part]
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError(f"Input data in `NumpyArrayIterator` should have rank 4. You passed an array with shape "
                             f"{self.x.shape}")
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in {1, 3, 4}:
            warnings.warn(f'NumpyArrayIterator is set to use the data format convention "{data_format}" (channels on '
                          f"axis {channels_axis}), i.e. expected either 1, 3, or 4 channels on axis {channels_axis}. "
                          f"However, it was passed an array with shape {self.x.shape} "
                          f"({self.x.shape[channels_axis]} channels).")
        self.y = None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        for i, j in enumerate(index_array):
            batch_x[i] = self._transformed(self.x[j].astype(self.dtype))
        if self.save_to_dir:
            self._save(batch_x, index_array, 1e4)
        miscs = [xx[index_array] for xx in self.x_misc]
        out = batch_x if not miscs else [batch_x] + miscs
        if self.y is None:
            return out
        if self.sample_weight is None:
            return out, self.y[index_array]
        return out, self.y[index_array], self.sample_weight[index_array]


def _valid_files(directory, formats, follow_links):
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda t: t[0]):
        for fname in sorted(files):
            if fname.lower().endswith(".tiff"):
                warnings.warn('Using ".tiff" files with multiple bands will cause distortion. Please verify your '
                              "output.")
            if fname.lower().endswith(formats):
                yield root, fname


class DirectoryIterator(Iterator):
    """``ImageDataGenerator.flow_from_directory``'s iterator: one class per subdirectory (sorted), its
    image files (sorted, recursively), loaded with Pillow at ``target_size``."""

    allowed_class_modes = {"categorical", "binary", "sparse", "input", None}

    def __init__(self, directory, image_data_generator, target_size=(256, 256), color_mode="rgb", classes=None,
                 class_mode="categorical", batch_size=32, shuffle=True, seed=None, data_format=None,
                 save_to_dir=None, save_prefix="", save_format="png", follow_links=False, subset=None,
                 interpolation="nearest", keep_aspect_ratio=False, dtype=None):
        self.data_format = _image_utils._data_format(data_format)
        self.dtype = _image_utils._floatx(dtype)
        self.image_data_generator = image_data_generator
        self.target_size = tuple(target_size)
        self.keep_aspect_ratio = keep_aspect_ratio
        if color_mode not in {"rgb", "rgba", "grayscale"}:
            raise ValueError(f'Invalid color mode: {color_mode}; expected "rgb", "rgba", or "grayscale".')
        self.color_mode = color_mode
        depth = {"rgba": 4, "rgb": 3, "grayscale": 1}[color_mode]
        self.image_shape = (self.target_size + (depth,) if self.data_format == "channels_last"
                            else (depth,) + self.target_size)
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        self.interpolation = interpolation
        if subset is not None:
            vs = image_data_generator._validation_split
            if subset not in ("validation", "training"):
                raise ValueError(f'Invalid subset name: {subset};expected "training" or "validation"')
            split = (0, vs) if subset == "validation" else (vs, 1)
        else:
            split = None
        self.split, self.subset = split, subset
        self.directory = directory
        if class_mode not in self.allowed_class_modes:
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of: {self.allowed_class_modes}")
        self.class_mode = class_mode
        if not classes:
            classes = [d for d in sorted(os.listdir(directory)) if os.path.isdir(os.path.join(directory, d))]
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        self.filenames, labels = [], []
        for c in classes:
            sub = os.path.join(directory, c)
            files = list(_valid_files(sub, self.white_list_formats, follow_links))
            if split:
                files = files[int(split[0] * len(files)):int(split[1] * len(files))]
            for root, fname in files:
                labels.append(self.class_indices[c])
                self.filenames.append(os.path.join(c, os.path.relpath(os.path.join(root, fname), sub)))
        self.samples = len(self.filenames)
        self.classes = np.asarray(labels, dtype="int32").reshape(-1)
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        self._filepaths = [os.path.join(directory, f) for f in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self):
        return self._filepaths

    @property
    def labels(self):
        return self.classes

    @property
    def sample_weight(self):
        return None

    def _get_batches_of_transformed_samples(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        for i, j in enumerate(index_array):
            img = _image_utils.load_img(self._filepaths[j], color_mode=self.color_mode, target_size=self.target_size,
                                        interpolation=self.interpolation, keep_aspect_ratio=self.keep_aspect_ratio)
            x = _image_utils.img_to_array(img, data_format=self.data_format)
            if hasattr(img, "close"):
                img.close()
            batch_x[i] = self._transformed(x)
        if self.save_to_dir:
            self._save(batch_x, index_array, 1e7)
        if self.class_mode == "input":
            return batch_x, batch_x.copy()
        if self.class_mode in {"binary", "sparse"}:
            return batch_x, self.classes[index_array].astype(self.dtype)
        if self.class_mode == "categorical":
            batch_y = np.zeros((len(batch_x), len(self.class_indices)), dtype=self.dtype)
            batch_y[np.arange(len(index_array)), self.classes[index_array]] = 1.0
            return batch_x, batch_y
        return batch_x


# -- the generator ---------------------------------------------------------------------------------------------
class ImageDataGenerator:
    """Keras 2's image augmentation (deprecated in Keras 3, which still exports it): ``flow`` over
    arrays, ``flow_from_directory`` over image folders; each image is randomly transformed
    (``get_random_transform`` + ``apply_transform``) then standardized (``preprocessing_function``,
    ``rescale``, centering/normalization, ZCA)."""

    def __init__(self, featurewise_center=False, samplewise_center=False, featurewise_std_normalization=False,
                 samplewise_std_normalization=False, zca_whitening=False, zca_epsilon=1e-6, rotation_range=0,
                 width_shift_range=0.0, height_shift_range=0.0, brightness_range=None, shear_range=0.0,
                 zoom_range=0.0, channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None, data_format=None,
                 validation_split=0.0, interpolation_order=1, dtype=None):
        if data_format is None:
            data_format = "channels_last"
        self.dtype = _image_utils._floatx(dtype)
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = zca_whitening
        self.zca_epsilon = zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.shear_range = shear_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode = fill_mode
        self.cval = cval
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.interpolation_order = interpolation_order
        if data_format not in {"channels_last", "channels_first"}:
            raise ValueError('`data_format` should be `"channels_last"` (channel after row and column) or '
                             f'`"channels_first"` (channel before row and column). Received: {data_format}')
        self.data_format = data_format
        self.channel_axis, self.row_axis, self.col_axis = (1, 2, 3) if data_format == "channels_first" else (3, 1, 2)
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(f"`validation_split` must be strictly between 0 and 1.  Received: {validation_split}")
        self._validation_split = validation_split
        self.mean = self.std = self.zca_whitening_matrix = None
        if isinstance(zoom_range, (float, int)):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2 and all(isinstance(v, (float, int)) for v in zoom_range):
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two floats. Received: {zoom_range}")
        if zca_whitening:
            if not featurewise_center:
                self.featurewise_center = True
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, which overrides setting of "
                              "`featurewise_center`.")
            if featurewise_std_normalization:
                self.featurewise_std_normalization = False
                warnings.warn("This ImageDataGenerator specifies `zca_whitening` which overrides setting of"
                              "`featurewise_std_normalization`.")
        if featurewise_std_normalization and not featurewise_center:
            self.featurewise_center = True
            warnings.warn("This ImageDataGenerator specifies `featurewise_std_normalization`, which overrides "
                          "setting of `featurewise_center`.")
        if samplewise_std_normalization and not samplewise_center:
            self.samplewise_center = True
            warnings.warn("This ImageDataGenerator specifies `samplewise_std_normalization`, which overrides "
                          "setting of `samplewise_center`.")
        if brightness_range is not None and (not isinstance(brightness_range, (tuple, list))
                                             or len(brightness_range) != 2):
            raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
        self.brightness_range = brightness_range

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None, save_to_dir=None,
             save_prefix="", save_format="png", ignore_class_split=False, subset=None):
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle, sample_weight=sample_weight,
                                  seed=seed, data_format=self.data_format, save_to_dir=save_to_dir,
                                  save_prefix=save_prefix, save_format=save_format,
                                  ignore_class_split=ignore_class_split, subset=subset, dtype=self.dtype)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb", classes=None,
                            class_mode="categorical", batch_size=32, shuffle=True, seed=None, save_to_dir=None,
                            save_prefix="", save_format="png", follow_links=False, subset=None,
                            interpolation="nearest", keep_aspect_ratio=False):
        return DirectoryIterator(directory, self, target_size=target_size, color_mode=color_mode,
                                 keep_aspect_ratio=keep_aspect_ratio, classes=classes, class_mode=class_mode,
                                 data_format=self.data_format, batch_size=batch_size, shuffle=shuffle, seed=seed,
                                 save_to_dir=save_to_dir, save_prefix=save_prefix, save_format=save_format,
                                 follow_links=follow_links, subset=subset, interpolation=interpolation,
                                 dtype=self.dtype)

    def flow_from_dataframe(self, dataframe, *args, **kwargs):
        raise NotImplementedError("ImageDataGenerator.flow_from_dataframe takes a pandas DataFrame, which tapeflow "
                                  "does not use: list the files and labels and call flow() on the loaded arrays, or "
                                  "use tf.keras.utils.image_dataset_from_directory")

    def standardize(self, x):
        """Keras': in place where it can be (``x *= rescale``), as Keras documents."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        for flag, stat, what in ((self.featurewise_center, self.mean, "featurewise_center"),
                                 (self.featurewise_std_normalization, self.std, "featurewise_std_normalization"),
                                 (self.zca_whitening, self.zca_whitening_matrix, "zca_whitening")):
            if flag and stat is None:
                warnings.warn(f"This ImageDataGenerator specifies `{what}`, but it hasn't been fit on any training "
                              "data. Fit it first by calling `.fit(numpy_data)`.")
        if self.featurewise_center and self.mean is not None:
            x -= self.mean
        if self.featurewise_std_normalization and self.std is not None:
            x /= self.std + 1e-6
        if self.zca_whitening and self.zca_whitening_matrix is not None:
            flat_x = x.reshape(-1, math.prod(x.shape[-3:]))
            x = np.reshape(flat_x @ self.zca_whitening_matrix, x.shape)
        return x

    def _shift(self, rng, size):
        if not rng:
            return 0
        try:   # 1-D array-like or int: a choice, and a sign
            t = np.random.choice(rng)
            t *= np.random.choice([-1, 1])
        except ValueError:   # a float: uniform
            t = np.random.uniform(-rng, rng)
        if np.max(rng) < 1:
            t *= size
        return t

    def get_random_transform(self, img_shape, seed=None):
        """The random parameters of one transform, drawn from NumPy's global state in Keras' order."""
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) if self.rotation_range else 0
        tx = self._shift(self.height_shift_range, img_shape[self.row_axis - 1])
        ty = self._shift(self.width_shift_range, img_shape[self.col_axis - 1])
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift_intensity = None
        if self.channel_shift_range != 0:
            channel_shift_intensity = np.random.uniform(-self.channel_shift_range, self.channel_shift_range)
        brightness = None
        if self.brightness_range is not None:
            brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1])
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": flip_horizontal, "flip_vertical": flip_vertical,
                "channel_shift_intensity": channel_shift_intensity, "brightness": brightness}

    def apply_transform(self, x, transform_parameters):
        p = transform_parameters
        r, c, ch = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0), p.get("shear", 0),
                                   p.get("zx", 1), p.get("zy", 1), row_axis=r, col_axis=c, channel_axis=ch,
                                   fill_mode=self.fill_mode, cval=self.cval, order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], ch)
        if p.get("flip_horizontal", False):
            x = flip_axis(x, c)
        if p.get("flip_vertical", False):
            x = flip_axis(x, r)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x, seed=None):
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment=False, rounds=1, seed=None):
        """The statistics ``featurewise_center``/``_std_normalization``/``zca_whitening`` use."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError("Input to `.fit()` should have rank 4. Got array with shape: " + str(x.shape))
        if x.shape[self.channel_axis] not in {1, 3, 4}:
            warnings.warn(f'Expected input to be images (as Numpy array) following the data format convention '
                          f'"{self.data_format}" (channels on axis {self.channel_axis}), i.e. expected either 1, 3 or '
                          f"4 channels on axis {self.channel_axis}. However, it was passed an array with shape "
                          f"{x.shape} ({x.shape[self.channel_axis]} channels).")
        if seed is not None:
            np.random.seed(seed)
        x = np.copy(x)
        if self.rescale:
            x *= self.rescale
        if augment:
            ax = np.zeros((rounds * x.shape[0],) + x.shape[1:], dtype=self.dtype)
            for r in range(rounds):
                for i in range(x.shape[0]):
                    ax[i + r * x.shape[0]] = self.random_transform(x[i])
            x = ax
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=(0, self.row_axis, self.col_axis)), shape)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=(0, self.row_axis, self.col_axis)), shape)
            x /= self.std + 1e-6
        if self.zca_whitening:
            n = len(x)
            u, s, _ = np.linalg.svd(np.reshape(x, (n, -1)).T, full_matrices=False)
            self.zca_whitening_matrix = (u * (np.sqrt(n) / (s + self.zca_epsilon))).dot(u.T)
