"""TF 2.21's tf.strings.to_hash_bucket (StringToHashBucket: the legacy Hash64, seed 0xDECAFCAFFE) of
random byte strings, for tests/test_strings22.py: buckets mod a number near 2**62 (so nearly the
whole hash is compared) and mod 10. Run with the peers venv:
python tests/tf_reference/make_hash64_reference.py"""
import json
import random
from pathlib import Path

import tensorflow as tf

random.seed(22)
strs = [bytes(random.getrandbits(8) for _ in range(n)) for n in list(range(0, 41)) + [63, 64, 65, 100, 257]]
strs += [b"hello", "h\u00e9llo".encode(), b"a" * 100]
NB = 2 ** 62 + 12345
out = Path(__file__).resolve().parent.parent / "data" / "hash64_tf.json"
out.write_text(json.dumps({
    "strings": [s.hex() for s in strs], "num_buckets": NB,
    "buckets": tf.strings.to_hash_bucket(tf.constant(strs), NB).numpy().tolist(),
    "buckets10": tf.strings.to_hash_bucket(tf.constant(strs), 10).numpy().tolist()}))
