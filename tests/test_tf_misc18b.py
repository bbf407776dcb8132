"""More tf / tf.math / tf.nn / tf.linalg functions added in wave 18 against TF 2.21: TF_OUT is what
TF printed for the same program (values rounded to 5 decimals)."""
import numpy as np

import tapeflow as tf

TF_OUT = """
truncatediv ([3, -3, -3, 3], 'int32')
truncatemod ([1, -1, 1, -1], 'int32')
truncatediv_f ([3.0, -3.0, -3.0, 3.0], 'float32')
truncatemod_f ([1.5, -1.5, 1.5, -1.5], 'float32')
shape_n [[2, 3], [4]]
is_symbolic False
tuple [[7, -7, 7, -7], [2, 2, -2, -2]]
accumulate_n ([17.0, -13.0, 13.0, -17.0], 'float32')
lbeta ([-4.094339847564697, -0.24155999720096588], 'float32')
ndtri ([-3.0902299880981445, -1.2815500497817993, 0.0, 1.2815500497817993, 3.090240001678467], 'float32')
erfcinv ([2.3267500400543213, 0.47694000601768494, -0.0, -0.47694000601768494, -2.326740026473999], 'float32')
real ([7.5, -7.5, 7.5, -7.5], 'float32')
imag ([0.0, 0.0, 0.0, 0.0], 'float32')
conj ([7.5, -7.5, 7.5, -7.5], 'float32')
angle ([0.0, 3.141590118408203, 0.0, 3.141590118408203], 'float32')
conj_int ([7, -7, 7, -7], 'int32')
crelu ([[0.0, 2.0, 1.0, 0.0]], 'float32')
d2s ([[[[0.0], [1.0], [4.0], [5.0]], [[2.0], [3.0], [6.0], [7.0]], [[8.0], [9.0], [12.0], [13.0]], [[10.0], [11.0], [14.0], [15.0]]]], 'float32')
s2d ([[[[0.0, 1.0, 2.0, 3.0, 8.0, 9.0, 10.0, 11.0], [4.0, 5.0, 6.0, 7.0, 12.0, 13.0, 14.0, 15.0]], [[16.0, 17.0, 18.0, 19.0, 24.0, 25.0, 26.0, 27.0], [20.0, 21.0, 22.0, 23.0, 28.0, 29.0, 30.0, 31.0]]]], 'float32')
normmom [[2.0, 3.0], [1.0, 4.0]]
wmom [[2.5, 4.25], [0.75, 1.6875]]
cal (1.0, 'float32')
cal_w (2.333329916000366, 'float32')
srl (3.0, 'float32')
convolution ([[[[68.4000015258789, 72.80000305175781, 77.19999694824219], [85.19999694824219, 91.19999694824219, 97.19999694824219], [102.0, 109.5999984741211, 117.19999694824219], [41.400001525878906, 45.599998474121094, 49.79999923706055]], [[135.60000610351562, 146.39999389648438, 157.1999969482422], [152.39999389648438, 164.8000030517578, 177.1999969482422], [169.1999969482422, 183.2000274658203, 197.1999969482422], [65.4000015258789, 72.80000305175781, 80.19999694824219]], [[202.8000030517578, 219.99998474121094, 237.2000274658203], [219.60000610351562, 238.39999389648438, 257.20001220703125], [236.39999389648438, 256.8000183105469, 277.1999816894531], [89.4000015258789, 100.0, 110.5999984741211]], [[47.400001525878906, 57.599998474121094, 67.80000305175781], [51.0, 62.0, 73.0], [54.599998474121094, 66.4000015258789, 78.19999694824219], [9.300000190734863, 15.399999618530273, 21.5]]]], 'float32')
atrous ([[[[41.099998474121094, 43.20000076293945, 45.29999923706055], [72.0, 76.19999694824219, 80.4000015258789], [85.19999694824219, 90.19999694824219, 95.19999694824219], [33.900001525878906, 36.400001525878906, 38.900001525878906]], [[76.19999694824219, 80.4000015258789, 84.5999984741211], [132.0, 140.39999389648438, 148.8000030517578], [148.8000030517578, 158.8000030517578, 168.8000030517578], [57.0, 62.0, 67.0]], [[119.39998626708984, 126.80000305175781, 134.1999969482422], [199.1999969482422, 214.0, 228.8000030517578], [215.99998474121094, 232.39999389648438, 248.8000030517578], [81.0, 89.19999694824219, 97.4000015258789]], [[27.899999618530273, 31.600000381469727, 35.29999923706055], [36.0, 43.400001525878906, 50.79999923706055], [39.599998474121094, 47.79999923706055, 56.0], [6.300000190734863, 10.399999618530273, 14.5]]]], 'float32')
sep ([[[[44.0, 44.0, 44.0], [60.0, 60.0, 60.0], [76.0, 76.0, 76.0]], [[108.0, 108.0, 108.0], [124.0, 124.0, 124.0], [140.0, 140.0, 140.0]], [[172.0, 172.0, 172.0], [188.0, 188.0, 188.0], [204.0, 204.0, 204.0]]]], 'float32')
c1t ([[[2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0]]], 'float32')
lrn ([[[[0.0, 0.7377899885177612], [0.44130000472068787, 0.6619499921798706], [0.4006200134754181, 0.5007699728012085], [0.35422998666763306, 0.4132699966430664]], [[0.3186900019645691, 0.3585300147533417], [0.2914400100708008, 0.32058000564575195], [0.2699100077152252, 0.2924000024795532], [0.2524299919605255, 0.27046000957489014]], [[0.2379000037908554, 0.25277000665664673], [0.22559000551700592, 0.23813000321388245], [0.2150000035762787, 0.22574999928474426], [0.2057500034570694, 0.21511000394821167]], [[0.19760000705718994, 0.20582999289035797], [0.19033999741077423, 0.19765999913215637], [0.1838199943304062, 0.1903800070285797], [0.17791999876499176, 0.1838500052690506]]]], 'float32')
l2n ([0.5, -0.5, 0.5, -0.5], 'float32')
set_diag ([[9.0, 1.0], [1.0, 8.0]], 'float32')
tensor_diag ([[1.0, 0.0], [0.0, 2.0]], 'float32')
tensor_diag_part ([2.0, 3.0], 'float32')
slogdet [-1.0, 1.9459099769592285]
pinv ([[0.20000000298023224, 0.4000000059604645, -2.0], [0.0, -0.0, 1.0]], 'float32')
rank (1, 'int32')
cross ([0.0, 0.0, 1.0], 'float32')
"""


def _program():
    out = []

    def show(n, f):
        r = f()
        if isinstance(r, (list, tuple)):
            r = [np.round(np.asarray(v), 5).tolist() for v in r]
        elif r is None or isinstance(r, (bool, int, float, str)):
            pass
        else:
            r = (np.round(np.asarray(r), 5).tolist(), str(np.asarray(r).dtype))
        out.append(f"{n} {r}")
    a=tf.constant([7,-7,7,-7]); b=tf.constant([2,2,-2,-2]); af=tf.constant([7.5,-7.5,7.5,-7.5]); bf=tf.constant([2.,2.,-2.,-2.])
    show('truncatediv', lambda: tf.truncatediv(a,b)); show('truncatemod', lambda: tf.truncatemod(a,b)); show('truncatediv_f', lambda: tf.truncatediv(af,bf)); show('truncatemod_f', lambda: tf.truncatemod(af,bf))
    show('shape_n', lambda: tf.shape_n([tf.zeros([2,3]), tf.zeros([4])]))
    show('is_symbolic', lambda: tf.is_symbolic_tensor(a))
    show('tuple', lambda: tf.tuple([a, b]))
    show('accumulate_n', lambda: tf.math.accumulate_n([af, bf, af]))
    show('lbeta', lambda: tf.math.lbeta(tf.constant([[1.,2.,3.],[0.5,0.5,4.]])))
    show('ndtri', lambda: tf.math.ndtri(tf.constant([0.001,0.1,0.5,0.9,0.999])))
    show('erfcinv', lambda: tf.math.erfcinv(tf.constant([0.001,0.5,1.,1.5,1.999])))
    show('real', lambda: tf.math.real(af)); show('imag', lambda: tf.math.imag(af)); show('conj', lambda: tf.math.conj(af)); show('angle', lambda: tf.math.angle(af)); show('conj_int', lambda: tf.math.conj(a))
    x=tf.reshape(tf.range(32.),[1,4,4,2])
    show('crelu', lambda: tf.nn.crelu(tf.constant([[-1.,2.]])))
    show('d2s', lambda: tf.nn.depth_to_space(tf.reshape(tf.range(16.),[1,2,2,4]), 2))
    show('s2d', lambda: tf.nn.space_to_depth(x, 2))
    show('normmom', lambda: tf.nn.normalize_moments(tf.constant(2.), tf.constant([4.,6.]), tf.constant([10.,26.]), None))
    show('wmom', lambda: tf.nn.weighted_moments(tf.constant([[1.,2.],[3.,5.]]), [0], tf.constant([[1.],[3.]])))
    show('cal', lambda: tf.nn.compute_average_loss(tf.constant([1.,2.,3.]), global_batch_size=6))
    show('cal_w', lambda: tf.nn.compute_average_loss(tf.constant([1.,2.,3.]), sample_weight=tf.constant([1.,0.,2.])))
    show('srl', lambda: tf.nn.scale_regularization_loss(tf.constant(3.)))
    k=tf.reshape(tf.range(2*2*2*3, dtype=tf.float32)/10,[2,2,2,3])
    show('convolution', lambda: tf.nn.convolution(x, k, padding='SAME'))
    show('atrous', lambda: tf.nn.atrous_conv2d(x, k, rate=2, padding='SAME'))
    show('sep', lambda: tf.nn.separable_conv2d(x, tf.ones([2,2,2,1]), tf.ones([1,1,2,3]), [1,1,1,1], 'VALID'))
    show('c1t', lambda: tf.nn.conv1d_transpose(tf.ones([1,3,2]), tf.ones([2,4,2]), [1,6,4], 2, 'SAME'))
    show('lrn', lambda: tf.nn.local_response_normalization(x, depth_radius=1, bias=1., alpha=0.5, beta=0.75))
    show('l2n', lambda: tf.linalg.l2_normalize(af))
    m=tf.constant([[2.,1.],[1.,3.]])
    show('set_diag', lambda: tf.linalg.set_diag(m, [9.,8.])); show('tensor_diag', lambda: tf.linalg.tensor_diag([1.,2.])); show('tensor_diag_part', lambda: tf.linalg.tensor_diag_part(m))
    show('slogdet', lambda: tf.linalg.slogdet(tf.constant([[-2.,1.],[1.,3.]]))); show('pinv', lambda: tf.linalg.pinv(tf.constant([[1.,2.],[2.,4.],[0.,1.]])))
    show('rank', lambda: tf.linalg.matrix_rank(tf.constant([[1.,2.],[2.,4.]]))); show('cross', lambda: tf.linalg.cross(tf.constant([1.,0.,0.]), tf.constant([0.,1.,0.])))
    return out


def _numbers(line):
    toks = line.replace("[", " ").replace("]", " ").replace(",", " ").replace("(", " ").replace(")", " ").split()
    return [float(t) for t in toks[1:] if t.lstrip("-").replace(".", "", 1).replace("e-", "", 1).isdigit()]


def test_matches_tf():
    want = TF_OUT.strip().splitlines()
    got = _program()
    assert [g.split()[0] for g in got] == [w.split()[0] for w in want]
    for g, w in zip(got, want):
        assert ("'float32'" in g) == ("'float32'" in w) and ("'int32'" in g) == ("'int32'" in w), (g, w)
        np.testing.assert_allclose(_numbers(g), _numbers(w), rtol=1e-5, atol=2e-5, err_msg=w)
