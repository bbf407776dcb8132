"""keras.utils.get_file as TF 2.21's Keras: the cache layout under ``$KERAS_HOME``/``~/.keras``
(``/tmp/.keras`` when that is not writable), sha256/md5 checks, tar/zip extraction with Keras'
path filtering, and its messages. Downloads go through ``urllib`` (``file://`` URLs work offline);
a failed fetch raises Keras' "URL fetch failure" Exception, here with the cache path to fill by
hand when there is no network."""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile


def _print(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def _keras_home():
    return os.path.expanduser(os.environ.get("KERAS_HOME", os.path.join("~", ".keras")))


def _resolve_hasher(algorithm, file_hash=None):
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None and len(file_hash) == 64):
        return hashlib.sha256()
    return hashlib.md5()   # Keras' legacy default


def _hash_file(fpath, hasher, chunk_size=65535):
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath, file_hash, algorithm="auto", chunk_size=65535):
    return str(_hash_file(fpath, _resolve_hasher(algorithm, file_hash), chunk_size)) == str(file_hash)


def _inside(base, rel):
    p = os.path.realpath(os.path.join(base, rel))
    try:
        return os.path.commonpath([p, base]) == base
    except ValueError:
        return False


def _safe_members(names_infos, base, is_link=None):
    """Keras' filter: members whose path (and link target) stay inside the extraction dir."""
    base = os.path.realpath(base)
    for name, info in names_infos:
        ok = _inside(base, name)
        if ok and is_link is not None and is_link(info):
            target = (info.linkname if info.islnk() else
                      os.path.join(os.path.dirname(name), info.linkname))
            ok = _inside(base, target)
        if ok:
            yield info
        else:
            warnings.warn(f"Skipping invalid path during archive extraction: '{name}'.", stacklevel=2)


def extract_archive(file_path, path=".", archive_format="auto"):
    """Extracts a tar (gz/bz2/xz) or zip archive into ``path``; False when no format matches."""
    if archive_format is None:
        return False
    if archive_format == "auto":
        archive_format = ["tar", "zip"]
    if isinstance(archive_format, str):
        archive_format = [archive_format]
    file_path, path = os.fspath(file_path), os.fspath(path)
    for kind in archive_format:
        if kind == "tar":
            if not tarfile.is_tarfile(file_path):
                continue
            opener = tarfile.open
        elif kind == "zip":
            if not zipfile.is_zipfile(file_path):
                continue
            opener = zipfile.ZipFile
        else:
            raise NotImplementedError(kind)
        with opener(file_path) as archive:
            try:
                if kind == "zip":
                    archive.extractall(path, members=list(_safe_members(
                        ((i.filename, i) for i in archive.infolist()), path)))
                else:
                    members = list(_safe_members(((i.name, i) for i in archive.getmembers()), path,
                                                 is_link=lambda i: i.issym() or i.islnk()))
                    archive.extractall(path, members=members, filter="data")
            except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
                if os.path.exists(path):
                    if os.path.isfile(path):
                        os.remove(path)
                    else:
                        shutil.rmtree(path)
                raise
        return True
    return False


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """Returns the cached path of ``origin`` under ``cache_dir/cache_subdir`` (fetched when
    absent, forced, or its hash does not match), extracted when ``extract``/``untar`` (then the
    extraction directory), as Keras 3."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if cache_dir is None:
        cache_dir = _keras_home()
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(cache_dir)
    if not os.access(base, os.W_OK):   # Keras: also when cache_dir does not exist yet
        base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    provided = fname
    fname = os.fspath(fname) if fname is not None else None
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'."
                             "Please specify the `fname` argument.")
    elif os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    if extract or untar:
        if provided and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(datadir, f"{fname[:fname.find('.')]}_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)
    download = True
    if not force_download and os.path.exists(target):
        download = False
        if file_hash is not None and not validate_file(target, file_hash, algorithm=hash_algorithm):
            _print(f"A local file was found, but it seems to be incomplete or outdated because the "
                   f"{hash_algorithm} file hash does not match the original value of {file_hash} so we will "
                   "re-download the data.")
            download = True
    if download:
        _print(f"Downloading data from {origin}")
        hint = (f" (with no network, put the file at {target} by hand, or pass a file:// URL)"
                if not origin.startswith("file:") else "")
        try:
            try:
                urllib.request.urlretrieve(origin, target)
            except urllib.error.HTTPError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.code} -- {e.msg}{hint}") from None
            except urllib.error.URLError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.errno} -- {e.reason}{hint}") from None
        except (Exception, KeyboardInterrupt):
            if os.path.exists(target):
                os.remove(target)
            raise
        if os.path.exists(target) and file_hash is not None and not validate_file(target, file_hash,
                                                                                    algorithm=hash_algorithm):
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not "
                             f"match the provided value of {file_hash}.")
    if extract or untar:
        if untar:
            archive_format = "tar"
        if not extract_archive(target, extraction_dir, archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target
