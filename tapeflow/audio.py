"""``tf.audio``: ``decode_wav`` and ``encode_wav``, 16-bit PCM WAV files as TF 2.21 reads and writes
them (wave 20), by hand with ``struct``.

TF's rules (tensorflow/core/lib/wav/wav_io.cc, checked against TF 2.21): samples decode as
``int16 / 32768`` (so 32767 is 0.999969482421875); encoding clamps to [-1, 1], scales by 32768,
rounds half away from zero and saturates at 32767, NaN -> 0. ``desired_channels`` takes the file's
first channels and repeats its last one to fill; ``desired_samples`` cuts or zero-pads. Only 16-bit
PCM files read (TF's "Can only read 16-bit WAV files"). ``encode_wav`` writes TF's 44-byte header,
byte for byte. Inside ``tapeflow.function`` each is one ``numpy_function`` with TF's static shapes
((None, desired_channels or None) and a scalar int32 rate).
"""
from __future__ import annotations

import struct

import numpy as np

from . import errors
from .core import dtypes as _dtypes
from .core.tensor import Tensor, convert_to_tensor


def _tracing():
    from .core.state import STATE
    return STATE.trace is not None


def _bytes_of(contents):
    t = contents if isinstance(contents, Tensor) else convert_to_tensor(contents)
    if not t.dtype.is_string:
        raise errors.InvalidArgumentTypeError(None, None, f"decode_wav: contents must be a string tensor (the file's "
                                                          f"bytes, e.g. tf.io.read_file(path)), got {t.dtype.name}")
    a = np.asarray(t.numpy(), object)
    if a.ndim != 0:
        # TF 2.21's text
        raise errors.InvalidArgumentError(None, None, f"contents must be scalar, got shape {list(a.shape)} "
                                                      "(decode_wav decodes one file; map it over a batch)")
    v = a[()]
    return v if isinstance(v, bytes) else str(v).encode()


def _bad(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _read_wav(data):
    """(int16 samples (frames, channels), sample rate) of a 16-bit PCM WAV, TF's checks and texts."""
    def need(pos, n):
        if pos + n > len(data):
            raise _bad("Data too short when trying to read string")

    need(0, 4)
    if data[:4] != b"RIFF":
        raise _bad(f"Header mismatch: Expected RIFF but found {data[:4].decode('latin-1')}")
    need(8, 4)
    if data[8:12] != b"WAVE":
        raise _bad(f"Header mismatch: Expected WAVE but found {data[8:12].decode('latin-1')}")
    pos, fmt = 12, None
    while True:
        need(pos, 8)
        cid, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        pos += 8
        if cid == b"fmt ":
            need(pos, 16)
            audio_format, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", data, pos)
            if audio_format != 1:
                raise _bad(f"Bad audio format for WAV: Expected 1 (PCM), but got {audio_format}")
            if bits != 16:
                raise _bad(f"Can only read 16-bit WAV files, but received {bits}")
            fmt = (channels, rate)
        elif cid == b"data":
            if fmt is None:
                raise _bad("The wav file didn't contain a 'fmt ' chunk before the 'data' chunk")
            channels, rate = fmt
            n = min(size, len(data) - pos) // (2 * channels) * channels
            samples = np.frombuffer(data, "<i2", count=n, offset=pos).reshape(-1, channels)
            return samples, rate
        pos += size + (size & 1)   # chunks are word-aligned


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """``tf.audio.decode_wav``: (audio float32 (samples, channels) in [-1, 1), sample_rate int32)."""
    dc, ds = int(desired_channels), int(desired_samples)
    if _tracing():
        from .compiler.function import TensorSpec
        from .ops.script_ops import numpy_function

        def run(c):
            audio, rate = decode_wav(Tensor(np.asarray(c, object)), dc, ds)
            return [audio.numpy(), rate.numpy()]
        audio, rate = numpy_function(run, [contents], [TensorSpec([ds if ds > 0 else None, dc if dc > 0 else None],
                                                                  _dtypes.float32), TensorSpec([], _dtypes.int32)])
        return audio, rate
    samples, rate = _read_wav(_bytes_of(contents))
    audio = samples.astype(np.float32) / np.float32(32768)
    if dc > 0:
        # the file's first channels, its last one repeated to fill (TF 2.21: 2 -> 3 gives c0, c1, c1)
        audio = audio[:, [min(c, audio.shape[1] - 1) for c in range(dc)]] if audio.shape[1] else \
            np.zeros((audio.shape[0], dc), np.float32)
    if ds >= 0:
        audio = audio[:ds] if audio.shape[0] >= ds else np.concatenate(
            [audio, np.zeros((ds - audio.shape[0], audio.shape[1]), np.float32)])
    return Tensor(np.ascontiguousarray(audio, np.float32)), Tensor(np.array(rate, np.int32))


def encode_wav(audio, sample_rate, name=None):
    """``tf.audio.encode_wav``: a (frames, channels) float tensor -> 16-bit PCM WAV bytes (TF's header
    and sample rounding, byte for byte)."""
    if _tracing():
        from .compiler.function import TensorSpec
        from .ops.script_ops import numpy_function

        def run(a, r):
            return np.asarray(encode_wav(Tensor(np.asarray(a)), Tensor(np.asarray(r))).numpy(), object)
        return numpy_function(run, [convert_to_tensor(audio, _dtypes.float32), convert_to_tensor(sample_rate)],
                              TensorSpec([], _dtypes.string))
    a = np.asarray(convert_to_tensor(audio).numpy(), np.float32)
    if a.ndim != 2:
        # TF 2.21's text
        raise _bad(f"audio must be 2-dimensional{list(a.shape)} (frames, channels)")
    rate = int(np.asarray(convert_to_tensor(sample_rate).numpy()))
    frames, channels = a.shape
    x = np.nan_to_num(np.clip(a, -1.0, 1.0), nan=0.0) * np.float32(32768)
    q = np.clip(np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)), -32768, 32767).astype("<i2")
    body = q.tobytes()
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(body), b"WAVE", b"fmt ", 16, 1, channels, rate,
                         rate * channels * 2, channels * 2, 16, b"data", len(body))
    out = np.empty((), object)
    out[()] = header + body
    return Tensor(out)


__all__ = ["decode_wav", "encode_wav"]
