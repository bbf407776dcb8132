"""keras.metrics added in wave 18 against TF 2.21: TruePositives & co., F1Score/FBetaScore and
the metric functions Keras 3 exports (each line of TF_OUT is what TF 2.21 printed for the
program in _run; tapeflow's values must match to float32 rounding)."""
import numpy as np

import tapeflow as tf

TF_OUT = """
TruePositives 8.0
TruePositives [7.14727, 6.85529, 0.0]
FalsePositives 6.0
FalsePositives [9.56827, 5.37268, 1.14633]
TrueNegatives 8.0
TrueNegatives [5.4546, 9.65018, 13.87653]
FalseNegatives 2.0
FalseNegatives [1.84977, 2.14175, 8.99704]
f1 None None [0.33333, 0.33333, 0.33333]
fb None None [0.54154, 0.55215, 0.38246]
f1 None 0.4 [0.75, 0.33333, 0.72727]
fb None 0.4 [0.90624, 0.55215, 0.57513]
f1 micro None 0.33333
fb micro None 0.46343
f1 micro 0.4 0.64
fb micro 0.4 0.67947
f1 macro None 0.33333
fb macro None 0.49205
f1 macro 0.4 0.60354
fb macro 0.4 0.67784
f1 weighted None 0.33333
fb weighted None 0.45362
f1 weighted 0.4 0.69697
fb weighted 0.4 0.6904
mae [0.33333, 0.56899, 0.2682, 0.50285, 0.27808, 0.65117, 0.52195, 0.40736]
mse [0.33333, 0.43993, 0.08786, 0.34913, 0.07759, 0.47211, 0.31894, 0.28014]
mape [33.33334, 535655040.0, 155032192.0, 379551680.0, 99387704.0, 276628992.0, 416216224.0, 326933376.0]
msle [0.16015, 0.23351, 0.04774, 0.1702, 0.03653, 0.21525, 0.1719, 0.14117]
kld [16.1181, 0.10536, 0.41476, 0.46189, 0.62423, 1.93906, 0.38155, 0.27614]
logcosh [0.14459, 0.19877, 0.04304, 0.15694, 0.0383, 0.21559, 0.14761, 0.1262]
huber [0.16667, 0.21997, 0.04393, 0.17456, 0.0388, 0.23605, 0.15947, 0.14007]
binary_crossentropy [5.3727, 1.2118, 0.32627, 1.12482, 0.3261, 1.23678, 0.88546, 0.83059]
hinge [1.0, 1.23565, 0.93487, 1.16952, 0.61141, 0.98451, 1.18862, 1.07403]
poisson [5.3727, 0.87078, 0.51345, 0.74355, 0.79544, 1.21511, 0.771, 0.67188]
binary_accuracy [[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
categorical_accuracy [0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
[1.0, 0.0, 0.0]
"""


def _run():
    M = tf.keras.metrics
    rng = np.random.default_rng(3)
    yt = (rng.random((8, 3)) > 0.5).astype("f")
    yp = rng.random((8, 3)).astype("f")
    sw = rng.random(8).astype("f")
    yp[0] = 0
    yp[1, :2] = 0.9
    out = []

    def r(x):
        return np.asarray(x, dtype=float).tolist()
    for cls in ["TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives"]:
        m = getattr(M, cls)()
        m.update_state(yt, yp)
        out.append((cls, r(m.result())))
        m = getattr(M, cls)(thresholds=[0.2, 0.5, 0.9])
        m.update_state(yt, yp, sample_weight=sw)
        m.update_state(yt[:4], yp[:4])
        out.append((cls, r(m.result())))
    for avg in [None, "micro", "macro", "weighted"]:
        for thr in [None, 0.4]:
            m = M.F1Score(average=avg, threshold=thr)
            m.update_state(yt, yp)
            out.append((f"f1 {avg} {thr}", r(m.result())))
            m = M.FBetaScore(average=avg, beta=2.0, threshold=thr)
            m.update_state(yt, yp, sample_weight=sw)
            m.update_state(yt[:3], yp[:3])
            out.append((f"fb {avg} {thr}", r(m.result())))
    for n in ["mae", "mse", "mape", "msle", "kld", "logcosh", "huber", "binary_crossentropy", "hinge", "poisson",
              "binary_accuracy", "categorical_accuracy"]:
        out.append((n, r(getattr(M, n)(yt, yp))))
    out.append(("", r(M.sparse_categorical_accuracy(np.array([0, 2, 1]), yp[:3]))))
    return out


def _parse(line):
    # "<name...> <value>": the value is a list "[...]" or the last token
    vals = line[line.index("["):] if "[" in line else line.split()[-1]
    return line[:len(line) - len(vals)].strip(), np.array(eval(vals), dtype=float)  # noqa: S307 (TF's literals)


def test_metrics_match_tf():
    want = [_parse(l) for l in TF_OUT.strip().splitlines()]
    got = _run()
    assert len(got) == len(want)
    for (name, g), (wname, w) in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-5, err_msg=f"{name} / TF line {wname!r}")
