"""Keras layer cases shared by tests/tf_reference/make_layer_reference.py (run under TF 2.21) and
tests/test_keras_layer_reference.py (run under tapeflow): name -> (layer class, constructor
kwargs, call kwargs, input shapes). Masks named in the call kwargs are drawn by ``inputs_for``."""
import numpy as np

CASES = {
    "mha_basic": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3}, {"return_attention_scores": True},
                  [(2, 4, 5), (2, 6, 7)]),
    "mha_self": ("MultiHeadAttention", {"num_heads": 3, "key_dim": 2}, {}, [(2, 5, 4), (2, 5, 4)]),
    "mha_key": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3, "value_dim": 4, "output_shape": 6},
                {"return_attention_scores": True}, [(2, 4, 5), (2, 6, 7), (2, 6, 3)]),
    "mha_nobias": ("MultiHeadAttention", {"num_heads": 1, "key_dim": 4, "use_bias": False}, {},
                   [(3, 2, 4), (3, 5, 4)]),
    # a fully masked query row: Keras' two softmax paths give different rows (see _masked_softmax)
    "mha_amask": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3}, {"attention_mask": "amask"},
                  [(2, 4, 5), (2, 6, 7)]),
    "mha_amask_scores": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3},
                         {"attention_mask": "amask", "return_attention_scores": True}, [(2, 4, 5), (2, 6, 7)]),
    "mha_causal": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3}, {"use_causal_mask": True},
                   [(2, 5, 4), (2, 5, 4)]),
    "mha_causal_scores": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3},
                          {"use_causal_mask": True, "return_attention_scores": True}, [(2, 5, 4), (2, 5, 4)]),
    "mha_vmask": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3},
                  {"value_mask": "vmask", "return_attention_scores": True},
                  [(2, 4, 5), (2, 6, 7)]),
    "mha_axes": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 2, "attention_axes": (1, 2)},
                 {"return_attention_scores": True}, [(2, 3, 4, 5), (2, 3, 4, 5)]),
    "mha_rank4": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 2}, {}, [(2, 3, 4, 5), (2, 3, 2, 6)]),
    "mha_gate": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3, "use_gate": True}, {},
                 [(2, 4, 5), (2, 6, 7)]),
    "mha_window": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3, "sliding_window": 2},
                   {"return_attention_scores": True}, [(2, 5, 4), (2, 5, 4)]),
    "att_dot": ("Attention", {}, {"return_attention_scores": True}, [[(2, 4, 5), (2, 6, 5)]]),
    "att_key": ("Attention", {"use_scale": True}, {}, [[(2, 4, 5), (2, 6, 3), (2, 6, 5)]]),
    "att_concat": ("Attention", {"use_scale": True, "score_mode": "concat"}, {"return_attention_scores": True},
                   [[(2, 4, 5), (2, 6, 5)]]),
    "att_mask": ("Attention", {}, {"mask": "qvmask", "return_attention_scores": True}, [[(2, 4, 5), (2, 6, 5)]]),
    "att_causal": ("Attention", {}, {"use_causal_mask": True, "mask": "qvmask"}, [[(2, 4, 5), (2, 6, 5)]]),
    "add_att": ("AdditiveAttention", {}, {"return_attention_scores": True}, [[(2, 4, 5), (2, 6, 5)]]),
    "add_att_noscale": ("AdditiveAttention", {"use_scale": False}, {"mask": "qvmask"}, [[(2, 4, 5), (2, 6, 5)]]),
    "dot_2d": ("Dot", {"axes": 1}, {}, [[(3, 4), (3, 4)]]),
    "dot_norm": ("Dot", {"axes": -1, "normalize": True}, {}, [[(3, 4), (3, 4)]]),
    "dot_3d": ("Dot", {"axes": (1, 2)}, {}, [[(2, 3, 4), (2, 5, 3)]]),
    "dot_3d2d": ("Dot", {"axes": (2, 1)}, {}, [[(2, 3, 4), (2, 4)]]),
    "dot_4d": ("Dot", {"axes": (3, 1)}, {}, [[(2, 3, 2, 4), (2, 4, 5)]]),
    "ed_basic": ("EinsumDense", {"equation": "ab,bc->ac", "output_shape": 4, "bias_axes": "c"}, {}, [(3, 5)]),
    "ed_seq": ("EinsumDense", {"equation": "abc,cd->abd", "output_shape": (None, 6), "bias_axes": "d",
                               "activation": "relu"}, {}, [(2, 3, 5)]),
    "ed_left": ("EinsumDense", {"equation": "...b,bc->...c", "output_shape": 4, "bias_axes": "c"}, {},
                [(2, 3, 5)]),
    "ed_right": ("EinsumDense", {"equation": "ab...,bc->ac...", "output_shape": 4}, {}, [(2, 5, 3)]),
    "ed_right_bias": ("EinsumDense", {"equation": "ab...,bc->ac...", "output_shape": 4, "bias_axes": "c"}, {},
                      [(2, 5, 3)]),
    "ed_heads": ("EinsumDense", {"equation": "abc,cde->abde", "output_shape": (None, 2, 3), "bias_axes": "de"},
                 {}, [(2, 4, 5)]),
    "crop1d": ("Cropping1D", {"cropping": (1, 2)}, {}, [(2, 5, 3)]),
    "crop2d": ("Cropping2D", {"cropping": ((1, 0), (2, 1))}, {}, [(2, 6, 5, 4)]),
    "crop2d_int": ("Cropping2D", {"cropping": 1}, {}, [(2, 6, 5, 4)]),
    "pad1d": ("ZeroPadding1D", {"padding": (1, 3)}, {}, [(2, 5, 3)]),
    "up1d": ("UpSampling1D", {"size": 3}, {}, [(2, 4, 3)]),
    "identity": ("Identity", {}, {}, [(2, 5, 3)]),
    "thresholded_relu": ("ThresholdedReLU", {"theta": 0.3}, {}, [(2, 5, 3)]),
    "group_norm": ("GroupNormalization", {"groups": 2}, {}, [(2, 6, 5, 4)]),
    "group_norm_axis1": ("GroupNormalization", {"groups": 2, "axis": 1, "epsilon": 1e-5}, {}, [(3, 4, 5)]),
    "group_norm_inst": ("GroupNormalization", {"groups": 3, "center": False}, {}, [(2, 4, 3)]),
    "rms_norm": ("RMSNormalization", {}, {}, [(2, 5, 3)]),
    "rms_norm_axes": ("RMSNormalization", {"axis": [1, 2], "epsilon": 1e-3}, {}, [(2, 5, 3)]),
    "unit_norm": ("UnitNormalization", {}, {}, [(2, 5, 3)]),
    "unit_norm_axes": ("UnitNormalization", {"axis": [1, 2]}, {}, [(2, 5, 3)]),
    "depthwise": ("DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 2}, {}, [(2, 6, 5, 4)]),
    "depthwise_same": ("DepthwiseConv2D", {"kernel_size": (2, 3), "strides": 2, "padding": "same",
                                           "activation": "relu"}, {}, [(2, 7, 6, 3)]),
    "separable": ("SeparableConv2D", {"filters": 5, "kernel_size": 3}, {}, [(2, 6, 5, 4)]),
    "separable_dil": ("SeparableConv2D", {"filters": 3, "kernel_size": 2, "padding": "same", "depth_multiplier": 2,
                                          "dilation_rate": 2, "use_bias": False}, {}, [(2, 6, 5, 4)]),
    "conv1d_t": ("Conv1DTranspose", {"filters": 4, "kernel_size": 3, "strides": 2}, {}, [(2, 5, 3)]),
    "conv1d_t_same": ("Conv1DTranspose", {"filters": 2, "kernel_size": 2, "strides": 3, "padding": "same"}, {},
                      [(2, 5, 3)]),
    "ed_biasmid": ("EinsumDense", {"equation": "abc,cde->abde", "output_shape": (None, 2, 3), "bias_axes": "d"},
                   {}, [(2, 4, 5)]),
    # 3-D layers (wave 19): composed from the 2-D primitives one depth tap at a time
    "conv3d": ("Conv3D", {"filters": 4, "kernel_size": (3, 2, 2)}, {}, [(2, 5, 6, 5, 3)]),
    "conv3d_same": ("Conv3D", {"filters": 3, "kernel_size": 3, "strides": (2, 1, 2), "padding": "same",
                               "activation": "relu"}, {}, [(2, 5, 6, 7, 2)]),
    "conv3d_dil": ("Conv3D", {"filters": 2, "kernel_size": 2, "dilation_rate": (2, 1, 2), "padding": "same"}, {},
                   [(1, 5, 4, 6, 3)]),
    "conv3d_groups": ("Conv3D", {"filters": 4, "kernel_size": 2, "groups": 2}, {}, [(2, 4, 4, 3, 4)]),
    "conv3d_t": ("Conv3DTranspose", {"filters": 3, "kernel_size": (3, 2, 2), "strides": 2}, {}, [(2, 3, 4, 3, 4)]),
    "conv3d_t_same": ("Conv3DTranspose", {"filters": 2, "kernel_size": 3, "strides": (2, 1, 3), "padding": "same"},
                      {}, [(1, 3, 4, 2, 3)]),
    "conv3d_t_dil": ("Conv3DTranspose", {"filters": 2, "kernel_size": 2, "dilation_rate": 2}, {}, [(1, 3, 3, 2, 2)]),
    "maxpool3d": ("MaxPooling3D", {"pool_size": (2, 3, 2)}, {}, [(2, 5, 6, 5, 3)]),
    "maxpool3d_same": ("MaxPooling3D", {"pool_size": 3, "strides": (2, 1, 2), "padding": "same"}, {},
                       [(2, 5, 4, 5, 2)]),
    "avgpool3d": ("AveragePooling3D", {"pool_size": 2, "strides": 1}, {}, [(2, 4, 5, 3, 2)]),
    "avgpool3d_same": ("AveragePooling3D", {"pool_size": (3, 2, 3), "strides": 2, "padding": "same"}, {},
                       [(2, 5, 4, 5, 2)]),
    "gap3d": ("GlobalAveragePooling3D", {}, {}, [(2, 3, 4, 2, 3)]),
    "gmp3d": ("GlobalMaxPooling3D", {"keepdims": True}, {}, [(2, 3, 4, 2, 3)]),
    "pad3d": ("ZeroPadding3D", {"padding": ((1, 0), (0, 2), (2, 1))}, {}, [(2, 2, 3, 2, 2)]),
    "crop3d": ("Cropping3D", {"cropping": (1, 0, 2)}, {}, [(2, 4, 3, 5, 2)]),
    "up3d": ("UpSampling3D", {"size": (2, 1, 3)}, {}, [(2, 2, 3, 2, 2)]),
    "depthwise1d": ("DepthwiseConv1D", {"kernel_size": 3, "depth_multiplier": 2, "strides": 2}, {}, [(2, 7, 3)]),
    "depthwise1d_same": ("DepthwiseConv1D", {"kernel_size": 2, "padding": "same", "dilation_rate": 2}, {},
                         [(2, 6, 3)]),
    "separable1d": ("SeparableConv1D", {"filters": 4, "kernel_size": 3, "depth_multiplier": 2}, {}, [(2, 7, 3)]),
    "adaptive_avg1d": ("AdaptiveAveragePooling1D", {"output_size": 3}, {}, [(2, 7, 3)]),
    "adaptive_max1d_up": ("AdaptiveMaxPooling1D", {"output_size": 5}, {}, [(2, 3, 2)]),
    "adaptive_avg2d": ("AdaptiveAveragePooling2D", {"output_size": (2, 3)}, {}, [(2, 5, 7, 3)]),
    "adaptive_max2d": ("AdaptiveMaxPooling2D", {"output_size": 3}, {}, [(2, 7, 4, 2)]),
    "adaptive_avg3d": ("AdaptiveAveragePooling3D", {"output_size": (2, 3, 2)}, {}, [(1, 5, 4, 3, 2)]),
    "adaptive_max3d": ("AdaptiveMaxPooling3D", {"output_size": 2}, {}, [(1, 3, 5, 4, 2)]),
    # a nested layer is {"__layer__": [class, kwargs]}; training=True runs the power iteration
    "spectral_dense": ("SpectralNormalization", {"layer": {"__layer__": ["Dense", {"units": 3}]}},
                       {"training": True}, [(2, 4)]),
    "spectral_conv_2it": ("SpectralNormalization",
                          {"layer": {"__layer__": ["Conv2D", {"filters": 3, "kernel_size": 2}]}, "power_iterations": 2},
                          {"training": True}, [(2, 4, 5, 2)]),
    "gqa_scores": ("GroupQueryAttention", {"head_dim": 3, "num_query_heads": 4, "num_key_value_heads": 2},
                   {"return_attention_scores": True}, [(2, 4, 5), (2, 6, 7)]),
    "gqa_gate_key": ("GroupQueryAttention", {"head_dim": 2, "num_query_heads": 3, "num_key_value_heads": 1,
                                             "use_gate": True}, {}, [(2, 4, 5), (2, 6, 7), (2, 6, 3)]),
    "gqa_amask": ("GroupQueryAttention", {"head_dim": 3, "num_query_heads": 2, "num_key_value_heads": 2},
                  {"attention_mask": "amask"}, [(2, 4, 5), (2, 6, 7)]),
    "gqa_amask_scores": ("GroupQueryAttention", {"head_dim": 3, "num_query_heads": 2, "num_key_value_heads": 1},
                         {"attention_mask": "amask", "return_attention_scores": True}, [(2, 4, 5), (2, 6, 7)]),
    "gqa_causal_window": ("GroupQueryAttention", {"head_dim": 2, "num_query_heads": 4, "num_key_value_heads": 2,
                                                  "sliding_window": 2, "use_bias": False},
                          {"use_causal_mask": True}, [(2, 5, 4), (2, 5, 4)]),
    "gqa_vmask": ("GroupQueryAttention", {"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1},
                  {"value_mask": "vmask", "use_causal_mask": True}, [(2, 4, 5), (2, 6, 7)]),
    "convlstm2d": ("ConvLSTM2D", {"filters": 3, "kernel_size": 2}, {}, [(2, 4, 5, 6, 2)]),
    "convlstm2d_same_seq_state": ("ConvLSTM2D", {"filters": 2, "kernel_size": (3, 2), "padding": "same",
                                                 "return_sequences": True, "return_state": True}, {},
                                  [(2, 3, 4, 5, 3)]),
    "convlstm2d_strided_back": ("ConvLSTM2D", {"filters": 2, "kernel_size": 3, "strides": 2, "go_backwards": True,
                                               "activation": "relu", "unit_forget_bias": False}, {},
                                [(2, 3, 7, 6, 2)]),
    "convlstm1d_dil": ("ConvLSTM1D", {"filters": 3, "kernel_size": 2, "dilation_rate": 2, "padding": "same",
                                      "return_sequences": True}, {}, [(2, 4, 7, 2)]),
    "convlstm3d": ("ConvLSTM3D", {"filters": 2, "kernel_size": 2, "use_bias": False}, {}, [(1, 3, 4, 3, 4, 2)]),
    "spectral_eval": ("SpectralNormalization", {"layer": {"__layer__": ["Dense", {"units": 2}]}}, {"training": False},
                      [(2, 4)]),
}


def build(layers, cls, kwargs):
    """layers.<cls>(**kwargs), a nested {"__layer__": [class, kwargs]} (a wrapped layer) built first."""
    kw = {k: build(layers, *v["__layer__"]) if isinstance(v, dict) and "__layer__" in v else v
          for k, v in kwargs.items()}
    return getattr(layers, cls)(**kw)


def _mask(rng, shape):
    m = rng.random(shape) > 0.3
    m[..., 0] = True            # no fully masked rows: tested separately (mha_amask)
    return m


def inputs_for(name, in_shapes, call_kwargs, rng):
    """The call's positional args and kwargs: float32 normal inputs, masks drawn here (a
    fully masked row in ``amask``)."""
    if isinstance(in_shapes[0], list):
        args = [[rng.standard_normal(s).astype(np.float32) for s in in_shapes[0]]]
        shapes = in_shapes[0]
    else:
        args = [rng.standard_normal(s).astype(np.float32) for s in in_shapes]
        shapes = in_shapes
    kw = {}
    for k, v in call_kwargs.items():
        if v == "amask":
            m = _mask(rng, (shapes[0][0], shapes[0][1], shapes[1][1]))
            m[1, 2, :] = False
            kw[k] = m
        elif v == "qmask":
            kw[k] = _mask(rng, shapes[0][:2])
        elif v == "vmask":
            kw[k] = _mask(rng, shapes[1][:2])
        elif v == "qvmask":
            kw[k] = [_mask(rng, shapes[0][:2]), _mask(rng, shapes[1][:2])]
        else:
            kw[k] = v
    return args, kw
