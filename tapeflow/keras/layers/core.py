"""Core layers: Dense, Activation, Dropout, Flatten, Reshape, Lambda,
Embedding, merge layers (Concatenate, Add, ...) and activation layers."""
from __future__ import annotations

import numpy as np

from ...core.aval import fmt_shape
from ...core.primitive import aval_of, bind as _bind
from ...core.primitives.dense import dense_p as _dense_p
from ...core.state import STATE
from ...core.tensor import Tensor
from ...ops import array_ops as A
from ...ops import math_ops as M
from ...ops import nn_ops as N
from ...ops import random_ops as R
from ... import sparse as _sparse
from .. import activations as _acts
from .. import backend
from .. import initializers as _inits
from .. import regularizers as _regs
from ..engine import Layer, InputSpec, positive_int, _CALL_STACK, _MASKED_CALLS

__all__ = ["Dense", "Activation", "Dropout", "Flatten", "Reshape", "Lambda", "Embedding", "Concatenate", "Add",
           "Subtract", "Multiply", "Average", "Maximum", "Minimum", "ReLU", "LeakyReLU", "Softmax", "ELU",
           "ThresholdedReLU", "GaussianNoise", "concatenate", "add", "subtract", "multiply", "average", "maximum",
           "minimum"]


def _ser_init(i):
    return _inits.serialize(i)


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``; kernel (in, units), bias (units,).

    ``kernel_initializer="torch_linear"`` plus ``bias_initializer="torch_linear"``
    reproduces PyTorch's ``nn.Linear`` initialization.
    """
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = positive_int("Dense", "units", units)
        self.activation = _acts.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _inits.get(kernel_initializer)
        self.bias_initializer = _inits.get(bias_initializer)
        self.kernel_regularizer = _regs.get(kernel_regularizer)
        self.bias_regularizer = _regs.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        last = input_shape[-1] if len(input_shape) else None
        if last is None:
            raise ValueError(f"Dense: the last dimension of the inputs must be known, got shape "
                             f"{fmt_shape(input_shape)}")
        last = int(last)
        self.kernel = self.add_weight("kernel", shape=(last, self.units), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
                                      trainable=True, _init_kwargs={"fan_in": last})
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, _init_kwargs={"fan_in": last})
        else:
            self.bias = None
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.built = True

    def call(self, inputs):
        v = getattr(inputs, "_v", None)
        if v is None and isinstance(inputs, _sparse.SparseTensor):   # (after the eager tensors' test)
            return self._call_sparse(inputs)
        act = self.activation
        if v is not None and v.dtype.kind != "f" or v is None and aval_of(inputs).dtype.kind != "f":
            # integer or bool inputs (a NumPy int array) are cast to the kernel's dtype, as Keras'
            # Dense does; other ops keep TF's rule that dtypes never convert silently
            inputs = M.cast(inputs, self.kernel.dtype)
            v = getattr(inputs, "_v", None)
        if v is not None and v.ndim == 2 and STATE.trace is None:
            # eager: one op (core/primitives/dense.py), one tape node, the bias add and relu
            # in the GEMM's buffer; the same bits as the three ops below
            fused = "relu" if act is _acts.relu else "linear"
            if self.use_bias:
                out = _bind(_dense_p, inputs, self.kernel, self.bias, activation=fused)
            else:
                out = _bind(_dense_p, inputs, self.kernel, activation=fused)
            return out if fused == "relu" or act is _acts.linear else act(out)
        # traced (the compiler fuses the epilogue itself) or another rank
        rank = v.ndim if v is not None else len(aval_of(inputs).shape)
        if rank == 2:
            out = inputs @ self.kernel
        else:
            out = M.tensordot(inputs, self.kernel, [[rank - 1], [0]])
        if self.use_bias:
            out = out + self.bias
        return out if act is _acts.linear else act(out)

    def _call_sparse(self, inputs):
        # Keras 3: a sparse batch (keras.Input(sparse=True)) multiplies the kernel as a sparse
        # matmul, its values cast to the kernel's dtype
        dt = self.kernel.dtype
        sp = inputs if inputs.dtype == dt else inputs.with_values(M.cast(inputs.values, dt))
        out = _sparse.sparse_dense_matmul(sp, self.kernel)
        if self.use_bias:
            out = out + self.bias
        return out if self.activation is _acts.linear else self.activation(out)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)[:-1] + (self.units,)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(units=self.units, activation=_acts.serialize(self.activation), use_bias=self.use_bias,
                   kernel_initializer=_ser_init(self.kernel_initializer),
                   bias_initializer=_ser_init(self.bias_initializer),
                   kernel_regularizer=_regs.serialize(self.kernel_regularizer),
                   bias_regularizer=_regs.serialize(self.bias_regularizer),
                   activity_regularizer=_regs.serialize(self.activity_regularizer),
                   kernel_constraint=self.kernel_constraint, bias_constraint=self.bias_constraint)
        return cfg


class Activation(Layer):
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = _acts.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        cfg = super().get_config()
        cfg["activation"] = _acts.serialize(self.activation)
        return cfg


class ReLU(Layer):
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return _acts.relu(inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(max_value=self.max_value, negative_slope=self.negative_slope, threshold=self.threshold)
        return cfg


class LeakyReLU(Layer):
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, alpha=0.3, **kwargs):
        if "negative_slope" in kwargs:
            alpha = kwargs.pop("negative_slope")
        super().__init__(**kwargs)
        if alpha is None or float(alpha) < 0:
            # as Keras 3: a negative slope flips the sign of negative inputs (not a leaky ReLU)
            raise ValueError(f"LeakyReLU: negative_slope must be a float >= 0, got {alpha!r}")
        self.alpha = float(alpha)

    def call(self, inputs):
        return N.leaky_relu(inputs, self.alpha)

    def get_config(self):
        cfg = super().get_config()
        cfg["alpha"] = self.alpha
        return cfg


class ELU(Layer):
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return N.elu(inputs, self.alpha)

    def get_config(self):
        cfg = super().get_config()
        cfg["alpha"] = self.alpha
        return cfg


class Softmax(Layer):
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        # Keras 3: masked positions (False, or <= 0.5 in a numeric mask) enter as -1e9 and leave
        # as 0, so a fully masked row gives zeros (not a uniform row)
        dt = aval_of(inputs).dtype
        if mask is not None:
            ms, xs = tuple(aval_of(mask).shape), tuple(aval_of(inputs).shape)
            if len(ms) > len(xs) or any(m is not None and i is not None and m != 1 and m != i
                                        for m, i in zip(ms[::-1], xs[::-1])):
                raise ValueError(f"Softmax: the mask must be broadcastable to the inputs (each mask dimension 1 or "
                                 f"equal to the input's, and no more dimensions); got inputs.shape={fmt_shape(xs)}, "
                                 f"mask.shape={fmt_shape(ms)}")
            mask = M.cast(mask, bool) if aval_of(mask).dtype == np.bool_ else M.greater(mask, 0.5)
            inputs = M.where(mask, inputs, M.cast(-3e4 if dt == np.float16 else -1e9, dt))
        axis = self.axis
        if isinstance(axis, (tuple, list)) and len(axis) > 1:
            out = M.exp(inputs - M.reduce_logsumexp(inputs, axis=list(axis), keepdims=True))
        else:
            out = N.softmax(inputs, axis[0] if isinstance(axis, (tuple, list)) else axis)
        return out if mask is None else M.where(mask, out, A.zeros_like(out))

    def get_config(self):
        cfg = super().get_config()
        cfg["axis"] = self.axis
        return cfg


class SeedStream:
    """A layer's random stream: with a ``seed``, the layer's own generator (its draws repeat from
    run to run); without one, tapeflow's global stream. Not a weight: not saved, not trained.
    Mixed into the layers that draw (Dropout, GaussianNoise, the noise and image-augmentation
    layers, the recurrent cells' dropout)."""

    _bookkeeping = frozenset({"_gen", "_seedgen"})

    def _set_seed(self, seed):
        self.seed = seed
        self._gen = R.Generator.from_seed(seed) if seed is not None else None
        self._seedgen = None

    def _generator(self):
        return self._gen or R.get_global_generator()

    def _seed_generator(self):
        """Keras 3's ``SeedGenerator(seed)`` of a seeded layer (made on first use; None unseeded): Dropout,
        GaussianNoise and GaussianDropout draw stateless numbers from it as Keras 3 does (state [seed, i]
        for the i-th draw), so a seeded layer's masks and noise are TF's. Not a weight (as the stream)."""
        if self.seed is None:
            return None
        if self._seedgen is None:
            from ..random import SeedGenerator
            self._seedgen = SeedGenerator(int(self.seed))
        return self._seedgen


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, else 0 (Keras 3)."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None or float(theta) < 0:
            raise ValueError(f"ThresholdedReLU: theta of a thresholded ReLU layer must be a non-negative number, "
                             f"got {theta!r}")
        self.theta = float(theta)

    def call(self, inputs):
        return inputs * M.cast(M.greater(inputs, self.theta), aval_of(inputs).dtype)

    def get_config(self):
        cfg = super().get_config()
        cfg["theta"] = self.theta
        return cfg


class Dropout(SeedStream, Layer):
    """Zeroes inputs with probability ``rate`` (scaling the rest by 1/(1-rate))
    when ``training`` is true; identity otherwise. ``seed``: the layer owns a
    random stream seeded with it (each call draws fresh numbers from the
    stream); without a seed it draws from tapeflow's global stream.
    ``training`` may also be a boolean tensor (selected with ``where``)."""
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        # rate 1 is allowed, as in Keras: training then outputs zeros (tf.nn.dropout itself
        # refuses 1, where the kept values' scale 1 / (1 - rate) is infinite)
        if not 0 <= float(rate) <= 1:
            raise ValueError(f"Dropout: rate must be in [0, 1], got {rate}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self._set_seed(seed)

    def call(self, inputs, training=None):
        if self.rate == 0 or training is None or training is False:
            return inputs
        shape = aval_of(inputs).shape
        ns = None
        if self.noise_shape is not None:
            ns = tuple(s if d is None else d for d, s in zip(self.noise_shape, shape))
        sg = self._seed_generator()
        if self.rate == 1:
            dropped = A.zeros_like(inputs)
        elif sg is not None:    # Keras 3: keras.random.dropout on the layer's SeedGenerator
            from .. import random as keras_random
            dropped = keras_random.dropout(inputs, self.rate, noise_shape=ns, seed=sg)
        else:
            dropped = N.dropout(inputs, self.rate, noise_shape=ns, rng=self._generator())
        if isinstance(training, Tensor):
            return M.where(training, dropped, inputs)
        return dropped if training else inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        cfg = super().get_config()
        cfg.update(rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return cfg


class GaussianNoise(SeedStream, Layer):
    """Adds N(0, stddev) noise in training (seeded like Dropout)."""
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)
    _passes_mask = True   # Keras 3's supports_masking: the mask goes on unchanged

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        if float(stddev) < 0:
            raise ValueError(f"GaussianNoise: stddev must be >= 0, got {stddev}")
        self.stddev = float(stddev)
        self._set_seed(seed)

    def call(self, inputs, training=None):
        if not training:
            return inputs
        av = aval_of(inputs)
        sg = self._seed_generator()
        if sg is not None:      # Keras 3: keras.random.normal on the layer's SeedGenerator
            from .. import random as keras_random
            return M.add(inputs, keras_random.normal(R._shape_like(inputs), stddev=self.stddev, dtype=av.dtype,
                                                     seed=sg))
        return M.add(inputs, self._generator().normal(R._shape_like(inputs), stddev=self.stddev, dtype=av.dtype))

    def get_config(self):
        cfg = super().get_config()
        cfg.update(stddev=self.stddev, seed=self.seed)
        return cfg


class Flatten(Layer):
    """(batch, d1, d2, ...) -> (batch, d1*d2*...)."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        shape = aval_of(inputs).shape
        if len(shape) == 1:
            return A.expand_dims(inputs, 1)
        rest = shape[1:]
        if any(d is None for d in rest):
            raise ValueError(f"Flatten: the non-batch dims must be known, got {fmt_shape(shape)}")
        if self.data_format == "channels_first" and len(shape) > 2:
            # Keras 3 moves the channels last before flattening (a Conv stack's features in one order)
            inputs = A.transpose(inputs, (0, *range(2, len(shape)), 1))
        # the batch size itself where known: -1 cannot be inferred when a non-batch dim is 0
        return A.reshape(inputs, (-1 if shape[0] is None else shape[0], int(np.prod(rest))))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], int(np.prod(input_shape[1:])))

    def get_config(self):
        cfg = super().get_config()
        cfg["data_format"] = self.data_format
        return cfg


class Reshape(Layer):
    """Reshape each sample to ``target_shape`` (batch dim kept; one -1 allowed)."""
    _BUILT_AT_INIT = True   # as Keras 3 (engine.Layer)

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def call(self, inputs):
        shape = aval_of(inputs).shape
        target = self.target_shape
        if None not in shape[1:]:
            # Keras checks each sample's size against the target; reshaping the whole batch to (-1,) + target
            # instead put a (2, 6, 2) input into (4, 1, 2, 3): other samples, silently
            n = int(np.prod(shape[1:], dtype=np.int64))
            known = int(np.prod([d for d in target if d != -1], dtype=np.int64))
            if (n % known if -1 in target and known else n != known if -1 not in target else False):
                raise ValueError(f"Reshape: The total size of the tensor must be unchanged. Received: input_shape="
                                 f"{tuple(shape[1:])}, target_shape={target}")
            if -1 in target and known:
                target = tuple(n // known if d == -1 else d for d in target)
            if -1 not in target:
                return A.reshape(inputs, (-1 if shape[0] is None else shape[0],) + target)
        if -1 in target:
            if shape[0] is None:
                raise ValueError("Reshape: a target_shape with -1 needs a known batch size")
            return A.reshape(inputs, (shape[0],) + target)
        return A.reshape(inputs, (-1,) + target)

    def get_config(self):
        cfg = super().get_config()
        cfg["target_shape"] = self.target_shape
        return cfg


class Lambda(Layer):
    """Wraps ``function(inputs, **arguments)`` as a layer (no weights)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.output_shape_ = output_shape
        self.arguments = dict(arguments or {})

    def call(self, inputs, training=None):
        return self.function(inputs, **self.arguments)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(function=self.function, output_shape=self.output_shape_, arguments=self.arguments)
        return cfg


class TFOpLambda(Lambda):
    """The layer made by Python arithmetic on functional-API placeholders."""

    def __init__(self, function, op_name="op", **kwargs):
        if kwargs.get("name") is None:
            kwargs["name"] = backend.unique_object_name(f"tf.{op_name}")
        super().__init__(function, **kwargs)
        self.op_name = op_name

    def get_config(self):
        cfg = super().get_config()
        cfg["op_name"] = self.op_name
        return cfg


class Embedding(Layer):
    """Integer ids (batch, ...) -> vectors (batch, ..., output_dim)."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 activity_regularizer=None, embeddings_constraint=None, mask_zero=False, input_length=None,
                 **kwargs):
        kwargs.setdefault("autocast", False)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.input_dim = positive_int("Embedding", "input_dim", input_dim)
        self.output_dim = positive_int("Embedding", "output_dim", output_dim)
        self.embeddings_initializer = _inits.get(embeddings_initializer)
        self.embeddings_regularizer = _regs.get(embeddings_regularizer)
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero     # as Keras 3
        self.input_length = input_length

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def _refuse_mask_in_model(self):
        # Sequential and functional models carry the mask to the next layers (engine.masked_call);
        # a subclassed model's call() or another layer calling this one does not (Keras 3 attaches
        # the mask to the tensor, tapeflow cannot), so the layers after it would silently count the
        # padded steps: refused, with the explicit form
        from ..._unsupported import UnsupportedFeatureError
        raise UnsupportedFeatureError(
            f"Embedding {self.name!r}: mask_zero=True called inside another layer's call (a subclassed "
            "model): tapeflow propagates masks only through Sequential and functional models. Pass the "
            "mask on yourself: mask = embedding.compute_mask(ids), then e.g. lstm(x, mask=mask) (or "
            "average with tf.reduce_sum(x * mask[..., None], 1) / tf.reduce_sum(mask, 1, keepdims=True))")

    def call(self, inputs):
        if self.mask_zero and len(_CALL_STACK) > 1 and not (_MASKED_CALLS and _MASKED_CALLS[-1] is self):
            self._refuse_mask_in_model()
        if aval_of(inputs).dtype.kind not in "iu":
            inputs = M.cast(inputs, np.int32)
        # ids outside [0, input_dim) raise, naming this layer (-1 never wraps to the last row)
        return A._gather(self.embeddings, inputs, 0, 0, f"Embedding layer {self.name!r}")

    def compute_mask(self, inputs, mask=None):
        return M.not_equal(inputs, 0) if self.mask_zero else None

    def get_config(self):
        cfg = super().get_config()
        cfg.update(input_dim=self.input_dim, output_dim=self.output_dim,
                   embeddings_initializer=_ser_init(self.embeddings_initializer),
                   embeddings_regularizer=_regs.serialize(self.embeddings_regularizer),
                   embeddings_constraint=self.embeddings_constraint, mask_zero=self.mask_zero,
                   input_length=self.input_length)
        return cfg


class ReversibleEmbedding(Embedding):
    """Keras 3's ReversibleEmbedding: an Embedding that also maps vectors back to logits over the
    vocabulary, ``call(x, reverse=True) = x @ embeddings^T`` (``tie_weights``, the default) or
    ``x @ reverse_embeddings`` (its own (output_dim, input_dim) weight); ``reverse_dtype`` casts
    both first, ``logit_soft_cap`` c gives ``tanh(logits / c) * c``. The output head of a
    language model that shares its input embedding."""

    def __init__(self, input_dim, output_dim, tie_weights=True, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False, reverse_dtype=None,
                 logit_soft_cap=None, **kwargs):
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer, embeddings_constraint=embeddings_constraint,
                         mask_zero=mask_zero, **kwargs)
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight("reverse_embeddings", shape=(self.output_dim, self.input_dim),
                                                      initializer=self.embeddings_initializer)

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        kernel = A.transpose(self.embeddings) if self.tie_weights else self.reverse_embeddings
        x = inputs
        if self.reverse_dtype is not None:
            x, kernel = M.cast(x, self.reverse_dtype), M.cast(kernel, self.reverse_dtype)
        elif aval_of(x).dtype != aval_of(kernel).dtype:
            x = M.cast(x, aval_of(kernel).dtype)
        logits = M.matmul(x, kernel)
        if self.logit_soft_cap is not None:
            c = self.logit_soft_cap
            logits = M.multiply(M.tanh(M.divide(logits, c)), c)
        return logits

    def compute_mask(self, inputs, mask=None):
        return None     # (Keras 3: the forward call attaches its mask itself; reverse outputs have none)

    def get_config(self):
        cfg = super().get_config()
        cfg.update(tie_weights=self.tie_weights, reverse_dtype=self.reverse_dtype, logit_soft_cap=self.logit_soft_cap)
        return cfg


# -- merge layers ------------------------------------------------------------------------------------

class _Merge(Layer):
    _passes_mask = True

    def compute_mask(self, inputs, mask=None):
        # Keras 3's base merge: the OR of the inputs' masks, None when one input has none
        if mask is None:
            return None
        if not isinstance(mask, (list, tuple)) or len(mask) != len(inputs):
            raise ValueError(f"{type(self).__name__}: `mask` should be a list with one mask per input, got "
                             f"{mask!r}")
        if any(m is None for m in mask):
            return None
        out = mask[0]
        for m in mask[1:]:
            out = M.logical_or(out, m)
        return out

    def _check_list(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise ValueError(f"{type(self).__name__}: expects a list of input tensors, got "
                             f"{type(inputs).__name__}")

    def build(self, input_shape):
        if not isinstance(input_shape, list):
            raise ValueError(f"{type(self).__name__}: expects a list of inputs")
        self.built = True

    def _merge(self, inputs):
        raise NotImplementedError

    def call(self, inputs, mask=None):
        self._check_list(inputs)
        shapes = [aval_of(x).shape for x in inputs]
        if len({len(s) for s in shapes}) > 1 or any(
                len({d for d in dims if d is not None and d != 1}) > 1 for dims in zip(*shapes)):
            raise ValueError(f"{type(self).__name__}: inputs must have the same (or broadcastable) shapes, "
                             f"got {', '.join(fmt_shape(s) for s in shapes)}")
        if mask is not None and self._merge_masked is not None and any(m is not None for m in mask):
            return self._merge_masked(list(inputs), list(mask))
        return self._merge(list(inputs))

    #: Keras 3's Multiply, Maximum and Minimum also change their values where inputs are masked
    _merge_masked = None


def _sum(xs):
    # Keras 3 chains ops.add, which broadcasts (the merge layers take broadcastable shapes); add_n does not
    out = xs[0]
    for x in xs[1:]:
        out = M.add(out, x)
    return out


class Add(_Merge):
    def _merge(self, xs):
        return _sum(xs)


class Subtract(_Merge):
    def _merge(self, xs):
        if len(xs) != 2:
            raise ValueError(f"Subtract: expects exactly 2 inputs, got {len(xs)}")
        return M.subtract(xs[0], xs[1])


def _step_mask(m, x):
    return A.expand_dims(M.cast(m, np.bool_), -1) if len(aval_of(m).shape) < len(aval_of(x).shape) \
        else M.cast(m, np.bool_)


class Multiply(_Merge):
    def _merge(self, xs):
        r = xs[0]
        for x in xs[1:]:
            r = M.multiply(r, x)
        return r

    def _merge_masked(self, xs, masks):
        # Keras 3: a masked entry counts as 1 in the product; with every input masked, the
        # entries all inputs mask are 0
        every = all(m is not None for m in masks)
        out = om = None
        for x, m in zip(xs, masks):
            if m is not None:
                m = _step_mask(m, x)
                x = M.where(m, x, M.cast(1.0, aval_of(x).dtype))
                if every:
                    om = m if om is None else M.logical_or(om, m)
            out = x if out is None else M.multiply(out, x)
        if every:
            out = M.where(om, out, M.cast(0.0, aval_of(out).dtype))
        return out


class Average(_Merge):
    def _merge(self, xs):
        # the sum over the count with TF's true division: integers give floats (int32: float64, as TF 2.21)
        return _sum(xs) / len(xs)


def _merge_op_masked(op, xs, masks):
    # Keras 3's _apply_merge_op_and_or_mask: a masked entry takes the other operand's value
    out = om = None
    for x, m in zip(xs, masks):
        m = None if m is None else _step_mask(m, x)
        if out is None:
            out, om = x, m
            continue
        if m is not None:
            x = M.where(m, x, out)
        if om is not None:
            out = M.where(om, out, x)
        om = M.logical_or(om, m) if m is not None and om is not None else None
        out = op(out, x)
    return out


class Maximum(_Merge):
    def _merge(self, xs):
        r = xs[0]
        for x in xs[1:]:
            r = M.maximum(r, x)
        return r

    def _merge_masked(self, xs, masks):
        return _merge_op_masked(M.maximum, xs, masks)


class Minimum(_Merge):
    def _merge(self, xs):
        r = xs[0]
        for x in xs[1:]:
            r = M.minimum(r, x)
        return r

    def _merge_masked(self, xs, masks):
        return _merge_op_masked(M.minimum, xs, masks)


class Concatenate(_Merge):
    """Concatenate a list of tensors along ``axis`` (other dims must match)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def compute_mask(self, inputs, mask=None):
        # Keras 3: each input's mask widened to the input's shape (all True for an unmasked
        # input), concatenated along the axis, then any() over the last axis
        if mask is None:
            return None
        if not isinstance(mask, (list, tuple)) or len(mask) != len(inputs):
            raise ValueError(f"Concatenate: `mask` should be a list with one mask per input, got {mask!r}")
        if all(m is None for m in mask):
            return None
        full = []
        for x, m in zip(inputs, mask):
            if m is None:
                full.append(M.cast(A.ones_like(x), np.bool_))
            elif len(aval_of(m).shape) < len(aval_of(x).shape):
                full.append(M.logical_or(A.expand_dims(M.cast(m, np.bool_), -1), M.cast(A.zeros_like(x), np.bool_)))
            else:
                full.append(M.cast(m, np.bool_))
        return M.reduce_any(A.concat(full, self.axis), axis=-1)

    def call(self, inputs):
        self._check_list(inputs)
        shapes = [tuple(aval_of(x).shape) for x in inputs]
        ranks = {len(s) for s in shapes}
        ok = len(ranks) == 1
        if ok:
            n = ranks.pop()
            ax = self.axis % n if n else 0
            for dims in zip(*[s[:ax] + s[ax + 1:] for s in shapes]):
                if len({d for d in dims if d is not None}) > 1:
                    ok = False
        if not ok:
            raise ValueError(f"Concatenate: inputs must match in all dims except the concatenation axis "
                             f"({self.axis}), got {', '.join(fmt_shape(s) for s in shapes)}")
        return A.concat(list(inputs), self.axis)

    def get_config(self):
        cfg = super().get_config()
        cfg["axis"] = self.axis
        return cfg


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)


_OpLambda = TFOpLambda
