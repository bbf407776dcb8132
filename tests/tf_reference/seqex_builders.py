"""Builders shared by make_seqex_reference.py (run on TF 2.21) and tests/test_seqex.py (on tapeflow):
a SequenceExample from its JSON form, and feature specs from theirs. ``tf`` is the framework's module."""


def feature(tf, kind, values):
    """A tf.train.Feature from [kind, values], kind in int64/float/bytes/none (bytes values as str, utf-8)."""
    if kind == "none":
        return tf.train.Feature()
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode() for v in values]))


def message(tf, spec):
    kw = {}
    if "context" in spec:
        kw["context"] = tf.train.Features(feature={k: feature(tf, *kv) for k, kv in spec["context"].items()})
    if "feature_lists" in spec:
        kw["feature_lists"] = tf.train.FeatureLists(feature_list={
            k: tf.train.FeatureList(feature=[feature(tf, *kv) for kv in rows])
            for k, rows in spec["feature_lists"].items()})
    return tf.train.SequenceExample(**kw)


def spec(tf, d):
    """A feature spec from its JSON form."""
    if d is None:
        return None
    out = {}
    for k, f in d.items():
        kind, dt = f[0], tf.as_dtype(f[1])
        if kind == "fixed":
            out[k] = tf.io.FixedLenFeature(f[2], dt, default_value=f[3] if len(f) > 3 else None)
        elif kind == "var":
            out[k] = tf.io.VarLenFeature(dt)
        elif kind == "seq":
            out[k] = tf.io.FixedLenSequenceFeature(f[2], dt, allow_missing=f[3], default_value=f[4])
        elif kind == "ragged":
            out[k] = tf.io.RaggedFeature(dt, value_key=f[2])
        elif kind == "sparse":
            out[k] = tf.io.SparseFeature(f[2], f[3], dt, f[4], already_sorted=f[5])
    return out
