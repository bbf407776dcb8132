"""tf.compat (wave 21): TF 2.21's helpers, v2, and the TF1 names a TF2 eager program uses; every other
v1 name refused by name. Expected values are TF 2.21's (literals)."""
from __future__ import annotations

import logging
import pathlib

import pytest

import tapeflow as tf
from tapeflow._unsupported import UnsupportedFeatureError


def test_helpers_as_tf():
    c = tf.compat
    assert c.as_bytes("a") == b"a" and c.as_bytes(b"a") == b"a" and c.as_bytes(bytearray(b"z")) == b"z"
    assert c.as_text(b"a") == "a" and c.as_str(b"x") == "x" and c.as_text("\u00e9".encode("latin-1"), "latin-1") == "\u00e9"
    assert c.as_str_any(3) == "3" and c.as_str_any(b"x") == "x"
    assert c.path_to_str(pathlib.Path("/a/b")) == "/a/b" and c.path_to_str(3) == 3
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):   # TF 2.21
        c.as_bytes(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        c.as_text(3)
    assert c.dimension_value(tf.TensorShape([3])[0]) == 3 and c.dimension_value(None) is None
    d = c.dimension_at_index(tf.TensorShape([3, None]), 1)
    assert repr(d) == "Dimension(None)" and d.value is None                              # TF 2.21
    assert repr(c.dimension_at_index(tf.TensorShape([3]), 0)) == "Dimension(3)"
    assert repr(c.dimension_at_index(tf.TensorShape(None), 0)) == "Dimension(None)"
    with pytest.raises(IndexError):
        c.dimension_at_index(tf.TensorShape([3]), 5)
    assert c.integral_types[1] is __import__("numpy").integer and c.bytes_or_text_types == (bytes, str)
    assert c.v2 is tf


def test_forward_compatibility_horizon_as_tf():
    # TF 2.21's horizon is 2026-01-16
    assert tf.compat.forward_compatible(2026, 1, 15) and not tf.compat.forward_compatible(2026, 1, 16)
    assert not tf.compat.forward_compatible(2030, 1, 1)
    with tf.compat.forward_compatibility_horizon(2031, 1, 1):
        assert tf.compat.forward_compatible(2030, 1, 1)
    assert not tf.compat.forward_compatible(2030, 1, 1)


def test_v1_logging_is_the_tensorflow_logger():
    v1 = tf.compat.v1
    assert (v1.logging.DEBUG, v1.logging.INFO, v1.logging.WARN, v1.logging.ERROR, v1.logging.FATAL) == \
        (10, 20, 30, 40, 50)                                                             # TF 2.21
    logger = logging.getLogger("tensorflow")
    old = logger.level
    try:
        v1.logging.set_verbosity(v1.logging.ERROR)
        assert v1.logging.get_verbosity() == 40 and tf.get_logger().level == 40
        seen = []

        class H(logging.Handler):
            def emit(self, record):
                seen.append(record.getMessage())
        h = H()
        logger.addHandler(h)
        v1.logging.info("hidden")
        v1.logging.error("shown %d", 1)
        for i in range(5):
            v1.logging.log_first_n(v1.logging.ERROR, "first %d", 2, i)
        for i in range(5):
            v1.logging.log_every_n(v1.logging.ERROR, "every %d", 2, i)
        logger.removeHandler(h)
        assert seen == ["shown 1", "first 0", "first 1", "every 0", "every 2", "every 4"]
    finally:
        logger.setLevel(old)


def test_v1_eager_switches_config_and_sessions():
    import tapeflow.compat.v1 as tf1   # importable as TF's module is
    assert tf1 is tf.compat.v1
    tf1.enable_eager_execution()
    tf1.enable_v2_behavior()
    assert tf1.executing_eagerly() and tf1.resource_variables_enabled()
    tf1.set_random_seed(3)
    a = tf.random.uniform([2])
    tf.random.set_seed(3)
    assert a.numpy().tolist() == tf.random.uniform([2]).numpy().tolist()
    config = tf1.ConfigProto()
    config.gpu_options.allow_growth = True
    assert config.gpu_options.allow_growth is True
    assert str(config) == "gpu_options {\n  allow_growth: true\n}\n"                      # TF 2.21
    with tf1.Session(config=config) as sess:          # the memory-growth idiom: made, never run
        with pytest.raises(UnsupportedFeatureError, match=r"tf.compat.v1.Session.run: .*tf.function"):
            sess.run(tf.constant(1))
    tf1.InteractiveSession(config=config).close()
    assert tf1.keras is tf.keras


def test_v1_other_names_are_refused_by_name():
    v1 = tf.compat.v1
    for name in ("placeholder", "get_variable", "variable_scope", "global_variables_initializer"):
        with pytest.raises(UnsupportedFeatureError, match=rf"tf.compat.v1.{name}: tapeflow does not implement TF1"):
            getattr(v1, name)
    # a v1 name TF2 also has is not handed over silently: v1 signatures differ (nn.dropout's keep_prob)
    with pytest.raises(UnsupportedFeatureError, match="TF2's tf.nn exists: check its signature"):
        v1.nn
    for f in (v1.disable_eager_execution, v1.disable_v2_behavior):
        with pytest.raises(UnsupportedFeatureError, match="tapeflow runs TF2 eagerly"):
            f()
    assert not hasattr(v1, "placeholder")   # (an AttributeError too, for probes)
