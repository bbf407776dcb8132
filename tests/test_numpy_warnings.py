"""TF computes log(0) = -inf and sqrt(-1) = nan silently; tapeflow's NumPy kernels raised
RuntimeWarnings on stderr, so a ported program printed what it never printed under TF. Run in a
fresh interpreter: pytest installs its own warning filters around each test."""
import subprocess
import sys

PROGRAM = r"""
import numpy as np
import tapeflow as tf
x = tf.constant([0.0, -1.0, 1.0])
tf.math.log(x); tf.sqrt(x); 1.0 / x; x / 0.0
f = tf.function(lambda x: tf.math.log(x) * tf.sqrt(x))
for _ in range(60):   # past the fused tier-up as well
    f(x)
g = tf.function(lambda x: tf.math.log(x), backend="interpreter")
g(x)
print("ok")
np.log(np.zeros(1))   # the user's own NumPy code still warns
"""


def test_kernels_are_silent_and_user_numpy_still_warns():
    r = subprocess.run([sys.executable, "-W", "default", "-c", PROGRAM], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    lines = [ln for ln in r.stderr.splitlines() if "Warning" in ln]
    assert len(lines) == 1 and "<string>" in lines[0] and "divide by zero encountered in log" in lines[0], r.stderr
