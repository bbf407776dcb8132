"""tf.strings: string tensors' ops (TF 2.21's values, shapes and errors).

A string tensor is a NumPy object array of ``bytes`` (core/dtypes.py). Every op here binds one
of the three string primitives (core/primitives/strings.py) with a per-element function
defined in this module, so it runs eagerly, traces into ``tapeflow.function`` graphs and is
never differentiated, as TF's. Ops whose result is ragged (split, bytes_split, unicode_split,
unicode_decode) return a ``tf.RaggedTensor`` for 1-D input and a dense tensor for a scalar,
as TF does. ``to_hash_bucket_fast`` uses FarmHash's Fingerprint64, TF's hash, so it gives
TF's buckets.
"""
from __future__ import annotations

import re as _re

import numpy as np

from .core.aval import fmt_shape
from .core import dtypes as _dt
from .core.primitive import bind as _bind, aval_of as _aval_of
from .core.primitives.strings import string_map_p, string_split_p, string_join_rows_p
from .core.serializable import serializable
from .core.tensor import Tensor, convert_to_tensor
from .errors import InvalidArgumentError, InvalidArgumentTypeError, OutOfRangeError

_STRING = np.dtype(object)

__all__ = ["length", "substr", "split", "join", "reduce_join", "to_number", "string_to_number", "as_string",
           "format", "regex_full_match", "regex_replace", "lower", "upper", "strip", "bytes_split",
           "unicode_decode", "unicode_encode", "unicode_split", "unicode_transcode", "ngrams",
           "to_hash_bucket_fast", "to_hash_bucket_strong", "unsorted_segment_join",
           "unicode_decode_with_offsets", "unicode_split_with_offsets", "to_hash_bucket"]


def _is_ragged(x):
    from .ragged.ragged_tensor import RaggedTensor
    return isinstance(x, RaggedTensor)


def _strings(op, x):
    """``x`` as a string tensor (a Tensor, a tracer, or a value converted), else TF's error."""
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    d = _aval_of(x).dtype
    if d != _STRING:
        raise InvalidArgumentTypeError(f"{op}: expects a string tensor, got {_dt.from_np(d).name} "
                                       f"{tuple(_aval_of(x).shape)}; convert it first: tf.strings.as_string(x)")
    return x


def _map(op, fn, xs, out=_STRING, args=(), ragged_ok=True):
    """bind string_map; a RaggedTensor first operand maps over its flat values (TF's dispatch)."""
    if ragged_ok and xs and _is_ragged(xs[0]):
        rt = xs[0]
        return rt.with_flat_values(_map(op, fn, [rt.flat_values] + list(xs[1:]), out, args))
    return _bind(string_map_p, *xs, fn=fn, args=tuple(args), out=np.dtype(out))


# -- per-element functions (module level: params of the primitives, named in the IR) ---------

@serializable("strings.length_bytes")
def _length_bytes(s):
    return len(s)


@serializable("strings.length_chars")
def _length_chars(s):
    return len(s.decode("utf-8", "replace"))


def length(input, unit="BYTE", name=None):  # noqa: A002
    """tf.strings.length: bytes (unit='BYTE') or UTF-8 characters (unit='UTF8_CHAR'), int32."""
    if _is_ragged(input):
        return input.with_flat_values(length(input.flat_values, unit))
    x = _strings("length", input)
    return _map("length", _length_chars if unit == "UTF8_CHAR" else _length_bytes, [x], np.int32)


@serializable("strings.substr")
def _substr(s, pos, n, unit):
    if unit == "UTF8_CHAR":
        t = s.decode("utf-8")
        m = len(t)
    else:
        t, m = s, len(s)
    pos, n = int(pos), int(n)
    if pos > m or pos < -m:  # TF: pos == len is allowed (an empty result)
        raise InvalidArgumentError(f"substr: pos {pos} out of range for string {s!r}")
    if pos < 0:
        pos += m
    r = t[pos:] if n < 0 else t[pos:pos + n]   # (TF: a negative len takes the rest)
    return r.encode("utf-8") if unit == "UTF8_CHAR" else r


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002
    """tf.strings.substr: ``len`` bytes (or characters) from ``pos`` (negative: from the end); pos
    out of range is TF's InvalidArgumentError."""
    if _is_ragged(input):
        return input.with_flat_values(substr(input.flat_values, pos, len, unit))
    x = _strings("substr", input)
    return _map("substr", _substr, [x, convert_to_tensor(pos), convert_to_tensor(len)], args=(unit,))


@serializable("strings.lower")
def _lower(s, encoding):
    return s.decode("utf-8").lower().encode("utf-8") if encoding else s.lower()


@serializable("strings.upper")
def _upper(s, encoding):
    return s.decode("utf-8").upper().encode("utf-8") if encoding else s.upper()


def lower(input, encoding="", name=None):  # noqa: A002
    """tf.strings.lower: ASCII letters only unless encoding='utf-8' (TF's rule)."""
    return _map("lower", _lower, [_strings_or_ragged("lower", input)], args=(bool(encoding),))


def upper(input, encoding="", name=None):  # noqa: A002
    return _map("upper", _upper, [_strings_or_ragged("upper", input)], args=(bool(encoding),))


@serializable("strings.strip")
def _strip(s):
    return s.strip(b" \t\n\v\f\r")


def strip(input, name=None):  # noqa: A002
    """tf.strings.strip: leading and trailing ASCII whitespace."""
    return _map("strip", _strip, [_strings_or_ragged("strip", input)])


def _strings_or_ragged(op, x):
    if _is_ragged(x):
        _strings(op, x.flat_values)
        return x
    return _strings(op, x)


@serializable("strings.full_match")
def _full_match(s, pattern):
    return _compiled(pattern).fullmatch(s) is not None


def _compiled(pattern, cache={}):  # noqa: B006 - a process-wide cache of compiled patterns
    r = cache.get(pattern)
    if r is None:
        try:
            r = cache[pattern] = _re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        except _re.error as e:
            raise InvalidArgumentError(f"regex: invalid pattern {pattern!r}: {e}") from None
    return r


def regex_full_match(input, pattern, name=None):  # noqa: A002
    """tf.strings.regex_full_match (Python's re for RE2: the same on RE2's syntax, which has no
    backreferences or lookarounds)."""
    _compiled(pattern)
    return _map("regex_full_match", _full_match, [_strings_or_ragged("regex_full_match", input)], np.bool_,
                args=(pattern,))


@serializable("strings.replace")
def _replace(s, pattern, rewrite, count):
    """RE2's (Global)Replace: as re.sub, except that an empty match right where the previous match
    ended is skipped (RE2 replaces "aaa" ~ /a*/ once; Python 3.7+ twice)."""
    out, pos, last, n = [], 0, -1, 0
    for m in _compiled(pattern).finditer(s):
        if m.start() == m.end() == last:
            continue
        out.append(s[pos:m.start()])
        out.append(m.expand(rewrite))
        pos = last = m.end()
        n += 1
        if count and n >= count:
            break
    out.append(s[pos:])
    return b"".join(out)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """tf.strings.regex_replace: RE2's rewrite ``\\1`` is Python's too."""
    _compiled(pattern)
    rw = rewrite.encode() if isinstance(rewrite, str) else rewrite
    return _map("regex_replace", _replace, [_strings_or_ragged("regex_replace", input)],
                args=(pattern, rw, 0 if replace_global else 1))


@serializable("strings.join")
def _join(*parts):
    sep = parts[-1]
    return sep.join(parts[:-1])


def join(inputs, separator="", name=None):
    """tf.strings.join: elementwise concatenation with ``separator``; shapes must match or be
    scalars (TF does not broadcast other shapes: InvalidArgumentError)."""
    xs = [_strings_or_ragged("join", x) for x in inputs]
    if not xs:
        return convert_to_tensor(b"")   # (TF 2.21: joining nothing is b'')
    shapes = [tuple(_aval_of(x).shape) for x in xs if not _is_ragged(x) and tuple(_aval_of(x).shape) != ()]
    for s in shapes[1:]:
        if s != shapes[0]:
            raise InvalidArgumentError(f"join: Input shapes do not match: {list(shapes[0])} vs. {list(s)}")
    rag = [x for x in xs if _is_ragged(x)]
    sep = separator.encode() if isinstance(separator, str) else separator
    if rag:
        base = rag[0]
        flat = [x.flat_values if _is_ragged(x) else x for x in xs]
        return base.with_flat_values(_bind(string_map_p, *flat, fn=_join, args=(sep,), out=_STRING))
    return _bind(string_map_p, *xs, fn=_join, args=(sep,), out=_STRING)


@serializable("strings.join_row")
def _join_row(row, sep):
    return sep.join(row.tolist())


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """tf.strings.reduce_join: the strings along ``axis`` (None: all) joined with ``separator``:
    the axis moved last, each row folded by string_join_rows."""
    from .ops import array_ops as A
    if _is_ragged(inputs):
        if axis in (-1, inputs.shape.rank - 1) and inputs.ragged_rank == 1:
            sep = separator.encode() if isinstance(separator, str) else separator
            r = _bind(string_join_rows_p, inputs.values, inputs.row_splits, fn=_join_row_sep(sep), out=_STRING)
            return A.expand_dims(r, -1) if keepdims else r
        raise NotImplementedError("reduce_join of a RaggedTensor: only along its last (ragged) axis")
    x = _strings("reduce_join", inputs)
    shape = tuple(_aval_of(x).shape)
    nd = len(shape)
    sep = separator.encode() if isinstance(separator, str) else separator
    # TF reduces the listed axes one after another (axis=[0, 1] of [[a, b], [c, d]] is "acbd");
    # axis None is every axis, row-major ("abcd")
    given = [] if axis is None else [int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    for a in given:   # (taken modulo the rank, axis=2 of a matrix joined its rows: TF raises)
        if not -nd <= a < nd:
            raise OutOfRangeError(f"reduce_join: invalid reduction dimension {a} for a tensor of rank {nd} "
                                          f"(valid: {-nd} to {nd - 1})")
    axes = list(reversed(range(nd))) if axis is None else [a % nd for a in given]
    left = list(range(nd))   # the original axes still in x, in order
    for a in axes:
        x = _join_axis(x, left.index(a), sep)
        left.remove(a)
    if keepdims:
        if None in shape:   # (a reshape cannot name a None dim: each joined axis put back as a 1)
            for d in sorted(axes):
                x = A.expand_dims(x, d)
        else:
            x = A.reshape(x, [1 if d in axes else shape[d] for d in range(nd)])
    return x


def _join_axis(x, ax, sep):
    """``x``'s strings along its axis ``ax`` joined: that axis moved last, each row folded."""
    from .ops import array_ops as A
    shape = tuple(_aval_of(x).shape)
    perm = [d for d in range(len(shape)) if d != ax] + [ax]
    xt = A.transpose(x, perm) if perm != list(range(len(shape))) else x
    outer = [shape[d] for d in perm[:-1]]
    if None in shape:
        # an input_signature's None: the rows' splits from the run-time shape; the joined rows take the outer
        # shape back by a reshape with -1 for the one None (two, or a known 0 beside it, leave the reshape
        # ambiguous)
        if None in outer and (outer.count(None) > 1 or 0 in outer):
            from .ops.array_ops import _RUNTIME_SIZE
            raise TypeError(f"reduce_join: joining axis {ax} of an input of shape {fmt_shape(shape)} leaves a "
                            f"shape with {'two dimensions' if outer.count(None) > 1 else 'a 0 beside a dimension'} "
                            f"of {_RUNTIME_SIZE}")
        from .ops import math_ops as _M
        st = A.shape(x, out_type=np.int64)
        n = _M.reduce_prod(A.gather(st, perm[:-1])) if outer else np.int64(1)
        splits = A.range(n + 1, dtype=np.int64) * st[ax]
        r = _bind(string_join_rows_p, A.reshape(xt, [-1]), splits, fn=_join_row_sep(sep), out=_STRING)
        return A.reshape(r, [-1 if d is None else d for d in outer])
    n = int(np.prod(outer, dtype=np.int64))
    splits = convert_to_tensor(np.arange(n + 1, dtype=np.int64) * shape[ax])
    r = _bind(string_join_rows_p, A.reshape(xt, [-1]), splits, fn=_join_row_sep(sep), out=_STRING)
    return A.reshape(r, outer)


@serializable("strings.reduce_join")
class _join_row_sep:
    """A row join with one separator: hashable and equal by separator (a primitive param)."""

    __slots__ = ("sep",)
    __name__ = "reduce_join"

    def __init__(self, sep):
        self.sep = sep

    def __call__(self, row):
        return self.sep.join(row.tolist())

    def __eq__(self, other):
        return isinstance(other, _join_row_sep) and other.sep == self.sep

    def __hash__(self):
        return hash(("reduce_join", self.sep))

    def __repr__(self):
        return f"reduce_join(separator={self.sep!r})"

    def _serial_state(self):
        return self.sep

    @classmethod
    def _from_serial_state(cls, sep):
        if not isinstance(sep, bytes):
            raise TypeError(f"reduce_join separator {sep!r}")
        return cls(sep)


_INT_RE = _re.compile(rb"\s*[+-]?\d+\s*")


@serializable("strings.to_number")
def _to_number(s, out):
    d = np.dtype(out)
    try:
        if d.kind == "f":
            t = s.strip()
            if not t or b"_" in t:   # (C's strtod, which TF uses, reads no 1_0 as Python does)
                raise ValueError
            try:
                v = float(t)
            except ValueError:   # strtod reads C99 hex floats too: 0x1p3 is 8
                if not t.lstrip(b"+-").lower().startswith(b"0x"):
                    raise
                v = float.fromhex(t.decode("ascii"))
        else:
            if not _INT_RE.fullmatch(s):
                raise ValueError
            v = int(s)
            info = np.iinfo(d)
            if not info.min <= v <= info.max:
                raise ValueError
        return v
    except ValueError:
        raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: "
                                   f"{s.decode('utf-8', 'replace')}") from None


def to_number(input, out_type=_dt.float32, name=None):  # noqa: A002
    """tf.strings.to_number: float32 by default; a string that is not a number of ``out_type``
    is TF's InvalidArgumentError (integers: no fraction, no hex, within range)."""
    d = _dt.np_dtype(out_type)
    if d.kind not in "fi":
        raise TypeError(f"to_number: out_type must be float32, float64, int32 or int64, got {d}")
    return _map("to_number", _to_number, [_strings_or_ragged("to_number", input)], d, args=(d.str,))


string_to_number = to_number


@serializable("strings.as_string")
def _as_string(v, precision, scientific, shortest, width, fill):
    if isinstance(v, (bool, np.bool_)):
        s = "true" if v else "false"
    elif isinstance(v, (bytes,)):
        return v
    elif isinstance(v, (float, np.floating)):
        f = float(v)
        if np.isnan(f):
            s = "nan" if not np.signbit(f) else "-nan"
        elif np.isinf(f):
            s = "inf" if f > 0 else "-inf"
        else:
            p = 6 if precision < 0 else precision
            code = "e" if scientific else ("g" if shortest else "f")
            s = f"{f:.{p}{code}}"
    else:
        s = str(int(v))
    if width > 0 and len(s) < width:
        s = (s.rjust(width, "0") if fill == "0" and s[:1] != "-" else
             ("-" + s[1:].rjust(width - 1, "0") if fill == "0" else s.rjust(width, fill or " ")))
    return s.encode()


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """tf.strings.as_string: TF's printf formats (floats %.6f by default; bools true/false)."""
    x = input if _is_ragged(input) or isinstance(input, Tensor) else convert_to_tensor(input)
    return _map("as_string", _as_string, [x], args=(int(precision), bool(scientific), bool(shortest),
                                                      int(width), fill))


def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    """tf.strings.format: each ``{}`` replaced by a tensor's text as tf.print writes it (TF's
    SummarizeValue: ``summarize`` entries each side, strings quoted)."""
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    parts = template.split(placeholder)
    if len(parts) - 1 != len(inputs):
        raise InvalidArgumentError(f"format: {len(parts) - 1} placeholders in the template, {len(inputs)} inputs")
    xs = [x if isinstance(x, Tensor) or _is_ragged(x) else convert_to_tensor(x) for x in inputs]
    if any(_is_ragged(x) for x in xs):
        # (TF's ragged dispatch: a RaggedTensor is written by ragged_tensor_to_string; it is boxed as its
        # flat values and row_splits, so the text is made when the graph runs, traced too)
        kinds = tuple(len(x.nested_row_splits) if _is_ragged(x) else 0 for x in xs)
        boxes = [b for x in xs for b in ([x.flat_values, *x.nested_row_splits] if _is_ragged(x) else [x])]
        return _bind(string_map_p, *[_boxed(b) for b in boxes], fn=_format_ragged_boxes,
                     args=(tuple(parts), int(summarize), kinds), out=_STRING)
    return _bind(string_map_p, *[_boxed(x) for x in xs], fn=_format_boxes, args=(tuple(parts), int(summarize)),
                 out=_STRING)


def _boxed(x):
    """A tensor as a 0-d object element holding its whole value (format prints whole tensors, and
    string_map is elementwise): an intermediate of format's graph only, never returned."""
    return _bind(string_join_rows_p, _flat(x), _one_row(x), fn=_box_row(tuple(_aval_of(x).shape)), out=_STRING)[0]


def _flat(x):
    from .ops import array_ops as A
    return A.reshape(x, [-1])


def _one_row(x):
    n = int(np.prod(_aval_of(x).shape, dtype=np.int64)) if None not in _aval_of(x).shape else None
    if n is None:
        from .ops import array_ops as A
        from .ops import math_ops as M
        return A.stack([M.cast(0, np.int64), M.cast(A.size(x), np.int64)])
    return convert_to_tensor(np.array([0, n], np.int64))


@serializable("strings.format_box")
class _box_row:
    """A row -> one object holding the row reshaped to ``shape`` (hashable by shape)."""

    __slots__ = ("shape",)
    __name__ = "format"

    def __init__(self, shape):
        self.shape = shape

    def __call__(self, row):
        # (a traced RaggedTensor's flat values have an unknown row count: -1 takes it from the row)
        return _Box(np.asarray(row).reshape(tuple(-1 if d is None else d for d in self.shape)))

    def __eq__(self, other):
        return isinstance(other, _box_row) and other.shape == self.shape

    def __hash__(self):
        return hash(("box", self.shape))

    def __repr__(self):
        return f"format_box{self.shape!r}"

    def _serial_state(self):
        return self.shape

    @classmethod
    def _from_serial_state(cls, shape):
        return cls(tuple(shape))


class _Box:
    """A whole array as one element of an object array (format's operands)."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


@serializable("strings.format_boxes")
def _format_boxes(*boxes_and_parts):
    from .core.primitives.print_op import format_tensor
    *boxes, parts, summarize = boxes_and_parts
    out = parts[0]
    for b, p in zip(boxes, parts[1:]):
        out += format_tensor(b.a, summarize, quote_scalar=True) + p
    return out.encode()


@serializable("strings.format_ragged_boxes")
def _format_ragged_boxes(*boxes_and_args):
    """format's text where an input is ragged: ``kinds`` holds, per input, 0 (a tensor: one box) or
    k (a RaggedTensor: its flat values and k row_splits, 1 + k boxes)."""
    from .core.primitives.print_op import format_ragged, format_tensor
    *boxes, parts, summarize, kinds = boxes_and_args
    it = iter(boxes)
    out = parts[0]
    for k, p in zip(kinds, parts[1:]):
        first = next(it).a
        out += (format_ragged(first, [next(it).a for _ in range(k)], summarize) if k else
                format_tensor(first, summarize, quote_scalar=True)) + p
    return out.encode()


@serializable("strings.bytes_of")
def _bytes_of(s):
    return [bytes([b]) for b in s]


def _words(sep, maxsplit):
    def split_fn(s):
        if sep is None:
            if maxsplit is None or maxsplit < 0:
                return s.split()
            parts = s.split(None, maxsplit)
            # TF's whitespace split with maxsplit: after maxsplit words it always takes the rest,
            # even an empty one ("d" with maxsplit=1 is [b"d", b""])
            return parts + [b""] if len(parts) == maxsplit else parts
        if s == b"":
            return [b""]   # TF: splitting "" on a separator gives one empty string
        return s.split(sep, -1 if maxsplit is None or maxsplit < 0 else maxsplit)
    split_fn.__name__ = "split"
    return _Splitter("split", (sep, maxsplit), split_fn)


@serializable("strings.splitter")
class _Splitter:
    """A per-element split function, hashable and equal by (kind, its arguments): a primitive param.
    Saved as (kind, arguments) and rebuilt by the factory of its kind (``_SPLITTERS``)."""

    __slots__ = ("kind", "key", "fn", "__name__")

    def __init__(self, kind, key, fn):
        self.kind, self.key, self.fn, self.__name__ = kind, key, fn, kind

    def __call__(self, s):
        return self.fn(s)

    def __eq__(self, other):
        return isinstance(other, _Splitter) and (other.kind, other.key) == (self.kind, self.key)

    def __hash__(self):
        return hash((self.kind, self.key))

    def __repr__(self):
        return f"{self.kind}{self.key!r}"

    def _serial_state(self):
        return (self.kind, self.key)

    @classmethod
    def _from_serial_state(cls, state):
        kind, key = state
        make = _SPLITTERS.get(kind)
        if make is None:
            raise ValueError(f"unknown split kind {kind!r}")
        return make(*key)


def _split_by(op, input, splitter, out=_STRING):  # noqa: A002
    """A split op: a scalar gives a dense vector, a vector a RaggedTensor, and rank k > 1 a ragged
    tensor of rank k + 1 (TF's shapes)."""
    from .ragged.ragged_tensor import RaggedTensor
    if _is_ragged(input):
        inner = _split_by(op, input.flat_values, splitter, out)
        return input.with_flat_values(inner)
    x = _strings(op, input)
    shape = tuple(_aval_of(x).shape)
    if len(shape) == 0:
        from .ops import array_ops as A
        vals, _ = _bind(string_split_p, A.reshape(x, [1]), fn=splitter, out=np.dtype(out))
        return vals
    if len(shape) == 1:
        vals, splits = _bind(string_split_p, x, fn=splitter, out=np.dtype(out))
        return RaggedTensor._from_parts(vals, splits)
    from .ops import array_ops as A
    from .ops import math_ops as _M
    inner = _split_by(op, A.reshape(x, [-1]), splitter, out)
    for i in reversed(range(1, len(shape))):
        # (nrows given: a row length of 0 leaves the row count to it, (2, 0) strings are 2 empty rows; an
        # input_signature's None: the count of the function's run)
        rows = _M.reduce_prod(A.shape(x, out_type=np.int64)[:i]) if None in shape[:i] else \
            int(np.prod(shape[:i], dtype=np.int64))
        if shape[i] is None:
            # a None inner dim: rows of the run-time length (0, k, 2k, ... splits), not static-uniform
            k = A.shape(x, out_type=np.int64)[i]
            inner = RaggedTensor._from_parts(inner, A.range(rows + 1, dtype=np.int64) * k)
            continue
        inner = RaggedTensor.from_uniform_row_length(inner, shape[i], nrows=rows)
    return inner


def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """tf.strings.split: on whitespace runs (sep None) or on ``sep`` exactly."""
    s = None if sep is None else (sep.encode() if isinstance(sep, str) else sep)
    if s == b"":
        raise InvalidArgumentError("split: sep must not be empty; use tf.strings.bytes_split")
    return _split_by("split", input, _words(s, maxsplit))


def bytes_split(input, name=None):  # noqa: A002
    return _split_by("bytes_split", input, _Splitter("bytes_split", (), _bytes_of))


def _check_encoding(op, encoding):
    e = encoding.upper().replace("_", "-")
    if e not in ("UTF-8", "UTF-16-BE", "UTF-32-BE"):
        raise InvalidArgumentError(f"{op}: encoding must be UTF-8, UTF-16-BE or UTF-32-BE, got {encoding!r}")
    return e.lower()


def _decoder(op, encoding, errors, replacement_char, chars):
    enc = _check_encoding(op, encoding)

    def dec(s):
        try:
            t = s.decode(enc)
        except UnicodeDecodeError:
            if errors == "strict":
                raise InvalidArgumentError(f"{op}: invalid {encoding} encoding in {s!r}") from None
            t = s.decode(enc, "replace" if errors == "replace" else "ignore")
            if errors == "replace" and replacement_char != 0xFFFD:
                t = t.replace("\ufffd", chr(replacement_char))
        return [c.encode(enc) for c in t] if chars else [ord(c) for c in t]
    return _Splitter(op, (enc, errors, replacement_char), dec)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    return _split_by("unicode_split", input, _decoder("unicode_split", input_encoding, errors,
                                                       replacement_char, True))


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """tf.strings.unicode_decode: code points, int32."""
    return _split_by("unicode_decode", input, _decoder("unicode_decode", input_encoding, errors,
                                                        replacement_char, False), np.int32)


_UNICODE_ERRORS = ("strict", "replace", "ignore")


def _decode_points(op, s, enc, errors, repl, ctrl):
    """(code point, start byte offset) of each character of ``s`` as TF's UnicodeDecodeWithOffsets
    gives them: an invalid sequence (Python's maximal invalid subpart, ICU's too: TF 2.21's counts
    and offsets on truncated, overlong and surrogate UTF-8 agree) is one ``repl`` at its first
    byte under errors='replace', nothing under 'ignore', TF's InvalidArgumentError under 'strict';
    ``ctrl`` replaces the C0 controls (U+0000-U+001F) by ``repl`` too."""
    out, pos, n = [], 0, len(s)
    while pos < n:
        try:
            text, bad = s[pos:].decode(enc), None
        except UnicodeDecodeError as e:
            text, bad = s[pos:pos + e.start].decode(enc), (pos + e.start, pos + e.end)
        off = pos
        for c in text:
            cp = ord(c)
            out.append((repl if ctrl and cp < 0x20 else cp, off))
            off += len(c.encode(enc))
        if bad is None:
            break
        if errors == "strict":
            raise InvalidArgumentError(f"Invalid formatting on input string ({op}: invalid {enc.upper()} at byte "
                                       f"{bad[0]} of {s!r}; errors='replace' or 'ignore' decodes it)")
        if errors == "replace":
            out.append((repl, bad[0]))
        pos = bad[1]
    return out


def _offsets_splitter(op, encoding, errors, replacement_char, replace_control_characters, what):
    """The _Splitter of one output of unicode_decode/split_with_offsets: ``what`` 'codes' (int32
    code points), 'chars' (each character encoded) or 'offsets' (int64 start bytes)."""
    enc = _check_encoding(op, encoding)
    if errors not in _UNICODE_ERRORS:
        raise InvalidArgumentError(f"Value for attr 'errors' of \"{errors}\" is not in the list of allowed values: "
                                   f"\"strict\", \"replace\", \"ignore\" ({op})")
    repl, ctrl = int(replacement_char), bool(replace_control_characters)
    if not 0 <= repl <= 0x10FFFF:
        raise InvalidArgumentError(f"replacement_char out of unicode codepoint range ({op}: {repl})")

    def fn(s):
        pts = _decode_points(op, s, enc, errors, repl, ctrl)
        if what == "offsets":
            return [o for _, o in pts]
        if what == "chars":
            return [chr(c).encode(enc) for c, _ in pts]
        return [c for c, _ in pts]
    return _Splitter(f"unicode_offsets_{what}", (enc, errors, repl, ctrl, op), fn)


def _with_offsets(op, input, input_encoding, errors, replacement_char, replace_control_characters, what,  # noqa: A002
                  out):
    """(the decoded values, their start byte offsets): two splits of the same strings with the
    same row partition (each the per-element function of one string_split equation)."""
    vals = _split_by(op, input, _offsets_splitter(op, input_encoding, errors, replacement_char,
                                                  replace_control_characters, what), out)
    offs = _split_by(op, input, _offsets_splitter(op, input_encoding, errors, replacement_char,
                                                  replace_control_characters, "offsets"), np.int64)
    return vals, offs


def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                                replace_control_characters=False, name=None):
    """tf.strings.unicode_decode_with_offsets: (int32 code points, int64 start byte offsets), each
    ragged as unicode_decode's result (a scalar gives dense vectors)."""
    return _with_offsets("unicode_decode_with_offsets", input, input_encoding, errors, replacement_char,
                         replace_control_characters, "codes", np.int32)


def unicode_split_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                               name=None):
    """tf.strings.unicode_split_with_offsets: (each character as a string in ``input_encoding``, a
    replaced sequence as the encoded replacement character; int64 start byte offsets)."""
    return _with_offsets("unicode_split_with_offsets", input, input_encoding, errors, replacement_char, False,
                         "chars", _STRING)


@serializable("strings.unicode_encode")
class _encoder:
    __slots__ = ("enc",)
    __name__ = "unicode_encode"

    def __init__(self, enc):
        self.enc = enc

    def __call__(self, row):
        try:
            return "".join(chr(int(c)) for c in row).encode(self.enc)
        except (ValueError, OverflowError):
            raise InvalidArgumentError(f"unicode_encode: invalid code point in {list(row)}") from None

    def __eq__(self, other):
        return isinstance(other, _encoder) and other.enc == self.enc

    def __hash__(self):
        return hash(("unicode_encode", self.enc))

    def __repr__(self):
        return f"unicode_encode({self.enc!r})"

    def _serial_state(self):
        return self.enc

    @classmethod
    def _from_serial_state(cls, enc):
        return cls(_check_encoding("unicode_encode", enc))


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    """tf.strings.unicode_encode: int32 code points (the last axis, dense or ragged) to strings."""
    enc = _check_encoding("unicode_encode", output_encoding)
    from .ops import array_ops as A
    if _is_ragged(input):
        if input.ragged_rank != 1:
            return input.with_values(unicode_encode(input.values, output_encoding))
        return _bind(string_join_rows_p, input.values, input.row_splits, fn=_encoder(enc), out=_STRING)
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    shape = tuple(_aval_of(x).shape)
    if not shape:
        raise ValueError("unicode_encode: input must have rank >= 1")
    k = shape[-1]
    outer = shape[:-1]
    n = int(np.prod(outer, dtype=np.int64))
    splits = convert_to_tensor(np.arange(n + 1, dtype=np.int64) * k)
    r = _bind(string_join_rows_p, A.reshape(x, [-1]), splits, fn=_encoder(enc), out=_STRING)
    return A.reshape(r, list(outer))


# a saved _Splitter's kind -> the factory that rebuilds it from its key (the kinds made here)
_SPLITTERS = {
    "split": lambda sep, maxsplit: _words(sep, maxsplit),
    "bytes_split": lambda: _Splitter("bytes_split", (), _bytes_of),
    "unicode_split": lambda enc, errors, repl: _decoder("unicode_split", enc, errors, repl, True),
    "unicode_decode": lambda enc, errors, repl: _decoder("unicode_decode", enc, errors, repl, False),
}
for _what in ("codes", "chars", "offsets"):
    _SPLITTERS[f"unicode_offsets_{_what}"] = (
        lambda enc, errors, repl, ctrl, op, _w=_what: _offsets_splitter(op, enc, errors, repl, ctrl, _w))


@serializable("strings.transcode")
def _transcode(s, src, dst):
    return s.decode(src, "replace").encode(dst)


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    src = _check_encoding("unicode_transcode", input_encoding)
    dst = _check_encoding("unicode_transcode", output_encoding)
    return _map("unicode_transcode", _transcode, [_strings_or_ragged("unicode_transcode", input)],
                args=(src, dst))


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """tf.strings.ngrams over the last axis (no padding): widths joined with ``separator``."""
    from .ops import array_ops as A
    widths = [ngram_width] if isinstance(ngram_width, int) else list(ngram_width)
    if pad_values is not None or preserve_short_sequences:
        raise NotImplementedError("ngrams: pad_values / preserve_short_sequences are not implemented")
    if _is_ragged(data):
        rows = [ngrams(convert_to_tensor(np.asarray(r, object) if r else np.zeros(0, object)), widths, separator)
                for r in data.to_list()]
        from .ragged.ragged_tensor import RaggedTensor
        return RaggedTensor.from_row_lengths(A.concat(rows, 0) if rows else convert_to_tensor(np.zeros(0, object)),
                                             [int(_aval_of(r).shape[0]) for r in rows])
    x = _strings("ngrams", data)
    n = _aval_of(x).shape[-1]
    outs = []
    for w in widths:
        m = max(n - w + 1, 0)
        if m == 0:
            outs.append(convert_to_tensor(np.zeros(0, object)))
            continue
        parts = [x[..., i:i + m] for i in range(w)]
        outs.append(join(parts, separator))
    return outs[0] if len(outs) == 1 else A.concat(outs, -1)


@serializable("strings.fingerprint_bucket")
def _fingerprint_bucket(s, num_buckets):
    from .util.farmhash import fingerprint64
    return fingerprint64(s) % num_buckets


def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """tf.strings.to_hash_bucket_fast: FarmHash Fingerprint64(s) % num_buckets, int64 (TF's buckets)."""
    if num_buckets < 1:
        raise InvalidArgumentError(f"to_hash_bucket_fast: num_buckets must be >= 1, got {num_buckets}")
    return _map("to_hash_bucket_fast", _fingerprint_bucket, [_strings_or_ragged("to_hash_bucket_fast", input)],
                np.int64, args=(int(num_buckets),))


@serializable("strings.hash64_bucket")
def _hash64_bucket(s, num_buckets):
    from .util.hash64 import hash64
    return hash64(s) % num_buckets


def to_hash_bucket(input, num_buckets, name=None):  # noqa: A002
    """tf.strings.to_hash_bucket: TF's legacy Hash64 (util/hash64.py) % num_buckets, int64 (TF's
    buckets; TF recommends to_hash_bucket_fast, whose FarmHash is faster, for new code)."""
    nb = int(num_buckets.numpy() if isinstance(num_buckets, Tensor) else num_buckets)
    if nb < 1:
        raise InvalidArgumentError(f"Value for attr 'num_buckets' of {nb} must be at least minimum 1 "
                                   "(tf.strings.to_hash_bucket)")
    return _map("to_hash_bucket", _hash64_bucket, [_strings_or_ragged("to_hash_bucket", input)], np.int64,
                args=(nb,))


@serializable("strings.siphash_bucket")
def _siphash_bucket(s, num_buckets, k0, k1):
    from .util.siphash import siphash24
    return siphash24(k0, k1, s) % num_buckets


def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """tf.strings.to_hash_bucket_strong: SipHash-2-4 of each string under the 128-bit ``key`` (two
    uint64), modulo num_buckets, int64 (TF's buckets)."""
    if num_buckets < 1:
        raise InvalidArgumentError(f"to_hash_bucket_strong: num_buckets must be >= 1, got {num_buckets}")
    k = list(key.numpy().tolist() if hasattr(key, "numpy") else key)
    if len(k) != 2:   # TF 2.21: InvalidArgumentError "Key must have 2 elements"
        raise InvalidArgumentError(f"to_hash_bucket_strong: Key must have 2 elements, got {k!r}")
    return _map("to_hash_bucket_strong", _siphash_bucket, [_strings_or_ragged("to_hash_bucket_strong", input)],
                np.int64, args=(int(num_buckets), int(k[0]) % (1 << 64), int(k[1]) % (1 << 64)))


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """tf.strings.unsorted_segment_join (1-D inputs): the strings of each segment, in order."""
    x = np.asarray(_strings("unsorted_segment_join", inputs).numpy())
    ids = np.asarray(convert_to_tensor(segment_ids).numpy())
    sep = separator.encode() if isinstance(separator, str) else separator
    out = np.empty(int(num_segments), object)
    for k in range(int(num_segments)):
        out[k] = sep.join(x[ids == k].tolist())
    return convert_to_tensor(out)


# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("strings", "tapeflow.strings")
