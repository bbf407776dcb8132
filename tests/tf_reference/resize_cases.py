"""The tf.image.resize cases of tests/test_resize22.py and make_resize_reference.py: the methods beyond
bilinear/nearest, and antialias=True, at sizes that up- and downsample a (2, 5, 7, 3) image."""

METHODS = ("bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic", "bilinear")
SIZES = ((3, 4), (9, 11), (5, 3), (1, 1), (10, 2))


def cases():
    for m in METHODS:
        for aa in (False, True):
            if m == "bilinear" and not aa:
                continue   # (tests/test_image*.py hold it)
            for h, w in SIZES:
                yield f"{m}_{int(aa)}_{h}x{w}", m, aa, (h, w)
