"""Keras 3's lookup and text layers: StringLookup, IntegerLookup (one IndexLookup base, as
Keras'), Hashing, HashedCrossing and TextVectorization, with Keras 3's rules (TF 2.21's results
recorded in tests/data/lookup_tf.json by tests/tf_reference/make_lookup_reference.py).

A lookup is one ``string_map`` equation (core/primitives/strings.py) whose per-element function
is a hashable table object (``_Lookup``, ``_Invert``, ``_HashBins``): the vocabulary, the mask
and the OOV rule in one place, so the layer runs eagerly and traces into ``tapeflow.function``
(the python backend runs the kernel) with the same values and the same errors. An OOV value
with ``num_oov_indices=0`` raises TF's InvalidArgumentError from the kernel, in every mode. The
encodings (one_hot/multi_hot/count/tf_idf) are the ops CategoryEncoding uses
(``preprocessing._encode``). ``adapt`` counts tokens with NumPy/collections eagerly (Keras'
MutableHashTable), and orders the vocabulary by count, ties by the token, both descending
(Keras' ``np.lexsort((tokens, counts))[::-1]``).
"""
from __future__ import annotations

import collections

import numpy as np

from ...core.primitive import aval_of, bind
from ...core.primitives.strings import ByContents, string_map_p
from ...core.serializable import serializable
from ...core.tensor import Tensor, convert_to_tensor
from ...errors import InvalidArgumentError
from ...ops import array_ops as A
from ...ops import math_ops as M
from ..engine import Layer
from .preprocessing import _encode

__all__ = ["StringLookup", "IntegerLookup", "Hashing", "HashedCrossing", "TextVectorization"]

_OBJ = np.dtype(object)
_I64_MAX = np.iinfo(np.int64).max
_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def _fingerprint(s):
    from ...util.farmhash import fingerprint64
    return fingerprint64(s)


def _strong(s, key):
    from ...util.siphash import siphash24
    return siphash24(key[0], key[1], s)


def _as_bytes(v):
    """A vocabulary/mask/OOV token as the element a string tensor holds (bytes)."""
    if isinstance(v, bytes):
        return v
    if isinstance(v, np.bytes_):
        return bytes(v)
    return str(v).encode("utf-8")


@serializable("keras.vocab_lookup")
class _Lookup(ByContents):
    """Token -> index (a string_map per-element function, hashable by its contents):
    the mask token -> ``mask_value``; a vocabulary token -> its index; else an OOV index
    (``oov_start`` + the hash or floormod bucket when several, -1 -> an error when none)."""

    __name__ = "vocab_lookup"

    def __init__(self, table, mask, mask_value, oov_start, num_oov, oov_hash, salt, layer):
        self.table, self.mask, self.mask_value = table, mask, mask_value
        self.oov_start, self.num_oov, self.oov_hash, self.salt = oov_start, num_oov, oov_hash, salt
        self.layer = layer
        self._keyed((tuple(table.items()), mask, mask_value, oov_start, num_oov, oov_hash,
                     None if salt is None else tuple(salt), layer))

    def __call__(self, x):
        if self.mask is not None and x == self.mask:
            return self.mask_value
        i = self.table.get(x)
        if i is not None:
            return i
        return self._oov(x)

    def map_list(self, items):
        """The lookups of a flat list (string_map's whole-list path): one dict comprehension."""
        fast = self.__dict__.get("_fast")
        if fast is None:
            fast = dict(self.table)
            if self.mask is not None:
                fast[self.mask] = self.mask_value     # the mask wins over a vocabulary entry
            self._fast = fast
        if self.num_oov == 1:
            get, d = fast.get, self.oov_start
            return [get(x, d) for x in items]
        oov = self._oov
        return [fast[x] if x in fast else oov(x) for x in items]

    def _oov(self, x):
        n = self.num_oov
        if n == 1:
            return self.oov_start
        if n == 0:
            shown = x.decode("utf-8", "replace") if isinstance(x, bytes) else int(x)
            raise InvalidArgumentError(
                f"{self.layer}: when `num_oov_indices=0` all inputs should be in vocabulary, found OOV value "
                f"{shown!r}; consider setting `num_oov_indices=1`")
        if self.oov_hash:   # strings, or integers with oov_method='farmhash': the hash of the text
            s = x if isinstance(x, bytes) else str(int(x)).encode()
            h = _fingerprint(s) if self.salt is None else _strong(s, self.salt)
            return self.oov_start + h % n
        return self.oov_start + int(x) % n     # floormod (Python's % is a floor modulo, as TF's)

    def __repr__(self):
        return f"vocab_lookup({self.layer}, {len(self.table)} tokens)"

    def _serial_state(self):
        return [list(self.table), list(self.table.values()), self.mask, self.mask_value, self.oov_start,
                self.num_oov, self.oov_hash, None if self.salt is None else list(self.salt), self.layer]

    @classmethod
    def _from_serial_state(cls, state):
        keys, values, *rest = state
        return cls(dict(zip(keys, values, strict=True)), *rest)


@serializable("keras.vocab_invert")
class _Invert(ByContents):
    """Index -> token (``invert=True``): out-of-range indices give the OOV token, the mask index
    (0 with a mask token) the mask token."""

    __name__ = "vocab_invert"

    def __init__(self, tokens, default, mask, layer):
        self.tokens, self.default, self.mask, self.layer = dict(tokens), default, mask, layer
        self._keyed((tuple(self.tokens.items()), default, mask, layer))

    def __call__(self, i):
        if self.mask is not None and i == 0:
            return self.mask
        return self.tokens.get(int(i), self.default)

    def __repr__(self):
        return f"vocab_invert({self.layer}, {len(self.tokens)} tokens)"

    def _serial_state(self):
        return [list(self.tokens), list(self.tokens.values()), self.default, self.mask, self.layer]

    @classmethod
    def _from_serial_state(cls, state):
        ids, tokens, default, mask, layer = state
        return cls(dict(zip(ids, tokens, strict=True)), default, mask, layer)


def _flat_rows(x):
    """A RaggedTensor batch -> its rows as 1-D NumPy arrays; None for anything else."""
    from ...ragged.ragged_tensor import RaggedTensor
    if not isinstance(x, RaggedTensor):
        return None
    rows = []
    for r in x.to_list():
        a = np.empty(len(r), object) if r and isinstance(r[0], bytes) else None
        if a is not None:
            a[:] = r
        rows.append(a if a is not None else np.asarray(r).reshape(-1))
    return rows


class _ConvertsInputs:
    """Keras' lookup layers take Python lists, strings and NumPy arrays as inputs
    (``layer([["a", "b"]])``, Keras' docstring examples): converted to a tensor here, before
    Layer's input check (which refuses a bare str elsewhere)."""

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (str, bytes, list, tuple, np.ndarray, np.generic)):
            inputs = convert_to_tensor(inputs)
        return super().__call__(inputs, *args, **kwargs)


class _IndexLookup(_ConvertsInputs, Layer):
    """Keras 3's IndexLookup: the vocabulary, special tokens, OOV rule, adapt and encodings."""

    _string = True          # StringLookup: keys are strings

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary=None, idf_weights=None,
                 invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False, oov_method="floormod",
                 salt=None, name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                             f"max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if oov_method not in ("floormod", "farmhash"):
            raise ValueError(f"Unknown value for `oov_method` argument of {type(self).__name__}. Allowed values "
                             f"are: ('floormod', 'farmhash'). Received: oov_method={oov_method}")
        if salt is not None:
            if not self._string and oov_method != "farmhash":
                raise ValueError(f"`salt` can only be used when `oov_method='farmhash'`. Received: "
                                 f"oov_method={oov_method}")
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                salt = [int(s) for s in salt]
            elif isinstance(salt, int):
                salt = [salt, salt]
            else:
                raise ValueError("The `salt` argument for `IndexLookup` can only be a tuple of 2 integers, or a "
                                 f"single integer. Received: salt={salt}.")
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        if output_mode not in _MODES:
            raise ValueError(f"Unknown value for `output_mode` argument of {type(self).__name__}. Allowed values "
                             f"are: {_MODES}. Received: output_mode={output_mode}")
        if invert and output_mode != "int":
            raise ValueError(f"`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        if sparse:
            raise ValueError(f"{type(self).__name__}: sparse=True is not supported by tapeflow's lookup layers; "
                             "use sparse=False")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(f"`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
                             f"idf_weights={idf_weights} and output_mode={output_mode}")
        frozen = kwargs.pop("vocabulary_size", None)
        has_vocab = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("dtype", None)
        kwargs.pop("vocabulary_dtype", None)
        super().__init__(name=name, **kwargs)
        self._autocast = False
        self.invert, self.max_tokens, self.num_oov_indices = bool(invert), max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token, self.output_mode = mask_token, oov_token, output_mode
        self.sparse, self.pad_to_max_tokens, self.oov_method, self.salt = False, bool(pad_to_max_tokens), \
            oov_method, salt
        self._frozen_vocab_size = frozen
        self.input_vocabulary = None if isinstance(vocabulary, str) else vocabulary
        if isinstance(self.input_vocabulary, Tensor):
            self.input_vocabulary = self._from_np(np.asarray(self.input_vocabulary.numpy()).tolist())
        self.input_idf_weights = idf_weights
        self._has_input_vocabulary = has_vocab
        self._tokens = []           # the learned/given tokens (no special ones), as Python values
        self.idf_weights = None
        if output_mode == "tf_idf" and has_vocab and idf_weights is None:
            raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output mode, the "
                             "`idf_weights` argument must also be provided.")
        self._reset_counts()
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # -- token conversions ----------------------------------------------------------------------
    def _key(self, v):
        return _as_bytes(v) if self._string else int(v)

    def _from_np(self, seq):
        """Tokens out of a NumPy/Tensor -> the Python form get_vocabulary returns."""
        if self._string:
            return [s.decode("utf-8") if isinstance(s, (bytes, np.bytes_)) else str(s) for s in seq]
        return [int(s) for s in seq]

    # -- indices ---------------------------------------------------------------------------------
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def vocabulary_size(self):
        """The size of the vocabulary, with the mask and OOV indices."""
        return len(self._tokens) + self._token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary in index order (the mask and OOV tokens first unless
        ``include_special_tokens=False``)."""
        tokens = list(self._tokens)
        if not include_special_tokens:
            return tokens
        special = [self.oov_token] * self._token_start_index()
        if self.mask_token is not None and self.output_mode == "int":
            special[0] = self.mask_token
        return special + tokens

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (and the idf weights in 'tf_idf' mode), as Keras' set_vocabulary."""
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError(f"`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                             f"output_mode={self.output_mode} and idf_weights={idf_weights}")
        if isinstance(vocabulary, str):
            raise ValueError(f"{type(self).__name__}: a vocabulary file ({vocabulary!r}) is not supported in "
                             "tapeflow; read the file's lines and pass them as a list")
        if isinstance(vocabulary, Tensor):
            vocabulary = np.asarray(vocabulary.numpy())
        vocab = self._from_np(list(np.asarray(vocabulary, dtype=object).reshape(-1))) \
            if not isinstance(vocabulary, (list, tuple)) else self._from_np(vocabulary)
        if isinstance(idf_weights, Tensor):
            idf_weights = idf_weights.numpy()
        if len(vocab) == 0:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={list(vocabulary)}")
        token_start = self._token_start_index()
        special = [self.mask_token] * self._oov_start_index() + [self.oov_token] * self.num_oov_indices
        found_special = vocab[:token_start] == special
        tokens = vocab[token_start:] if found_special else vocab
        counts = collections.Counter(tokens)
        repeated = [t for t, c in counts.items() if c > 1]
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                             f"The repeated terms are: {repeated}")
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError("Found reserved mask token at unexpected location in `vocabulary`. Note that passed "
                             "`vocabulary` does not need to include the OOV and mask tokens. Either remove all "
                             "mask and OOV tokens, or include them only at the start of the vocabulary in "
                             f"precisely this order: {special}. Received: mask_token={self.mask_token} at "
                             f"vocabulary index {len(vocab) - 1 - vocab[::-1].index(self.mask_token)}")
        if self.oov_token is not None and self.invert and self.oov_token in tokens:
            raise ValueError("Found reserved OOV token at unexpected location in `vocabulary`. Note that passed "
                             "`vocabulary` does not need to include the OOV and mask tokens. Either remove all "
                             "mask and OOV tokens, or include them only at the start of the vocabulary in "
                             f"precisely this order: {special}. Received: oov_token={self.oov_token} at "
                             f"vocabulary index {len(vocab) - 1 - vocab[::-1].index(self.oov_token)}")
        size = token_start + len(tokens)
        if self.max_tokens is not None and size > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab size. Received "
                             f"vocabulary size is {size}; `max_tokens` is {self.max_tokens}.")
        self._tokens = list(tokens)
        self._record_vocabulary_size()
        if self.output_mode == "tf_idf":
            w = np.asarray(idf_weights, np.float64)
            if len(vocab) != len(w):
                raise ValueError(f"`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                                 f"{len(w)}; len(vocabulary) is {len(vocab)}")
            if w.ndim != 1:
                raise ValueError(f"TF-IDF data must be a 1-index array. Received: type(idf_weights)="
                                 f"{type(idf_weights)}")
            front, front_value = (0, 0.0) if found_special else (token_start, float(np.average(w)))
            back = self.max_tokens - front - len(w) if self.pad_to_max_tokens and self.max_tokens else 0
            self.idf_weights = np.pad(w, (front, back), "constant",
                                      constant_values=(front_value, 0.0)).astype(np.float32)

    def _record_vocabulary_size(self):
        if self.output_mode != "int" and not self.pad_to_max_tokens and self._frozen_vocab_size is not None \
                and self.built and self.vocabulary_size() != self._frozen_vocab_size:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, the "
                               "vocabulary size cannot be changed after the layer is called. Old vocab size is "
                               f"{self._frozen_vocab_size}, new vocab size is {self.vocabulary_size()}")
        self._frozen_vocab_size = self.vocabulary_size()

    # -- adapt -----------------------------------------------------------------------------------
    def _reset_counts(self):
        self._counts = collections.Counter()
        self._doc_counts = collections.Counter()
        self._num_documents = 0

    def reset_state(self):
        if not self._has_input_vocabulary:
            self._reset_counts()

    def adapt(self, data, steps=None):
        """Learns the vocabulary from ``data`` (a dataset of batches, an iterable of batches, an
        array/list/tensor): tokens by count, ties by the token, both descending."""
        from ...data import Dataset
        self.reset_state()
        if isinstance(data, Dataset):
            if steps is not None:
                data = data.take(steps)
            for batch in data:
                self.update_state(batch)
        elif hasattr(data, "__iter__") and not isinstance(data, (list, tuple, np.ndarray, Tensor)) \
                and _flat_rows(data) is None:
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        else:
            rows = _flat_rows(data)
            if rows is None:
                arr = self._as_array(data)
                if arr.ndim == 1:
                    arr = arr[:, None]
                data = arr
            self.update_state(data)
        self.finalize_state()

    def _as_array(self, data):
        if isinstance(data, Tensor):
            arr = np.asarray(data.numpy())
        else:
            arr = np.asarray(data, dtype=object if self._string else None)
        if self._string:
            if arr.dtype != object and arr.dtype.kind not in "US":
                raise ValueError(f"{type(self).__name__}.adapt: expects strings, got {arr.dtype} data")
            flat = np.empty(arr.size, object)
            flat[:] = [_as_bytes(v) for v in arr.reshape(-1)]
            return flat.reshape(arr.shape)
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{type(self).__name__}.adapt: expects integers, got {arr.dtype} data")
        return arr.astype(np.int64)

    def update_state(self, data):
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via "
                             "`vocabulary` argument or `set_vocabulary()` method.")
        rows = _flat_rows(data)
        if rows is None:
            arr = self._as_array(data)
            if arr.ndim == 0:
                arr = arr[None]
            if arr.ndim == 1:
                arr = arr[None]
            rows = [r.reshape(-1) for r in arr]
        self._update_rows([[self._key(v) for v in r] for r in rows])

    def _update_rows(self, keys):
        """Counts the tokens of ``keys`` (one list of keys per document)."""
        for r in keys:
            self._counts.update(r)
        if self.output_mode == "tf_idf":
            for r in keys:
                self._doc_counts.update(set(r))
            self._num_documents += len(keys)

    def finalize_state(self):
        if self._has_input_vocabulary or not self._counts:
            self._record_vocabulary_size()
            return
        counts = dict(self._counts)
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(self._key(special), None)
        # Keras: np.lexsort((tokens, counts))[::-1]: count descending, ties by the token descending
        order = sorted(counts, key=lambda t: (counts[t], t), reverse=True)
        if self.max_tokens:
            order = order[:self.max_tokens - self._token_start_index()]
        self._tokens = self._from_np(order)
        if self.output_mode == "tf_idf":
            docs = np.asarray([self._doc_counts[t] for t in order], np.int64)
            idf = np.log(1 + self._num_documents / (1 + docs)).astype(np.float32)
            front = np.float32(np.mean(idf, dtype=np.float32)) if idf.size else np.float32(0)
            w = np.concatenate([np.full(self._token_start_index(), front, np.float32), idf])
            if self.pad_to_max_tokens and self.max_tokens is not None:
                w = np.pad(w, (0, self.max_tokens - w.size))
            self.idf_weights = w
        self._reset_counts()
        self._record_vocabulary_size()

    # -- call ------------------------------------------------------------------------------------
    def _table(self):
        start = self._token_start_index()
        if self.invert:
            tokens = {start + i: (_as_bytes(t) if self._string else int(t)) for i, t in enumerate(self._tokens)}
            default = _as_bytes(self.oov_token) if self._string else int(self.oov_token)
            mask = None if self.mask_token is None else (
                _as_bytes(self.mask_token) if self._string else int(self.mask_token))
            return _Invert(tokens, default, mask, self.name)
        table = {self._key(t): start + i for i, t in enumerate(self._tokens)}
        mask = None if self.mask_token is None else self._key(self.mask_token)
        mask_value = 0 if self.output_mode == "int" else _I64_MAX     # dropped by the encodings
        oov_hash = self._string or self.oov_method == "farmhash"
        return _Lookup(table, mask, mask_value, self._oov_start_index(), self.num_oov_indices, oov_hash,
                       self.salt, self.name)

    def _input(self, inputs):
        x = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        want = np.dtype(np.int64) if self.invert or not self._string else _OBJ
        if aval_of(x).dtype != want:
            x = M.cast(x, want)     # TF's rule: string <-> number is an UnimplementedError
        return x

    def call(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens and not self._tokens \
                and self._frozen_vocab_size is None:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you "
                               "must set the layer's vocabulary before calling it. Either pass a `vocabulary` "
                               "argument to the layer, or call `adapt` with some sample data.")
        x = self._input(inputs)
        if self.invert:
            out = _OBJ if self._string else np.dtype(np.int64)
            return bind(string_map_p, x, fn=self._table(), args=(), out=out)
        ids = bind(string_map_p, x, fn=self._table(), args=(), out=np.dtype(np.int64))
        return self._encode(ids)

    def _encode(self, ids):
        if self.output_mode == "int":
            return ids
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        if self.output_mode == "tf_idf":
            if self.idf_weights is None:
                raise ValueError("When `output_mode` is `'tf_idf'`, `idf_weights` must be provided.")
            counts = _encode(type(self).__name__, ids, "count", depth, np.float32)
            return counts * convert_to_tensor(self.idf_weights)
        # Keras hands the TF backend the table's value dtype: the encodings are int64
        return _encode(type(self).__name__, ids, self.output_mode, depth, np.int64)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        s = tuple(input_shape)
        if self.output_mode == "one_hot":
            return (s[:-1] if len(s) > 1 and s[-1] == 1 else s) + (depth,)
        return s[:-1] + (depth,)

    # -- saving: an adapted vocabulary is not in the config (as Keras 3's, whose asset files hold
    # it); without these a loaded layer had no vocabulary and mapped every token to the OOV index
    def save_assets_dict(self):
        if self.input_vocabulary is not None or not self._tokens:
            return None
        out = {"vocabulary": list(self.get_vocabulary(include_special_tokens=True))}
        if self.output_mode == "tf_idf" and getattr(self, "idf_weights", None) is not None:
            out["idf_weights"] = np.asarray(self.idf_weights, np.float64)[:len(out["vocabulary"])].tolist()
        return out

    def load_assets_dict(self, assets):
        self.set_vocabulary(assets["vocabulary"], idf_weights=assets.get("idf_weights"))

    def get_config(self):
        cfg = super().get_config()
        cfg.pop("dtype", None)
        vocab = self.input_vocabulary
        if vocab is not None and not isinstance(vocab, list):
            vocab = self._from_np(list(np.asarray(vocab, dtype=object).reshape(-1)))
        idf = self.input_idf_weights
        if idf is not None and not isinstance(idf, list):
            idf = np.asarray(idf).tolist()
        cfg.update(invert=self.invert, max_tokens=self.max_tokens, num_oov_indices=self.num_oov_indices,
                   oov_token=self.oov_token, mask_token=self.mask_token, output_mode=self.output_mode,
                   sparse=self.sparse, pad_to_max_tokens=self.pad_to_max_tokens, idf_weights=idf,
                   vocabulary=vocab, vocabulary_size=self._frozen_vocab_size, oov_method=self.oov_method,
                   salt=self.salt)
        return cfg


class StringLookup(_IndexLookup):
    """Keras 3's StringLookup: strings -> int64 indices (or the encodings), or back (``invert``)."""

    _string = True

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, salt=None, **kwargs):
        self.encoding = encoding
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name,
                         salt=salt, **kwargs)

    def get_config(self):
        cfg = super().get_config()
        cfg["encoding"] = self.encoding
        return cfg


class IntegerLookup(_IndexLookup):
    """Keras 3's IntegerLookup: int64 values -> indices (or the encodings), or back (``invert``).
    Several OOV indices bucket by ``value % n`` (``oov_method='floormod'``) or by FarmHash of the
    value's decimal text (``'farmhash'``), as Keras."""

    _string = False

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, oov_method="floormod", salt=None, name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If `max_tokens` is set for `IntegerLookup`, it must be greater than 1. Received: "
                             f"max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"The value of `num_oov_indices` argument for `IntegerLookup` must >= 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if vocabulary_dtype != "int64":
            raise ValueError(f"Only `vocabulary_dtype='int64'` is supported at this time. Received: "
                             f"vocabulary_dtype={vocabulary_dtype}")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens, sparse=sparse,
                         oov_method=oov_method, salt=salt, name=name, **kwargs)

    def get_config(self):
        cfg = super().get_config()
        cfg["vocabulary_dtype"] = "int64"
        for k in ("oov_token", "mask_token"):
            if cfg[k] is not None:
                cfg[k] = int(cfg[k])
        if cfg["vocabulary"] is not None:
            cfg["vocabulary"] = [int(v) for v in cfg["vocabulary"]]
        return cfg



@serializable("keras.hash_bins")
class _HashBins:
    """A value -> its bin (Keras' Hashing): FarmHash Fingerprint64 (salt: SipHash-2-4, TF's
    to_hash_bucket_strong) of the string, or of a number's decimal text (floats truncated to
    int64 first, as Keras casts), modulo the bins; with a mask value, the mask -> 0 and the rest
    into bins 1..num_bins-1."""

    __name__ = "hash_bins"

    def __init__(self, num_bins, mask, salt):
        self.num_bins, self.mask, self.salt = num_bins, mask, None if salt is None else tuple(salt)

    def __call__(self, x):
        if self.mask is not None and x == self.mask:
            return 0
        s = x if isinstance(x, bytes) else str(int(x)).encode()
        h = _fingerprint(s) if self.salt is None else _strong(s, self.salt)
        if self.mask is not None:
            return 1 + h % (self.num_bins - 1)
        return h % self.num_bins

    def _key(self):
        return (self.num_bins, self.mask, self.salt)

    def __eq__(self, other):
        return isinstance(other, _HashBins) and other._key() == self._key()

    def __hash__(self):
        return hash(("hash_bins",) + self._key())

    def __repr__(self):
        return f"hash_bins({self.num_bins}, mask={self.mask!r}, salt={self.salt})"

    def _serial_state(self):
        return [self.num_bins, self.mask, self.salt]

    @classmethod
    def _from_serial_state(cls, state):
        return cls(*state)


class Hashing(_ConvertsInputs, Layer):
    """Keras 3's Hashing: values -> ``num_bins`` bins by FarmHash Fingerprint64 (TF's
    to_hash_bucket_fast), or by SipHash-2-4 with ``salt`` (TF's to_hash_bucket_strong); numbers
    hash as their decimal text. ``mask_value`` goes to bin 0."""

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        self._autocast = False
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if output_mode == "int" and self.dtype not in ("int32", "int64"):
            raise ValueError(f"When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or 'in64'. "
                             f"Received: dtype={kwargs['dtype']}")
        modes = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in modes:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of {modes}. Received: "
                             f"output_mode={output_mode}")
        if sparse:
            raise ValueError("Hashing: sparse=True is not supported by tapeflow's lookup layers; use "
                             "sparse=False")
        self.num_bins, self.mask_value, self.output_mode, self.sparse = int(num_bins), mask_value, output_mode, False
        self.strong_hash = salt is not None
        self.salt = None
        if salt is not None:
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                self.salt = [int(v) for v in salt]
            elif isinstance(salt, int):
                self.salt = [salt, salt]
            else:
                raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size 2 integers, or a "
                                 f"single integer. Received: salt={salt}.")

    def call(self, inputs):
        x = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        d = aval_of(x).dtype
        mask = self.mask_value
        if mask is not None:
            mask = _as_bytes(mask) if d == _OBJ else mask
        if d.kind == "f":
            # Keras compares with the mask before its int64 cast; a float mask keeps its value here
            x = M.cast(x, np.int64) if mask is None or float(mask) == int(mask) else x
        fn = _HashBins(self.num_bins, mask if self.num_bins > 1 else None, self.salt)
        bins = bind(string_map_p, x, fn=fn, args=(), out=np.dtype(np.int64))
        if self.output_mode == "int":
            return bins if self.dtype == "int64" else M.cast(bins, self._np_dtype)
        return _encode("Hashing", bins, self.output_mode, self.num_bins, self._np_dtype)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(num_bins=self.num_bins, salt=self.salt, mask_value=self.mask_value, output_mode=self.output_mode,
                   sparse=self.sparse)
        return cfg


_CROSS_KEY = 0xDECAFCAFFE       # TF's tf.sparse.cross_hashed default hash_key
_K_MUL = 0xC6A4A7935BD1E995
_M64 = (1 << 64) - 1


def _shift_mix(v):
    return v ^ (v >> 47)


def _fingerprint_cat(fp1, fp2):
    """TF's FingerprintCat64 (tensorflow/core/platform/fingerprint.h)."""
    r = fp1 ^ _K_MUL
    r ^= (_shift_mix((fp2 * _K_MUL) & _M64) * _K_MUL) & _M64
    r = (r * _K_MUL) & _M64
    r = (_shift_mix(r) * _K_MUL) & _M64
    return _shift_mix(r)


@serializable("keras.hashed_crossing")
def _cross_bins(*xs_and_bins):
    """TF's HashCrosser: FingerprintCat64 folded over the features from the default key, a
    string feature as its Fingerprint64, an integer as its two's-complement value."""
    *xs, num_bins = xs_and_bins
    h = _CROSS_KEY
    for x in xs:
        h = _fingerprint_cat(h, _fingerprint(x) if isinstance(x, bytes) else int(x) & _M64)
    return h % num_bins


class HashedCrossing(Layer):
    """Keras 3's HashedCrossing: the crossed value of 2+ categorical features (each of shape
    (), (batch,) or (batch, 1)) hashed into ``num_bins`` as TF's tf.sparse.cross_hashed."""

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None, **kwargs):
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **kwargs)
        self._autocast = False
        if sparse:
            raise ValueError("HashedCrossing: sparse=True is not supported by tapeflow's lookup layers; use "
                             "sparse=False")
        if output_mode not in ("int", "one_hot"):
            raise ValueError(f"Unknown value for `output_mode` argument of HashedCrossing. Allowed values are: "
                             f"('int', 'one_hot'). Received: output_mode={output_mode}")
        self.num_bins, self.output_mode, self.sparse = int(num_bins), output_mode, False

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: "
                             f"inputs={inputs}")
        return super().__call__(tuple(inputs), *args, **kwargs)

    def call(self, inputs):
        if len(inputs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on at least two inputs. Received: inputs={inputs}")
        xs = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inputs]
        first = tuple(aval_of(xs[0]).shape)
        if len(first) > 2 or (len(first) == 2 and first[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or "
                             f"`(batch_size, 1)`. Received: shapes {[tuple(aval_of(x).shape) for x in xs]}")
        if any(tuple(aval_of(x).shape) != first for x in xs[1:]):
            raise ValueError("All `HashedCrossing` inputs should have equal shape. Received: shapes "
                             f"{[tuple(aval_of(x).shape) for x in xs]}")
        for x in xs:
            if aval_of(x).dtype != _OBJ and aval_of(x).dtype.kind not in "iu":
                raise InvalidArgumentError(f"HashedCrossing: inputs must be strings or integers, got "
                                           f"{aval_of(x).dtype.name}")
        bins = bind(string_map_p, *xs, fn=_cross_bins, args=(self.num_bins,), out=np.dtype(np.int64))
        if self.output_mode == "int":
            return bins if self.dtype == "int64" else M.cast(bins, self._np_dtype)
        return _encode("HashedCrossing", bins, "one_hot", self.num_bins, self._np_dtype)

    def get_config(self):
        return {"num_bins": self.num_bins, "output_mode": self.output_mode, "sparse": self.sparse,
                "name": self.name, "dtype": self.dtype}



# Keras' lower_and_strip_punctuation pattern (text_vectorization.py), verbatim
_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'


class TextVectorization(_ConvertsInputs, Layer):
    """Keras 3's TextVectorization: standardize (tf.strings ops or a callable), split into tokens
    (whitespace, characters or a callable), ngrams, then a StringLookup with mask token '' (the
    padding): 'int' ids padded with 0 (to ``output_sequence_length`` when set, truncating), or
    the lookup's encodings. Splitting makes ragged rows, which tapeflow keeps eager: inside
    ``tapeflow.function`` a layer that splits is one ``py_call`` of the eager call with a declared
    dense result (``_traced_call``; ``ragged=True`` raises NotImplementedError there), whose
    function (``_TextVectorizationCall``) a SavedModel holds as the layer's config and vocabulary."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None, **kwargs):
        stds = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
        if not (standardize is None or callable(standardize) or standardize in stds):
            raise ValueError(f"Unknown value for `standardize` argument of TextVectorization. Allowed values are: "
                             f"{stds}. Received: standardize={standardize}")
        if not (split is None or callable(split) or split in ("whitespace", "character")):
            raise ValueError("Unknown value for `split` argument of TextVectorization. Allowed values are: "
                             f"('whitespace', 'character'). Received: split={split}")
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        if output_mode not in _MODES:
            raise ValueError(f"Unknown value for `output_mode` argument of TextVectorization. Allowed values are: "
                             f"{_MODES}. Received: output_mode={output_mode}")
        if not (ngrams is None or isinstance(ngrams, int)
                or isinstance(ngrams, tuple) and all(isinstance(i, int) for i in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams}")
        if output_mode == "int" and not (output_sequence_length is None or isinstance(output_sequence_length, int)):
            raise ValueError("`output_sequence_length` must be either None or an integer when `output_mode` is "
                             f"'int'. Received: output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not 'int'. Received "
                             f"output_sequence_length={output_sequence_length}.")
        if ragged and output_mode != "int":
            raise ValueError(f"`ragged` must not be true if `output_mode` is `'int'`. Received: ragged={ragged} and "
                             f"output_mode={output_mode}")
        has_vocab = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        kwargs.pop("dtype", None)
        super().__init__(name=name, **kwargs)
        self._autocast = False
        self._standardize, self._split, self._ngrams_arg = standardize, split, ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._ragged, self._output_mode = bool(ragged), output_mode
        self._output_sequence_length, self._encoding = output_sequence_length, encoding
        self._lookup_layer = StringLookup(max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
                                          pad_to_max_tokens=pad_to_max_tokens, mask_token="",
                                          output_mode=output_mode, sparse=sparse, has_input_vocabulary=has_vocab,
                                          encoding=encoding, vocabulary_size=vocabulary_size)

    # -- vocabulary (the lookup layer's) -------------------------------------------------------------
    def save_assets_dict(self):
        return self._lookup_layer.save_assets_dict()

    def load_assets_dict(self, assets):
        self._lookup_layer.load_assets_dict(assets)

    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    def reset_state(self):
        self._lookup_layer.reset_state()

    def finalize_state(self):
        self._lookup_layer.finalize_state()

    def update_state(self, data):
        x, rows = self._preprocess(data)
        if rows is None:
            self._lookup_layer.update_state(x)
        else:
            self._lookup_layer._update_rows(rows)

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary of the standardized, split tokens of ``data`` (a dataset of
        batches, an iterable of batches, or an array/list/tensor of strings)."""
        from ...data import Dataset
        self.reset_state()
        if isinstance(data, Dataset):
            if steps is not None:
                data = data.take(steps)
            for batch in data:
                self.update_state(batch)
        elif hasattr(data, "__iter__") and not isinstance(data, (list, tuple, np.ndarray, Tensor)):
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        else:
            x = data if isinstance(data, Tensor) else convert_to_tensor(self._lookup_layer._as_array(data))
            if len(aval_of(x).shape) == 1:
                x = A.expand_dims(x, -1)
            self.update_state(x)
        self.finalize_state()

    # -- preprocessing ---------------------------------------------------------------------------
    def _preprocess(self, inputs):
        """-> (x, None) when not split (a dense string tensor), else (shape, rows): the leading
        shape and one token list (bytes) per element."""
        from ... import strings as S
        x = inputs if isinstance(inputs, Tensor) else convert_to_tensor(self._lookup_layer._as_array(inputs))
        if aval_of(x).dtype != _OBJ:
            x = M.cast(x, _OBJ)      # TF's rule: number -> string is an UnimplementedError
        if self._standardize in ("lower", "lower_and_strip_punctuation"):
            x = S.lower(x)
        if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            x = S.regex_replace(x, _PUNCTUATION, "")
        if callable(self._standardize):
            x = self._standardize(x)
        if self._split is None:
            if self._ngrams is not None:
                raise NotImplementedError("TextVectorization: ngrams without split is not supported in tapeflow")
            return x, None
        shape = tuple(aval_of(x).shape)
        if len(shape) > 1:
            if shape[-1] != 1:
                raise ValueError("When using `TextVectorization` to tokenize strings, the input rank must be 1 or "
                                 f"the last shape dimension must be 1. Received: inputs.shape={shape} with "
                                 f"rank={len(shape)}")
            shape = shape[:-1]
            x = A.reshape(x, shape)
        flat = np.asarray(x.numpy()).reshape(-1)
        rows = []
        for el in flat:
            if self._split == "whitespace":
                toks = el.split()
            elif self._split == "character":
                toks = [c.encode("utf-8") for c in el.decode("utf-8", "replace")]
            else:
                out = self._split(convert_to_tensor(np.array([el], object)))
                out = out.to_list()[0] if hasattr(out, "to_list") else np.asarray(out.numpy()).reshape(-1).tolist()
                toks = [_as_bytes(t) for t in out]
            if self._ngrams is not None:
                toks = [b" ".join(toks[i:i + w]) for w in self._ngrams for i in range(len(toks) - w + 1)]
            rows.append(toks)
        return shape, rows

    def call(self, inputs):
        from ...core.state import STATE
        if STATE.trace is not None and self._split is not None:
            return self._traced_call(inputs)
        x, rows = self._preprocess(inputs)
        lk = self._lookup_layer
        if rows is None:
            return lk(x)
        shape, rows = x, rows
        if self._output_mode == "int" and self._ragged:
            from ...ragged.ragged_tensor import RaggedTensor
            ids = lk(convert_to_tensor(_obj_array([t for r in rows for t in r])))
            splits = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
            return RaggedTensor.from_row_splits(ids, splits)
        width = max((len(r) for r in rows), default=0)
        if self._output_mode == "int" and self._output_sequence_length is not None:
            width = self._output_sequence_length
        # pad with the mask token '': id 0 in 'int' mode, dropped by the encodings (Keras' to_tensor)
        dense = _obj_array([(r + [b""] * width)[:width] for r in rows] if rows else [], (len(rows), width))
        out = lk(convert_to_tensor(dense.reshape(shape + (width,))))
        return out

    def _traced_call(self, inputs):
        """Inside tapeflow.function: the token rows are ragged, which traced code cannot hold, so
        the whole eager call is one ``py_call`` equation (run at every call, on NumPy values)
        whose result, dense, has a declared aval: (batch, output_sequence_length or unknown)
        int64 ids, or (batch, depth) encodings. ``ragged=True`` cannot be declared: refused."""
        from ...core.aval import Aval
        from ...core.primitives.pycall import py_call_p
        if self._ragged:
            raise NotImplementedError("TextVectorization(ragged=True) inside tapeflow.function: a RaggedTensor "
                                      "result is eager-only in tapeflow; call the layer eagerly (e.g. in "
                                      "Dataset.map) or use ragged=False")
        x = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        shape = tuple(aval_of(x).shape)
        if len(shape) > 1:
            if shape[-1] != 1:
                raise ValueError("When using `TextVectorization` to tokenize strings, the input rank must be 1 or "
                                 f"the last shape dimension must be 1. Received: inputs.shape={shape} with "
                                 f"rank={len(shape)}")
            shape = shape[:-1]
        width = self._output_sequence_length if self._output_mode == "int" else None
        ids = shape + (width,)
        if self._output_mode == "int":
            aval = Aval(ids, np.dtype(np.int64))
        else:
            lk = self._lookup_layer
            depth = lk.max_tokens if lk.pad_to_max_tokens else lk._frozen_vocab_size
            if depth is None:
                raise RuntimeError(f"When using `output_mode={self._output_mode}` and `pad_to_max_tokens=False`, "
                                   "you must set the layer's vocabulary before calling it. Either pass a "
                                   "`vocabulary` argument to the layer, or call `adapt` with some sample data.")
            if self._output_mode == "one_hot":
                out = ids + (depth,)
            else:     # the encodings reduce axis 1 (axis 0 of a rank-1 id array), as _encode
                ax = 1 if len(ids) > 1 else 0
                out = ids[:ax] + ids[ax + 1:] + (depth,)
            aval = Aval(out, np.dtype(np.float32 if self._output_mode == "tf_idf" else np.int64))
        return bind(py_call_p, x, fn=_TextVectorizationCall(self), out_avals=(aval,), name="TextVectorization")[0]

    def _eager_values(self, x):
        return self.call(convert_to_tensor(np.asarray(x))).numpy()

    def compute_output_shape(self, input_shape):
        if self._output_mode == "int":
            return (input_shape[0], self._output_sequence_length)
        s = tuple(input_shape) + ((None,) if self._split is not None else ((1,) if len(input_shape) <= 1 else ()))
        return self._lookup_layer.compute_output_shape(s)

    def get_config(self):
        lk = self._lookup_layer
        cfg = super().get_config()
        cfg.pop("dtype", None)
        cfg.update(max_tokens=lk.max_tokens, standardize=self._standardize, split=self._split,
                   ngrams=self._ngrams_arg, output_mode=self._output_mode,
                   output_sequence_length=self._output_sequence_length, pad_to_max_tokens=lk.pad_to_max_tokens,
                   sparse=lk.sparse, ragged=self._ragged, vocabulary=lk.get_config()["vocabulary"],
                   idf_weights=lk.get_config()["idf_weights"], encoding=self._encoding,
                   vocabulary_size=self.vocabulary_size())
        return cfg

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        return cls(**config)


@serializable("keras.text_vectorization")
class _TextVectorizationCall:
    """The py_call function of a traced TextVectorization that splits: the layer's eager call.
    Saved as the layer's config and its assets (an adapted vocabulary is not in the config,
    as Keras') and rebuilt from them on load, so a
    SavedModel holds no Python code; a callable ``standardize``/``split`` (user code) is in the
    config as a function, which has no serialized form: such a layer is refused when saving."""

    __name__ = "TextVectorization"

    def __init__(self, layer):
        self.layer = layer

    def __call__(self, x):
        return self.layer._eager_values(x)

    def _serial_state(self):
        return {"config": self.layer.get_config(), "assets": self.layer.save_assets_dict()}

    @classmethod
    def _from_serial_state(cls, state):
        layer = TextVectorization.from_config(state["config"])
        if state.get("assets") is not None:
            layer.load_assets_dict(state["assets"])
        return cls(layer)

    def __eq__(self, other):
        # the same layer; or (a loaded graph vs the saved one) an equal config and vocabulary
        return type(other) is _TextVectorizationCall and (
            other.layer is self.layer or _same_config(other._serial_state(), self._serial_state()))

    def __hash__(self):
        return hash(("TextVectorization", self.layer.name))

    def __repr__(self):
        return f"TextVectorization({self.layer.name})"


def _same_config(a, b):
    try:
        np.testing.assert_equal(a, b)
        return True
    except AssertionError:
        return False


def _obj_array(rows, shape=None):
    a = np.empty(len(rows) if shape is None else shape, object)
    if shape is None:
        a[:] = rows
    else:
        for i, r in enumerate(rows):
            a[i, :] = r if len(r) else a[i, :]
    return a
