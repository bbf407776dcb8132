"""``keras.utils.FeatureSpace`` (Keras 3.15's, ``keras/src/layers/preprocessing/feature_space.py``):
one object that preprocesses a dict of structured features -- each feature through a Keras
preprocessing layer (Normalization, Rescaling, Discretization, StringLookup, IntegerLookup,
Hashing), categorical ones one-hot encoded (CategoryEncoding multi_hot), pairs crossed
(HashedCrossing) -- and concatenates the results (``output_mode="concat"``, in sorted feature
order, then the crosses) or returns them by name (``"dict"``).

``adapt(dataset)`` learns the adaptable layers' state from a ``tf.data.Dataset`` of dicts or a
dict of arrays; calling it on a dict of arrays (or of scalars: one sample) encodes them eagerly;
``get_inputs()`` / ``get_encoded_features()`` give the functional-API Inputs and the encoded
KerasTensor, to build a model on. Checked against Keras on TF 2.21
(tests/tf_reference/make_keras21_featurespace_reference.py).

Saving: Keras writes the preprocessors' state as weights and assets of a ``.keras`` file; here
``save`` writes a tapeflow ``.keras`` archive whose config carries the learned state (the
lookups' vocabularies, Normalization's mean and variance) as constructor arguments, and
``keras.models.load_model`` rebuilds the FeatureSpace from it, adapted.
"""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor, convert_to_tensor
from ..ops import array_ops as A
from .engine import Layer

_KINDS = ("float", "float_normalized", "float_rescaled", "float_discretized", "integer_categorical",
          "string_categorical", "integer_hashed", "string_hashed")


def _layers():
    from . import layers
    return layers


class _Identity(Layer):
    """The ``float`` feature's preprocessor (Keras' TFDIdentity): the value as float32."""

    def call(self, x):
        from ..ops import math_ops as M
        return x if x.dtype == "float32" else M.cast(x, "float32")


class Cross:
    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in {"int", "one_hot"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot'}. "
                             f"Received: output_mode={output_mode}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self):
        return "_X_".join(self.feature_names)

    def get_config(self):
        return {"feature_names": list(self.feature_names), "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Feature:
    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot', 'float'}. "
                             f"Received: output_mode={output_mode}")
        self.dtype = dtype
        if isinstance(preprocessor, dict):
            from .saving import deserialize_keras_object
            preprocessor = deserialize_keras_object(preprocessor, {"_Identity": _Identity})
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self, with_state=False):
        from .saving import serialize_keras_object
        p = serialize_keras_object(self.preprocessor)
        if with_state:
            _add_state(self.preprocessor, p["config"])
        return {"dtype": self.dtype, "preprocessor": p, "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _add_state(layer, config):
    """The adapted state as the layer's constructor arguments (a saved FeatureSpace loads adapted)."""
    L = _layers()
    if isinstance(layer, (L.StringLookup, L.IntegerLookup)) and layer.vocabulary_size() > 0:
        vocab = layer.get_vocabulary(include_special_tokens=False)
        config["vocabulary"] = [v.decode() if isinstance(v, bytes) else (v if isinstance(v, str) else int(v))
                                for v in vocab]
    elif isinstance(layer, L.Normalization) and layer.input_mean is None and getattr(layer, "mean", None) is not None:
        config["mean"] = np.asarray(layer.mean).reshape(-1).tolist()
        config["variance"] = np.asarray(layer.variance).reshape(-1).tolist()


_COUNTS = {}


def _auto(kind, name):
    """Keras' auto_name: ``kind``, then ``kind_1``, ``kind_2``, ..."""
    if name:
        return name
    n = _COUNTS.get(kind, 0)
    _COUNTS[kind] = n + 1
    return kind if n == 0 else f"{kind}_{n}"


class FeatureSpace(Layer):
    """Keras 3's FeatureSpace (see the module docstring)."""

    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):  # noqa: A003
        return Feature("float32", _Identity(name=f"{_auto('float', name)}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        p = _layers().Rescaling(scale=scale, offset=offset, name=f"{_auto('float_rescaled', name)}_preprocessor")
        return Feature("float32", p, "float")

    @classmethod
    def float_normalized(cls, name=None):
        p = _layers().Normalization(axis=-1, name=f"{_auto('float_normalized', name)}_preprocessor")
        return Feature("float32", p, "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot", name=None):
        p = _layers().Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries,
                                     name=f"{_auto('float_discretized', name)}_preprocessor")
        return Feature("float32", p, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        p = _layers().IntegerLookup(name=f"{_auto('integer_categorical', name)}_preprocessor", max_tokens=max_tokens,
                                    num_oov_indices=num_oov_indices)
        return Feature("int32", p, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None):
        p = _layers().StringLookup(name=f"{_auto('string_categorical', name)}_preprocessor", max_tokens=max_tokens,
                                   num_oov_indices=num_oov_indices)
        return Feature("string", p, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        p = _layers().Hashing(name=f"{_auto('string_hashed', name)}_preprocessor", num_bins=num_bins)
        return Feature("string", p, output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        p = _layers().Hashing(name=f"{_auto('integer_hashed', name)}_preprocessor", num_bins=num_bins)
        return Feature("int32", p, output_mode)

    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32, hashing_dim=32,
                 num_discretization_bins=32, name=None, **kwargs):
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim = crossing_dim
        self.hashing_dim = hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {n: self._standardize_feature(n, v) for n, v in features.items()}
        self.crosses = []
        for cross in crosses or ():
            if isinstance(cross, dict):
                cross = Cross.from_config(cross.get("config", cross))
            if not isinstance(cross, Cross):
                if not crossing_dim:
                    raise ValueError("When specifying `crosses`, the argument `crossing_dim` (dimensionality of the "
                                     "crossing space) should be specified as well.")
                unknown = [k for k in cross if k not in self.features]
                if unknown:
                    raise ValueError("All features referenced in the `crosses` argument should be present in the "
                                     f"`features` dict. Received unknown features: {cross}")
                cross = Cross(cross, crossing_dim=crossing_dim)
            self.crosses.append(cross)
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'dict', 'concat'}. "
                             f"Received: output_mode={output_mode}")
        self.output_mode = output_mode
        self.preprocessors = {n: f.preprocessor for n, f in self.features.items()}
        self.crossers = {c.name: _layers().HashedCrossing(c.crossing_dim, name=c.name) for c in self.crosses}
        self.one_hot_encoders = None     # name -> CategoryEncoding, made once adapted
        self.inputs = None
        self.encoded_features = None
        self._is_adapted = False
        self._concat = None

    def _standardize_feature(self, name, feature):
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            return Feature.from_config(feature.get("config", feature))
        if feature == "float_discretized":
            return self.float_discretized(name=name, num_bins=self.num_discretization_bins)
        if feature in ("integer_hashed", "string_hashed"):
            return getattr(self, feature)(self.hashing_dim, name=name)
        if feature in _KINDS:
            return getattr(self, feature)(name=name)
        raise ValueError(f"Invalid feature type: {feature}")

    # -- adapt ---------------------------------------------------------------------------------
    def _adaptable(self):
        L = _layers()
        out = []
        for n, p in self.preprocessors.items():
            if isinstance(p, L.Normalization) and p.input_mean is not None:
                continue
            if isinstance(p, (L.StringLookup, L.IntegerLookup)) and getattr(p, "_has_input_vocabulary", False):
                continue
            if isinstance(p, L.Discretization) and getattr(p, "bin_boundaries", None) is not None:
                continue   # (Keras 3.15 adapts it anyway and raises: fixed boundaries need no adapt)
            if hasattr(p, "adapt"):
                out.append(n)
        return out

    def adapt(self, dataset):
        """Learn each adaptable preprocessor's state from ``dataset``: a ``tf.data.Dataset`` of
        dicts (batched or not) or a dict of arrays/lists."""
        from ..data import Dataset
        if isinstance(dataset, dict):
            columns = {n: np.asarray(v.numpy() if isinstance(v, Tensor) else v) for n, v in dataset.items()}
        elif isinstance(dataset, Dataset):
            parts = {}
            for el in dataset:
                if not isinstance(el, dict):
                    raise ValueError(f"FeatureSpace.adapt: the dataset's elements must be dicts of features, got "
                                     f"{type(el).__name__}")
                for n, v in el.items():
                    parts.setdefault(n, []).append(np.asarray(v.numpy() if isinstance(v, Tensor) else v))
            columns = {n: np.concatenate([p.reshape(-1) if p.ndim <= 1 else p for p in ps]) if ps[0].ndim
                       else np.stack(ps) for n, ps in parts.items()}
        else:
            raise ValueError("`adapt()` can only be called on a tf.data.Dataset or a dict of arrays/lists. "
                             f"Received instead: {dataset} (of type {type(dataset)})")
        for n in self._adaptable():
            if n not in columns:
                raise ValueError(f"FeatureSpace.adapt: the data has no feature {n!r} (it has {sorted(columns)})")
            x = columns[n]
            if x.ndim <= 1:
                x = x.reshape(-1, 1)
            self.preprocessors[n].adapt(x)
        self._is_adapted = True
        self.get_encoded_features()
        self.built = True

    def _check_if_adapted(self):
        if not self._is_adapted:
            if self._adaptable():
                raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before you can start "
                                 "using it.")
            self._is_adapted = True

    # -- encoding ------------------------------------------------------------------------------
    def _cardinality(self, name, prep):
        L = _layers()
        if isinstance(prep, (L.IntegerLookup, L.StringLookup)):
            return prep.vocabulary_size()
        if isinstance(prep, L.CategoryEncoding):
            return prep.num_tokens
        if isinstance(prep, L.Discretization):
            return prep.num_bins if prep.num_bins is not None else len(prep.bin_boundaries) + 1
        if isinstance(prep, (L.HashedCrossing, L.Hashing)):
            return prep.num_bins
        raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a standard feature and the "
                         "dimensionality of its output space is not known, thus it cannot be one-hot encoded. Try "
                         "using `output_mode='int'`.")

    def _encoders(self):
        if self.one_hot_encoders is None:
            L = _layers()
            enc = {}
            specs = {**{n: (f, self.preprocessors[n]) for n, f in self.features.items()},
                     **{c.name: (c, self.crossers[c.name]) for c in self.crosses}}
            for n, (spec, prep) in specs.items():
                if spec.output_mode == "one_hot":
                    enc[n] = L.CategoryEncoding(num_tokens=self._cardinality(n, prep), output_mode="multi_hot")
            self.one_hot_encoders = enc
        return self.one_hot_encoders

    def _encode(self, data):
        """The features of ``data`` (tensors or KerasTensors, (batch, 1) each) encoded, in output order."""
        pre = {n: self.preprocessors[n](data[n]) for n in self.features}
        crossed = {c.name: self.crossers[c.name]([pre[k] for k in c.feature_names]) for c in self.crosses}
        names = sorted(pre) + sorted(crossed)
        enc = self._encoders()
        out = {}
        for n in names:
            x = pre[n] if n in pre else crossed[n]
            out[n] = enc[n](x) if n in enc else x
        if self.output_mode == "dict":
            return out
        for n, x in out.items():
            dt = np.dtype(x.dtype.as_numpy_dtype) if hasattr(x.dtype, "as_numpy_dtype") else None
            if dt is None or dt.kind in "iuSOU":
                raise ValueError(f"Cannot concatenate features because feature '{n}' has not been encoded (it has "
                                 f"dtype {x.dtype.name}). Consider using `output_mode='dict'`.")
        return list(out.values())

    def get_inputs(self):
        self._check_if_adapted()
        self.get_encoded_features()
        return self.inputs

    def get_encoded_features(self):
        """The encoded features of ``get_inputs()`` (a KerasTensor; a dict with output_mode='dict')."""
        self._check_if_adapted()
        if self.encoded_features is None:
            from .engine import Input
            self.inputs = {n: Input(shape=(1,), dtype=f.dtype, name=n) for n, f in self.features.items()}
            enc = self._encode(self.inputs)
            if self.output_mode == "concat":
                self._concat = _layers().Concatenate(axis=-1)
                enc = self._concat(enc)
            self.encoded_features = enc
        return self.encoded_features

    def __call__(self, data):
        self._check_if_adapted()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: data={data} (of type "
                             f"{type(data)}")
        missing = [n for n in self.features if n not in data]
        if missing:
            raise ValueError(f"FeatureSpace: the data has no feature(s) {missing} (it has {sorted(data)})")
        self.get_encoded_features()       # (the encoders, made once)
        rebatched = False
        xs = {}
        for n in self.features:
            x = data[n]
            x = x if isinstance(x, Tensor) else convert_to_tensor(np.asarray(x))
            if x.shape.rank == 0:
                x, rebatched = A.reshape(x, [1, 1]), True
            elif x.shape.rank == 1:
                x = A.expand_dims(x, -1)
            xs[n] = x
        out = self._encode(xs)
        if self.output_mode == "concat":
            from ..ops import math_ops as M
            out = A.concat([M.cast(x, "float32") if x.dtype != "float32" else x for x in out], axis=-1)
            return A.squeeze(out, 0) if rebatched else out
        if rebatched:
            out = {n: A.squeeze(x, 0) if x.shape.rank == 2 and x.shape[0] == 1 else x for n, x in out.items()}
        return out

    # -- config and saving ---------------------------------------------------------------------
    def get_config(self, with_state=False):
        return {"name": self.name,
                "features": {n: {"class_name": "Feature", "config": f.get_config(with_state)}
                             for n, f in self.features.items()},
                "output_mode": self.output_mode,
                "crosses": [{"class_name": "Cross", "config": c.get_config()} for c in self.crosses],
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        adapted = config.pop("adapted", False)
        fs = cls(**config)
        if adapted:
            fs._is_adapted = True
        return fs

    def save(self, filepath):
        """Write a ``.keras`` file that ``keras.models.load_model`` reads back as this FeatureSpace,
        adapted (the preprocessors' learned state is in its config)."""
        import datetime
        import json
        import os
        import zipfile
        from .. import __version__
        from .saving import FORMAT, VERSION, _check_path_for_save
        path = os.fspath(filepath)
        _check_path_for_save(path)
        cfg = self.get_config(with_state=True)
        cfg["adapted"] = self._is_adapted
        config = {"module": "tapeflow.keras.utils", "class_name": "FeatureSpace", "config": cfg}
        meta = {"format": FORMAT, "version": VERSION, "tapeflow_version": __version__, "kind": "FeatureSpace",
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr("metadata.json", json.dumps(meta, indent=1))
            zf.writestr("config.json", json.dumps(config, indent=1))
