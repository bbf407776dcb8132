"""tf.config.optimizer (wave 20): Grappler's options and the JIT switch, recorded and reported as
TF 2.21 does (they change nothing in tapeflow: docs/differences.md). Expected values: TF 2.21's."""
import pytest

import tapeflow as tf


@pytest.fixture(autouse=True)
def _reset():
    yield
    tf.config.optimizer._options.clear()
    tf.config.optimizer._jit[0] = None


def test_experimental_options_as_tf_reports_them():
    o = tf.config.optimizer
    # TF 2.21: the two booleans are always there
    assert o.get_experimental_options() == {"disable_model_pruning": False, "disable_meta_optimizer": False}
    o.set_experimental_options({"constant_folding": False})
    got = o.get_experimental_options()
    # TF 2.21: {'constant_folding': False, 'disable_model_pruning': False, 'disable_meta_optimizer': False}
    assert list(got.items()) == [("constant_folding", False), ("disable_model_pruning", False),
                                 ("disable_meta_optimizer", False)]
    o.set_experimental_options({"constant_folding": True, "debug_stripper": True})
    o.set_experimental_options({})                     # TF 2.21: merged, so this clears nothing
    o.set_experimental_options({"foo": True})          # TF 2.21: accepted, not reported
    o.set_experimental_options({"min_graph_nodes": 5, "auto_mixed_precision": 1, "layout_optimizer": False})
    # TF 2.21, in this order (RewriterConfig's fields)
    assert list(o.get_experimental_options().items()) == [
        ("layout_optimizer", False), ("constant_folding", True), ("debug_stripper", True),
        ("disable_model_pruning", False), ("auto_mixed_precision", True), ("disable_meta_optimizer", False),
        ("min_graph_nodes", 5)]
    # TF 2.21: TypeError for a non-mapping
    with pytest.raises(TypeError):
        o.set_experimental_options(None)


def test_jit():
    o = tf.config.optimizer
    assert o.get_jit() == ""                            # TF 2.21: ''
    o.set_jit(True)
    assert o.get_jit() == "autoclustering"
    o.set_jit("autoclustering")
    assert o.get_jit() == "autoclustering"
    o.set_jit("foo")                                    # TF 2.21: anything else is off, no error
    assert o.get_jit() == ""
