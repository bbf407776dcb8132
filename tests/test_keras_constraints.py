"""keras.constraints against TF 2.21's values, and a constraint given by name applied after
each optimizer step."""
import numpy as np
import pytest

import tapeflow as tf

C = tf.keras.constraints
W = np.array([[3., -4., 0.5], [0., 2., -0.1]], np.float32)

# TF 2.21: c(W) for each constraint
CASES = [
    (lambda: C.MaxNorm(2.), [[2.0, -1.7888540029525757, 0.5], [0.0, 0.8944270014762878, -0.10000000149011612]]),
    (lambda: C.MaxNorm(1.5, axis=1), [[0.8955339789390564, -1.1940449476242065, 0.14925600588321686],
                                      [0.0, 1.498128056526184, -0.07490599900484085]]),
    (lambda: C.MinMaxNorm(1., 2., 0.5), [[2.5, -2.8944270610809326, 0.7402899861335754],
                                         [0.0, 1.4472140073776245, -0.1480579972267151]]),
    (lambda: C.NonNeg(), [[3.0, 0.0, 0.5], [0.0, 2.0, 0.0]]),
    (lambda: C.UnitNorm(), [[1.0, -0.8944270014762878, 0.9805799722671509],
                            [0.0, 0.4472140073776245, -0.19611600041389465]]),
    (lambda: C.UnitNorm(axis=[0, 1]), [[0.5546050071716309, -0.7394739985466003, 0.09243399649858475],
                                       [0.0, 0.36973699927330017, -0.018487000837922096]]),
    (lambda: C.get("non_neg"), [[3.0, 0.0, 0.5], [0.0, 2.0, 0.0]]),
    (lambda: C.get({"class_name": "MaxNorm", "config": {"max_value": 1.0, "axis": 0}}),
     [[1.0, -0.8944270014762878, 0.5], [0.0, 0.4472140073776245, -0.10000000149011612]]),
]


@pytest.mark.parametrize("make,want", CASES)
def test_constraints_match_tf(make, want):
    c = make()
    np.testing.assert_allclose(c(tf.constant(W)).numpy(), want, rtol=1e-6, atol=1e-6)   # (TF printed 6 decimals)
    assert type(c).from_config(c.get_config()).get_config() == c.get_config()


def test_constraint_by_name_applies_after_each_fit_step():
    d = tf.keras.layers.Dense(2, kernel_constraint="non_neg", kernel_initializer=tf.keras.initializers.Constant(-0.5))
    m = tf.keras.Sequential([tf.keras.Input((3,)), d])
    m.compile("sgd", "mse")
    m.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0, epochs=1)
    np.testing.assert_array_equal(d.kernel.numpy(), 0.0)     # TF 2.21: all zeros


def test_unknown_constraint_name_raises():
    with pytest.raises(ValueError, match="constraint"):
        C.get("positive")
