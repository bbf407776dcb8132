"""tf.image calls shared by tests/tf_reference/make_image_reference.py (TF 2.21) and
tests/test_image_ops.py (tapeflow): name -> fn(tf, x) on a (2, 5, 4, 3) float32 image batch."""
import numpy as np


def nms_boxes():
    """30 boxes (some flipped, two of zero area) and scores with ties, for non_max_suppression."""
    rng = np.random.default_rng(18)
    c = rng.uniform(0, 1, (30, 2))
    hw = rng.uniform(0.05, 0.4, (30, 2))
    b = np.concatenate([c - hw / 2, c + hw / 2], axis=1)
    b[::7] = b[::7][:, [2, 3, 0, 1]]          # flipped corners
    b[5, 2] = b[5, 0]                         # zero height
    b[11, 3] = b[11, 1]                       # zero width
    s = np.round(rng.uniform(0, 1, 30), 1)    # ties
    return b.astype(np.float32), s.astype(np.float32)


def image():
    return (np.arange(2 * 5 * 4 * 3, dtype=np.float32).reshape(2, 5, 4, 3) ** 1.3 % 17).astype(np.float32)


CALLS = {
    **{f"resize_{m}_{h}x{w}": (lambda m, h, w: lambda tf, x: tf.image.resize(x, (h, w), method=m))(m, h, w)
       for m in ("bilinear", "nearest") for h, w in ((3, 7), (10, 8), (5, 4), (1, 1), (9, 2))},
    "resize_3d": lambda tf, x: tf.image.resize(x[0], (7, 3)),
    "resize_aspect": lambda tf, x: tf.image.resize(x, (3, 3), preserve_aspect_ratio=True),
    "resize_uint8_nearest": lambda tf, x: tf.image.resize(tf.cast(x * 10, tf.uint8), (3, 6), method="nearest"),
    "resize_uint8_bilinear": lambda tf, x: tf.image.resize(tf.cast(x * 10, tf.uint8), (3, 6)),
    "resize_with_crop_or_pad_big": lambda tf, x: tf.image.resize_with_crop_or_pad(x, 8, 7),
    "resize_with_crop_or_pad_small": lambda tf, x: tf.image.resize_with_crop_or_pad(x, 2, 3),
    "resize_with_crop_or_pad_mixed": lambda tf, x: tf.image.resize_with_crop_or_pad(x[1], 2, 7),
    "central_crop": lambda tf, x: tf.image.central_crop(x, 0.5),
    "central_crop_3d": lambda tf, x: tf.image.central_crop(x[0], 0.7),
    "crop_to_bounding_box": lambda tf, x: tf.image.crop_to_bounding_box(x, 1, 1, 3, 2),
    "pad_to_bounding_box": lambda tf, x: tf.image.pad_to_bounding_box(x, 1, 2, 7, 7),
    "rot90_1": lambda tf, x: tf.image.rot90(x, 1),
    "rot90_2": lambda tf, x: tf.image.rot90(x, 2),
    "rot90_3": lambda tf, x: tf.image.rot90(x[0], 3),
    "rot90_neg": lambda tf, x: tf.image.rot90(x, -1),
    "transpose": lambda tf, x: tf.image.transpose(x),
    "rgb_to_grayscale": lambda tf, x: tf.image.rgb_to_grayscale(x),
    "rgb_to_grayscale_uint8": lambda tf, x: tf.image.rgb_to_grayscale(tf.cast(x * 10, tf.uint8)),
    "grayscale_to_rgb": lambda tf, x: tf.image.grayscale_to_rgb(x[..., :1]),
    "per_image_standardization": lambda tf, x: tf.image.per_image_standardization(x),
    "per_image_standardization_const": lambda tf, x: tf.image.per_image_standardization(x * 0 + 3.0),
    "convert_uint8_to_float": lambda tf, x: tf.image.convert_image_dtype(tf.cast(x * 10, tf.uint8), tf.float32),
    "convert_float_to_uint8": lambda tf, x: tf.image.convert_image_dtype(x / 17.0, tf.uint8),
    "convert_float_to_uint8_sat": lambda tf, x: tf.image.convert_image_dtype(x / 8.0 - 0.5, tf.uint8, saturate=True),
    "convert_float_to_int32": lambda tf, x: tf.image.convert_image_dtype(x / 17.0, tf.int32, saturate=True),
    "image_gradients": lambda tf, x: tf.image.image_gradients(x),
    "total_variation": lambda tf, x: tf.image.total_variation(x),
    "total_variation_3d": lambda tf, x: tf.image.total_variation(x[0]),
    "psnr": lambda tf, x: tf.image.psnr(x, x * 0.9, max_val=17.0),
    # Keras' image preprocessing layers (deterministic paths)
    "Resizing": lambda tf, x: tf.keras.layers.Resizing(3, 7)(x),
    "Resizing_nearest": lambda tf, x: tf.keras.layers.Resizing(8, 2, interpolation="nearest")(x),
    "Resizing_crop": lambda tf, x: tf.keras.layers.Resizing(3, 3, crop_to_aspect_ratio=True)(x),
    "Resizing_pad": lambda tf, x: tf.keras.layers.Resizing(4, 7, pad_to_aspect_ratio=True, fill_value=1.5)(x),
    "Resizing_pad_odd": lambda tf, x: tf.keras.layers.Resizing(3, 3, pad_to_aspect_ratio=True)(x),
    "Resizing_3d_crop": lambda tf, x: tf.keras.layers.Resizing(2, 6, crop_to_aspect_ratio=True)(x[0]),
    "Resizing_uint8": lambda tf, x: tf.keras.layers.Resizing(3, 3)(tf.cast(x * 10, tf.uint8)),
    "CenterCrop": lambda tf, x: tf.keras.layers.CenterCrop(3, 2)(x),
    "CenterCrop_small": lambda tf, x: tf.keras.layers.CenterCrop(7, 3)(x),
    "CenterCrop_uint8": lambda tf, x: tf.keras.layers.CenterCrop(3, 3)(tf.cast(x * 10, tf.uint8)),
    "RandomFlip_inference": lambda tf, x: tf.keras.layers.RandomFlip()(x, training=False),
    "RandomCrop_inference": lambda tf, x: tf.keras.layers.RandomCrop(3, 3)(x, training=False),
    "RandomCrop_small": lambda tf, x: tf.keras.layers.RandomCrop(7, 3)(x),
    "RandomCrop_same": lambda tf, x: tf.keras.layers.RandomCrop(5, 2)(x),
    # the affine layers with a degenerate range (lower == upper): a fixed map, TF's sampling
    **{f"RandomRotation_{m}_{i}": (lambda m, i: lambda tf, x: tf.keras.layers.RandomRotation(
        (0.1, 0.1), fill_mode=m, interpolation=i, fill_value=2.5)(x))(m, i)
       for m in ("reflect", "wrap", "constant", "nearest") for i in ("bilinear", "nearest")},
    "RandomRotation_3d": lambda tf, x: tf.keras.layers.RandomRotation((-0.3, -0.3))(x[0]),
    "RandomZoom_in": lambda tf, x: tf.keras.layers.RandomZoom((-0.3, -0.3))(x),
    "RandomZoom_out_wrap": lambda tf, x: tf.keras.layers.RandomZoom((0.4, 0.4), (-0.2, -0.2), fill_mode="wrap")(x),
    "RandomTranslation": lambda tf, x: tf.keras.layers.RandomTranslation((0.2, 0.2), (-0.3, -0.3))(x),
    "RandomTranslation_const": lambda tf, x: tf.keras.layers.RandomTranslation(
        (-0.5, -0.5), (0.25, 0.25), fill_mode="constant", interpolation="nearest")(x),
    "RandomRotation_inference": lambda tf, x: tf.keras.layers.RandomRotation(0.2)(x, training=False),
    # colour spaces and adjustments (branch imgrand18); x / 17 is in [0, 1), round() makes channel ties
    "rgb_to_hsv": lambda tf, x: tf.image.rgb_to_hsv(x / 17.0),
    "rgb_to_hsv_ties": lambda tf, x: tf.image.rgb_to_hsv(tf.round(x / 4.0) / 5.0),
    "rgb_to_hsv_f64": lambda tf, x: tf.image.rgb_to_hsv(tf.cast(x, tf.float64) / 17.0),
    "hsv_to_rgb": lambda tf, x: tf.image.hsv_to_rgb(x / 17.0),
    "hsv_round_trip": lambda tf, x: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x / 17.0)),
    **{f"adjust_saturation_{i}": (lambda f: lambda tf, x: tf.image.adjust_saturation(x / 17.0, f))(f)
       for i, f in enumerate((0.0, 0.3, 1.0, 2.5))},
    "adjust_saturation_ties": lambda tf, x: tf.image.adjust_saturation(tf.round(x / 4.0) / 5.0, 0.6),
    "adjust_saturation_uint8": lambda tf, x: tf.image.adjust_saturation(tf.cast(x * 15, tf.uint8), 0.5),
    "adjust_saturation_f64": lambda tf, x: tf.image.adjust_saturation(tf.cast(x, tf.float64) / 17.0, 1.7),
    **{f"adjust_hue_{i}": (lambda d: lambda tf, x: tf.image.adjust_hue(x / 17.0, d))(d)
       for i, d in enumerate((0.0, 0.1, -0.35, 0.5, 0.9, -1.0))},
    "adjust_hue_ties": lambda tf, x: tf.image.adjust_hue(tf.round(x / 4.0) / 5.0, 0.25),
    "adjust_hue_uint8": lambda tf, x: tf.image.adjust_hue(tf.cast(x * 15, tf.uint8), 0.3),
    "adjust_hue_3d": lambda tf, x: tf.image.adjust_hue(x[0] / 17.0, -0.2),
    "adjust_gamma": lambda tf, x: tf.image.adjust_gamma(x / 17.0, 0.4),
    "adjust_gamma_gain": lambda tf, x: tf.image.adjust_gamma(x, 2.0, gain=0.5),
    "adjust_gamma_uint8": lambda tf, x: tf.image.adjust_gamma(tf.cast(x * 15, tf.uint8), 0.7, gain=1.2),
    "rgb_to_yiq": lambda tf, x: tf.image.rgb_to_yiq(x),
    "yiq_to_rgb": lambda tf, x: tf.image.yiq_to_rgb(x),
    "rgb_to_yuv": lambda tf, x: tf.image.rgb_to_yuv(x),
    "yuv_to_rgb": lambda tf, x: tf.image.yuv_to_rgb(x),
    "yuv_round_trip": lambda tf, x: tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(x[0])),
    # stateless random colour: TF's Philox draws, so TF's images
    "stateless_random_brightness": lambda tf, x: tf.image.stateless_random_brightness(x, 0.3, (1, 2)),
    "stateless_random_contrast": lambda tf, x: tf.image.stateless_random_contrast(x, 0.2, 1.5, (7, 3)),
    "stateless_random_saturation": lambda tf, x: tf.image.stateless_random_saturation(x / 17.0, 0.2, 3.0, (5, 9)),
    "stateless_random_hue": lambda tf, x: tf.image.stateless_random_hue(x / 17.0, 0.45, (2, 11)),
    "stateless_random_hue_seed_tensor": lambda tf, x: tf.image.stateless_random_hue(
        x / 17.0, 0.3, tf.constant([123, 4], tf.int64)),
    # measures and geometry (branch imgrand18)
    "sobel_edges": lambda tf, x: tf.image.sobel_edges(x),
    "ssim_3": lambda tf, x: tf.image.ssim(x, x * 0.8 + tf.sin(x), 17.0, filter_size=3, filter_sigma=0.8),
    "ssim_5_k": lambda tf, x: tf.image.ssim(x[0], x[1], 17.0, filter_size=4, filter_sigma=2.0, k1=0.05, k2=0.1),
    "ssim_default": lambda tf, x: tf.image.ssim(tf.image.resize(x, (12, 13)), tf.image.resize(x[::-1], (12, 13)),
                                                20.0),
    "ssim_map": lambda tf, x: tf.image.ssim(x, x[::-1], 17.0, filter_size=3, return_index_map=True),
    "ssim_uint8": lambda tf, x: tf.image.ssim(tf.cast(x * 15, tf.uint8), tf.cast(x[::-1] * 15, tf.uint8), 255,
                                              filter_size=3),
    "ssim_same": lambda tf, x: tf.image.ssim(x, x, 17.0, filter_size=4),
    "resize_with_pad_wide": lambda tf, x: tf.image.resize_with_pad(x, 6, 9),
    "resize_with_pad_tall": lambda tf, x: tf.image.resize_with_pad(x[0], 11, 3),
    "resize_with_pad_nearest": lambda tf, x: tf.image.resize_with_pad(x, 7, 7, method="nearest"),
    "extract_patches_valid": lambda tf, x: tf.image.extract_patches(x, [1, 2, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                                                    "VALID"),
    "extract_patches_same": lambda tf, x: tf.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1],
                                                                   "SAME"),
    "extract_patches_rates": lambda tf, x: tf.image.extract_patches(x, [1, 2, 2, 1], [1, 1, 2, 1], [1, 2, 3, 1],
                                                                    "SAME"),
    "extract_patches_rates_valid": lambda tf, x: tf.image.extract_patches(x, [1, 2, 2, 1], [1, 2, 1, 1],
                                                                          [1, 2, 1, 1], "VALID"),
    "extract_patches_empty": lambda tf, x: tf.image.extract_patches(x, [1, 6, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                                                    "VALID"),
    **{f"crop_and_resize_{m}_{h}x{w}": (lambda m, h, w: lambda tf, x: tf.image.crop_and_resize(
        x, tf.constant([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [-0.3, 0.5, 0.6, 1.4], [0.9, 0.7, 0.2, 0.1],
                        [0.5, 0.5, 0.5, 0.5]]), tf.constant([0, 1, 1, 0, 1]), (h, w), method=m,
        extrapolation_value=-1.5))(m, h, w)
       for m in ("bilinear", "nearest") for h, w in ((3, 4), (1, 5), (6, 1))},
    "crop_and_resize_int": lambda tf, x: tf.image.crop_and_resize(
        tf.cast(x * 3, tf.int32), [[0.2, 0.1, 0.7, 0.95]], [1], [4, 3]),
    "stateless_random_crop": lambda tf, x: tf.image.stateless_random_crop(x, (2, 3, 2, 3), (3, 8)),
    "stateless_random_crop_3d": lambda tf, x: tf.image.stateless_random_crop(x[1], [2, 2, 1], (17, 1)),
    # non-maximum suppression (branch imgrand18): x is ignored, the boxes are nms_boxes()
    **{f"nms_{m}_{t}_{st}": (lambda m, t, st: lambda tf, x: tf.image.non_max_suppression(
        tf.constant(nms_boxes()[0]), tf.constant(nms_boxes()[1]), m, t, st))(m, t, st)
       for m, t, st in ((30, 0.5, float("-inf")), (5, 0.5, float("-inf")), (30, 0.0, float("-inf")),
                        (30, 0.3, 0.45), (30, 1.0, 0.2), (0, 0.5, float("-inf")), (30, 0.5, 2.0))},
    "nms_with_scores": lambda tf, x: tf.image.non_max_suppression_with_scores(
        tf.constant(nms_boxes()[0]), tf.constant(nms_boxes()[1]), 10, 0.4, 0.1),
    "ssim_multiscale_3": lambda tf, x: tf.image.ssim_multiscale(
        tf.image.resize(x, (13, 11)), tf.image.resize(x[::-1], (13, 11)) * 0.7 + 2.0, 20.0, (0.3, 0.3, 0.4),
        filter_size=3),
    "ssim_multiscale_5": lambda tf, x: tf.image.ssim_multiscale(
        tf.image.resize(x, (16, 18)), tf.image.resize(x, (16, 18)) * 0.9 + tf.image.resize(x[::-1], (16, 18)) * 0.2,
        17.0, filter_size=1, filter_sigma=0.5),
    "draw_bounding_boxes": lambda tf, x: tf.image.draw_bounding_boxes(
        tf.image.resize(x, (9, 11)), tf.constant([
            [[0.1, 0.2, 0.7, 0.9], [-0.2, 0.5, 0.4, 1.3], [0.6, 0.6, 0.3, 0.9], [0.0, 0.0, 1.0, 1.0]],
            [[0.35, 0.45, 0.36, 0.46], [1.2, 0.1, 1.5, 0.5], [-0.5, -0.5, -0.01, 0.4], [0.5, -0.3, 0.9, 0.05]]]),
        tf.constant([[1.0, 0.0, 0.0, 1.0], [0.0, 2.0, 0.5, 1.0], [9.0, 8.0, 7.0, 1.0]])),
    "draw_bounding_boxes_grey": lambda tf, x: tf.image.draw_bounding_boxes(
        tf.image.resize(x[..., :1], (6, 5)), tf.constant([[[0.2, 0.2, 0.8, 0.8]], [[0.0, 0.5, 0.5, 1.0]]]),
        tf.constant([[-1.0, 0.0, 0.0, 0.0]])),
    # Keras 3's colour augmentation layers (branch aug19) with degenerate factor ranges (lower ==
    # upper) or draws that cannot change the map, so the outputs are fixed; x * 15 is in [0, 255)
    "RandomGrayscale_all": lambda tf, x: tf.keras.layers.RandomGrayscale(1.0)(x * 15),
    "RandomGrayscale_none": lambda tf, x: tf.keras.layers.RandomGrayscale(0.0)(x * 15),
    "RandomGrayscale_3d": lambda tf, x: tf.keras.layers.RandomGrayscale(1.0)(x[1]),
    "RandomGrayscale_inference": lambda tf, x: tf.keras.layers.RandomGrayscale(1.0)(x, training=False),
    # hue +-0.5 (a random sign) is the same shift mod 1
    "RandomHue_half": lambda tf, x: tf.keras.layers.RandomHue((1.0, 1.0))(x * 15),
    "RandomHue_zero_range": lambda tf, x: tf.keras.layers.RandomHue(0.0, value_range=(0, 17))(x),
    "RandomHue_3d": lambda tf, x: tf.keras.layers.RandomHue((1.0, 1.0), value_range=(-1, 20))(x[0]),
    "RandomSaturation": lambda tf, x: tf.keras.layers.RandomSaturation((0.3, 0.3))(x * 15),
    "RandomSaturation_neg": lambda tf, x: tf.keras.layers.RandomSaturation((-0.5, -0.5))(x * 15),
    "RandomSaturation_unit": lambda tf, x: tf.keras.layers.RandomSaturation((0.8, 0.8), value_range=(0, 1))(x / 17),
    "RandomColorDegeneration": lambda tf, x: tf.keras.layers.RandomColorDegeneration((0.4, 0.4))(x * 15),
    "RandomColorDegeneration_3d": lambda tf, x: tf.keras.layers.RandomColorDegeneration(
        (-0.7, -0.7), value_range=(0, 17))(x[0]),
    "RandomInvert": lambda tf, x: tf.keras.layers.RandomInvert((1.0, 1.0))(x * 15),
    "RandomInvert_never": lambda tf, x: tf.keras.layers.RandomInvert((0.0, 0.0), value_range=(0, 17))(x),
    "RandomInvert_range": lambda tf, x: tf.keras.layers.RandomInvert((1.0, 1.0), value_range=(0, 17))(x[0]),
    "RandomPosterization": lambda tf, x: tf.keras.layers.RandomPosterization((3, 3))(x * 15),
    "RandomPosterization_range": lambda tf, x: tf.keras.layers.RandomPosterization((5, 5), value_range=(0, 17))(x),
    "RandomPosterization_uint8": lambda tf, x: tf.keras.layers.RandomPosterization((2, 2))(tf.cast(x * 15, tf.uint8)),
    "Solarization": lambda tf, x: tf.keras.layers.Solarization()(x * 15),
    "Solarization_range": lambda tf, x: tf.keras.layers.Solarization(value_range=(0, 17))(x[0]),
    "Solarization_uint8": lambda tf, x: tf.keras.layers.Solarization()(tf.cast(x * 15, tf.uint8)),
    "Solarization_inference": lambda tf, x: tf.keras.layers.Solarization(0.5, 0.5)(x, training=False),
    "RandomSharpness": lambda tf, x: tf.keras.layers.RandomSharpness((0.3, 0.3))(x * 15),
    "RandomSharpness_range": lambda tf, x: tf.keras.layers.RandomSharpness((0.9, 0.9), value_range=(0, 17))(x),
    "RandomSharpness_3d": lambda tf, x: tf.keras.layers.RandomSharpness((0.0, 0.0))(x[1] * 15),
    "AutoContrast": lambda tf, x: tf.keras.layers.AutoContrast()(x * 15),
    "AutoContrast_range": lambda tf, x: tf.keras.layers.AutoContrast(value_range=(0, 17))(x[0]),
    "AutoContrast_flat": lambda tf, x: tf.keras.layers.AutoContrast()(tf.concat([x[..., :2] * 15, x[..., 2:] * 0 + 3], -1)),
    "AutoContrast_uint8": lambda tf, x: tf.keras.layers.AutoContrast()(tf.cast(x * 10, tf.uint8)),
    "AutoContrast_inference": lambda tf, x: tf.keras.layers.AutoContrast()(x * 15, training=False),
    "Equalization": lambda tf, x: tf.keras.layers.Equalization()(x * 15),
    "Equalization_bins": lambda tf, x: tf.keras.layers.Equalization(value_range=(0, 17), bins=16)(x),
    "Equalization_flat": lambda tf, x: tf.keras.layers.Equalization()(tf.concat([x[..., :2] * 15, x[..., 2:] * 0 + 3], -1)),
    "Equalization_3d": lambda tf, x: tf.keras.layers.Equalization(bins=7)(x[0] * 15),
    "Equalization_uint8": lambda tf, x: tf.keras.layers.Equalization()(tf.cast(x * 15, tf.uint8)),
    "Equalization_inference": lambda tf, x: tf.keras.layers.Equalization()(x * 15, training=False),
    "RandomColorJitter": lambda tf, x: tf.keras.layers.RandomColorJitter(
        brightness_factor=(0.1, 0.1), contrast_factor=(0.0, 0.0), saturation_factor=(0.6, 0.6),
        hue_factor=(1.0, 1.0))(x * 15),
    "RandomColorJitter_some": lambda tf, x: tf.keras.layers.RandomColorJitter(
        value_range=(0, 17), brightness_factor=(-0.2, -0.2), saturation_factor=(0.3, 0.3))(x),
    "RandomColorJitter_none": lambda tf, x: tf.keras.layers.RandomColorJitter()(x * 15),
    # RandomErasing, RandomGaussianBlur, RandomShear (branch aug19): fixed maps -- no erasing, or a
    # box of scale 1 (the whole image); blur sigma ranges of width 0; shears through Keras'
    # transform_images hook with given factors (the map a draw selects)
    "RandomErasing_never": lambda tf, x: tf.keras.layers.RandomErasing((0.0, 0.0))(x * 15),
    "RandomErasing_all": lambda tf, x: tf.keras.layers.RandomErasing((1.0, 1.0), scale=(1.0, 1.0), fill_value=300)(
        x * 15),
    "RandomErasing_rgb": lambda tf, x: tf.keras.layers.RandomErasing(
        (1.0, 1.0), scale=(1.0, 1.0), fill_value=[1.0, -2.0, 30.0], value_range=(0, 17))(x[0]),
    "RandomGaussianBlur": lambda tf, x: tf.keras.layers.RandomGaussianBlur((1.0, 1.0), sigma=(0.5, 0.5))(x * 15),
    "RandomGaussianBlur_5": lambda tf, x: tf.keras.layers.RandomGaussianBlur(
        (1.0, 1.0), kernel_size=5, sigma=(0.9, 0.9), value_range=(0, 17))(x[1]),
    "RandomGaussianBlur_3x5": lambda tf, x: tf.keras.layers.RandomGaussianBlur(
        (1.0, 1.0), kernel_size=(3, 5), sigma=(0.7, 0.7))(x * 15),
    "RandomGaussianBlur_never_clips": lambda tf, x: tf.keras.layers.RandomGaussianBlur(
        (0.0, 0.0), value_range=(2, 10))(x),
    "RandomShear_factors": lambda tf, x: tf.keras.layers.RandomShear(0.5, 0.5).transform_images(
        x, {"shear_factor": tf.constant([[0.3, -0.2], [-0.45, 0.1]])}, training=True),
    **{f"RandomShear_{m}_{i}": (lambda m, i: lambda tf, x: tf.keras.layers.RandomShear(
        0.5, 0.5, fill_mode=m, interpolation=i, fill_value=2.5).transform_images(
        x, {"shear_factor": tf.constant([[0.25, 0.4], [-0.35, -0.15]])}, training=True))(m, i)
       for m in ("reflect", "wrap", "constant", "nearest") for i in ("bilinear", "nearest")},
    "RandomShear_zero": lambda tf, x: tf.keras.layers.RandomShear(0.0, 0.0)(x),
    "RandomShear_inference": lambda tf, x: tf.keras.layers.RandomShear(0.3, 0.3)(x, training=False),
    # MixUp, CutMix (a batch of copies, or one image: the mix is the image), RandomHeight /
    # RandomWidth with fixed factors, Pipeline of fixed maps (branch aug19)
    "MixUp_one": lambda tf, x: tf.keras.layers.MixUp()(x[0]),
    "MixUp_copies": lambda tf, x: tf.keras.layers.MixUp(0.5)(tf.concat([x[:1]] * 3, 0)),
    "MixUp_inference": lambda tf, x: tf.keras.layers.MixUp()(x, training=False),
    "CutMix_one": lambda tf, x: tf.keras.layers.CutMix()(x[1]),
    "CutMix_copies": lambda tf, x: tf.keras.layers.CutMix(0.7)(tf.concat([x[1:]] * 3, 0)),
    "CutMix_inference": lambda tf, x: tf.keras.layers.CutMix()(x, training=False),
    "RandomHeight": lambda tf, x: tf.keras.layers.RandomHeight((0.5, 0.5))(x),
    "RandomHeight_nearest": lambda tf, x: tf.keras.layers.RandomHeight((-0.5, -0.5), interpolation="nearest")(x[0]),
    "RandomWidth": lambda tf, x: tf.keras.layers.RandomWidth((0.9, 0.9))(x),
    "RandomWidth_inference": lambda tf, x: tf.keras.layers.RandomWidth(0.5)(x, training=False),
    "Pipeline": lambda tf, x: tf.keras.layers.Pipeline([
        tf.keras.layers.Resizing(4, 6), tf.keras.layers.RandomInvert((1.0, 1.0), value_range=(0, 17)),
        tf.keras.layers.AutoContrast(value_range=(0, 17))])(x),
    "Pipeline_inference": lambda tf, x: tf.keras.layers.Pipeline([
        tf.keras.layers.RandomInvert((1.0, 1.0), value_range=(0, 17)), tf.keras.layers.AutoContrast()])(
        x, training=False),
    # RandomPerspective through Keras' transform_images hook with given corner moves (aug19)
    **{f"RandomPerspective_{i}_{d}": (lambda i, d: lambda tf, x: tf.keras.layers.RandomPerspective(
        interpolation=i, fill_value=1.5).transform_images(x, {
            "apply_perspective": tf.constant([True, d]),
            "start_points": tf.constant([[[0.0, 0.0], [3.0, 0.0], [0.0, 4.0], [3.0, 4.0]]] * 2),
            "end_points": tf.constant([[[0.3, -0.2], [3.4, 0.5], [-0.6, 3.7], [2.5, 4.2]],
                                       [[-0.4, 0.1], [2.8, -0.3], [0.2, 4.5], [3.3, 3.6]]])}, training=True))(i, d)
       for i, d in (("bilinear", True), ("nearest", True), ("bilinear", False))},
    "RandomPerspective_zero_scale": lambda tf, x: tf.keras.layers.RandomPerspective((1.0, 1.0), scale=0.0)(x),
    "RandomPerspective_inference": lambda tf, x: tf.keras.layers.RandomPerspective()(x[0], training=False),
    # RandAugment: no ops, or outside training, is a fixed map (aug19)
    "RandAugment_no_ops": lambda tf, x: tf.keras.layers.RandAugment(num_ops=0)(x * 15),
    "RandAugment_inference": lambda tf, x: tf.keras.layers.RandAugment()(x * 15, training=False),
    "AugMix_inference": lambda tf, x: tf.keras.layers.AugMix()(x * 15, training=False),
    "AugMix_no_chains_depth": lambda tf, x: tf.keras.layers.AugMix(chain_depth=0, num_chains=2)(x * 15),
}
