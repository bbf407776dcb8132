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
* **parse_single_sequence_example / parse_sequence_example** (wave 21) follow TF's
  FastParseSequenceExample (core/util/example_proto_fast_parsing.cc): its order of checks, messages
  and outputs (context FixedLen/VarLen/Ragged; feature lists as FixedLenSequenceFeature tensors
  with their lengths, VarLen SparseTensors, RaggedTensors); compiled, one ``numpy_function`` as
  above (dense outputs only). ``FixedLenSequenceFeature`` (``allow_missing=True``) also works in
  ``parse_example``, and ``SparseFeature`` is TF's composition: its parts parsed as VarLenFeatures,
  then merged (``_merge_sparse``).
* **decode_json_example** (wave 21): protobuf's JSON mapping of an Example, parsed with ``json`` and
  encoded as protobuf's JSON parser does (TF 2.21's bytes: repeated values unpacked, fields in the
  order written); its errors are InvalidArgumentError "Error while parsing JSON: ..." (the detail
  is tapeflow's words; protobuf's has random spacing).
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
        # (TF 2.21's default is int32; tapeflow's RaggedTensors keep int64 row_splits, docs/differences.md)
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
        if not isinstance(f, (FixedLenFeature, VarLenFeature, RaggedFeature, FixedLenSequenceFeature)):
            raise ValueError(f"Unsupported feature type for {k!r}: {type(f).__name__} (tapeflow parses "
                             "FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, RaggedFeature and "
                             "SparseFeature)")
        if isinstance(f, FixedLenSequenceFeature) and not f.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
        dt = _dtypes.as_dtype(f.dtype)
        if dt.name not in _KIND_OF:
            attr = "Tdense" if isinstance(f, (FixedLenFeature, FixedLenSequenceFeature)) else "sparse_types"
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
        elif isinstance(f, FixedLenSequenceFeature):   # (the default slot holds one row of padding)
            shape = _row_shape(f, k)
            out[k] = ("seq", dt, shape, _seq_default(f, dt, shape))
        elif isinstance(f, RaggedFeature):   # (the shape slot holds the feature read)
            out[k] = ("ragged", dt, f.value_key or k, _dtypes.as_dtype(f.row_splits_dtype))   # (default slot: splits dtype)
        else:
            out[k] = ("var", dt, None, None)
    # TF 2.21's result order: the VarLenFeatures' keys sorted, then the FixedLenFeatures' sorted, then
    # the RaggedFeatures' in the order given
    order = {"var": 0, "fixed": 1, "seq": 1, "ragged": 2}
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
        if kind == "seq":
            if have is not None and have != want:
                raise errors.InvalidArgumentError(
                    None, None, f"{where(k)}Data types don't match. Data type: {_LIST_NAME[have]} but "
                                f"expected type: {_TF_NAME[dt.name]}")
            vals = np.zeros(0, _np_dtype(dt)) if have is None else _seq_values(f, want)
            size = int(np.prod(shape))
            if size == 0 or len(vals) % size:
                raise errors.InvalidArgumentError(
                    None, None, (f"{where(k)}Number of {_TF_NAME[dt.name]} values is not a multiple of stride length. "
                                 f"Saw {len(vals)} values but output shape is: {_shape_str([None] + shape)}") if batch
                    else f"Error while parsing feature with key {k}: number of elements should be divisible by "
                         f"{size}, found {len(vals)} instead")
            out[k] = vals.reshape([-1] + shape)
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
        elif kind == "seq":
            touts.append(TensorSpec(lead + [None] + shape, dt))
        else:
            touts += [TensorSpec([None, rank], _dtypes.int64), TensorSpec([None], dt),
                      TensorSpec([rank], _dtypes.int64)]
    parse = parse_example if batch else parse_single_example

    def run(a):
        out = parse(_string_tensor(np.asarray(a, object)), features)
        flat = []
        for k in keys:
            v = out[k]
            flat += [v.numpy()] if spec[k][0] in ("fixed", "seq") else [v.indices.numpy(), v.values.numpy(),
                                                               v.dense_shape.numpy()]
        return flat
    flat = list(numpy_function(run, [s], touts))
    out = {}
    for k in keys:
        if spec[k][0] in ("fixed", "seq"):
            out[k] = flat.pop(0)
        else:
            out[k] = SparseTensor(flat.pop(0), flat.pop(0), flat.pop(0))
    return out


def _tracing():
    from .core.state import STATE
    return STATE.trace is not None


def _parse_with_sparse_features(parse, serialized, features, batch):
    """parse_example / parse_single_example with SparseFeatures: their parts parsed as VarLenFeatures
    with the rest, then merged (TF's composition; a SparseTensor cannot leave tapeflow.function)."""
    if _tracing():
        raise NotImplementedError("tf.io.parse_example: a SparseFeature inside tapeflow.function is not supported "
                                  "(its SparseTensor's values depend on the data); parse eagerly, or in Dataset.map "
                                  "(which runs the map function per element)")
    plain, sparse = _sparse_feature_parts(features)
    return _merge_sparse(parse(serialized, plain), features, sparse, batch)


def parse_single_example(serialized, features, name=None, example_names=None):
    """``tf.io.parse_single_example``: one serialized Example (a scalar string) -> a dict of
    FixedLenFeature tensors (their ``shape``) and VarLenFeature SparseTensors (rank 1)."""
    from .sparse import SparseTensor
    if isinstance(features, dict) and any(isinstance(f, SparseFeature) for f in features.values()):
        return _parse_with_sparse_features(parse_single_example, serialized, features, False)
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
    if isinstance(features, dict) and any(isinstance(f, SparseFeature) for f in features.values()):
        return _parse_with_sparse_features(parse_example, serialized, features,
                                           convert_to_tensor(serialized).shape.rank != 0)
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
    for k, (kind, dt, shape, pad) in spec.items():
        if kind == "fixed":
            stacked = (np.stack([r[k] for r in rows]) if rows else
                       np.zeros([0] + shape, object if dt.name == "string" else dt.np))
            out[k] = _dense(dt, stacked)
            continue
        if kind == "seq":   # rows padded to the longest example's with the feature's default_value
            n = max([len(r[k]) for r in rows], default=0)
            stacked = np.empty([len(rows), n] + shape, _np_dtype(dt))
            stacked[...] = pad
            for i, r in enumerate(rows):
                stacked[i, :len(r[k])] = r[k]
            out[k] = _dense(dt, stacked)
            continue
        lens = [len(r[k]) for r in rows]
        if kind == "ragged":
            from .ragged.ragged_tensor import RaggedTensor
            vals = np.concatenate([r[k] for r in rows]) if rows else np.zeros(0, object if dt.name == "string" else dt.np)
            out[k] = RaggedTensor.from_row_splits(_dense(dt, vals), Tensor(np.cumsum([0] + lens).astype(pad.np)),
                                                  validate=False)
            continue
        idx = np.array([(i, j) for i, n in enumerate(lens) for j in range(n)], np.int64).reshape(-1, 2)
        vals = np.concatenate([r[k] for r in rows]) if rows else np.zeros(0, object if dt.name == "string" else dt.np)
        out[k] = SparseTensor(idx, _dense(dt, vals), np.array([len(rows), max(lens, default=0)], np.int64))
    return out


# ---- SequenceExample parsing, FixedLenSequenceFeature, SparseFeature ------------------------------

class FixedLenSequenceFeature(collections.namedtuple("FixedLenSequenceFeature",
                                                     ["shape", "dtype", "allow_missing", "default_value"])):
    """``tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)``: a
    feature of a variable number of rows of ``shape`` each: a SequenceExample's feature list (one
    row per step), or in ``parse_example`` an Example feature whose values are split into rows
    (``allow_missing=True`` required there; ``default_value`` pads a batch's shorter rows)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size",
                                                             "already_sorted"])):
    """``tf.io.SparseFeature(index_key, value_key, dtype, size, already_sorted=False)``: a
    SparseTensor of dense shape ``size`` (a list for several index keys) whose indices and values
    are two (or more) features of the Example, composed as TF composes it (``sparse_merge``:
    indices sorted stably unless ``already_sorted``; out-of-range indices are kept, as TF's)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _row_shape(f, k):
    shape = f.shape.as_list() if hasattr(f.shape, "as_list") else ([f.shape] if np.isscalar(f.shape) else f.shape)
    shape = [None if d is None else int(d) for d in shape]
    if None in shape:
        raise errors.InvalidArgumentError(None, None, f"Shape {_shape_str(shape)} is not fully defined")
    return shape


def _shape_str(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _np_dtype(dt):
    return object if dt.name == "string" else dt.np


def _seq_default(f, dt, shape):
    """The padding of a FixedLenSequenceFeature in parse_example: its default_value (a scalar or a
    row), else 0 / b''."""
    if f.default_value is None:
        return np.zeros(shape, _np_dtype(dt)) if dt.name != "string" else np.full(shape, b"", object)
    v = f.default_value
    if dt.name == "string":
        v = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(np.asarray(v, object))
    return np.broadcast_to(np.asarray(v, _np_dtype(dt)), shape)


def _check_dtype(dt, attr):
    if dt.name not in _KIND_OF:
        raise errors.InvalidArgumentError(None, None, f"Value for attr '{attr}' of {dt.name} is not in the "
                                          "list of allowed values: float, int64, string")


def _sparse_feature_parts(features):
    """TF's composition of SparseFeatures: each becomes VarLenFeatures of its index keys (int64) and
    value key, parsed with the rest and merged after (parsing_config's
    _construct_tensors_for_composite_features). Returns (the features to parse, the SparseFeatures)."""
    plain = {k: f for k, f in features.items() if not isinstance(f, SparseFeature)}
    sparse = {k: f for k, f in features.items() if isinstance(f, SparseFeature)}
    for k, f in sparse.items():
        keys = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
        for key, dt in [(i, _dtypes.int64) for i in keys] + [(f.value_key, _dtypes.as_dtype(f.dtype))]:
            have = plain.get(key)
            if have is not None and _dtypes.as_dtype(have.dtype) != dt:
                raise ValueError(f"Conflicting type <dtype: '{_dtypes.as_dtype(have.dtype).name}'> vs <dtype: "
                                 f"'{dt.name}'> for feature {key}.")
            if have is None:
                plain[key] = VarLenFeature(dt)
    return plain, sparse


def _merge_sparse(out, features, sparse, batch):
    """``sparse_merge`` of each SparseFeature's parsed index and value SparseTensors (indices: the
    batch position, if any, then the index values; stable-sorted unless already_sorted), then drop
    the parts no feature asked for; new keys come after the parsed ones, sorted (TF's dict update)."""
    from .sparse import SparseTensor
    updates = {}
    for k in sorted(sparse):
        f = sparse[k]
        keys = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
        vals = out[f.value_key]
        ids = [out[i] for i in keys]
        n = vals.values.shape[0]
        for i in ids:
            if i.values.shape[0] != n:
                raise ValueError(f"Dimensions {i.values.shape[0]} and {n} are not compatible")
        cols = [i.values.numpy().astype(np.int64) for i in ids]
        if batch:
            cols = [vals.indices.numpy()[:, 0]] + cols
        idx = np.stack(cols, 1) if cols else np.zeros((n, 0), np.int64)
        v = vals.values.numpy()
        if not f.already_sorted and n:
            order = np.lexsort(idx.T[::-1])   # (lexsort is stable: equal indices keep their order, as TF's)
            idx, v = idx[order], v[order]
        size = [f.size] if np.isscalar(f.size) else list(f.size)
        shape = ([int(vals.dense_shape.numpy()[0])] if batch else []) + [int(s) for s in size]
        updates[k] = SparseTensor(idx.reshape(-1, len(shape)), _dense(vals.dtype, v), np.array(shape, np.int64))
    out.update(updates)
    for k in set(out) - set(features):
        del out[k]
    return out


def _seq_specs(context_features, sequence_features):
    """Normalized (context, sequence) specs: {key: (kind, dtype, shape, default, read key)} in TF
    2.21's result order (VarLen keys sorted, then dense sorted, then ragged as given), with TF's
    Python-level errors."""
    if not context_features and not sequence_features:
        raise ValueError("Both context_features and sequence_features are None, but at least one should "
                         "have values.")
    specs = []
    for feats, ctx in ((context_features or {}), True), ((sequence_features or {}), False):
        out = {}
        for k, f in feats.items():
            if isinstance(f, SparseFeature) or (ctx and isinstance(f, FixedLenSequenceFeature)) or \
                    (not ctx and isinstance(f, FixedLenFeature)) or \
                    not isinstance(f, (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, RaggedFeature)):
                raise ValueError(f"Unsupported {type(f).__name__} {f} for key '{k}'")
            dt = _dtypes.as_dtype(f.dtype)
            pre = "context" if ctx else "feature_list"
            if isinstance(f, VarLenFeature):
                _check_dtype(dt, f"{pre}_sparse_types")
                out[k] = ("var", dt, None, None, k)
            elif isinstance(f, RaggedFeature):
                _check_dtype(dt, f"{pre}_ragged_value_types")
                out[k] = ("ragged", dt, None, _dtypes.as_dtype(f.row_splits_dtype), f.value_key or k)
            elif isinstance(f, FixedLenSequenceFeature):
                if f.default_value is not None:
                    raise ValueError(f"Value feature_list.dense_defaults[{k}] must be None")
                _check_dtype(dt, "feature_list_dense_types")
                out[k] = ("seq", dt, _row_shape(f, k), bool(f.allow_missing), k)   # (default slot: allow_missing)
            else:
                _check_dtype(dt, "Tcontext_dense")
                spec = _check_features({k: f})[k]   # (its shape's and default's checks and errors)
                out[k] = ("fixed", dt, spec[2], spec[3], k)
        sparse_keys = [s[4] for s in out.values() if s[0] == "var"]
        ragged_keys = [s[4] for s in out.values() if s[0] == "ragged"]
        both = set(sparse_keys) & set(ragged_keys)
        if both:
            raise ValueError(f"Ragged and sparse keys must not intersect; ragged_keys: {ragged_keys}, sparse_keys: "
                             f"{sparse_keys}, intersection: {both}")
        order = {"var": 0, "fixed": 1, "seq": 1, "ragged": 2}
        given = {k: i for i, k in enumerate(out)}
        specs.append({k: out[k] for k in sorted(out, key=lambda k: (order[out[k][0]],
                                                                   given[k] if out[k][0] == "ragged" else 0, k))})
    return specs


def _seq_values(f, want):
    """A feature's values as a NumPy array (its list of kind ``want``)."""
    vals = getattr(f, want).value
    return np.array(vals, object) if want == "bytes_list" else np.array(vals, _KIND_NP[want])


_KIND_NP = {"int64_list": np.int64, "float_list": np.float32}


def _parse_sequence_examples(serialized, names, ctx_spec, seq_spec, batch):
    """TF's FastParseSequenceExample (core/util/example_proto_fast_parsing.cc), its order of checks
    and messages: extract every example's features (bad bytes first), check the context features'
    kinds and the feature lists' kinds row by row, then build the context (dense, sparse, ragged)
    and sequence (dense with lengths, sparse, ragged) outputs. Returns (context, sequence,
    lengths) as NumPy parts: dense arrays, (indices, values, shape) triples, (values, splits...)."""
    from .train.example import SequenceExample
    n = len(serialized)
    name = (lambda e: "<unknown>" if names is None else names[e])
    msgs = []
    for e, s in enumerate(serialized):
        try:
            msgs.append(SequenceExample.FromString(bytes(s)))
        except (DecodeError, TypeError):
            raise errors.InvalidArgumentError(
                None, None, f"Invalid protocol message input, example id: {name(e)}") from None
    ctx_feats = [m.context.feature if m.HasField("context") else {} for m in msgs]
    seq_feats = [m.feature_lists.feature_list if m.HasField("feature_lists") else {} for m in msgs]
    # the kinds (GetContextFeatureLengths / GetSequenceFeatureLengths)
    for k, (kind, dt, shape, default, key) in ctx_spec.items():
        want = _KIND_OF[dt.name]
        for e in range(n):
            f = ctx_feats[e].get(key)
            have = None if f is None else f.WhichOneof("kind")
            if have is not None and have != want:
                raise errors.InvalidArgumentError(
                    None, None, f"Name: {name(e)}, Context feature: {key}.  Data types don't match. Expected type: "
                                f"{_TF_NAME[dt.name]}")
    for k, (kind, dt, shape, default, key) in seq_spec.items():
        want = _KIND_OF[dt.name]
        for e in range(n):
            fl = seq_feats[e].get(key)
            for i, f in enumerate(() if fl is None else fl.feature):
                have = f.WhichOneof("kind")
                if have is not None and have != want:
                    raise errors.InvalidArgumentError(
                        None, None, f"Name: {name(e)}, Feature list: {key}, Index: {i}.  Data types don't match. "
                                    f"Expected type: {_TF_NAME[dt.name]}")

    def values(f, dt):   # one Feature's values (an unset one: none)
        if f is None or f.WhichOneof("kind") is None:
            return np.zeros(0, _np_dtype(dt))
        return _seq_values(f, _KIND_OF[dt.name])

    lead = [n] if batch else []
    ctx = {}
    for phase in ("fixed", "var", "ragged"):
        for k, (kind, dt, shape, default, key) in ctx_spec.items():
            if kind != phase:
                continue
            rows = [values(ctx_feats[e].get(key), dt) if key in ctx_feats[e] else None for e in range(n)]
            if kind == "fixed":
                size = int(np.prod(shape))
                longest = max([0 if default is None else default.size] + [len(r) for r in rows if r is not None])
                if longest != size:
                    raise errors.InvalidArgumentError(
                        None, None, f"Inconsistent max number of elements for feature {key}: expected {size}, but "
                                    f"found {longest}")
                out = []
                for e, r in enumerate(rows):
                    if r is None:
                        if default is None:
                            raise errors.InvalidArgumentError(
                                None, None, f"Feature: {key} (data type: {_TF_NAME[dt.name]}) is required but could "
                                            "not be found.")
                        r = default.ravel()
                    if len(r) != size:
                        raise errors.InvalidArgumentError(None, None,
                                                          f"Unexpected number of elements in example {name(e)}")
                    out.append(np.asarray(r, _np_dtype(dt)).reshape(shape))
                ctx[k] = np.stack(out).reshape(lead + shape) if out else np.zeros(lead + shape, _np_dtype(dt))
            elif kind == "var":
                rows = [np.zeros(0, _np_dtype(dt)) if r is None else r for r in rows]
                idx = [([e] if batch else []) + [i] for e, r in enumerate(rows) for i in range(len(r))]
                ctx[k] = (np.array(idx, np.int64).reshape(-1, 2 if batch else 1), _concat(rows, dt),
                          np.array(lead + [max([len(r) for r in rows], default=0)], np.int64))
            else:
                rows = [np.zeros(0, _np_dtype(dt)) if r is None else r for r in rows]
                ctx[k] = (_concat(rows, dt), np.cumsum([0] + [len(r) for r in rows]).astype(default.np)) if batch \
                    else (_concat(rows, dt),)
    seq, lengths = {}, {}
    for phase in ("seq", "var", "ragged"):
        for k, (kind, dt, shape, default, key) in seq_spec.items():
            if kind != phase:
                continue
            lists = [None if key not in seq_feats[e] else [values(f, dt) for f in seq_feats[e][key].feature]
                     for e in range(n)]
            if kind == "seq":
                size = int(np.prod(shape))
                longest = max([sum(len(r) for r in rows) for rows in lists if rows is not None], default=0)
                if size == 0 or longest % size:
                    raise errors.InvalidArgumentError(
                        None, None, f"Feature list '{key}' has an unexpected number of values.  Total values size: "
                                    f"{longest} is not consistent with output shape: {_shape_str([None] + shape)}")
                nrows = longest // size
                out = np.zeros([n, nrows] + shape, _np_dtype(dt))
                if dt.name == "string":
                    out[...] = b""
                lens = []
                for e, rows in enumerate(lists):
                    if rows is None:
                        if not default:   # (allow_missing)
                            raise errors.InvalidArgumentError(
                                None, None, f"Name: {name(e)}, Feature list '{key}' is required but could not be "
                                            "found.  Did you mean to include it in "
                                            "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?")
                        rows = []
                    for i, r in enumerate(rows):
                        if len(r) != size:
                            raise errors.InvalidArgumentError(
                                None, None, f"Name: {name(e)}, Key: {key}, Index: {i}.  Number of values != "
                                            f"expected.  values size: {len(r)} but output shape: {_shape_str(shape)}")
                        out[e, i] = r.reshape(shape)
                    lens.append(len(rows))
                seq[k] = out if batch else out[0]
                lengths[k] = np.array(lens if batch else lens[0], np.int64)
            elif kind == "var":
                idx, vals, max_rows, max_cols = [], [], 0, 0
                for e, rows in enumerate(lists):
                    for i, r in enumerate(rows or ()):
                        idx += [([e] if batch else []) + [i, j] for j in range(len(r))]
                        vals.append(r)
                        max_cols = max(max_cols, len(r))
                    max_rows = max(max_rows, len(rows or ()))
                seq[k] = (np.array(idx, np.int64).reshape(-1, 3 if batch else 2), _concat(vals, dt),
                          np.array(lead + [max_rows, max_cols], np.int64))
            else:
                rows = [r for rows in lists for r in (rows or ())]
                inner = np.cumsum([0] + [len(r) for r in rows]).astype(default.np)
                outer = np.cumsum([0] + [len(rows or ()) for rows in lists]).astype(default.np)
                seq[k] = (_concat(rows, dt), outer, inner) if batch else (_concat(rows, dt), inner)
    return ctx, seq, lengths


def _concat(arrays, dt):
    return np.concatenate(arrays).astype(_np_dtype(dt)) if arrays else np.zeros(0, _np_dtype(dt))


def _seq_tensors(parts, spec, batch):
    """Tensors of ``_parse_sequence_examples``' NumPy parts: dense Tensors, SparseTensors, RaggedTensors."""
    from .ragged.ragged_tensor import RaggedTensor
    from .sparse import SparseTensor
    out = {}
    for k, (kind, dt, _, default, _) in spec.items():
        p = parts[k]
        if kind in ("fixed", "seq"):
            out[k] = _dense(dt, p)
        elif kind == "var":
            out[k] = SparseTensor(p[0], _dense(dt, p[1]), p[2])
        elif len(p) == 1:   # a single example's context RaggedFeature: its values (TF: a dense vector)
            out[k] = _dense(dt, p[0])
        else:
            rt = _dense(dt, p[0])
            for splits in reversed(p[1:]):
                rt = RaggedTensor.from_row_splits(rt, Tensor(splits), validate=False)
            out[k] = rt
    return out


def _traced_sequence_parse(serialized, ctx_spec, seq_spec, batch, fn):
    """The sequence parse inside ``tapeflow.function`` (and the trace ``Dataset.map`` makes): one
    ``numpy_function`` running the eager parse, as ``_traced_parse``; dense outputs only (a feature
    list's step count, and a batch's size when unknown, are unknown dimensions)."""
    from .compiler.function import TensorSpec
    from .ops.script_ops import numpy_function
    for k, s in list(ctx_spec.items()) + list(seq_spec.items()):
        if s[0] in ("var", "ragged"):
            raise NotImplementedError(
                f"tf.io.{fn}: a {'VarLenFeature' if s[0] == 'var' else 'RaggedFeature'} ({k!r}) inside "
                "tapeflow.function is not supported (its SparseTensor's dense shape or RaggedTensor's row lengths "
                "depend on the data); parse eagerly, or in Dataset.map (which runs the map function per element)")
    s = convert_to_tensor(serialized)
    if s.dtype != _dtypes.string:
        raise TypeError(f"tf.io.{fn}: serialized must be a string tensor, got {s.dtype.name}")
    if not batch and s.shape.rank not in (None, 0) and fn == "parse_single_sequence_example":
        raise ValueError("Input serialized must be a scalar")
    lead = [s.shape[0]] if batch else []
    touts = [TensorSpec(lead + v[2], v[1]) for v in ctx_spec.values()]
    touts += [TensorSpec(lead + [None] + v[2], v[1]) for v in seq_spec.values()]
    touts += [TensorSpec(lead, _dtypes.int64) for _ in seq_spec]

    def run(a):
        a = np.asarray(a, object)
        ctx, seq, lens = _parse_sequence_examples(list(a.ravel()) if batch else [a[()]], None, ctx_spec, seq_spec,
                                                  batch)
        return [ctx[k] for k in ctx_spec] + [seq[k] for k in seq_spec] + [lens[k] for k in seq_spec]
    flat = list(numpy_function(run, [s], touts))
    ctx = {k: flat.pop(0) for k in ctx_spec}
    seq = {k: flat.pop(0) for k in seq_spec}
    return ctx, seq, {k: flat.pop(0) for k in seq_spec}


def _names(example_names, n):
    if example_names is None:
        return None
    a = np.asarray(convert_to_tensor(example_names).numpy(), object).ravel()
    if a.size != n:
        raise errors.InvalidArgumentError(None, None,
                                          "example_names must be empty or have the correct number of elements")
    return [x.decode() if isinstance(x, bytes) else str(x) for x in a]


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    """``tf.io.parse_single_sequence_example``: one serialized SequenceExample (a scalar string) ->
    ``(context, feature_lists)`` dicts: context FixedLen tensors / VarLen SparseTensors (rank 1) /
    Ragged values, feature-list FixedLenSequenceFeature tensors ``(steps,) + shape``, VarLen
    SparseTensors ``[step, position]`` and RaggedTensors (one row per step)."""
    ctx_spec, seq_spec = _seq_specs(context_features, sequence_features)
    if _tracing():
        ctx, seq, _ = _traced_sequence_parse(serialized, ctx_spec, seq_spec, False, "parse_single_sequence_example")
        return ctx, seq
    s = _serialized_values(serialized, "parse_single_sequence_example")
    if s.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    ctx, seq, _ = _parse_sequence_examples([s[()]], _names(example_name, 1), ctx_spec, seq_spec, False)
    return _seq_tensors(ctx, ctx_spec, False), _seq_tensors(seq, seq_spec, False)


def parse_sequence_example(serialized, context_features=None, sequence_features=None, example_names=None,
                           name=None):
    """``tf.io.parse_sequence_example``: a vector of serialized SequenceExamples -> ``(context,
    feature_lists, lengths)``: batched outputs (feature lists padded with 0 / b'' to the longest
    example's steps; VarLen SparseTensors ``[example, step, position]``; RaggedTensors of ragged
    rank 2) and each FixedLenSequenceFeature's step counts. A scalar input parses one example and
    gives unbatched outputs (TF's behaviour)."""
    ctx_spec, seq_spec = _seq_specs(context_features, sequence_features)
    if _tracing():
        rank = convert_to_tensor(serialized).shape.rank
        return _traced_sequence_parse(serialized, ctx_spec, seq_spec, rank != 0, "parse_sequence_example")
    s = _serialized_values(serialized, "parse_sequence_example")
    if s.ndim > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {s.ndim} (tf.io.parse_sequence_example: "
                         "serialized must be a vector of SequenceExamples)")
    if s.size == 0 and s.dtype != object:
        raise TypeError("tf.io.parse_sequence_example: serialized must be a string tensor")
    batch = s.ndim == 1
    items = list(s) if batch else [s[()]]
    ctx, seq, lens = _parse_sequence_examples(items, _names(example_names, len(items)), ctx_spec, seq_spec, batch)
    return (_seq_tensors(ctx, ctx_spec, batch), _seq_tensors(seq, seq_spec, batch),
            {k: Tensor(lens[k]) for k in seq_spec if seq_spec[k][0] == "seq"})


# ---- decode_json_example ---------------------------------------------------------------------------

class _JsonError(Exception):
    pass


class _JsonObject(list):
    """A JSON object as its list of (key, value): the order and repeated keys, as protobuf's parser sees them."""


_json_pairs = _JsonObject


def _json_int64(v, where):
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _JsonError(f"{where}: int64: expected number or string")
    if isinstance(v, str):
        try:
            v = int(v)
        except ValueError:
            try:
                v = float(v)
            except ValueError:
                raise _JsonError(f"{where}: int64: invalid number") from None
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")) or v != int(v):
            raise _JsonError(f"{where}: int64: expected integer, but JSON number had fractional part")
        v = int(v)
    if not -2**63 <= v < 2**63:
        raise _JsonError(f"{where}: int64: integer out of range")
    return _field_varint(1, v)


def _json_float(v, where):
    special = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _JsonError(f"{where}: float: expected number or string")
    if isinstance(v, str):
        if v in special:
            v = special[v]
        else:
            try:
                v = float(v)
            except ValueError:
                raise _JsonError(f"{where}: float: invalid number") from None
    v = float(v)
    if v == v and abs(v) != float("inf") and abs(v) > float(np.finfo(np.float32).max):
        raise _JsonError(f"{where}: float: float out of range")
    return _varint(1 << 3 | 5) + np.float32(v).astype("<f4").tobytes()


def _json_bytes(v, where):
    import base64
    import binascii
    if not isinstance(v, str):
        raise _JsonError(f"{where}: bytes: expected string")
    try:
        b = base64.b64decode(v.replace("-", "+").replace("_", "/") + "=" * (-len(v) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise _JsonError(f"{where}: bytes: corrupt base64") from None
    return _field(1, b)


def _field_varint(num, v):
    return _varint(num << 3) + _varint(v)


#: Feature's oneof members: JSON names (camelCase and the proto names) -> (field number, value encoder)
_JSON_KINDS = {"bytesList": (1, _json_bytes), "floatList": (2, _json_float), "int64List": (3, _json_int64)}
_JSON_KINDS.update({"bytes_list": _JSON_KINDS["bytesList"], "float_list": _JSON_KINDS["floatList"],
                    "int64_list": _JSON_KINDS["int64List"]})


def _json_object(v, where, what):
    if not isinstance(v, _JsonObject):
        raise _JsonError(f"{where}: message {what}: expected '{{'")
    return v


def _json_feature(v, where):
    out, kind = b"", None
    for name, val in _json_object(v, where, "tensorflow.Feature"):
        if name not in _JSON_KINDS:
            raise _JsonError(f"{where}: no such field: '{name}'")
        if val is None:
            continue
        if kind is not None:
            raise _JsonError(f"{where}.{name}: '{name}' has already been set (either directly or as part of a oneof)")
        kind = name
        num, enc = _JSON_KINDS[name]
        payload = b""
        for lname, lval in _json_object(val, f"{where}.{name}", "list"):
            if lname != "value":
                raise _JsonError(f"{where}.{name}: no such field: '{lname}'")
            if lval is None:
                continue
            if not isinstance(lval, list) or isinstance(lval, _JsonObject):
                raise _JsonError(f"{where}.{name}.value: expected '['")
            payload += b"".join(enc(x, f"{where}.{name}.value[{i}]") for i, x in enumerate(lval))
        out += _field(num, payload)
    return out


def _json_example(text):
    """The bytes protobuf's JSON parser (``JsonStringToMessage``, which TF's DecodeJSONExample runs)
    makes of an Example's JSON: fields in the order written, repeated scalars unpacked, a present
    empty message written empty."""
    import json
    try:
        doc = json.loads(text, object_pairs_hook=_json_pairs)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _JsonError("unexpected EOF" if "Expecting value: line 1 column 1" in str(e) or
                         not text.strip() else f"invalid JSON: {e}") from None
    out = b""
    for name, features in _json_object(doc, "type.googleapis.com/tensorflow.Example", "tensorflow.Example"):
        if name != "features":
            raise _JsonError(f"invalid JSON in type.googleapis.com/tensorflow.Example: no such field: '{name}'")
        if features is None:
            continue
        payload = b""
        for fname, fmap in _json_object(features, "features", "tensorflow.Features"):
            if fname != "feature":
                raise _JsonError(f"features: no such field: '{fname}'")
            if fmap is None:
                continue
            seen = set()
            for i, (key, value) in enumerate(_json_object(fmap, "features.feature", "map")):
                if key in seen:
                    raise _JsonError(f"features.feature[{i}]: message tensorflow.Features.FeatureEntry: got "
                                     f"unexpectedly-repeated repeated map key: '{key}'")
                seen.add(key)
                entry = _field(1, key.encode())
                if value is not None:
                    entry += _field(2, _json_feature(value, f"features.feature[{i}]"))
                payload += _field(1, entry)
        out += _field(1, payload)
    return out


def decode_json_example(json_examples, name=None):
    """``tf.io.decode_json_example``: JSON texts of ``tf.train.Example`` s (protobuf's JSON mapping:
    ``{"features": {"feature": {"a": {"int64List": {"value": ["1"]}}}}}``) -> their serialized
    bytes, in the input's shape. The bytes are protobuf's JSON parser's (TF 2.21's): repeated values
    unpacked, fields in the order written; they parse to the same Example as ``SerializeToString``'s."""
    if _tracing():
        from .compiler.function import TensorSpec
        t = convert_to_tensor(json_examples)
        return _as_numpy_function(decode_json_example, [t], TensorSpec(t.shape, _dtypes.string))
    t = convert_to_tensor(json_examples)
    if t.dtype != _dtypes.string:
        raise TypeError(f"Cannot convert {json_examples!r} to EagerTensor of dtype string")
    a = np.asarray(t.numpy(), object)
    out = np.empty(a.shape, object)
    for i, x in np.ndenumerate(a):
        try:
            out[i] = _json_example(x.decode("utf-8") if isinstance(x, bytes) else x)
        except (_JsonError, UnicodeDecodeError) as e:
            raise errors.InvalidArgumentError(None, None, f"Error while parsing JSON: {e}") from None
    return _string_tensor(out)


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


_CSV_TYPES = {"float32": "float", "float64": "double", "int32": "int32", "int64": "int64", "string": "string"}


def _csv_split(line, delim, quote):
    """One record's fields by TF 2.21's DecodeCSV rules (decode_csv_op.cc ExtractFields), which differ
    from Python's csv module: an empty record has no fields (csv.reader gives one), a trailing
    delimiter adds an empty field, and malformed quoting is an error, not a guess."""
    fields = []
    i, n = 0, len(line)
    while i < n:
        if quote and line[i] == '"':
            i += 1
            field = []
            while True:
                if i >= n:
                    raise errors.InvalidArgumentError(None, None, "Quoted field has to end with quote followed by "
                                                                  f"delim or end (record {line!r})")
                if line[i] == '"':
                    if i + 1 == n or line[i + 1] == delim:
                        i += 2
                        break
                    if line[i + 1] != '"':
                        raise errors.InvalidArgumentError(None, None, "Quote inside a string has to be escaped by "
                                                                      f"another quote (record {line!r})")
                    field.append('"')
                    i += 2
                else:
                    field.append(line[i])
                    i += 1
            fields.append("".join(field))
        else:
            j = line.find(delim, i)
            j = n if j < 0 else j
            text = line[i:j]
            if quote and any(c in text for c in '"\r\n'):
                raise errors.InvalidArgumentError(None, None, "Unquoted fields cannot have quotes/CRLFs inside "
                                                              f"(record {line!r})")
            fields.append(text)
            i = j + 1
    if n and line[-1] == delim:
        fields.append("")   # "a,b," has three fields, the last empty
    return fields


def _csv_column(record, k, delim, quote, na_value, select, columns):
    """string_map's per-element function for tf.io.decode_csv: field ``k`` of one record, after
    every field of the record has parsed (as TF: a bad field fails each output, not only its own).
    ``columns``: (NumPy dtype str, default or None) per column. A column is one string_map, so the
    op composes an existing primitive and runs the same eagerly and traced; the record is parsed
    once per column (n columns: n parses; CSV rows are short)."""
    from .data import _csv_field_value
    line = record.decode("utf-8") if isinstance(record, bytes) else str(record)
    fields = _csv_split(line, delim, quote)
    if select is not None:
        fields = [fields[c] for c in select if c < len(fields)]
    n = len(columns)
    if len(fields) != n:
        # TF 2.21 names the record's index ("in record 1"); an elementwise map does not know it, so the
        # record's text is named instead
        raise errors.InvalidArgumentError(None, None, f"Expect {n} fields but have {len(fields)} in record "
                                                      f"{line!r}")
    values = [_csv_field_value(i, f, np.dtype(dt), default, na_value) for i, (f, (dt, default))
              in enumerate(zip(fields, columns))]
    return values[k]


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """``tf.io.decode_csv``: one tensor per column, each of ``records``' shape, typed by
    ``record_defaults`` (each a scalar or a one-element list: that value for an empty or ``na_value``
    field; an empty tensor: a required column). TF 2.21's rules and error texts (CsvDataset's parser:
    quotes, strtol/strtod numbers); float32, float64, int32, int64 and string columns."""
    from .strings import _map, _strings
    if isinstance(records, (list, tuple)) and not records:
        records = np.array([], object)   # TF 2.21: decode_csv([], ...) gives empty columns (a [] is float32 here)
    x = _strings("decode_csv", records)
    if not isinstance(field_delim, str) or len(field_delim) != 1:
        raise errors.InvalidArgumentError(None, None, f"field_delim should be only 1 char, got {field_delim!r}")
    cols = []
    for i, d in enumerate(record_defaults):
        t = d if isinstance(d, Tensor) else convert_to_tensor(d)
        if t.dtype.name not in _CSV_TYPES:
            # TF 2.21: InvalidArgumentError "Value for attr 'OUT_TYPE' of bool is not in the list of allowed values"
            raise errors.InvalidArgumentError(
                None, None, f"Value for attr 'OUT_TYPE' of {t.dtype.name} is not in the list of allowed values: "
                "float, double, int32, int64, string")
        v = t.numpy()
        if v.ndim > 1 or v.size > 1:
            # TF 2.21's text
            raise errors.InvalidArgumentError(None, None, f"There should only be 1 default per field but field {i} "
                                                          f"has {v.size}")
        default = None if v.size == 0 else v.reshape(-1)[0]
        default = default.item() if isinstance(default, np.generic) else default
        cols.append((t.dtype, default))
    n = len(cols)
    if n == 0:
        # TF 2.21's InvalidArgumentError (the op's OUT_TYPE attr is empty)
        raise errors.InvalidArgumentError(None, None, "Length for attr 'OUT_TYPE' of 0 must be at least minimum 1: "
                                                      "decode_csv needs one record_defaults entry per column")
    select = None if select_cols is None else tuple(int(c) for c in select_cols)
    if select is not None:
        # TF 2.21 checks these in Python: ValueError
        if any(b <= a for a, b in zip(select, select[1:])):
            raise ValueError("select_cols is not strictly increasing.")
        if select and select[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select) != n:
            raise ValueError(f"Length of select_cols and record_defaults do not match: {len(select)} select_cols, "
                             f"{n} record_defaults.")
    columns = tuple((dt.np.str, default) for dt, default in cols)
    return [_map("decode_csv", _csv_column, [x], dt.np,
                 args=(k, field_delim, bool(use_quote_delim), na_value, select, columns), ragged_ok=False)
            for k, (dt, _) in enumerate(cols)]


# -- SparseTensor serialization (TF's three TensorProtos: indices, values, dense_shape) ----------------

def _sparse_parts(sp_input, op):
    from .sparse import SparseTensor
    if _tracing():
        raise NotImplementedError(f"tf.io.{op} inside tapeflow.function is not supported: call it eagerly")
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"{op}: expected a tf.SparseTensor, got {type(sp_input).__name__}")
    return (np.asarray(sp_input.indices.numpy(), np.int64), np.asarray(sp_input.values.numpy()),
            np.asarray(sp_input.dense_shape.numpy(), np.int64))


def _serialized3(ind, vals, shape, dtype):
    from .core.tensor import convert_to_tensor as _c
    out = np.empty(3, object)
    out[:] = [serialize_tensor(Tensor(ind)).numpy(), serialize_tensor(_c(vals, dtype)).numpy(),
              serialize_tensor(Tensor(shape)).numpy()]
    return out


def serialize_sparse(sp_input, out_type=_dtypes.string, name=None):
    """tf.io.serialize_sparse: a string vector [3] of the indices', values' and dense shape's TensorProto
    bytes (serialize_tensor's: TF 2.21's bytes)."""
    if _dtypes.as_dtype(out_type) != _dtypes.string:
        raise NotImplementedError("serialize_sparse(out_type=tf.variant): variant tensors are out of scope")
    ind, vals, shape = _sparse_parts(sp_input, "serialize_sparse")
    return _string_tensor(_serialized3(ind, vals, shape, sp_input.values.dtype))


def serialize_many_sparse(sp_input, out_type=_dtypes.string, name=None):
    """tf.io.serialize_many_sparse: one serialized SparseTensor per row of the first dimension, the row's
    entries with that dimension dropped: a string matrix [N, 3] (TF 2.21's bytes)."""
    if _dtypes.as_dtype(out_type) != _dtypes.string:
        raise NotImplementedError("serialize_many_sparse(out_type=tf.variant): variant tensors are out of scope")
    ind, vals, shape = _sparse_parts(sp_input, "serialize_many_sparse")
    if len(shape) < 2:
        raise errors.InvalidArgumentError(None, None, f"Rank of input SparseTensor should be > 1, but saw rank: "
                                                      f"{len(shape)}")
    out = np.empty((int(shape[0]), 3), object)
    for r in range(int(shape[0])):
        sel = ind[:, 0] == r
        out[r] = _serialized3(ind[sel][:, 1:].reshape(-1, len(shape) - 1), vals[sel], shape[1:],
                              sp_input.values.dtype)
    return _string_tensor(out)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """tf.io.deserialize_many_sparse: the [N, 3] serialized SparseTensors stacked along a new first
    dimension (the dense shape the elementwise maximum of theirs); TF 2.21's dtype check."""
    from .sparse import SparseTensor
    if _tracing():
        raise NotImplementedError("tf.io.deserialize_many_sparse inside tapeflow.function is not supported: its "
                                  "output's size depends on the data; call it eagerly")
    a = np.asarray(convert_to_tensor(serialized_sparse).numpy(), object)
    dt = _dtypes.as_dtype(dtype)
    rows_i, rows_v, shapes = [], [], []
    for r in range(a.shape[0]):
        ind = parse_tensor(a[r, 0], _dtypes.int64).numpy()
        try:
            vals = parse_tensor(a[r, 1], dt).numpy()
        except errors.InvalidArgumentError:
            got = _dtype_of_proto(a[r, 1])
            raise errors.InvalidArgumentError(None, None, f"Requested SparseTensor of type {dt.name} but "
                                                          f"SparseTensor[{r}].values.dtype() == {got}") from None
        shp = parse_tensor(a[r, 2], _dtypes.int64).numpy()
        ind = ind.reshape(-1, len(shp))
        rows_i.append(np.concatenate([np.full((ind.shape[0], 1), r, np.int64), ind], 1))
        rows_v.append(vals)
        shapes.append(shp)
    width = (len(shapes[0]) if shapes else (rank - 1 if rank else 1)) + 1
    indices = np.concatenate(rows_i) if rows_i else np.zeros((0, width), np.int64)
    values = np.concatenate(rows_v) if rows_v else np.zeros((0,), dt.np)
    dense = np.concatenate([[a.shape[0]], np.max(np.stack(shapes), 0)]) if shapes else np.zeros(width, np.int64)
    return SparseTensor(indices, values, dense)


def _dtype_of_proto(b):
    # the TensorProto's dtype field (field 1, a varint): TF's enum -> its name
    b = bytes(b)
    return _ENUM_DT.get(b[1], "?") if len(b) > 1 and b[0] == 0x08 else "?"


# -- elementwise byte transforms (string_map: the same eagerly and traced) ---------------------------

def _b64_encode(s, pad):
    import base64
    out = base64.urlsafe_b64encode(s)
    return out if pad else out.rstrip(b"=")


def _b64_decode(s):
    import base64
    import binascii
    body = s.rstrip(b"=")
    if len(body) % 4 == 1:
        raise errors.InvalidArgumentError(None, None, "Base64 string length cannot be 1 modulo 4.")
    if body.strip(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"):
        # TF 2.21's text: its alphabet is the web-safe one ('-' and '_'), '+' and '/' are invalid
        raise errors.InvalidArgumentError(None, None, "Invalid character found in base64.")
    try:
        return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
    except binascii.Error:
        raise errors.InvalidArgumentError(None, None, "Invalid character found in base64.") from None


def encode_base64(input, pad=False, name=None):  # noqa: A002
    """tf.io.encode_base64: web-safe base64 of each string ('-' and '_'), '=' padding only with ``pad``."""
    from .strings import _map, _strings
    return _map("encode_base64", _b64_encode, [_strings("encode_base64", input)], args=(bool(pad),))


def decode_base64(input, name=None):  # noqa: A002
    """tf.io.decode_base64: web-safe base64, padded or not; TF 2.21's errors."""
    from .strings import _map, _strings
    return _map("decode_base64", _b64_decode, [_strings("decode_base64", input)])


def _decompress(s, kind):
    if kind == "":
        return s
    try:
        return zlib.decompress(s, 31 if kind == "GZIP" else 15)
    except zlib.error as e:
        # TF 2.21: DataLossError "inflate() failed with error -3: incorrect header check"
        msg = str(e)
        code = msg.split("Error ")[1].split(" ")[0] if msg.startswith("Error ") else "?"
        raise errors.DataLossError(None, None, f"inflate() failed with error {code}: {msg.split(': ', 1)[-1]}") \
            from None


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002
    """tf.io.decode_compressed: each string inflated (``ZLIB``, ``GZIP``) or kept (``''``)."""
    from .strings import _map, _strings
    kind = (compression_type or "").upper()
    if kind not in ("", "ZLIB", "GZIP"):
        # TF 2.21 names ZSTD too; zstd is not in Python's standard library
        raise errors.InvalidArgumentError(None, None, "Only ZLIB, GZIP or NONE are supported compressions (got "
                                                      f"{compression_type!r}; TF 2.21 also reads ZSTD)")
    return _map("decode_compressed", _decompress, [_strings("decode_compressed", bytes)], args=(kind,))


def match_filenames_once(pattern, name=None):
    """``tf.io.match_filenames_once`` (TF1's local variable, kept in TF 2.21): eagerly a non-trainable
    string Variable holding ``matching_files(pattern)`` once (TF's ``Variable:0``, whatever ``name``);
    inside ``tapeflow.function`` TF's ValueError (a new Variable on every call)."""
    if _tracing():
        raise ValueError("tf.function only supports singleton tf.Variables created on the first call "
                         "(match_filenames_once makes a Variable each call; call it outside the function and "
                         "pass the Variable in, or use tf.io.matching_files)")
    from .core.tensor import Variable
    return Variable(matching_files(pattern), trainable=False)


def matching_files(pattern, name=None):
    """tf.io.matching_files: the files matching a glob pattern (or any of several), sorted, as a
    string vector (TF 2.21 sorts across patterns). Traced: a py_call of unknown length."""
    if _tracing():
        from .compiler.function import TensorSpec
        return _as_numpy_function(matching_files, [pattern], TensorSpec([None], _dtypes.string))
    import glob
    t = convert_to_tensor(pattern)
    if not t.dtype.is_string:
        # TF 2.21: its string input refuses the conversion
        raise TypeError(f"Cannot convert {pattern!r} to EagerTensor of dtype string (matching_files takes glob "
                        f"patterns, got {t.dtype.name})")
    pats = np.asarray(t.numpy(), object).ravel()
    found = set()
    for p in pats:
        found.update(glob.glob(p.decode() if isinstance(p, bytes) else str(p)))
    out = np.empty(len(found), object)
    out[:] = [f.encode() for f in sorted(found)]
    return Tensor(out)


# the image codecs (tf.io.decode_png, ...; also tf.image's): tapeflow/image_codecs.py
from .image_codecs import (decode_image, decode_png, decode_jpeg, decode_gif, decode_bmp,  # noqa: E402,F401
                           decode_webp, decode_jxl, decode_and_crop_jpeg, is_jpeg, extract_jpeg_shape, encode_png,
                           encode_jpeg)


class FileStatistics:
    """tf.io.gfile.stat's result (TF's FileStatistics: length, is_directory, mtime_nsec)."""
    __slots__ = ("length", "is_directory", "mtime_nsec")

    def __init__(self, length=0, is_directory=False, mtime_nsec=0):
        self.length, self.is_directory, self.mtime_nsec = length, is_directory, mtime_nsec

    def __repr__(self):
        return (f"FileStatistics(length={self.length}, is_directory={self.is_directory}, "
                f"mtime_nsec={self.mtime_nsec})")


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

    # wave 25 (api25): join, stat, walk and the scheme list
    @staticmethod
    def join(path, *paths):
        """TF's join: os.path.join's rules after a URL's scheme ('gs://b', 'x' -> 'gs://b/x'); an absolute
        part restarts the path, as os.path.join does."""
        path = _path(path)
        scheme, sep, rest = path.partition("://")
        if not sep:
            return os.path.join(path, *map(_path, paths))
        return scheme + sep + os.path.join(rest, *map(_path, paths))

    @staticmethod
    def stat(path):
        """TF's FileStatistics of ``path``: ``length`` (bytes), ``is_directory``, ``mtime_nsec``."""
        p = _path(path)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{p}; No such file or directory") from None
        return FileStatistics(length=st.st_size, is_directory=os.path.isdir(p), mtime_nsec=st.st_mtime_ns)

    @staticmethod
    def walk(top, topdown=True, onerror=None):
        """(dirname, subdirectories, files) for ``top`` and each directory under it, parents first unless
        ``topdown=False``; a missing ``top`` yields nothing (TF's walk)."""
        top = _path(top)
        for entry in os.walk(top, topdown=topdown, onerror=onerror):
            yield entry

    @staticmethod
    def get_registered_schemes():
        """The file-system schemes paths may carry: tapeflow reads local paths only (no gs://, ram://)."""
        return [""]

__all__ = ["TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "FixedLenFeature", "VarLenFeature", "RaggedFeature",
           "parse_single_example", "parse_example", "serialize_tensor", "parse_tensor", "decode_raw", "read_file",
           "write_file", "gfile", "tf_record_iterator"]
# wave 21 (seqex21): SequenceExample parsing and the remaining feature kinds
__all__ += ["FixedLenSequenceFeature", "SparseFeature", "parse_single_sequence_example", "parse_sequence_example",
            "decode_json_example"]
# wave 20 (api20): decode_csv, the image codecs, base64/decompression/glob, sparse serialization
__all__ += ["encode_base64", "decode_base64", "decode_compressed", "matching_files", "decode_image", "decode_png",
            "decode_jpeg", "decode_gif", "decode_bmp", "decode_webp", "decode_jxl",
            "decode_and_crop_jpeg", "is_jpeg", "extract_jpeg_shape",
            "encode_png", "encode_jpeg", "decode_csv", "serialize_sparse", "serialize_many_sparse",
            "deserialize_many_sparse"]


# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("io", "tapeflow.io")
