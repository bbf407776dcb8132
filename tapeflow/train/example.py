"""``tf.train.Example`` and its parts (``Features``, ``Feature``, ``BytesList``, ``FloatList``,
``Int64List``), and ``tf.train.SequenceExample`` with ``FeatureLists``/``FeatureList`` (wave 21):
the protobuf messages of TF's input pipelines, encoded and decoded by hand.

No protobuf dependency: the messages are nine small ones (tensorflow/core/example/example.proto,
feature.proto) and the wire format is varints and length-delimited fields, so a hand encoder is
~150 lines and gives the same bytes as protobuf's ``SerializeToString(deterministic=True)``
(tests/test_tfrecord.py and tests/test_seqex.py check against TF 2.21's bytes). ``Features.feature`` is a protobuf map;
protobuf's default serialization writes it in its hash table's order, which differs between
protobuf builds; tapeflow always writes TF's deterministic order (``_map_order``), which any
reader accepts (docs/differences.md).

Only the API a port uses is here: construction with keyword arguments, attribute access
(``ex.features.feature["x"].int64_list.value``), ``SerializeToString``, ``FromString``,
``ParseFromString``, ``WhichOneof("kind")``, ``CopyFrom``, ``==``, and protobuf's text format
as ``str``/``repr``. ``google.protobuf.text_format.Merge/Parse`` into these messages (TF's ragged
guide builds its Examples so) works through protobuf's reflection API: each class has a real
``DESCRIPTOR`` (built on first use in a private descriptor pool, so importing tapeflow loads no
protobuf), plus ``SetInParent``, the map's ``GetEntryClass`` and checked repeated ``append``.
"""
from __future__ import annotations

import functools
import struct

import numpy as np


class DecodeError(Exception):
    """protobuf's ``google.protobuf.message.DecodeError``: bytes that are not the message."""


# ---- the wire format ---------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1        # negative int64s are their 64-bit two's complement: 10 bytes
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _read_varint(b, i):
    shift = n = 0
    while True:
        if i >= len(b) or shift > 63:
            raise DecodeError("Wire format was corrupt")
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        if c < 0x80:
            return n, i
        shift += 7


def _fields(b):
    """(field number, wire type, value) of each field of message bytes ``b``: the value is an int
    (varint, fixed32/64 as raw ints) or a memoryview slice (length-delimited)."""
    b = memoryview(b)
    i = 0
    while i < len(b):
        key, i = _read_varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise DecodeError("Wire format was corrupt")
        if wt == 0:
            v, i = _read_varint(b, i)
        elif wt == 2:
            n, i = _read_varint(b, i)
            if i + n > len(b):
                raise DecodeError("Wire format was corrupt")
            v, i = b[i:i + n], i + n
        elif wt == 5:
            if i + 4 > len(b):
                raise DecodeError("Wire format was corrupt")
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 1:
            if i + 8 > len(b):
                raise DecodeError("Wire format was corrupt")
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        else:
            raise DecodeError("Wire format was corrupt")
        yield num, wt, v


def _varints(payload):
    b, i, out = memoryview(payload), 0, []
    while i < len(b):
        v, i = _read_varint(b, i)
        out.append(v)
    return out


def _int64(u):
    u &= (1 << 64) - 1
    return u - (1 << 64) if u >> 63 else u


# ---- text format (protobuf's str()) ------------------------------------------------------------

def _upb_cmp(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    if a[:n] != b[:n]:
        return -1 if a[:n] < b[:n] else 1
    return len(b) - len(a)


#: The key order of TF 2.21's deterministic map serialization (upb, ``deterministic=True``): upb
#: sorts keys by their common prefix descending, then the shorter first, and writes the buffer
#: back to front, so the bytes hold keys ascending by common prefix with a longer key before its
#: prefix ("eb", "ef", "e"; recorded in tests/data/tfrecord_tf_reference.json).
_map_order = functools.cmp_to_key(lambda a, b: _upb_cmp(a.encode(), b.encode()))


def _text_bytes(b: bytes) -> str:
    out = []
    for c in b:
        ch = chr(c)
        if ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ch in "'\"\\":
            out.append("\\" + ch)
        elif 0x20 <= c < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{c:03o}")
    return '"' + "".join(out) + '"'


def _text_float(x: float) -> str:
    # protobuf's SimpleFtoa: 6 significant digits when they read back as the same float32, else 9
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    s = "%.6g" % x
    return s if np.float32(float(s)) == np.float32(x) else "%.9g" % x


# ---- descriptors (for google.protobuf.text_format) ----------------------------------------------

@functools.lru_cache(maxsize=None)
def _descriptors():
    """example.proto/feature.proto's message descriptors, in a private pool (built on first use:
    only text_format, which walks ``message.DESCRIPTOR``, needs them)."""
    from google.protobuf import descriptor_pb2, descriptor_pool
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="tapeflow/example.proto", package="tensorflow",
                                             syntax="proto3")

    def message(name, fields, parent=None):
        m = (parent.nested_type if parent is not None else fdp.message_type).add(name=name)
        for fname, num, ftype, label, type_name, oneof in fields:
            f = m.field.add(name=fname, number=num, type=ftype, label=label, json_name=fname)
            if type_name:
                f.type_name = type_name
            if oneof is not None:
                f.oneof_index = oneof
        return m

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    message("BytesList", [("value", 1, F.TYPE_BYTES, rep, None, None)])
    message("FloatList", [("value", 1, F.TYPE_FLOAT, rep, None, None)])
    message("Int64List", [("value", 1, F.TYPE_INT64, rep, None, None)])
    feature = message("Feature", [("bytes_list", 1, F.TYPE_MESSAGE, opt, ".tensorflow.BytesList", 0),
                                  ("float_list", 2, F.TYPE_MESSAGE, opt, ".tensorflow.FloatList", 0),
                                  ("int64_list", 3, F.TYPE_MESSAGE, opt, ".tensorflow.Int64List", 0)])
    feature.oneof_decl.add(name="kind")
    features = message("Features", [("feature", 1, F.TYPE_MESSAGE, rep, ".tensorflow.Features.FeatureEntry",
                                     None)])
    entry = message("FeatureEntry", [("key", 1, F.TYPE_STRING, opt, None, None),
                                     ("value", 2, F.TYPE_MESSAGE, opt, ".tensorflow.Feature", None)], features)
    entry.options.map_entry = True
    message("Example", [("features", 1, F.TYPE_MESSAGE, opt, ".tensorflow.Features", None)])
    message("FeatureList", [("feature", 1, F.TYPE_MESSAGE, rep, ".tensorflow.Feature", None)])
    lists = message("FeatureLists", [("feature_list", 1, F.TYPE_MESSAGE, rep,
                                      ".tensorflow.FeatureLists.FeatureListEntry", None)])
    entry = message("FeatureListEntry", [("key", 1, F.TYPE_STRING, opt, None, None),
                                         ("value", 2, F.TYPE_MESSAGE, opt, ".tensorflow.FeatureList", None)], lists)
    entry.options.map_entry = True
    message("SequenceExample", [("context", 1, F.TYPE_MESSAGE, opt, ".tensorflow.Features", None),
                                ("feature_lists", 2, F.TYPE_MESSAGE, opt, ".tensorflow.FeatureLists", None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return pool


class _DescriptorAttr:
    """A class attribute ``DESCRIPTOR``: the message's protobuf Descriptor (tensorflow.<class name>
    unless named), looked up on access."""

    def __init__(self, full_name=None):
        self.full_name = full_name

    def __get__(self, obj, owner):
        return _descriptors().FindMessageTypeByName(self.full_name or "tensorflow." + owner.__name__)


# ---- the messages ------------------------------------------------------------------------------

class _Message:
    _fields_: tuple = ()
    DESCRIPTOR = _DescriptorAttr()

    def SetInParent(self):  # noqa: N802
        """Marks a default sub-message read from an unset field as set (text_format calls it)."""
        parent = self.__dict__.pop("_parent", None)
        if parent is not None:
            parent[0]._adopt(parent[1], self)

    def SerializeToString(self, deterministic=None) -> bytes:  # noqa: N802 (protobuf's name)
        return bytes(self._encode())

    @classmethod
    def FromString(cls, s):  # noqa: N802
        m = cls()
        m.ParseFromString(s)
        return m

    def ParseFromString(self, s):  # noqa: N802
        if not isinstance(s, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected bytes, {type(s).__name__} found")
        self.Clear()
        try:
            self._decode(s)
        except DecodeError:
            raise DecodeError(f"Error parsing message with type 'tensorflow.{type(self).__name__}'") from None
        return len(s)

    def MergeFromString(self, s):  # noqa: N802
        self._decode(s)
        return len(s)

    def CopyFrom(self, other):  # noqa: N802
        self.ParseFromString(other.SerializeToString())

    def ByteSize(self):  # noqa: N802
        return len(self.SerializeToString())

    def __eq__(self, other):
        return type(other) is type(self) and self.SerializeToString() == other.SerializeToString()

    __hash__ = None

    def __str__(self):
        return "".join(line + "\n" for line in self._text())

    __repr__ = __str__


class _Repeated(list):
    """A repeated scalar field: ``append``/``extend`` check and convert as protobuf's (float32
    rounding, no bools in an Int64List)."""
    __slots__ = ("_check", "_owner")

    def __init__(self, check, owner=None):
        super().__init__()
        self._check, self._owner = check, owner

    def append(self, v):
        super().append(self._check(v))
        self._set()

    def extend(self, vs):
        super().extend(self._check(v) for v in vs)
        self._set()

    def _set(self):
        # protobuf: adding a value to an unset oneof member's default list
        # (``feature.int64_list.value.append(3)``) sets that member
        if self._owner is not None:
            self._owner.SetInParent()


class _List(_Message):
    _kind = ""

    def __init__(self, value=()):
        self.Clear()
        self.value.extend(value)

    def Clear(self):  # noqa: N802
        self.value = _Repeated(self._check, self)

    def _text(self):
        return [f"value: {self._fmt(v)}" for v in self.value]


class BytesList(_List):
    """``tf.train.BytesList``: ``value`` a list of bytes (a str is a TypeError, as protobuf's)."""

    @staticmethod
    def _check(v):
        if isinstance(v, np.bytes_):
            v = bytes(v)
        if not isinstance(v, bytes):
            raise TypeError(f"expected bytes, {type(v).__name__} found")
        return v

    _fmt = staticmethod(_text_bytes)

    def _encode(self):
        return b"".join(_field(1, v) for v in self.value)

    def _decode(self, b):
        for num, wt, v in _fields(b):
            if num == 1 and wt == 2:
                list.append(self.value, bytes(v))


class FloatList(_List):
    """``tf.train.FloatList``: float32 values (packed on the wire)."""

    @staticmethod
    def _check(v):
        if isinstance(v, (bytes, str)) or not np.isscalar(v) and not isinstance(v, np.ndarray):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int, float")
        return float(np.float32(v))

    _fmt = staticmethod(_text_float)

    def _encode(self):
        if not self.value:
            return b""
        return _field(1, np.asarray(self.value, "<f4").tobytes())

    def _decode(self, b):
        for num, wt, v in _fields(b):
            if num == 1 and wt == 2:
                if len(v) % 4:
                    raise DecodeError("Wire format was corrupt")
                list.extend(self.value, np.frombuffer(v, "<f4").astype(float).tolist())
            elif num == 1 and wt == 5:
                list.append(self.value, struct.unpack("<f", v.to_bytes(4, "little"))[0])


class Int64List(_List):
    """``tf.train.Int64List``: int64 values (packed varints on the wire)."""

    @staticmethod
    def _check(v):
        if isinstance(v, (bool, np.bool_)):   # TF 2.21 (protobuf 7) refuses bools
            raise TypeError("Field tensorflow.Int64List.value: Expected an int, got a boolean.")
        if not isinstance(v, (int, np.integer)):
            if isinstance(v, (float, np.floating)):
                raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int")
        v = int(v)
        if not -2**63 <= v < 2**63:
            raise ValueError(f"Value out of range: {v}")
        return v

    _fmt = staticmethod(str)

    def _encode(self):
        if not self.value:
            return b""
        return _field(1, b"".join(_varint(v) for v in self.value))

    def _decode(self, b):
        for num, wt, v in _fields(b):
            if num == 1 and wt == 2:
                list.extend(self.value, (_int64(u) for u in _varints(v)))
            elif num == 1 and wt == 0:
                list.append(self.value, _int64(v))


_KINDS = (("bytes_list", BytesList, 1), ("float_list", FloatList, 2), ("int64_list", Int64List, 3))


class Feature(_Message):
    """``tf.train.Feature``: one of ``bytes_list``, ``float_list``, ``int64_list`` (the oneof
    ``kind``); reading an unset one gives an empty list, as protobuf's."""

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        self.Clear()
        given = [(name, v) for name, v in (("bytes_list", bytes_list), ("float_list", float_list),
                                           ("int64_list", int64_list)) if v is not None]
        for name, v in given[-1:]:   # (protobuf: the last one set wins the oneof)
            cls = dict((n, c) for n, c, _ in _KINDS)[name]
            if not isinstance(v, cls):
                raise TypeError(f"Message must be initialized with a dict or {cls.__name__}: got {type(v).__name__}")
            self._kind, self._value = name, v

    def Clear(self):  # noqa: N802
        self._kind, self._value = None, None

    def WhichOneof(self, group):  # noqa: N802
        if group != "kind":
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        return self._kind

    def HasField(self, name):  # noqa: N802
        return self._kind == name

    def __getattr__(self, name):
        for n, cls, _ in _KINDS:
            if name == n:
                if self._kind != n:   # reading an unset member gives a default, which is not set
                    m = cls()
                    m._parent = (self, n)   # (until SetInParent)
                    return m
                return self._value
        raise AttributeError(name)

    def _adopt(self, name, m):
        self._kind, self._value = name, m

    def _encode(self):
        if self._kind is None:
            return b""
        num = dict((n, k) for n, _, k in _KINDS)[self._kind]
        return _field(num, self._value._encode())

    def _decode(self, b):
        for num, wt, v in _fields(b):
            for n, cls, k in _KINDS:
                if num == k and wt == 2:
                    m = cls()
                    m._decode(v)
                    self._kind, self._value = n, m

    def _text(self):
        if self._kind is None:
            return []
        return [f"{self._kind} {{"] + ["  " + line for line in self._value._text()] + ["}"]


class _FeatureEntry(_Message):
    """``Features.FeatureEntry``: the map's entry message (text_format parses one, then copies it in)."""
    DESCRIPTOR = _DescriptorAttr("tensorflow.Features.FeatureEntry")

    def __init__(self):
        self.key, self._value = "", None

    @property
    def value(self):
        if self._value is None:
            self._value = Feature()
        return self._value

    def HasField(self, name):  # noqa: N802
        return name == "value" and self._value is not None


class _FeatureMap(dict):
    """``Features.feature``: a protobuf map; reading a missing key adds an empty Feature, as protobuf's."""

    def __missing__(self, key):
        if not isinstance(key, str):
            raise TypeError(f"bad argument type for built-in operation: feature key {key!r} is not a str")
        f = self[key] = Feature()
        return f

    @staticmethod
    def GetEntryClass():  # noqa: N802
        return _FeatureEntry


# -- protobuf's map<string, Message> field 1 (Features.feature, FeatureLists.feature_list) -----------

def _encode_map(m):
    """Each entry as field 1 holding (1: key, 2: value), keys in ``_map_order`` (TF's bytes)."""
    return b"".join(_field(1, _field(1, k.encode()) + _field(2, m[k]._encode())) for k in sorted(m, key=_map_order))


def _decode_map(b, m, value_class):
    for num, wt, v in _fields(b):
        if num == 1 and wt == 2:
            key, value = "", value_class()
            for n2, w2, v2 in _fields(v):
                if n2 == 1 and w2 == 2:
                    try:
                        key = bytes(v2).decode()
                    except UnicodeDecodeError:
                        raise DecodeError("Wire format was corrupt") from None
                elif n2 == 2 and w2 == 2:
                    value = value_class()
                    value._decode(v2)
            m[key] = value


def _map_text(name, m):
    out = []
    for k, v in m.items():
        out += [f"{name} {{", f"  key: {_text_bytes(k.encode())}", "  value {"]
        out += ["    " + line for line in v._text()] + ["  }", "}"]
    return out


class Features(_Message):
    """``tf.train.Features``: ``feature`` a dict of name -> Feature (written in ``_map_order``)."""

    def __init__(self, feature=None):
        self.feature = _FeatureMap()
        for k, v in (feature or {}).items():
            if not isinstance(k, str):
                raise TypeError(f"bad argument type for built-in operation: feature key {k!r} is not a str")
            if not isinstance(v, Feature):
                raise TypeError(f"Parameter to MergeFrom() must be instance of same class: expected Feature "
                                f"got {type(v).__name__}.")
            self.feature[k] = v

    def Clear(self):  # noqa: N802
        self.feature = _FeatureMap()

    def _encode(self):
        return _encode_map(self.feature)

    def _decode(self, b):
        _decode_map(b, self.feature, Feature)

    def _text(self):
        return _map_text("feature", self.feature)


class Example(_Message):
    """``tf.train.Example``: ``features`` (a Features)."""

    def __init__(self, features=None):
        if features is not None and not isinstance(features, Features):
            raise TypeError(f"Message must be initialized with a dict or Features: got {type(features).__name__}")
        self._features = features

    def Clear(self):  # noqa: N802
        self._features = None

    @property
    def features(self):
        if self._features is None:   # (protobuf: reading a sub-message creates it)
            self._features = Features()
        return self._features

    def HasField(self, name):  # noqa: N802
        return name == "features" and self._features is not None

    def _encode(self):
        if self._features is None:
            return b""
        return _field(1, self._features._encode())

    def _decode(self, b):
        for num, wt, v in _fields(b):
            if num == 1 and wt == 2:
                self._features = Features()
                self._features._decode(v)

    def _text(self):
        if self._features is None:
            return []
        return ["features {"] + ["  " + line for line in self._features._text()] + ["}"]


# ---- SequenceExample (tensorflow/core/example/example.proto, feature.proto) -----------------------

class _RepeatedFeatures(list):
    """``FeatureList.feature``: a repeated message field (protobuf's RepeatedCompositeContainer):
    ``add(**kw)`` makes and appends a Feature; ``append``/``extend``/``insert`` take Features only."""
    __slots__ = ()

    @staticmethod
    def _check(v):
        if not isinstance(v, Feature):
            raise TypeError(f"Parameter to initialize message field must be dict or instance of same class: "
                            f"expected Feature got {type(v).__name__}.")
        return v

    def add(self, **kw):
        f = Feature(**kw)
        super().append(f)
        return f

    def append(self, v):
        super().append(self._check(v))

    def extend(self, vs):
        super().extend(self._check(v) for v in vs)

    def insert(self, i, v):
        super().insert(i, self._check(v))


class FeatureList(_Message):
    """``tf.train.FeatureList``: ``feature``, a list of Features (one per time step of a
    SequenceExample's feature list)."""

    def __init__(self, feature=None):
        self.Clear()
        self.feature.extend(feature or ())

    def Clear(self):  # noqa: N802
        self.feature = _RepeatedFeatures()

    def _encode(self):
        return b"".join(_field(1, f._encode()) for f in self.feature)

    def _decode(self, b):
        for num, wt, v in _fields(b):
            if num == 1 and wt == 2:
                f = Feature()
                f._decode(v)
                list.append(self.feature, f)

    def _text(self):
        out = []
        for f in self.feature:
            out += ["feature {"] + ["  " + line for line in f._text()] + ["}"]
        return out


class _FeatureListEntry(_Message):
    """``FeatureLists.FeatureListEntry``: the map's entry message (for text_format)."""
    DESCRIPTOR = _DescriptorAttr("tensorflow.FeatureLists.FeatureListEntry")

    def __init__(self):
        self.key, self._value = "", None

    @property
    def value(self):
        if self._value is None:
            self._value = FeatureList()
        return self._value

    def HasField(self, name):  # noqa: N802
        return name == "value" and self._value is not None


class _FeatureListMap(dict):
    """``FeatureLists.feature_list``: a protobuf map; reading a missing key adds an empty FeatureList."""

    def __missing__(self, key):
        if not isinstance(key, str):
            raise TypeError(f"bad argument type for built-in operation: feature list key {key!r} is not a str")
        f = self[key] = FeatureList()
        return f

    @staticmethod
    def GetEntryClass():  # noqa: N802
        return _FeatureListEntry


class FeatureLists(_Message):
    """``tf.train.FeatureLists``: ``feature_list`` a dict of name -> FeatureList (written in
    ``_map_order``, as Features' map)."""

    def __init__(self, feature_list=None):
        self.Clear()
        for k, v in (feature_list or {}).items():
            if not isinstance(k, str):
                raise TypeError(f"bad argument type for built-in operation: feature list key {k!r} is not a str")
            if not isinstance(v, FeatureList):
                raise TypeError(f"Parameter to CopyFrom() must be instance of same class: expected FeatureList "
                                f"got {type(v).__name__}.")
            self.feature_list[k] = v

    def Clear(self):  # noqa: N802
        self.feature_list = _FeatureListMap()

    def _encode(self):
        return _encode_map(self.feature_list)

    def _decode(self, b):
        _decode_map(b, self.feature_list, FeatureList)

    def _text(self):
        return _map_text("feature_list", self.feature_list)


class SequenceExample(_Message):
    """``tf.train.SequenceExample``: ``context`` (a Features: per-sequence values) and
    ``feature_lists`` (a FeatureLists: per-step values), what sequence/NLP TFRecord files hold."""

    _PARTS = (("context", Features, 1), ("feature_lists", FeatureLists, 2))

    def __init__(self, context=None, feature_lists=None):
        self.Clear()
        for (name, cls, _), v in zip(self._PARTS, (context, feature_lists)):
            if v is not None and not isinstance(v, cls):
                raise TypeError(f"Parameter to initialize message field must be dict or instance of same class: "
                                f"expected {cls.__name__} got {type(v).__name__}.")
            self._parts[name] = v

    def Clear(self):  # noqa: N802
        self._parts = {"context": None, "feature_lists": None}

    @property
    def context(self):
        if self._parts["context"] is None:   # (protobuf: reading a sub-message creates it)
            self._parts["context"] = Features()
        return self._parts["context"]

    @property
    def feature_lists(self):
        if self._parts["feature_lists"] is None:
            self._parts["feature_lists"] = FeatureLists()
        return self._parts["feature_lists"]

    def HasField(self, name):  # noqa: N802
        if name not in self._parts:
            raise ValueError(f'Protocol message SequenceExample has no singular "{name}" field.')
        return self._parts[name] is not None

    def _encode(self):
        return b"".join(_field(num, self._parts[name]._encode()) for name, _, num in self._PARTS
                        if self._parts[name] is not None)

    def _decode(self, b):
        for num, wt, v in _fields(b):
            for name, cls, k in self._PARTS:
                if num == k and wt == 2:
                    m = self._parts[name] if self._parts[name] is not None else cls()
                    m._decode(v)   # (protobuf merges a repeated sub-message field)
                    self._parts[name] = m

    def _text(self):
        out = []
        for name, _, _ in self._PARTS:
            if self._parts[name] is not None:
                out += [name + " {"] + ["  " + line for line in self._parts[name]._text()] + ["}"]
        return out


__all__ = ["Example", "Features", "Feature", "BytesList", "FloatList", "Int64List", "DecodeError",
           "SequenceExample", "FeatureList", "FeatureLists"]
