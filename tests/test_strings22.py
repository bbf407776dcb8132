"""Wave 22 (api22): tf.strings.unicode_decode_with_offsets / unicode_split_with_offsets against
TF 2.21's values (the literals were printed by TF 2.21 CPU on the same inputs): byte offsets,
the errors= modes on invalid UTF-8, UTF-16/32, shapes (scalar, 2-D, ragged), eager == traced."""
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

S = ["héllo", "a\u20ac\U0001F600b", ""]
BAD = [b"a\xffb", b"\xe2\x82", b"\xe2\x82x\xf0\x9f\x98", b"\xc0\xaf", b"\xed\xa0\x80z"]
BAD_OFFSETS = [[0, 1, 2], [0], [0, 2, 3], [0, 1], [0, 1, 2, 3]]     # TF 2.21, errors='replace'
R = 65533


def _l(x):
    return x.to_list() if isinstance(x, tf.RaggedTensor) else x.numpy().tolist()


def test_decode_with_offsets_vs_tf():
    c, o = tf.strings.unicode_decode_with_offsets(S, "UTF-8")
    assert _l(c) == [[104, 233, 108, 108, 111], [97, 8364, 128512, 98], []]
    assert _l(o) == [[0, 1, 3, 4, 5], [0, 1, 4, 8], []]
    assert c.dtype.name == "int32" and o.dtype.name == "int64"
    c, o = tf.strings.unicode_decode_with_offsets("héllo", "UTF-8")          # a scalar: dense vectors
    assert isinstance(c, tf.Tensor) and _l(c) == [104, 233, 108, 108, 111] and _l(o) == [0, 1, 3, 4, 5]
    c, o = tf.strings.unicode_decode_with_offsets([["ab", "é"], ["", "x"]], "UTF-8")
    assert _l(c) == [[[97, 98], [233]], [[], [120]]] and _l(o) == [[[0, 1], [0]], [[], [0]]]
    c, o = tf.strings.unicode_decode_with_offsets(tf.ragged.constant([["ab"], ["c", "dé"]]), "UTF-8")
    assert _l(c) == [[[97, 98]], [[99], [100, 233]]] and _l(o) == [[[0, 1]], [[0], [0, 1]]]


def test_split_with_offsets_vs_tf():
    s, o = tf.strings.unicode_split_with_offsets(S, "UTF-8")
    assert _l(s) == [[b"h", b"\xc3\xa9", b"l", b"l", b"o"], [b"a", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"b"], []]
    assert _l(o) == [[0, 1, 3, 4, 5], [0, 1, 4, 8], []]
    s, o = tf.strings.unicode_split_with_offsets("héllo", "UTF-8")
    assert _l(s) == [b"h", b"\xc3\xa9", b"l", b"l", b"o"] and _l(o) == [0, 1, 3, 4, 5]


@pytest.mark.parametrize("errors,codes,offsets", [
    ("replace", [[97, R, 98], [R], [R, 120, R], [R, R], [R, R, R, 122]], BAD_OFFSETS),
    ("ignore", [[97, 98], [], [120], [], [122]], [[0, 2], [], [2], [], [3]]),
])
def test_invalid_utf8_vs_tf(errors, codes, offsets):
    c, o = tf.strings.unicode_decode_with_offsets(BAD, "UTF-8", errors=errors)
    assert _l(c) == codes and _l(o) == offsets
    s, o2 = tf.strings.unicode_split_with_offsets(BAD, "UTF-8", errors=errors)
    assert _l(o2) == offsets
    assert _l(s) == [[b"\xef\xbf\xbd" if v == R else chr(v).encode() for v in row] for row in codes]


def test_replacement_char_and_controls_vs_tf():
    c, o = tf.strings.unicode_decode_with_offsets(BAD, "UTF-8", replacement_char=63)
    assert _l(c) == [[97, 63, 98], [63], [63, 120, 63], [63, 63], [63, 63, 63, 122]] and _l(o) == BAD_OFFSETS
    s, _ = tf.strings.unicode_split_with_offsets(BAD, "UTF-8", replacement_char=63)
    assert _l(s)[3] == [b"?", b"?"]
    c, o = tf.strings.unicode_decode_with_offsets(["a\x01b"], "UTF-8", replace_control_characters=True)
    assert _l(c) == [[97, R, 98]] and _l(o) == [[0, 1, 2]]


def test_utf16_utf32_vs_tf():
    c, o = tf.strings.unicode_decode_with_offsets(["h\u20ac\U0001F600".encode("utf-16-be")], "UTF-16-BE")
    assert _l(c) == [[104, 8364, 128512]] and _l(o) == [[0, 2, 4]]
    s, _ = tf.strings.unicode_split_with_offsets(["h\u20ac\U0001F600".encode("utf-16-be")], "UTF-16-BE")
    assert _l(s) == [[b"\x00h", b" \xac", b"\xd8=\xde\x00"]]
    c, o = tf.strings.unicode_decode_with_offsets(["h\u20ac".encode("utf-32-be")], "UTF-32-BE")
    assert _l(c) == [[104, 8364]] and _l(o) == [[0, 4]]
    c, o = tf.strings.unicode_decode_with_offsets([b"\x00h\x00"], "UTF-16-BE")     # a truncated unit
    assert _l(c) == [[104, R]] and _l(o) == [[0, 2]]


@pytest.mark.parametrize("call,needle", [
    (lambda: tf.strings.unicode_decode_with_offsets(BAD, "UTF-8", errors="strict"), "Invalid formatting"),
    (lambda: tf.strings.unicode_split_with_offsets(BAD, "UTF-8", errors="strict"), "Invalid formatting"),
    (lambda: tf.strings.unicode_decode_with_offsets(["h"], "UTF-8", errors="foo"), "attr 'errors'"),
    (lambda: tf.strings.unicode_decode_with_offsets([b"a\xff"], "UTF-8", replacement_char=0x110000),
     "replacement_char out of unicode codepoint range"),
    (lambda: tf.strings.unicode_decode_with_offsets([1], "UTF-8"), "string"),
])
def test_errors_as_tf(call, needle):
    with pytest.raises(InvalidArgumentError, match=needle):
        call()


def test_traced_equals_eager():
    x = tf.constant(BAD + [b"h\xc3\xa9"])
    for op in (tf.strings.unicode_decode_with_offsets, tf.strings.unicode_split_with_offsets):
        e = [_l(t) for t in op(x, "UTF-8")]
        c = [_l(t) for t in tf.function(lambda v: op(v, "UTF-8"))(x)]
        assert e == c
    f = tf.function(lambda v: tf.strings.unicode_decode_with_offsets(v, "UTF-8", errors="strict"))
    with pytest.raises(InvalidArgumentError, match="Invalid formatting"):
        f(x)


# -- tf.strings.to_hash_bucket (TF's legacy Hash64) -----------------------------------------------------

def test_to_hash_bucket_vs_tf_recorded():
    import json
    from pathlib import Path
    ref = json.loads((Path(__file__).parent / "data" / "hash64_tf.json").read_text())
    strs = [bytes.fromhex(h) for h in ref["strings"]]
    got = tf.strings.to_hash_bucket(tf.constant(strs), ref["num_buckets"]).numpy().tolist()
    assert got == ref["buckets"]
    assert tf.strings.to_hash_bucket(tf.constant(strs), 10).numpy().tolist() == ref["buckets10"]


def test_to_hash_bucket_shapes_errors_traced_as_tf():
    # TF 2.21: scalar -> scalar, 2-D -> 2-D, ragged -> ragged; ["a", "b"] % 7 -> [4, 5]
    assert int(tf.strings.to_hash_bucket("a", 3)) == 1
    assert tf.strings.to_hash_bucket([["a", "b"]], 3).numpy().tolist() == [[1, 1]]
    assert tf.strings.to_hash_bucket(tf.ragged.constant([["a", "b"], []]), 3).to_list() == [[1, 1], []]
    f = tf.function(lambda x: tf.strings.to_hash_bucket(x, 7))
    assert f(tf.constant(["a", "b"])).numpy().tolist() == [4, 5]
    assert tf.strings.to_hash_bucket(["a"], tf.constant(3)).numpy().tolist() == [1]
    for nb in (0, -1):
        with pytest.raises(InvalidArgumentError, match="at least minimum 1"):
            tf.strings.to_hash_bucket(["a"], nb)


def test_saved_model_keeps_the_offsets_and_hash64_functions(tmp_path):
    # the per-element functions are saved by kind and arguments (strings._SPLITTERS, serializable)
    m = tf.Module()
    m.f = tf.function(lambda x: tf.strings.unicode_decode_with_offsets(x, "UTF-8", errors="ignore")[1].values,
                      input_signature=[tf.TensorSpec([None], tf.string)])
    m.g = tf.function(lambda x: tf.strings.to_hash_bucket(x, 7), input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(m, str(tmp_path / "sm"))
    r = tf.saved_model.load(str(tmp_path / "sm"))
    assert r.f(tf.constant([b"h\xc3\xa9\xffx"])).numpy().tolist() == [0, 1, 4]
    assert r.g(tf.constant(["a", "b"])).numpy().tolist() == [4, 5]
