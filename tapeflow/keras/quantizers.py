"""``keras.quantizers`` (TF 2.21's tf.keras has it): Keras 3's weight quantization (int8/int4/float8
layers, GPTQ/AWQ). tapeflow's kernels are NumPy's, which computes on none of the 8-, 4- and 2-bit
types, and its layers have no quantized form: every name exists (importable, subclassable) and
raises UnsupportedFeatureError naming the feature when used. tf.quantization's fake-quantization
ops (TF's bits) are implemented."""
from __future__ import annotations

from .._unsupported import unsupported_class, unsupported_function

_WHAT = ("Keras 3's quantization (int8/int4/float8 weights, GPTQ/AWQ: tapeflow's layers have no quantized "
         "kernels); tf.quantization.fake_quant_with_min_max_vars and quantize_and_dequantize_v2 are implemented")
_CLASSES = ("AWQConfig", "AbsMaxQuantizer", "Float8QuantizationConfig", "GPTQConfig", "Int4QuantizationConfig",
            "Int8QuantizationConfig", "QuantizationConfig", "Quantizer")
_FUNCTIONS = ("abs_max_quantize", "abs_max_quantize_grouped_with_zero_point", "compute_float8_amax_history",
              "compute_float8_scale", "deserialize", "fake_quant_with_min_max_vars", "get", "pack_int4",
              "quantize_and_dequantize", "serialize", "unpack_int4")
for _n in _CLASSES:
    globals()[_n] = unsupported_class(f"keras.quantizers.{_n}", _WHAT)
for _n in _FUNCTIONS:
    globals()[_n] = unsupported_function(f"keras.quantizers.{_n}", _WHAT)
del _n
__all__ = sorted(_CLASSES + _FUNCTIONS)
