"""The matrices of tests/test_linalg_lu.py and make_lu_reference.py (no TF import: the tests run without it)."""
import numpy as np


def cases():
    rng = np.random.default_rng(0)
    return {"a3": rng.normal(size=(3, 3)), "ties": np.array([[1., 2., 3.], [-1., 5., 1.], [1., 0., 4.]]),
            "batch": rng.normal(size=(2, 4, 4)), "singular": np.array([[0., 1.], [0., 2.]])}


def rhs_of(a):
    return np.arange(int(np.prod(a.shape[:-1])) * 2, dtype=np.float64).reshape(a.shape[:-2] + (a.shape[-1], 2)) + 1.0
