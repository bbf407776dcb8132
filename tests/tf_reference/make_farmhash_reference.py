"""TF 2.21's FarmHash Fingerprint64 (tf.fingerprint(s, "farmhash64")) of random byte strings, for
tests/test_strings.py. Run with the peers venv: python tests/tf_reference/make_farmhash_reference.py"""
import json
import random
from pathlib import Path

import tensorflow as tf

random.seed(0)
strs = [bytes(random.getrandbits(8) for _ in range(n)) for n in list(range(0, 140)) + [191, 192, 193, 255, 256, 300]]
strs += [b"Hello", b"TensorFlow", b"2.x", b""]
fp = tf.fingerprint(tf.constant(strs), "farmhash64").numpy()
vals = [int.from_bytes(bytes(r), "little") for r in fp]
out = Path(__file__).resolve().parent.parent / "data" / "farmhash_tf.json"
out.write_text(json.dumps({"strings": [s.hex() for s in strs], "fingerprint64": [str(v) for v in vals]}))
