"""Finding, verifying and reading the MNIST-family files shared by the loaders.

Where a loader looks, in order:

1. ``path=`` given to ``load_data`` (a file or a directory);
2. each directory in ``$TAPEFLOW_DATASETS`` (``os.pathsep``-separated), and
   its ``<name>`` subdirectory;
3. Keras' cache, ``$KERAS_HOME/datasets`` (default ``~/.keras/datasets``),
   laid out as Keras stores it (``mnist.npz``; ``fashion-mnist/*.gz``);
4. the Debian package location ``/usr/share/datasets/<name>`` (``make data``
   installs ``dataset-fashion-mnist`` there);
5. a download from the standard mirrors into Keras' cache, verified by
   SHA-256, unless ``TAPEFLOW_DATASETS_DOWNLOAD=0``.

Nothing found and no download: a ``FileNotFoundError`` listing every place
looked at and how to get the files.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

__all__ = ["read_idx", "keras_cache_dir", "search_dirs", "download", "not_found"]

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
               0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_GZIP_MAGIC = b"\x1f\x8b"


def _read_bytes(path):
    """The file's bytes, gunzipped when it is gzip (by its magic, not its name:
    some copies are stored unpacked under the .gz name and vice versa)."""
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == _GZIP_MAGIC else data


def read_idx(path):
    """An IDX file (LeCun's MNIST format, gzip or raw) as a NumPy array."""
    data = _read_bytes(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ValueError(f"{path}: not an IDX file (header {data[:4].hex()}, expected 0000<type><ndim> "
                         f"with type one of {sorted(hex(k) for k in _IDX_DTYPES)})")
    dtype, ndim = np.dtype(_IDX_DTYPES[data[2]]), data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    offset = 4 + 4 * ndim
    n = int(np.prod(shape, dtype=np.int64))
    if len(data) - offset != n * dtype.itemsize:
        raise ValueError(f"{path}: IDX header says shape {shape} of {dtype} ({n * dtype.itemsize} bytes) but "
                         f"the file holds {len(data) - offset} data bytes (truncated or corrupt download?)")
    arr = np.frombuffer(data, dtype, count=n, offset=offset).reshape(shape)
    return arr.astype(dtype.newbyteorder("="), copy=True)


def payload_sha256(path):
    """SHA-256 of the file's uncompressed bytes. Checksums are taken on the
    payload so that a re-gzipped copy of the same data (the Debian package
    recompresses the upstream files) verifies as well as the original."""
    return hashlib.sha256(_read_bytes(path)).hexdigest()


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def keras_cache_dir():
    return Path(os.environ.get("KERAS_HOME") or Path.home() / ".keras") / "datasets"


def search_dirs(name, given=None):
    """Directories to look in for dataset ``name`` (in order, without duplicates)."""
    dirs = []
    if given is not None:
        dirs.append(Path(given).expanduser())
    for d in filter(None, os.environ.get("TAPEFLOW_DATASETS", "").split(os.pathsep)):
        dirs += [Path(d).expanduser() / name, Path(d).expanduser()]
    dirs += [keras_cache_dir() / name, keras_cache_dir(), Path("/usr/share/datasets") / name]
    seen, out = set(), []
    for d in dirs:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def download_enabled():
    return os.environ.get("TAPEFLOW_DATASETS_DOWNLOAD", "1").strip().lower() not in ("0", "false", "no", "off")


def download(fname, mirrors, dest_dir, check):
    """Fetch ``fname`` from the first mirror that answers into ``dest_dir``.

    ``check(path) -> bool`` verifies the downloaded file (a checksum); a file
    that fails it is deleted and the next mirror is tried. Returns
    ``(path or None, [one line per failed mirror])``."""
    errors = []
    dest_dir = Path(dest_dir)
    for base in mirrors:
        url = base + fname
        tmp = None
        try:
            dest_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=fname + ".", suffix=".part", dir=dest_dir)
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=30) as resp:
                shutil.copyfileobj(resp, out)
        except (urllib.error.URLError, OSError, ValueError) as e:
            errors.append(f"{url}: {e}")
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
            continue
        if not check(tmp):
            errors.append(f"{url}: SHA-256 mismatch (corrupt or different file), discarded")
            os.unlink(tmp)
            continue
        final = dest_dir / fname
        os.replace(tmp, final)
        return final, errors
    return None, errors


def not_found(dataset, wanted, looked, download_errors, hint):
    lines = [f"{dataset}: could not find {', '.join(wanted)}.", "Looked in:"]
    lines += [f"  {d}" for d in looked]
    if download_errors:
        lines.append("Download failed:")
        lines += [f"  {e}" for e in download_errors]
    elif not download_enabled():
        lines.append("Download disabled (TAPEFLOW_DATASETS_DOWNLOAD=0).")
    lines.append("To get the files: " + hint + ", or pass load_data(path=DIR), or set TAPEFLOW_DATASETS=DIR.")
    return FileNotFoundError("\n".join(lines))


# --- Keras' other loaders (wave 25): one file (or extracted directory) of Keras' cache --------------

KERAS_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def keras_file(dataset, name, candidates, origin, file_hash, fname, extract=False, given=None):
    """The path of a Keras dataset file, found as the MNIST loaders find theirs: ``given`` (an
    existing file or directory) as it is; else the first of ``candidates`` (names relative to a
    search directory, in Keras' cache layout first) in ``search_dirs(name)``; else, unless
    downloads are off, Keras' own download: ``keras.utils.get_file(fname, origin, file_hash=...,
    extract=...)`` into Keras' cache (sha256/md5 checked, archives extracted as Keras 3 does:
    ``datasets/<fname>/``); else the FileNotFoundError listing where it looked."""
    from .._file_utils import get_file
    if given is not None and Path(given).expanduser().exists():
        return Path(given).expanduser()
    dirs = search_dirs(name)
    for d in dirs:
        for c in candidates:
            if (d / c).exists():
                return d / c
    errors = []
    if download_enabled():
        try:
            return Path(get_file(fname, origin=origin, file_hash=file_hash, extract=extract))
        except Exception as e:  # noqa: BLE001  (get_file's "URL fetch failure" is a bare Exception, as Keras')
            errors.append(f"{origin}: {e}")
    raise not_found(dataset, [candidates[0]], dirs, errors,
                    f"download {origin} into {keras_cache_dir()}" + (" and extract it there" if extract else ""))


# the only globals a dataset's pickles may name (NumPy arrays), as Keras 3.15's loaders allow: the
# files come from the network, and an arbitrary pickle runs code
_PICKLE_GLOBALS = frozenset({("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
                             ("numpy._core.multiarray", "_reconstruct")})


def _restricted_unpickler(f, **kw):
    import pickle

    class Restricted(pickle.Unpickler):
        def find_class(self, module, name):
            if (module, name) in _PICKLE_GLOBALS:
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"Refusing to deserialize `{module}.{name}` while loading a Keras "
                                         "dataset. The file may be corrupted or malicious.")
    return Restricted(f, **kw)


def load_pickle(path, **kw):
    """A pickled dict of arrays and lists (CIFAR's batches), NumPy's globals only."""
    with open(path, "rb") as f:
        return _restricted_unpickler(f, **kw).load()


def load_npz(path):
    """An ``.npz``'s arrays; object arrays (IMDB's and Reuters' lists of word ids) are unpickled
    with NumPy's globals only, never ``np.load(allow_pickle=True)``."""
    import io
    import zipfile
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if not member.endswith(".npy"):
                continue
            fp = io.BytesIO(archive.read(member))
            try:
                arr = np.lib.format.read_array(fp, allow_pickle=False)
            except ValueError:      # an object array: a header, then a pickle
                fp.seek(0)
                major, _ = np.lib.format.read_magic(fp)
                if major == 1:
                    np.lib.format.read_array_header_1_0(fp)
                elif major in (2, 3):
                    np.lib.format.read_array_header_2_0(fp)
                else:
                    raise ValueError(f"{path}: unsupported .npy version {major} in {member}")
                arr = _restricted_unpickler(fp).load()
            arrays[member[:-4]] = arr
    return arrays


def shuffled_split(x, y, test_split, seed):
    """Keras' regression loaders' split: a RandomState(seed) permutation, then the first
    ``int(n * (1 - test_split))`` samples train."""
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 (exclusive of 1).")
    idx = np.arange(len(x))
    np.random.RandomState(seed).shuffle(idx)
    x, y = x[idx], y[idx]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))


def word_sequences(xs, labels, maxlen, start_char, index_from):
    """Keras' text loaders' rewrite of word-id lists: ``start_char`` first, ids shifted by
    ``index_from``, sequences of ``maxlen`` or more dropped (with their labels)."""
    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    else:
        xs = [list(x) for x in xs]
    if maxlen:
        kept = [(x, lab) for x, lab in zip(xs, labels) if len(x) < maxlen]
        xs, labels = [k[0] for k in kept], [k[1] for k in kept]
    return xs, labels


def clip_words(xs, num_words, skip_top, oov_char):
    """Ids outside [skip_top, num_words) become ``oov_char`` (dropped when it is None); no
    ``num_words``: the largest id (which itself is then out, as Keras' bound is exclusive)."""
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def object_array(lists):
    """Keras' ``np.array(lists, dtype="object")`` (sequences all of one length give a 2-D array, as Keras')."""
    return np.array(lists, dtype="object")
