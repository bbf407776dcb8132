"""TF 2.21's outputs of its image decoders (tf.io.decode_image/png/jpeg/gif/bmp, extract_jpeg_shape),
for tests/test_api20.py (which compares tapeflow against tests/data/image_codec_tf.npz).

Run with real TensorFlow (the peers venv, which has Pillow), from the repository root:

    .venv-peers/bin/python tests/tf_reference/make_image_codec_reference.py

The files are made here with Pillow from a fixed seed (PNG RGB/gray/RGBA/16-bit gray, palette PNG,
JPEG RGB/gray, BMP, a one-frame and a two-frame GIF); the npz stores each file's bytes
(``file:NAME``, uint8) and TF's output of each case (``NAME|op|kwargs``). JPEG cases are stored
twice: TF's default IDCT and ``dct_method="INTEGER_ACCURATE"`` (Pillow's, so tapeflow's).
"""
from __future__ import annotations

import io
import os

import numpy as np
import tensorflow as tf
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "image_codec_tf.npz")


def files():
    rng = np.random.RandomState(0)
    rgb = rng.randint(0, 256, (5, 7, 3)).astype(np.uint8)
    alpha = rng.randint(0, 256, (5, 7, 1)).astype(np.uint8)
    smooth = np.stack(list(np.meshgrid(np.linspace(0, 255, 16), np.linspace(0, 255, 12)))
                      + [np.full((12, 16), 128.0)], -1).astype(np.uint8)
    out = {}

    def save(name, img, fmt, **kw):
        b = io.BytesIO()
        img.save(b, fmt, **kw)
        out[name] = b.getvalue()
    save("rgb.png", Image.fromarray(rgb), "PNG")
    save("gray.png", Image.fromarray(rgb[..., 0]), "PNG")
    save("rgba.png", Image.fromarray(np.concatenate([rgb, alpha], -1)), "PNG")
    save("g16.png", Image.fromarray(rgb[..., 0].astype(np.uint16) * 257), "PNG")
    save("pal.png", Image.fromarray(rgb).convert("P"), "PNG")
    save("smooth.jpg", Image.fromarray(smooth), "JPEG", quality=90)
    save("gray.jpg", Image.fromarray(smooth[..., 0]), "JPEG", quality=90)
    save("rgb.bmp", Image.fromarray(rgb), "BMP")
    save("one.gif", Image.fromarray(rgb).convert("P"), "GIF")
    f1, f2 = Image.fromarray(rgb).convert("P"), Image.fromarray(rgb[::-1].copy()).convert("P")
    b = io.BytesIO()
    f1.save(b, "GIF", save_all=True, append_images=[f2])
    out["anim.gif"] = b.getvalue()
    return out


# (op, kwargs as a string of Python literals); each runs on every file, errors are skipped (tests list them)
OPS = [
    ("decode_image", "{}"), ("decode_image", "{'channels': 1}"), ("decode_image", "{'channels': 3}"),
    ("decode_image", "{'channels': 4}"), ("decode_image", "{'expand_animations': False}"),
    ("decode_image", "{'dtype': 'float32'}"), ("decode_image", "{'dtype': 'float16'}"),
    ("decode_image", "{'dtype': 'uint16'}"),
    ("decode_png", "{}"), ("decode_png", "{'channels': 3}"), ("decode_png", "{'dtype': 'uint16'}"),
    ("decode_jpeg", "{}"), ("decode_jpeg", "{'channels': 1}"), ("decode_gif", "{}"), ("decode_bmp", "{}"),
    ("decode_bmp", "{'channels': 4}"), ("extract_jpeg_shape", "{}"), ("is_jpeg", "{}"),
]


def main():
    data = files()
    arrays = {f"file:{k}": np.frombuffer(v, np.uint8) for k, v in data.items()}
    for name, b in data.items():
        for op, kw in OPS:
            kwargs = eval(kw)  # noqa: S307  (the literals above)
            if "dtype" in kwargs:
                kwargs["dtype"] = tf.as_dtype(kwargs["dtype"])
            try:
                v = getattr(tf.io, op)(b, **kwargs).numpy()
            except tf.errors.InvalidArgumentError:
                continue
            arrays[f"{name}|{op}|{kw}"] = np.asarray(v)
            if op in ("decode_image", "decode_png", "decode_jpeg", "decode_gif") and name.endswith(".jpg") \
                    and "dtype" not in kwargs:
                ch = 3 if op == "decode_gif" else kwargs.get("channels", 0)
                acc = tf.io.decode_jpeg(b, channels=ch, dct_method="INTEGER_ACCURATE").numpy()
                acc = acc[None] if op == "decode_gif" else acc
                arrays[f"{name}|{op}|{kw}|accurate"] = acc
    np.savez_compressed(OUT, **arrays)
    print(f"{len(arrays)} arrays -> {OUT}")


if __name__ == "__main__":
    main()
