"""TF 2.21 names a TF program uses that tapeflow lacked (wave 25): tf.autograph's set_verbosity, trace and
experimental.Feature, and tf.function's other keyword arguments."""
import pytest

import tapeflow as tf


def test_autograph_names(capsys):
    assert [f.name for f in tf.autograph.experimental.Feature] == [
        "ALL", "AUTO_CONTROL_DEPS", "ASSERT_STATEMENTS", "BUILTIN_FUNCTIONS", "EQUALITY_OPERATORS", "LISTS",
        "NAME_SCOPES"]                                                   # TF 2.21's members, in its order
    tf.autograph.set_verbosity(3)
    tf.autograph.trace("traced", 1)
    assert capsys.readouterr().out == "traced 1\n"


def test_function_takes_tf_keywords():
    f = tf.function(lambda x: x * 2, experimental_implements="demo.double",
                    experimental_autograph_options=tf.autograph.experimental.Feature.LISTS,
                    experimental_attributes={"a": 1})
    assert float(f(tf.constant(2.0))) == 4.0

    @tf.function(experimental_compile=True)   # jit_compile's old name
    def g(x):
        return x + 1
    assert float(g(tf.constant(1.0))) == 2.0
    with pytest.raises(NotImplementedError, match="experimental_follow_type_hints"):
        tf.function(lambda x: x, experimental_follow_type_hints=True)
