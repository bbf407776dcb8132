"""``tapeflow.io``: TF's ``tf.io`` for input pipelines: TFRecord files, ``tf.train.Example``
parsing, serialized tensors, raw bytes and whole files.

* **TFRecord framing** (tensorflow/core/lib/io/record_writer.cc): each record is its length
  (uint64 little-endian), the masked CRC32C of those 8 bytes (uint32 LE), the data, and the
  masked CRC32C of the data. ``TFRecordWriter`` writes it, ``data.TFRecordDataset`` reads it with
  ``read_records``; GZIP/ZLIB files are the whole stream compressed (zlib, level -1, as TF: the
  bytes equal TF's, tests/data/tfrecord_tf_reference.json).
* **CRC32C** (Castagnoli, reflected polynomial 0x82F63B78): a table-driven loop in Python for
  short files and a numba loop past 1 MiB read or written, or for records of 64 KiB and more (one
  byte per step; the two are tested against TF's checksums; ``crc32c`` has the measurements). No protobuf or crc32c dependency.
* **parse_single_example / parse_example** decode ``tf.train.Example`` bytes by hand
  (``train/example.py``) into FixedLenFeature tensors and VarLenFeature ``SparseTensor`` s, with
  TF's error texts. Inside ``tapeflow.function`` (and the trace ``Dataset.map`` makes for its
  element spec) the parse is one ``numpy_function`` with TF's output shapes: no new primitive;
  there VarLenFeatures raise (a SparseTensor of a data-dependent dense shape cannot leave a
  function), and a map's element spec then comes from its first element.
* **serialize_tensor / parse_tensor**: the ``TensorProto`` bytes TF writes (dtype, shape, and
  ``tensor_content`` little-endian, or ``string_val`` for strings).
"""
from __future__ import annotations

import collections
import gzip
import io as _pyio
import os
import zlib

import numpy as np

from . import errors
from .core import dtypes as _dtypes
from .core.tensor import Tensor, convert_to_tensor
from .train.example import DecodeError, Example, _field, _fields, _int64, _varint, _varints

# ---- CRC32C ------------------------------------------------------------------------------------


def _crc_table():
    t = np.zeros(256, np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t[i] = c
    return t


_TABLE = _crc_table()
_TABLE_LIST = [int(x) for x in _TABLE]
# Which loop: measured on this 2-core VM (200 interleaved pairs after warm-up, loaded host): the
# numba loop takes 0.8 us + ~2.5 ns/byte, the Python loop ~85 ns/byte at best (~360 under load),
# so numba wins at every size once compiled, but compiling costs 0.6-2.3 s per process (the
# on-disk cache, cache=True, makes later processes cheaper). So short files stay in Python and
# numba takes over once 1 MiB has gone through the Python loop (0.1-0.4 s of it) or for any
# record of 64 KiB or more (5.5+ ms each in Python).
_NUMBA_RECORD = 64 * 1024
_PY_BUDGET = 1 << 20
_py_bytes = 0
_numba_crc = None


def _crc32c_numba(data: bytes) -> int:
    global _numba_crc
    if _numba_crc is None:
        import numba

        @numba.njit(cache=True, nogil=True)
        def crc(buf, table):
            c = np.uint32(0xFFFFFFFF)
            for b in buf:
                c = table[(c ^ b) & 0xFF] ^ (c >> np.uint32(8))
            return c ^ np.uint32(0xFFFFFFFF)
        _numba_crc = crc
    return int(_numba_crc(np.frombuffer(data, np.uint8), _TABLE))


def _crc32c_python(data: bytes) -> int:
    c, t = 0xFFFFFFFF, _TABLE_LIST
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli) of ``data``, as TF's ``crc32c::Value`` (both loops give the same bits)."""
    global _py_bytes
    if _numba_crc is not None or len(data) >= _NUMBA_RECORD or _py_bytes > _PY_BUDGET:
        return _crc32c_numba(data)
    _py_bytes += len(data)
    return _crc32c_python(data)


def masked_crc32c(data: bytes) -> int:
    """TF's ``crc32c::Mask``: rotate right by 15 and add 0xa282ead8 (a CRC of data that embeds
    CRCs is then not the CRC of a CRC)."""
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---- TFRecord files ----------------------------------------------------------------------------

_COMPRESSIONS = {None: "", "": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def _compression(c):
    if isinstance(c, TFRecordOptions):
        return c.compression_type
    if isinstance(c, Tensor):
        c = c.numpy()
    if isinstance(c, bytes):
        c = c.decode()
    if c not in _COMPRESSIONS:
        raise ValueError(f"Unsupported compression_type: {c!r}; expected one of '', 'ZLIB', 'GZIP'")
    return _COMPRESSIONS[c]


class TFRecordCompressionType:
    NONE, ZLIB, GZIP = 0, 1, 2


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: ``compression_type`` ('', 'ZLIB', 'GZIP'), and zlib's settings
    (``compression_level``; the rest are accepted and have no effect)."""

    compression_type_map = {0: "", 1: "ZLIB", 2: "GZIP"}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        if isinstance(compression_type, int):
            compression_type = self.compression_type_map[compression_type]
        self.compression_type = _compression(compression_type)
        self.compression_level = -1 if compression_level is None else int(compression_level)
        self.flush_mode, self.input_buffer_size, self.output_buffer_size = flush_mode, input_buffer_size, \
            output_buffer_size
        self.window_bits, self.compression_method, self.mem_level = window_bits, compression_method, mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        if not options:
            return ""
        return options.compression_type if isinstance(options, TFRecordOptions) else _compression(options)


def frame_record(data: bytes) -> bytes:
    """One record's bytes in a TFRecord file."""
    n = len(data).to_bytes(8, "little")
    return n + masked_crc32c(n).to_bytes(4, "little") + data + masked_crc32c(data).to_bytes(4, "little")


class TFRecordWriter:
    """``tf.io.TFRecordWriter(path, options=None)``: ``write(record)``, ``flush()``, ``close()``;
    a context manager. ``options``: a TFRecordOptions or 'GZIP'/'ZLIB'/''."""

    def __init__(self, path, options=None):
        opts = options if isinstance(options, TFRecordOptions) else TFRecordOptions(_compression(options))
        self._path = os.fspath(path)
        try:
            self._f = open(self._path, "wb")
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{self._path}; No such file or directory") from None
        wbits = {"": None, "ZLIB": 15, "GZIP": 31}[opts.compression_type]
        # zlib at TF's settings (level -1, 8 memLevel, default strategy): the files equal TF's bytes
        self._z = None if wbits is None else zlib.compressobj(opts.compression_level, zlib.DEFLATED, wbits)

    def write(self, record):
        if self._f is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if isinstance(record, Tensor):
            record = record.numpy()
        if isinstance(record, str):
            record = record.encode()
        if not isinstance(record, (bytes, bytearray)):
            raise TypeError(f"TFRecordWriter.write: expected bytes, got {type(record).__name__}")
        b = frame_record(bytes(record))
        self._f.write(b if self._z is None else self._z.compress(b))

    def flush(self):
        if self._f is not None:
            if self._z is not None:
                self._f.write(self._z.flush(zlib.Z_SYNC_FLUSH))
            self._f.flush()

    def close(self):
        if self._f is not None:
            if self._z is not None:
                self._f.write(self._z.flush())
            self._f.close()
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass


def _open_records(path, compression):
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=f, mode="rb")
    if compression == "ZLIB":   # (no file wrapper in the stdlib: one read; ZLIB files are rare)
        with f:
            return _pyio.BytesIO(zlib.decompress(f.read()))
    return f


def read_records(path, compression=""):
    """The records of one TFRecord file, as bytes; TF's DataLossError (its text, plus the file)
    for a corrupted or truncated record. A partial header at the end ends the file silently, as
    TF's reader (its read of the header is out of range, which TF takes for the end)."""
    def loss(msg):
        return errors.DataLossError(None, None, f"{msg} in file {path!r}")
    with _open_records(path, compression) as f:
        offset = 0
        while True:
            try:
                header = f.read(12)
            except (OSError, EOFError, zlib.error) as e:
                raise loss(f"corrupted record at {offset} ({e})") from None
            if len(header) < 12:
                return
            if masked_crc32c(header[:8]) != int.from_bytes(header[8:], "little"):
                # TF 2.21: "corrupted record at 0 (Is this even a TFRecord file?)" for the first header
                raise loss(f"corrupted record at {offset}" + (" (Is this even a TFRecord file?)" if offset == 0
                                                              else ""))
            n = int.from_bytes(header[:8], "little")
            try:
                data = f.read(n + 4)
            except (OSError, EOFError, zlib.error) as e:
                raise loss(f"corrupted record at {offset + 12} ({e})") from None
            if len(data) < n + 4:
                raise loss(f"truncated record at {offset}' failed with Read less bytes than requested")
            if masked_crc32c(data[:n]) != int.from_bytes(data[n:], "little"):
                raise loss(f"corrupted record at {offset + 12}")
            yield data[:n]
            offset += n + 16


def tf_record_iterator(path, options=None):
    """``tf.compat.v1.io.tf_record_iterator``: the records (bytes) of a file."""
    return read_records(os.fspath(path), TFRecordOptions.get_compression_type_string(options))


# ---- Example parsing ---------------------------------------------------------------------------

class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """``tf.io.FixedLenFeature(shape, dtype, default_value=None)``."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


FixedLenFeature.__new__.__defaults__ = (None,)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """``tf.io.VarLenFeature(dtype)``: a SparseTensor of the feature's values."""


class RaggedFeature(collections.namedtuple("RaggedFeature", ["dtype", "value_key", "partitions",
                                                             "row_splits_dtype", "validate"])):
    """``tf.io.RaggedFeature(dtype, value_key=None)``: the feature's values as ragged rows (a
    RaggedTensor of one row per Example from parse_example, the values from parse_single_example).
    ``value_key`` names the feature read (default: the key); partitions are not implemented."""

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dtypes.int64, validate=False):
        if partitions:
            raise NotImplementedError("tf.io.RaggedFeature: partitions are not implemented in tapeflow (the values "
                                      "of one feature become one ragged dimension)")
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype, validate)


_KIND_OF = {"int64": "int64_list", "float32": "float_list", "string": "bytes_list"}
_TF_NAME = {"int64": "int64", "float32": "float", "string": "string"}
_LIST_NAME = {"int64_list": "int64", "float_list": "float", "bytes_list": "string"}


def _check_features(features):
    if not isinstance(features, dict) or not features:
        raise ValueError(f"Missing: features was {features!r}.")
    out = {}
    for k, f in features.items():
        if not isinstance(f, (FixedLenFeature, VarLenFeature, RaggedFeature)):
            raise ValueError(f"Unsupported feature type for {k!r}: {type(f).__name__} (tapeflow parses "
                             "FixedLenFeature, VarLenFeature and RaggedFeature)")
        dt = _dtypes.as_dtype(f.dtype)
        if dt.name not in _KIND_OF:
            attr = "Tdense" if isinstance(f, FixedLenFeature) else "sparse_types"
            raise errors.InvalidArgumentError(None, None, f"Value for attr '{attr}' of {dt.name} is not in the "
                                              "list of allowed values: float, int64, string")
        if isinstance(f, FixedLenFeature):
            shape = [None if d is None else int(d) for d in (f.shape.as_list() if hasattr(f.shape, "as_list")
                                                             else ([f.shape] if np.isscalar(f.shape) else f.shape))]
            if None in shape:
                raise ValueError(f"First dimension of shape for feature {k} unknown. Consider using "
                                 f"FixedLenSequenceFeature. Received feature={f}.")
            default = None
            if f.default_value is not None:
                default = np.asarray(f.default_value, dt.np if dt.name != "string" else object)
                if dt.name == "string":
                    default = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(default)
                if default.size != int(np.prod(shape)):
                    raise errors.InvalidArgumentError(
                        None, None, f"Input to reshape is a tensor with {default.size} values, but the requested "
                                    f"shape has {int(np.prod(shape))}")
                default = default.reshape(shape)
            out[k] = ("fixed", dt, shape, default)
        elif isinstance(f, RaggedFeature):   # (the shape slot holds the feature read)
            out[k] = ("ragged", dt, f.value_key or k, None)
        else:
            out[k] = ("var", dt, None, None)
    # TF 2.21's result order: the VarLenFeatures' keys sorted, then the FixedLenFeatures' sorted, then
    # the RaggedFeatures' in the order given
    order = {"var": 0, "fixed": 1, "ragged": 2}
    given = {k: i for i, k in enumerate(out)}
    return {k: out[k] for k in sorted(out, key=lambda k: (order[out[k][0]], given[k] if out[k][0] == "ragged" else 0,
                                                          k))}


def _example_features(s):
    try:
        return Example.FromString(s).features.feature
    except DecodeError:
        txt = s[:64].decode("utf-8", "backslashreplace")
        raise errors.InvalidArgumentError(None, None, f"Could not parse example input, value: '{txt}'") from None


def _parse_one(s, spec, where, batch=False):
    """{key: numpy array} (fixed) or {key: values array} (var) of one serialized Example."""
    feats = _example_features(s)
    out = {}
    for k, (kind, dt, shape, default) in spec.items():
        f = feats.get(shape if kind == "ragged" else k)
        have = None if f is None else f.WhichOneof("kind")
        want = _KIND_OF[dt.name]
        if kind in ("var", "ragged"):
            if have is not None and have != want:
                raise errors.InvalidArgumentError(
                    None, None, f"{where(k)}Data types don't match. Expected type: {_TF_NAME[dt.name]}, "
                                f"Actual type: {_LIST_NAME[have]}")
            vals = [] if have is None else getattr(f, want).value
            out[k] = np.array(vals, object) if dt.name == "string" else np.array(vals, dt.np)
            continue
        if have is None:
            if default is None:
                raise errors.InvalidArgumentError(
                    None, None, f"{where(None)}Feature: {k} (data type: {_TF_NAME[dt.name]}) is required but could "
                                "not be found.")
            out[k] = default
            continue
        if have != want:
            raise errors.InvalidArgumentError(
                None, None, f"{where(k)}Data types don't match. Data type: {_LIST_NAME[have]} but "
                            f"expected type: {_TF_NAME[dt.name]}")
        vals = getattr(f, want).value
        n = int(np.prod(shape))
        if len(vals) != n:
            raise errors.InvalidArgumentError(
                None, None, (f"{where(k)}Number of {_TF_NAME[dt.name]} values != expected.  "
                             f"Values size: {len(vals)} but "
                             f"output shape: {shape}") if batch else
                (f"{where(k)}Can't parse serialized Example: " +
                 ("Parsing bytes_list failed." if want == "bytes_list" else f"Some {want} slice was not parsed.") +
                 f" (it has {len(vals)} values; the feature's shape {shape} needs {n})"))
        out[k] = (np.array(vals, object) if dt.name == "string" else np.array(vals, dt.np)).reshape(shape)
    return out


def _serialized_values(serialized, what):
    try:
        a = convert_to_tensor(serialized).numpy()
    except Exception as e:  # noqa: BLE001  (a symbolic tensor: no value while tracing)
        raise NotImplementedError(
            f"tf.io.{what}: tapeflow parses Examples eagerly; inside tapeflow.function it has no value to "
            "parse. Call it outside the function, or in Dataset.map (which runs the map function per element)"
        ) from e
    return np.asarray(a, object)


def _dense(dt, arr):
    # (np.array, not np.ascontiguousarray: that makes a 0-d array 1-d)
    return _string_tensor(arr) if dt.name == "string" else Tensor(np.array(arr, dt.np))


def _string_tensor(arr):
    a = np.empty(np.shape(arr), object)
    a[...] = arr
    return Tensor(a)


def _traced_parse(serialized, features, spec, batch):
    """The parse inside ``tapeflow.function`` (and so in the trace ``Dataset.map`` makes for its
    element spec): one ``numpy_function`` (a ``py_call`` equation) that runs the eager parse on every
    call, its outputs declared with TF's static shapes (a VarLenFeature's count, and the batch
    size of an unknown-length batch, are unknown dimensions)."""
    from .compiler.function import TensorSpec
    from .ops.script_ops import numpy_function
    from .sparse import SparseTensor
    kinds = {v[0] for v in spec.values()}
    if kinds & {"var", "ragged"}:
        # a SparseTensor whose dense shape the values decide cannot leave a tapeflow.function
        # (sparse.py refuses it), and a map's element spec is then read off its first element; a
        # RaggedTensor's row lengths come out of a numpy_function, which gives dense results only
        what = ("a VarLenFeature", "its SparseTensor's dense shape") if "var" in kinds else \
            ("a RaggedFeature", "its RaggedTensor's row lengths")
        raise NotImplementedError(
            f"tf.io.parse_{'example' if batch else 'single_example'}: {what[0]} inside tapeflow.function "
            f"is not supported ({what[1]} depends on the data); parse eagerly, or in "
            "Dataset.map (which runs the map function per element)")
    s = convert_to_tensor(serialized)
    if s.dtype != _dtypes.string:
        raise TypeError(f"tf.io.parse_{'example' if batch else 'single_example'}: serialized must be a string "
                        f"tensor, got {s.dtype.name}")
    if not batch and s.shape.rank not in (None, 0):
        raise ValueError("Input serialized must be a scalar")
    lead = [s.shape[0]] if batch else []
    rank = 2 if batch else 1
    touts, keys = [], list(spec)
    for k in keys:
        kind, dt, shape, _ = spec[k]
        if kind == "fixed":
            touts.append(TensorSpec(lead + shape, dt))
        else:
            touts += [TensorSpec([None, rank], _dtypes.int64), TensorSpec([None], dt),
                      TensorSpec([rank], _dtypes.int64)]
    parse = parse_example if batch else parse_single_example

    def run(a):
        out = parse(_string_tensor(np.asarray(a, object)), features)
        flat = []
        for k in keys:
            v = out[k]
            flat += [v.numpy()] if spec[k][0] == "fixed" else [v.indices.numpy(), v.values.numpy(),
                                                               v.dense_shape.numpy()]
        return flat
    flat = list(numpy_function(run, [s], touts))
    out = {}
    for k in keys:
        if spec[k][0] == "fixed":
            out[k] = flat.pop(0)
        else:
            out[k] = SparseTensor(flat.pop(0), flat.pop(0), flat.pop(0))
    return out


def _tracing():
    from .core.state import STATE
    return STATE.trace is not None


def parse_single_example(serialized, features, name=None, example_names=None):
    """``tf.io.parse_single_example``: one serialized Example (a scalar string) -> a dict of
    FixedLenFeature tensors (their ``shape``) and VarLenFeature SparseTensors (rank 1)."""
    from .sparse import SparseTensor
    spec = _check_features(features)
    if _tracing():
        return _traced_parse(serialized, features, spec, batch=False)
    s = _serialized_values(serialized, "parse_single_example")
    if s.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    vals = _parse_one(s[()], spec, lambda k: "" if k is None else f"Key: {k}.  ")
    out = {}
    for k, (kind, dt, _, _) in spec.items():
        v = vals[k]
        if kind == "ragged":
            out[k] = _dense(dt, v)
        elif kind == "var":
            out[k] = SparseTensor(np.arange(len(v), dtype=np.int64).reshape(-1, 1), _dense(dt, v),
                                  np.array([len(v)], np.int64))
        else:
            out[k] = _dense(dt, v)
    return out


def parse_example(serialized, features, example_names=None, name=None):
    """``tf.io.parse_example``: a vector of serialized Examples -> a dict of batched tensors
    (``(batch,) + shape``) and VarLenFeature SparseTensors (rank 2: [example, position])."""
    from .sparse import SparseTensor
    spec = _check_features(features)
    if _tracing():
        return _traced_parse(serialized, features, spec, batch=convert_to_tensor(serialized).shape.rank != 0)
    s = _serialized_values(serialized, "parse_example")
    if s.ndim == 0:
        return parse_single_example(serialized, features)
    if s.ndim != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.ndim} (tf.io.parse_example: serialized must be a "
                         "vector of Examples)")
    if s.size == 0 and s.dtype != object:
        raise TypeError("tf.io.parse_example: serialized must be a string tensor")
    names = None if example_names is None else [n.decode() if isinstance(n, bytes) else str(n)
                                                for n in np.asarray(convert_to_tensor(example_names).numpy()).ravel()]
    rows = []
    for i, x in enumerate(s):
        nm = "<unknown>" if names is None else names[i]
        where = (lambda k, i=i, nm=nm: f"Name: {nm}, " + ("" if k is None else f"Key: {k}, Index: {i}.  "))
        rows.append(_parse_one(x, spec, where, batch=True))
    out = {}
    for k, (kind, dt, shape, _) in spec.items():
        if kind == "fixed":
            stacked = (np.stack([r[k] for r in rows]) if rows else
                       np.zeros([0] + shape, object if dt.name == "string" else dt.np))
            out[k] = _dense(dt, stacked)
            continue
        lens = [len(r[k]) for r in rows]
        if kind == "ragged":
            from .ragged.ragged_tensor import RaggedTensor
            vals = np.concatenate([r[k] for r in rows]) if rows else np.zeros(0, object if dt.name == "string" else dt.np)
            out[k] = RaggedTensor.from_row_lengths(_dense(dt, vals), lens)
            continue
        idx = np.array([(i, j) for i, n in enumerate(lens) for j in range(n)], np.int64).reshape(-1, 2)
        vals = np.concatenate([r[k] for r in rows]) if rows else np.zeros(0, object if dt.name == "string" else dt.np)
        out[k] = SparseTensor(idx, _dense(dt, vals), np.array([len(rows), max(lens, default=0)], np.int64))
    return out


# ---- serialized tensors ------------------------------------------------------------------------

#: TF's DataType enum (tensorflow/core/framework/types.proto)
_DT_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7, "int64": 9,
            "bool": 10, "bfloat16": 14, "uint16": 17, "float16": 19, "uint32": 22, "uint64": 23}
_ENUM_DT = {v: k for k, v in _DT_ENUM.items()}


def _as_numpy_function(fn, args, tout):
    """``fn`` (an eager tf.io op) inside ``tapeflow.function``: one ``numpy_function`` that runs it on
    every call, its output declared by ``tout`` (a TensorSpec, or a dtype: unknown shape); its errors
    are the eager ones, raised when the function runs."""
    from .ops.script_ops import numpy_function

    def run(*arrays):
        outs = fn(*[_string_tensor(a) if np.asarray(a).dtype == object else Tensor(np.asarray(a))
                    for a in arrays])
        o = outs.numpy()
        return np.asarray(o, object) if outs.dtype.is_string else np.asarray(o)
    return numpy_function(run, list(args), tout)


def serialize_tensor(tensor, name=None):
    """``tf.io.serialize_tensor``: TF's TensorProto bytes (dtype, shape, ``tensor_content`` little-endian
    for numbers, one ``string_val`` per element for strings) as a scalar string tensor."""
    if _tracing():
        from .compiler.function import TensorSpec
        return _as_numpy_function(serialize_tensor, [tensor], TensorSpec([], _dtypes.string))
    t = convert_to_tensor(tensor)
    a = np.asarray(t.numpy())
    dt = t.dtype.name
    if dt not in _DT_ENUM:
        raise errors.UnimplementedError(None, None, f"serialize_tensor: dtype {dt} is not supported")
    shape = b"".join(_field(2, _varint(1 << 3) + _varint(d) if d else b"") for d in a.shape)
    out = _varint(1 << 3) + _varint(_DT_ENUM[dt]) + _field(2, shape)
    if dt == "string":
        out += b"".join(_field(8, bytes(x)) for x in a.ravel())
    elif a.size:
        out += _field(4, np.ascontiguousarray(a, a.dtype.newbyteorder("<")).tobytes())
    return _string_tensor(np.array(out, object))


def parse_tensor(serialized, out_type, name=None):
    """``tf.io.parse_tensor``: the tensor of TensorProto bytes; ``out_type`` must be its dtype."""
    if _tracing():   # (its shape is in the bytes: unknown while tracing, as TF's)
        return _as_numpy_function(lambda x: parse_tensor(x, out_type), [serialized], _dtypes.as_dtype(out_type))
    s = _serialized_values(serialized, "parse_tensor")
    if s.ndim != 0:
        raise errors.InvalidArgumentError(None, None, "Expected `serialized` to be a scalar, got shape: "
                                                      f"{list(s.shape)}")
    want = _dtypes.as_dtype(out_type)
    dt, shape, content, strings, vals = None, [], None, [], []
    try:
        for num, wt, v in _fields(s[()]):
            if num == 1 and wt == 0:
                dt = _ENUM_DT.get(v, f"enum {v}")
            elif num == 2 and wt == 2:
                for n2, w2, dim in _fields(v):
                    if n2 == 2 and w2 == 2:
                        size = 0
                        for n3, w3, x in _fields(dim):
                            if n3 == 1 and w3 == 0:
                                size = _int64(x)
                        shape.append(size)
            elif num == 4 and wt == 2:
                content = bytes(v)
            elif num == 8 and wt == 2:
                strings.append(bytes(v))
            elif num in (5, 6) and wt == 2:   # float_val / double_val, packed
                vals.extend(np.frombuffer(v, "<f4" if num == 5 else "<f8").tolist())
            elif num in (7, 10, 11, 13, 16, 17) and wt == 2:   # int_val, int64_val, bool_val, half_val, uint...
                vals.extend(_int64(u) for u in _varints(v))
    except DecodeError:
        dt = None
    if dt is None:
        raise errors.InvalidArgumentError(None, None, "Could not parse `serialized` as TensorProto: "
                                          f"'{bytes(s[()])[:64]!r}'")
    if dt != want.name:
        tfname = {"float32": "float", "float64": "double"}
        raise errors.InvalidArgumentError(None, None, f"Type mismatch between parsed tensor ({tfname.get(dt, dt)}) "
                                          f"and dtype ({tfname.get(want.name, want.name)})")
    n = int(np.prod(shape))
    if dt == "string":
        a = np.empty(n, object)
        a[:] = (strings + [strings[-1] if strings else b""] * n)[:n] if strings else [b""] * n
        return _string_tensor(a.reshape(shape))
    if content is not None:
        a = np.frombuffer(content, want.np.newbyteorder("<")).astype(want.np)
        if a.size != n:
            raise errors.InvalidArgumentError(None, None, f"Could not parse `serialized` as TensorProto: "
                                              f"{a.size} values for shape {shape}")
    else:   # the typed repeated fields; a shorter list repeats its last value (TF's rule)
        if dt == "float16":
            vals = np.array(vals, np.uint16).view(np.float16).tolist()
        a = np.array((vals + vals[-1:] * n)[:n] if vals else [0] * n, want.np)
    return Tensor(a.reshape(shape))


# ---- raw bytes and whole files -----------------------------------------------------------------

def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """``tf.io.decode_raw``: each string's bytes as a vector of ``out_type`` (shape ``input.shape +
    [len / itemsize]``); all strings must be the same length (or ``fixed_length``: cut or zero-padded)."""
    dt = _dtypes.as_dtype(out_type)
    if _tracing():
        from .compiler.function import TensorSpec
        x = convert_to_tensor(input_bytes)
        shape = None if x.shape.rank is None else list(x.shape) + [
            None if fixed_length is None else int(fixed_length) // max(dt.np.itemsize, 1)]
        return _as_numpy_function(lambda b: decode_raw(b, out_type, little_endian, fixed_length), [x],
                                  TensorSpec(shape, dt))
    a = np.asarray(_serialized_values(input_bytes, "decode_raw"), object)
    size = dt.np.itemsize if dt.name != "string" else 0
    if dt.name in ("string", "bool") or size == 0:
        raise errors.InvalidArgumentError(None, None, f"Value for attr 'out_type' of {dt.name} is not in the list "
                                          "of allowed values")
    flat = [bytes(x) for x in a.ravel()]
    if fixed_length is not None:
        fl = int(fixed_length)
        flat = [(x + b"\x00" * fl)[:fl] for x in flat]
    width = len(flat[0]) if flat else 0
    for i, x in enumerate(flat):
        if len(x) != width:
            raise errors.InvalidArgumentError(None, None, f"DecodeRaw requires input strings to all be the same size, "
                                              f"but element {i} has size {width} != {len(x)}")  # (TF's order)
    if width % size:
        raise errors.InvalidArgumentError(None, None, f"Input to DecodeRaw has length {width} that is not a multiple "
                                          f"of {size}, the size of {dt.name}")
    order = dt.np.newbyteorder("<" if little_endian else ">")
    out = np.frombuffer(b"".join(flat), order).astype(dt.np) if flat else np.zeros(0, dt.np)
    return Tensor(out.reshape(a.shape + (width // size,)))


def _path(filename):
    p = convert_to_tensor(filename).numpy() if isinstance(filename, Tensor) else filename
    p = p[()] if isinstance(p, np.ndarray) else p
    return os.fspath(p.decode() if isinstance(p, bytes) else p)


def read_file(filename, name=None):
    """``tf.io.read_file``: the file's bytes, a scalar string tensor."""
    p = _path(filename)
    try:
        with open(p, "rb") as f:
            return _string_tensor(np.array(f.read(), object))
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{p}; No such file or directory") from None


def write_file(filename, contents, name=None):
    """``tf.io.write_file``: write a scalar string (or bytes) to a file, creating its directory."""
    p = _path(filename)
    c = contents.numpy() if isinstance(contents, Tensor) else contents
    c = c[()] if isinstance(c, np.ndarray) else c
    c = c.encode() if isinstance(c, str) else bytes(c)
    d = os.path.dirname(p)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(p, "wb") as f:
        f.write(c)


class gfile:  # noqa: N801  (tf.io.gfile namespace)
    """``tf.io.gfile`` on local files: the Python file system calls under TF's names."""

    @staticmethod
    def exists(path):
        return os.path.exists(_path(path))

    @staticmethod
    def makedirs(path):
        os.makedirs(_path(path), exist_ok=True)

    mkdir = makedirs

    @staticmethod
    def isdir(path):
        return os.path.isdir(_path(path))

    @staticmethod
    def listdir(path):
        p = _path(path)
        if not os.path.isdir(p):
            raise errors.NotFoundError(None, None, f"Could not find directory {p}")
        return os.listdir(p)

    @staticmethod
    def glob(pattern):
        import glob as _glob
        return sorted(_glob.glob(_path(pattern)))

    @staticmethod
    def remove(path):
        p = _path(path)
        try:
            os.remove(p)
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{p}; No such file or directory") from None

    @staticmethod
    def rmtree(path):
        import shutil
        shutil.rmtree(_path(path))

    @staticmethod
    def copy(src, dst, overwrite=False):
        import shutil
        if os.path.exists(_path(dst)) and not overwrite:
            raise errors.AlreadyExistsError(None, None, f"file already exists: {_path(dst)}")
        shutil.copyfile(_path(src), _path(dst))

    @staticmethod
    def rename(src, dst, overwrite=False):
        if os.path.exists(_path(dst)) and not overwrite:
            raise errors.AlreadyExistsError(None, None, f"file already exists: {_path(dst)}")
        os.replace(_path(src), _path(dst))

    @staticmethod
    def GFile(name, mode="r"):  # noqa: N802 (TF's name)
        p = _path(name)
        try:
            return open(p, mode)
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{p}; No such file or directory") from None

    Open = GFile

__all__ = ["TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "FixedLenFeature", "VarLenFeature", "RaggedFeature",
           "parse_single_example", "parse_example", "serialize_tensor", "parse_tensor", "decode_raw", "read_file",
           "write_file", "gfile", "tf_record_iterator"]
