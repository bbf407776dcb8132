"""Records TF 2.21's keras.utils image loading and image_dataset_from_directory for
tests/test_image_dataset.py (tests cannot import TF).

Run with the peers venv from the repository root:
    .venv-peers/bin/python tests/tf_reference/make_image_dataset_reference.py
Writes tests/data/image_dataset_reference.json: for each call of tests/image_dir_cases.py on the
trees it writes (file listing, printed lines, element_spec, per-element labels and pixel
checksums), TF's errors for the bad calls, tf.io.decode_image's pixels of each file (checksums for
PNG; full pixels for JPEG, with the default and the accurate IDCT) and load_img's results.
"""
import contextlib
import io
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from image_dir_cases import BAD, CONFIGS, checksum, write_extra, write_jpegs, write_tree  # noqa: E402

U = tf.keras.utils


def spec(s):
    return [None if d is None else int(d) for d in s.shape], s.dtype.name


def run(root, kw):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = U.image_dataset_from_directory(root, **kw)
    out = {"printed": buf.getvalue().splitlines()}
    dss = r if isinstance(r, list) else [r]
    out["datasets"] = []
    for ds in dss:
        d = {"class_names": ds.class_names, "file_paths": [os.path.relpath(p, root) for p in ds.file_paths],
             "element_spec": [spec(s) for s in tf.nest.flatten(ds.element_spec)], "batches": []}
        for el in ds:
            parts = [np.asarray(t) for t in tf.nest.flatten(el)]
            d["batches"].append({"shapes": [list(p.shape) for p in parts],
                                 "dtypes": [p.dtype.name for p in parts],
                                 "images": [checksum(x) for x in (parts[0] if kw.get("batch_size", 32) is not None
                                                                  else parts[0][None])],
                                 "labels": (parts[1].tolist() if len(parts) > 1 else None)})
        out["datasets"].append(d)
    return out


def main():
    ref = {"configs": {}, "bad": {}, "decode_png": {}, "decode_jpeg": {}, "load_img": {}}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {"tree": os.path.join(tmp, "tree"), "jpeg": os.path.join(tmp, "jpeg"),
                 "empty": os.path.join(tmp, "empty"), "extra": os.path.join(tmp, "extra")}
        write_extra(roots["extra"])
        write_tree(roots["tree"])
        write_jpegs(roots["jpeg"])
        os.makedirs(os.path.join(roots["empty"], "x"))
        for name, (tree, kw) in CONFIGS.items():
            ref["configs"][name] = run(roots[tree], kw)
            print(name, ref["configs"][name]["printed"])
        for name, (tree, kw) in BAD.items():
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    ds = U.image_dataset_from_directory(roots[tree], **kw)
                    for _ in ds:
                        pass
                ref["bad"][name] = None
            except Exception as e:  # noqa: BLE001
                ref["bad"][name] = [type(e).__name__, str(e)]
            print(name, ref["bad"][name])
        for dirpath, _, files in sorted(os.walk(roots["tree"])) + sorted(os.walk(roots["extra"])):
            for f in sorted(files):
                if not f.lower().endswith(".png"):
                    continue
                p = os.path.join(dirpath, f)
                rel = os.path.relpath(p, tmp)
                data = tf.io.read_file(p)
                ref["decode_png"][rel] = {str(c): [list(x.shape), checksum(x)] for c in (0, 1, 3, 4) for x in
                                          [tf.io.decode_image(data, channels=c, expand_animations=False).numpy()]}
                for cm in ("rgb", "rgba", "grayscale"):
                    for ts, interp, keep in ((None, "nearest", False), ((5, 4), "bilinear", False),
                                             ((5, 4), "bicubic", True)):
                        im = U.load_img(p, color_mode=cm, target_size=ts, interpolation=interp,
                                        keep_aspect_ratio=keep)
                        a = U.img_to_array(im)
                        ref["load_img"][f"{rel}|{cm}|{ts}|{interp}|{keep}"] = [im.mode, list(a.shape), a.dtype.name,
                                                                             checksum(a)]
        for dirpath, _, files in sorted(os.walk(roots["jpeg"])):
            for f in sorted(files):
                p = os.path.join(dirpath, f)
                data = tf.io.read_file(p)
                rel = os.path.relpath(p, roots["jpeg"])
                for c in (1, 3):
                    ref["decode_jpeg"][f"{rel}|{c}"] = {
                        "default": tf.io.decode_image(data, channels=c, expand_animations=False).numpy().tolist(),
                        "accurate": tf.io.decode_jpeg(data, channels=c, dct_method="INTEGER_ACCURATE").numpy()
                        .tolist()}
    out = os.path.join(os.path.dirname(HERE), "data", "image_dataset_reference.json")
    with open(out, "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    print("wrote", out, os.path.getsize(out))


if __name__ == "__main__":
    main()
