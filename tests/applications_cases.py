"""keras.applications configurations shared by tests/tf_reference/make_applications_reference.py
(run under TF 2.21) and tests/test_applications.py: name -> (builder, kwargs)."""

CASES = {
    # (a 224x224 VGG16 top has 138M parameters: 20 s to initialize here; a 32x32 one exercises the same code)
    "vgg16_top_32": ("VGG16", {"weights": None, "input_shape": (32, 32, 3), "classes": 10}),
    "vgg16_notop_avg": ("VGG16", {"weights": None, "include_top": False, "input_shape": (64, 48, 3),
                                  "pooling": "avg"}),
    "vgg19_notop": ("VGG19", {"weights": None, "include_top": False}),
    "resnet50_top": ("ResNet50", {"weights": None}),
    "resnet50_notop_max": ("ResNet50", {"weights": None, "include_top": False, "input_shape": (64, 64, 3),
                                        "pooling": "max"}),
    "resnet101_notop": ("ResNet101", {"weights": None, "include_top": False, "input_shape": (32, 32, 3)}),
    "resnet152_classes": ("ResNet152", {"weights": None, "classes": 10, "input_shape": (32, 32, 3),
                                        "classifier_activation": None}),
    "mobilenetv2_top": ("MobileNetV2", {"weights": None}),
    "mobilenetv2_035_96": ("MobileNetV2", {"weights": None, "alpha": 0.35, "input_shape": (96, 96, 3),
                                           "include_top": False, "pooling": "avg"}),
    "mobilenetv2_14_odd": ("MobileNetV2", {"weights": None, "alpha": 1.4, "input_shape": (75, 81, 3),
                                           "include_top": False}),
    # wave 25 (keras25): ResNetV2 and MobileNet (v1)
    "resnet50v2_top": ("ResNet50V2", {"weights": None}),
    "resnet101v2_notop_avg": ("ResNet101V2", {"weights": None, "include_top": False, "input_shape": (64, 64, 3),
                                              "pooling": "avg"}),
    "resnet152v2_classes": ("ResNet152V2", {"weights": None, "classes": 10, "input_shape": (32, 32, 3)}),
    "mobilenet_top": ("MobileNet", {"weights": None}),
    "mobilenet_050_128_dm2": ("MobileNet", {"weights": None, "alpha": 0.5, "depth_multiplier": 2,
                                            "input_shape": (128, 128, 3), "include_top": False, "pooling": "max"}),
    "mobilenet_075_odd": ("MobileNet", {"weights": None, "alpha": 0.75, "input_shape": (70, 90, 3),
                                        "include_top": False}),
    "densenet121_top": ("DenseNet121", {"weights": None}),
    "densenet169_notop_avg": ("DenseNet169", {"weights": None, "include_top": False, "input_shape": (64, 64, 3),
                                              "pooling": "avg"}),
    "densenet201_classes": ("DenseNet201", {"weights": None, "classes": 10, "input_shape": (32, 32, 3),
                                            "classifier_activation": None}),
    "xception_top": ("Xception", {"weights": None}),
    "xception_notop_avg_odd": ("Xception", {"weights": None, "include_top": False, "input_shape": (75, 90, 3),
                                            "pooling": "avg"}),
    "inception_v3_top": ("InceptionV3", {"weights": None}),
    "inception_v3_notop_max_odd": ("InceptionV3", {"weights": None, "include_top": False, "input_shape": (80, 100, 3),
                                                   "pooling": "max"}),
    "inception_resnet_v2_notop": ("InceptionResNetV2", {"weights": None, "include_top": False,
                                                        "input_shape": (75, 75, 3)}),
    "inception_resnet_v2_top": ("InceptionResNetV2", {"weights": None, "classes": 5, "input_shape": (99, 99, 3)}),
    "mobilenet_notop_none": ("MobileNet", {"weights": None, "include_top": False, "classes": 7}),
}


def describe(model):
    """Each layer's name, class, output shape and parameter count, and the totals."""
    rows = []
    for layer in model.layers:
        shape = layer.output.shape if hasattr(layer.output, "shape") else None
        rows.append([layer.name, type(layer).__name__, [None if d is None else int(d) for d in shape],
                     int(sum(int(w.numpy().size) for w in layer.weights))])
    return {"name": model.name, "layers": rows, "params": int(sum(int(w.numpy().size) for w in model.weights)),
            "trainable": int(sum(int(w.numpy().size) for w in model.trainable_weights))}
