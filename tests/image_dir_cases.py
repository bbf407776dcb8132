"""Image trees and calls shared by tests/test_image_dataset.py (tapeflow) and
tests/tf_reference/make_image_dataset_reference.py (TF 2.21): both write the same files with
Pillow (the same version in both venvs, so the same bytes) and run the same calls."""
import os

import numpy as np
from PIL import Image


def write_tree(root):
    """Three classes (one nested sub-folder, mixed sizes and PNG modes), files the listing must
    skip (a .txt, a hidden class folder), an upper-case extension, and one top-level image (listed
    only when labels are not inferred)."""
    rng = np.random.RandomState(19)
    plan = {"cats": 5, "dogs": 4, "zebra": 3}
    modes = ["RGB", "RGBA", "L", "P", "LA"]
    k = 0
    for cls, n in plan.items():
        for i in range(n):
            h, w = 6 + (k * 5) % 11, 7 + (k * 3) % 13
            mode = modes[k % len(modes)]
            sub = os.path.join(root, cls, "nested") if (cls == "dogs" and i >= 2) else os.path.join(root, cls)
            os.makedirs(sub, exist_ok=True)
            ext = ".PNG" if k == 7 else ".png"
            _save(rng, mode, h, w, os.path.join(sub, f"img_{(k * 7) % 13:02d}{ext}"))
            k += 1
    with open(os.path.join(root, "cats", "notes.txt"), "w") as f:
        f.write("not an image")
    os.makedirs(os.path.join(root, ".hidden"), exist_ok=True)
    _save(rng, "RGB", 5, 5, os.path.join(root, ".hidden", "h.png"))
    _save(rng, "RGB", 9, 9, os.path.join(root, "top.png"))


def _save(rng, mode, h, w, path):
    if mode == "P":
        a = rng.randint(0, 256, (h, w, 3)).astype(np.uint8)
        Image.fromarray(a, "RGB").convert("P", palette=Image.Palette.ADAPTIVE, colors=16).save(path)
        return
    c = {"RGB": 3, "RGBA": 4, "L": 1, "LA": 2}[mode]
    a = rng.randint(0, 256, (h, w, c)).astype(np.uint8)
    Image.fromarray(a[..., 0] if c == 1 else a, mode).save(path)


def write_jpegs(root):
    """Two classes of JPEGs (a smooth colour ramp and noise; one grayscale file)."""
    rng = np.random.RandomState(5)
    for cls in ("a", "b"):
        os.makedirs(os.path.join(root, cls), exist_ok=True)
    yy, xx = np.meshgrid(np.arange(12), np.arange(16), indexing="ij")
    ramp = (np.stack([yy * 9, xx * 13, (yy + xx) * 7], -1) % 256).astype(np.uint8)
    Image.fromarray(ramp, "RGB").save(os.path.join(root, "a", "ramp.jpg"), quality=90)
    Image.fromarray(rng.randint(0, 256, (12, 16, 3)).astype(np.uint8), "RGB").save(
        os.path.join(root, "b", "noise.jpeg"), quality=75)
    Image.fromarray(rng.randint(0, 256, (12, 16)).astype(np.uint8), "L").save(os.path.join(root, "b", "gray.jpg"))


def write_extra(root):
    """A nested symlink to another class (listed only with follow_links) and a 16-bit PNG."""
    rng = np.random.RandomState(3)
    for cls in ("a", "b"):
        os.makedirs(os.path.join(root, cls), exist_ok=True)
    _save(rng, "RGB", 6, 8, os.path.join(root, "a", "x.png"))
    _save(rng, "RGBA", 7, 5, os.path.join(root, "b", "y.png"))
    Image.fromarray(rng.randint(0, 65536, (5, 6)).astype(np.uint16)).save(os.path.join(root, "a", "g16.png"))
    os.symlink(os.path.join("..", "b"), os.path.join(root, "a", "link"))


def checksum(a):
    """Order-sensitive pixel checksum (a permutation of pixels changes it)."""
    a = np.asarray(a, np.float64).ravel()
    return [float(a.sum()), float((a * (1 + np.arange(a.size) % 7)).sum())]


# name -> (tree, kwargs of image_dataset_from_directory)
CONFIGS = {
    "rgb_int": ("tree", dict(image_size=(8, 10), shuffle=False, batch_size=4)),
    "gray_nearest_nolabels": ("tree", dict(labels=None, color_mode="grayscale", interpolation="nearest",
                                           image_size=(5, 6), shuffle=False, batch_size=5)),
    "rgba_crop": ("tree", dict(color_mode="rgba", crop_to_aspect_ratio=True, image_size=(6, 9), shuffle=False,
                               label_mode="categorical", batch_size=3)),
    "pad_channels_first": ("tree", dict(pad_to_aspect_ratio=True, image_size=(7, 7), shuffle=False,
                                        data_format="channels_first", batch_size=None)),
    "class_names": ("tree", dict(class_names=["zebra", "cats"], image_size=(4, 4), shuffle=False,
                                 label_mode="binary")),
    "explicit_labels": ("tree", dict(labels=[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7], image_size=(4, 4),
                                     shuffle=True, seed=11)),
    "both_split": ("tree", dict(image_size=(5, 5), seed=123, validation_split=0.25, subset="both",
                                label_mode="categorical", batch_size=2)),
    "training_split": ("tree", dict(image_size=(5, 5), seed=7, validation_split=0.3, subset="training")),
    "validation_split": ("tree", dict(image_size=(5, 5), seed=7, validation_split=0.3, subset="validation")),
    "verbose_false": ("tree", dict(image_size=(3, 3), seed=3, validation_split=0.25, subset="validation",
                                   verbose=False)),
    "links_not_followed": ("extra", dict(image_size=(4, 4), shuffle=False, color_mode="grayscale")),
    "links_followed": ("extra", dict(image_size=(4, 4), shuffle=False, follow_links=True)),
    "jpeg_rgb": ("jpeg", dict(image_size=(12, 16), shuffle=False)),
    "jpeg_gray": ("jpeg", dict(image_size=(12, 16), shuffle=False, color_mode="grayscale")),
}

# name -> (tree, kwargs) that raise; the reference records the class and message
BAD = {
    "labels_string": ("tree", dict(labels="dirs")),
    "label_mode": ("tree", dict(label_mode="sparse")),
    "color_mode": ("tree", dict(color_mode="hsv")),
    "image_size": ("tree", dict(image_size=(1, 2, 3))),
    "interpolation": ("tree", dict(interpolation="cubic")),
    "split_no_seed": ("tree", dict(validation_split=0.2, subset="training")),
    "split_range": ("tree", dict(validation_split=1.5, subset="training", seed=1)),
    "subset_without_split": ("tree", dict(subset="training", seed=1)),
    "subset_name": ("tree", dict(validation_split=0.2, subset="test", seed=1)),
    "class_names_mismatch": ("tree", dict(class_names=["cats", "birds"])),
    "class_names_with_labels": ("tree", dict(labels=None, class_names=["cats"])),
    "binary_three_classes": ("tree", dict(label_mode="binary")),
    "labels_length": ("tree", dict(labels=[0, 1])),
    "empty": ("empty", dict()),
    "jpeg_rgba": ("jpeg", dict(color_mode="rgba", shuffle=False)),
}
