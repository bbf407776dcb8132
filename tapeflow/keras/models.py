"""Keras models: ``Model`` (subclassed or functional), ``Sequential``,
``clone_model``, and the compile/fit/predict conveniences.

Subclassed models are built lazily on their first call (or by
``model.build(input_shape)``, which calls the model once on zeros).
``clone_model`` gives the same architecture with fresh variables: Sequential
and functional models are rebuilt layer by layer from ``get_config``; a
subclassed model is re-created from its ``get_config``/``from_config`` if it
defines them, else by replaying the arguments its constructor was called with,
and is then built on the same input shapes. A target network is
``target = clone_model(q); target.set_weights(q.get_weights())``.
"""
from __future__ import annotations

import copy
import inspect
import itertools
import warnings

import numpy as np

from ..core.aval import fmt_shape, shapes_compatible
from ..core.primitive import aval_of
from ..core.tensor import Tensor, convert_to_tensor
from ..module import _VERSION
from ..optimizers.loss_scale import LossScaleOptimizer
from ..util import nest
from .. import sparse as _sparse
from . import backend
from .engine import (Layer, InputLayer, KerasTensor, Input, _Node, _TRAINING, masked_call, arg_masks, _batchless, _fmt_shapes,
                     _shapes, call_path, _fmt)

__all__ = ["Model", "Sequential", "clone_model", "Functional", "save_model", "load_model",
           "model_from_json"]


def _is_shape(s):
    return isinstance(s, (tuple, list)) and all(d is None or isinstance(d, (int, np.integer)) for d in s)


def _zeros_for(shape, dtype):
    if _is_shape(shape):
        return convert_to_tensor(np.zeros(tuple(1 if d is None else int(d) for d in shape),
                                          np.dtype(dtype or backend.floatx())))
    if isinstance(shape, dict):
        dt = dtype if isinstance(dtype, dict) else {}
        return {k: _zeros_for(v, dt.get(k)) for k, v in shape.items()}
    dts = dtype if isinstance(dtype, (list, tuple)) else [dtype] * len(shape)
    return [_zeros_for(s, d) for s, d in zip(shape, dts)]


class Model(Layer):
    """A layer with training conveniences.

    Subclass it (``__init__`` creates layers, ``call(self, inputs,
    training=None)`` uses them), or build a functional model with
    ``Model(inputs, outputs)`` from ``keras.Input`` placeholders.
    """

    # Keras 3 sets it in Model.__init__: callbacks read it before fit has run
    stop_training = False

    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", None)
        outputs = kwargs.pop("outputs", None)
        if args:
            if len(args) >= 1 and inputs is None:
                inputs = args[0]
            if len(args) >= 2 and outputs is None:
                outputs = args[1]
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("Model(inputs, outputs): give both inputs and outputs")
            self._init_functional(inputs, outputs, **kwargs)
            return
        kwargs.pop("autocast", None)
        super().__init__(**kwargs)
        self._compiled = None

    # -- functional ------------------------------------------------------------------------------
    def _init_functional(self, inputs, outputs, name=None, trainable=True, **kwargs):
        if name is None and type(self) is Model:      # Keras 3 names a functional model "functional"
            name = backend.unique_object_name("functional")
        Layer.__init__(self, name=name, trainable=trainable)
        self._compiled = None
        flat_in = nest.flatten(inputs)
        flat_out = nest.flatten(outputs)
        for kt in flat_in + flat_out:
            if not isinstance(kt, KerasTensor):
                raise TypeError(f"Model(inputs, outputs): expected keras.Input placeholders and layer outputs, "
                                f"got {type(kt).__name__}")
        for kt in flat_in:
            if not isinstance(kt._node.layer, InputLayer):
                raise ValueError("Model(inputs, ...): inputs must come from keras.Input")
        # topological order of nodes from the outputs back to the inputs
        order, seen = [], set()
        input_ids = {id(k) for k in flat_in}

        def visit(kt, path):
            node = kt._node
            if node is None:
                raise ValueError(f"Model: {kt!r} was not produced by a layer")
            if id(node) in seen:
                return
            if isinstance(node.layer, InputLayer):
                if id(kt) not in input_ids:
                    raise ValueError(f"Model: the graph depends on input {kt.name!r}, which is not in `inputs`")
                seen.add(id(node))
                return
            if id(node) in path:
                raise ValueError("Model: the layer graph has a cycle")
            path = path | {id(node)}
            for p in node.parents:
                visit(p, path)
            seen.add(id(node))
            order.append(node)
        for kt in flat_out:
            visit(kt, frozenset())
        layers = _keras_layer_order(flat_in, flat_out)
        names = [l.name for l in layers]
        for n in names:
            if names.count(n) > 1:
                # Keras 3's check (weights are saved and loaded by layer name)
                raise ValueError(f'The name "{n}" is used {names.count(n)} times in the model. All operation '
                                 "names should be unique.")
        f = {"inputs": inputs, "outputs": outputs, "nodes": order}
        self._functional = f
        self._layers = layers
        self.built = True
        self._build_input_shape = nest.map_structure(lambda k: tuple(k.shape), inputs)
        self._build_input_dtypes = nest.map_structure(lambda k: k.dtype.name, inputs)
        self._last_output_shape = nest.map_structure(lambda k: tuple(k.shape), outputs)
        _VERSION[0] += 1

    @property
    def input(self):
        """A functional model's inputs as given to ``Model(inputs, outputs)``; a model
        used as a layer of another keeps these (Keras 3's Functional.input)."""
        f = self.__dict__.get("_functional")
        return f["inputs"] if f is not None else Layer.input.fget(self)

    @property
    def output(self):
        f = self.__dict__.get("_functional")
        return f["outputs"] if f is not None else Layer.output.fget(self)

    @property
    def inputs(self):
        f = self.__dict__.get("_functional")
        g = self.__dict__.get("_seq_graph")
        return nest.flatten(f["inputs"]) if f is not None else [g[0]] if g is not None else None

    @property
    def outputs(self):
        f = self.__dict__.get("_functional")
        g = self.__dict__.get("_seq_graph")
        return nest.flatten(f["outputs"]) if f is not None else nest.flatten(g[1]) if g is not None else None

    @property
    def input_shape(self):
        s = self.__dict__.get("_build_input_shape")
        if s is None:
            raise AttributeError(f"model '{self.name}' has no defined input shape yet")
        return _batchless(s)

    @property
    def output_names(self):
        """Keras 3's names of the outputs: the output layers' names (a Sequential: its last layer's)."""
        f = self.__dict__.get("_functional")
        if f is not None and isinstance(f["outputs"], dict):
            # the output layers' names in the order of the sorted keys (TF 2.21: ['da', 'db'] for
            # {"b": db(...), "a": da(...)}); losses, metrics and logs go by the keys
            return [f["outputs"][k]._node.layer.name for k in sorted(f["outputs"])]
        names = _output_names(self, None)
        if names is None:
            raise AttributeError(f"model '{self.name}' has no output names (a subclassed model's outputs are "
                                 "unnamed)")
        return names

    @property
    def output_shape(self):
        s = self.__dict__.get("_last_output_shape")
        if s is None:
            raise AttributeError(f"model '{self.name}' has not been called yet")
        return _batchless(s)

    def _run_functional(self, inputs):
        f = self._functional
        spec = f["inputs"]
        flat_spec = nest.flatten(spec)
        if isinstance(spec, KerasTensor):
            flat_vals = [inputs] if not (isinstance(inputs, (list, tuple)) and len(inputs) == 1) else list(inputs)
        else:
            if not isinstance(inputs, (list, tuple, dict)):
                if len(flat_spec) != 1:
                    raise ValueError(f"Model '{call_path()}' expects {len(flat_spec)} inputs, got a single tensor")
                inputs = [inputs]       # Model([inp], ...) takes a single array, as Keras 3
            flat_vals = nest.flatten(inputs)
        if len(flat_vals) != len(flat_spec):
            raise ValueError(f"Model '{call_path()}' expects {len(flat_spec)} inputs, got {len(flat_vals)}")
        values = {}
        for i, (kt, v) in enumerate(zip(flat_spec, flat_vals)):
            if isinstance(v, Tensor):
                got = tuple(aval_of(v).shape)
                want = tuple(kt.shape)
                # the batch dimension is not checked: Keras 3's functional input spec drops it, so a
                # model on Input((3,), batch_size=4) takes batches of 2 (predict's last batch, too)
                if len(got) != len(want) or not shapes_compatible(want[1:], got[1:]):
                    raise ValueError(f"Model '{call_path()}': input {i} ('{kt.name}') is incompatible with the "
                                     f"model: expected shape {_fmt(want)}, got shape {_fmt(got)}")
            values[id(kt)] = v

        def get(x):
            return values[id(x)] if isinstance(x, KerasTensor) else x
        masks = {}      # id(KerasTensor) -> its mask (Keras 3 attaches masks to tensors)
        for node in f["nodes"]:
            args = nest.map_structure(get, list(node.args))
            kwargs = nest.map_structure(get, dict(node.kwargs))
            first = node.args[0] if node.args else None
            if isinstance(first, KerasTensor):
                mask = masks.get(id(first))
            elif isinstance(first, (list, tuple)) and masks:       # a merge layer: one mask per input
                mask = [masks.get(id(k)) if isinstance(k, KerasTensor) else None for k in first]
                mask = mask if any(m is not None for m in mask) else None
            else:
                mask = None
            if masks and (len(node.args) > 1 or node.kwargs):
                # Keras 3 also fills a call's `<arg>_mask` parameters from the tensors' masks
                kwargs.update(arg_masks(node.layer, node.args, node.kwargs,
                                        lambda k: masks.get(id(k)) if isinstance(k, KerasTensor) else None))
            if mask is None and not node.layer._mask_source:
                out = node.layer(*args, **kwargs)
            else:
                out, omask = masked_call(node.layer, args[0], mask, *args[1:], **kwargs) if args else \
                    (node.layer(*args, **kwargs), None)
                if omask is not None:
                    flat = nest.flatten(node.outputs)
                    # (one mask goes to the first output, as Keras' _set_mask_metadata zips them)
                    for kt, m in zip(flat, omask if isinstance(omask, (list, tuple)) else [omask]):
                        if m is not None:
                            masks[id(kt)] = m
            for kt, o in zip(nest.flatten(node.outputs), nest.flatten(out)):
                values[id(kt)] = o
        outs = f["outputs"]
        if masks and isinstance(outs, KerasTensor) and id(outs) in masks:
            self.__dict__["_out_mask"] = (values[id(outs)], masks[id(outs)])   # (see _output_mask)
        elif "_out_mask" in self.__dict__:
            del self.__dict__["_out_mask"]
        return nest.map_structure(get, outs)

    #: a model nested in another hands its output mask on (compute_mask below)
    _mask_source = True

    def compute_mask(self, inputs, mask=None):
        """The output mask of this model's last call (Sequential and functional models note it;
        masked_call asks right after the call), so a model nested in another passes its mask on
        as Keras 3 does."""
        last = self.__dict__.get("_out_mask")
        return last[1] if last is not None else None

    def _output_mask(self, y_pred):
        """The mask of the model's (single) output ``y_pred``, or None. Keras 3 reads it from the
        tensor (``_keras_mask``) in the loss and the metrics; tapeflow's model call notes its last
        masked output beside it, and only the very same tensor matches."""
        last = self.__dict__.get("_out_mask")
        return last[1] if last is not None and last[0] is y_pred else None

    def call(self, inputs, training=None, mask=None):
        if self.__dict__.get("_functional") is not None:
            return self._run_functional(inputs)
        raise NotImplementedError(f"{type(self).__name__}: subclassed models must implement call()")

    #: compile() settings, the functional graph and the input shape of a Sequential; the
    #: layer list is walked as ``layers`` (``_walk_children``) and does not name the layers' paths
    _bookkeeping = frozenset({"_compiled", "_functional", "_layers", "_seq_input_shape", "_seq_input_dtype", "_out_mask",
                              "_seq_input_layer", "_seq_graph", "_seq_in_init"})

    def _walk_children(self):
        if self.__dict__.get("_functional") is not None:
            return [("layers", [l for l in self._layers if not isinstance(l, InputLayer)])]
        return Layer._walk_children(self)

    # -- structure -------------------------------------------------------------------------------
    @property
    def layers(self):
        if "_layers" in self.__dict__:
            return list(self._layers)
        return self._flatten_layers(include_self=False, recursive=False)

    def get_layer(self, name=None, index=None):
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(f"get_layer: index {index} out of range ({len(layers)} layers)")
            return layers[index]
        for l in layers:
            if l.name == name:
                return l
        raise ValueError(f"no layer named {name!r} in model '{self.name}'; layers: {[l.name for l in layers]}")

    def build(self, input_shape=None):
        """Create the weights: a subclassed model is called once on zeros of
        ``input_shape`` (unknown dims as 1; a list of shapes for several inputs)."""
        if self.__dict__.get("_building_from_call") or self.__dict__.get("_functional") is not None:
            self.built = True
            return
        if input_shape is None:
            input_shape = self.__dict__.get("_batch_input_shape")
        if input_shape is None:
            raise ValueError(f"{type(self).__name__}.build: give the input shape, e.g. build((None, 4))")
        if isinstance(input_shape, tuple) and not _is_shape(input_shape):
            input_shape = list(input_shape)
        dummy = _zeros_for(input_shape, None)
        # marked built first: the call below must not run build() again (a user
        # build() that ends with super().build(input_shape) brought us here)
        self.built = True
        self._build_input_shape = _tuple_shapes(input_shape)
        self._build_input_dtypes = None
        self._build_rest = []
        _TRAINING.append(False)
        try:
            self(dummy, training=False) if _accepts_training(self) else self(dummy)
        except Exception:
            self.built = False
            raise
        finally:
            _TRAINING.pop()

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Print Keras 3's table of the layers (name and class, output shape,
        parameter count; "Connected to" for a functional graph that is not a plain
        chain), then the parameter counts with their sizes in bytes."""
        text = _summary_text(self, line_length, positions, expand_nested, show_trainable)
        if print_fn is None:
            print(text)
        else:
            print_fn(text)

    def get_config(self):
        f = self.__dict__.get("_functional")
        if f is not None:
            return _functional_config(self)
        if type(self).get_config is Model.get_config and "_init_args" in self.__dict__:
            args, kwargs = self._init_args
            if not args:
                return dict(kwargs)
            try:  # positional arguments by their parameter names, so that cls(**config) replays them
                bound = inspect.signature(type(self).__init__).bind(None, *args, **kwargs)
            except TypeError:
                bound = None
            params = inspect.signature(type(self).__init__).parameters
            if bound is not None and all(params[n].kind not in (inspect.Parameter.VAR_POSITIONAL,)
                                         for n in bound.arguments):
                out = {}
                for i, (n, v) in enumerate(bound.arguments.items()):
                    if i == 0:
                        continue
                    if params[n].kind is inspect.Parameter.VAR_KEYWORD:
                        out.update(v)
                    else:
                        out[n] = v
                return out
        return Layer.get_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if "input_layers" in config and "layers" in config:
            return _functional_from_config(cls, config, custom_objects)
        return cls(**config)

    def to_json(self, **kwargs):
        """The model's config as JSON (Keras' ``{"module", "class_name", "config", ...}``); rebuild it,
        with fresh weights, with ``keras.models.model_from_json``."""
        import json
        from .saving import serialize_keras_object
        return json.dumps(serialize_keras_object(self), **kwargs)

    def save(self, filepath, overwrite=True, save_format=None, include_optimizer=True, **kwargs):
        """Save the whole model (config, weights, optimizer state) to a ``.keras``
        file in tapeflow's safe format; see ``keras.saving`` and ``load_model``."""
        from .saving import save_model
        if save_format not in (None, "keras"):
            raise ValueError(f"Model.save: save_format={save_format!r} is not supported; tapeflow writes its "
                             "own .keras format (give a path ending in .keras)")
        save_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer)

    def export(self, filepath, format="tf_saved_model", verbose=True, input_signature=None):
        """Keras 3's export: a SavedModel with the ``serve`` endpoint (``tapeflow.saved_model``)."""
        from ..saved_model.keras_export import export
        return export(self, filepath, format=format, verbose=verbose, input_signature=input_signature)

    # -- training conveniences -----------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=None, steps_per_execution=None, jit_compile=None, **kwargs):
        """Remember the optimizer, the loss and the metrics for ``fit``/``evaluate``.

        ``metrics``: names (``"accuracy"``, ``"mae"``, ``"mse"``, loss names),
        ``keras.metrics`` objects or classes, or functions ``fn(y_true, y_pred)``;
        they are created at the first batch (``"accuracy"`` depends on its shapes)."""
        from .. import optimizers as _opt
        from . import losses as _losses
        from . import metrics as _metrics
        self.optimizer = _opt.get(optimizer)
        if kwargs.pop("auto_scale_loss", True) and self.dtype_policy.name == "mixed_float16" and \
                isinstance(self.optimizer, _opt.Optimizer):
            # as Keras 3: a model under 'mixed_float16' trains with dynamic loss scaling
            # (float16 gradients underflow without it); train_step scales the loss
            self.optimizer = _opt.LossScaleOptimizer(self.optimizer)
        if isinstance(loss, (list, tuple, dict)) or (loss is not None and loss_weights is not None):
            # a loss per output (or weighted): resolved against the outputs at the first batch
            lf = _OutputLosses(loss, loss_weights)
        else:
            lf = _losses.get(loss) if loss is not None else None
            if lf is not None and not isinstance(lf, _losses.Loss):
                lf = _losses.LossFunctionWrapper(lf)
        def as_list(ms, arg):
            if ms is not None and not isinstance(ms, (list, tuple)):
                ms = [ms]
            return list(ms or [])
        def per_output(ms):
            # Keras 3: a dict {output name: metrics} or a list of lists (one per output)
            return isinstance(ms, dict) or (isinstance(ms, (list, tuple)) and len(ms) > 0 and
                                            all(m is None or isinstance(m, (list, tuple)) for m in ms))
        # `metrics` ignore sample weights, `weighted_metrics` apply them (Keras 3's CompileMetrics)
        if per_output(metrics) or per_output(weighted_metrics):
            wanted = [(metrics, False), (weighted_metrics, True)]
            cm = _CompileMetrics(wanted, per_output=True)
        else:
            wanted = [(m, False) for m in as_list(metrics, "metrics")] + \
                [(m, True) for m in as_list(weighted_metrics, "weighted_metrics")]
            cm = _CompileMetrics(wanted) if wanted else None
        self._compiled = {"loss": lf, "compile_metrics": cm,
                          "loss_tracker": _metrics.Mean(name="loss"),
                          "args": {"loss": loss, "metrics": metrics, "weighted_metrics": weighted_metrics,
                                   "loss_weights": loss_weights}}
        self.loss = loss            # as Keras 3: the argument as given ("mse", a Loss, a function)

    def _require_compiled(self, what):
        if not self.__dict__.get("_compiled"):
            # ValueError as Keras 3 ("You must call `compile()` before using the model.")
            raise ValueError(f"You must call `compile()` before using the model ({what}): call "
                             "model.compile(optimizer, loss) first")

    @property
    def metrics(self):
        """As Keras 3: the loss tracker (``loss``), then one ``compile_metrics`` object
        holding the compiled metrics (its ``update_state(y, y_pred)`` updates them all,
        its ``result()`` is a dict), so a custom ``train_step`` can loop over them."""
        c = self.__dict__.get("_compiled")
        if not c:
            return []
        lf = c["loss"]
        trackers = lf.trackers if isinstance(lf, _OutputLosses) else []
        return [c["loss_tracker"]] + ([c["compile_metrics"]] if c["compile_metrics"] is not None else []) + trackers

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def _flat_metrics(self):
        """The loss tracker and each compiled metric (created by the first batch)."""
        c = self.__dict__.get("_compiled") or {}
        cm = c.get("compile_metrics")
        lf = c.get("loss")
        trackers = lf.trackers if isinstance(lf, _OutputLosses) else []
        return ([c["loss_tracker"]] if c else []) + trackers + (cm.flat() if cm is not None else [])

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of ``y_pred`` against ``y`` plus ``self.losses``
        (weight penalties and ``add_loss`` terms), as Keras 3 adds them."""
        from ..ops import math_ops as M
        lf = self._compiled["loss"]
        terms = []
        if isinstance(lf, _OutputLosses) and y is not None:
            total = lf(self, y, y_pred, sample_weight)
            if total is not None:           # None: every output's loss is None
                terms.append(total)
        elif lf is not None and y is not None:
            if not isinstance(y_pred, Tensor) and len(nest.flatten(y_pred)) > 1:
                # Keras 3 applies one loss to each output (logged as <output>_loss)
                lf = self._compiled["loss"] = _OutputLosses(self._compiled["args"]["loss"], None)
                terms.append(lf(self, y, y_pred, sample_weight))
                y = None
        if lf is not None and not isinstance(lf, _OutputLosses) and y is not None:
            y = _to_tensor_like(y, y_pred)
            mask = self._output_mask(y_pred)
            if mask is not None:
                from .losses import apply_mask
                sample_weight = apply_mask(sample_weight, mask, aval_of(y_pred).dtype,
                                           getattr(lf, "reduction", "sum_over_batch_size"))
            terms.append(lf(y, y_pred, sample_weight=sample_weight) if sample_weight is not None else lf(y, y_pred))
        terms += [M.cast(l, "float32") if aval_of(l).dtype != np.float32 else l for l in self.losses]
        if not terms:
            if lf is not None:
                raise ValueError("the model was compiled with a loss but no targets were given: pass `y` (or a "
                                 "dataset of (x, y) batches)")
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        return terms[0] if len(terms) == 1 else M.add_n(terms)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Update the compiled metrics with one batch; the running results by name."""
        cm = self._compiled["compile_metrics"]
        if cm is not None and y is not None:
            if cm.per_output:
                cm.output_names = _output_names(self, y_pred)
            cm.update_state(y, y_pred, sample_weight, mask=self._output_mask(y_pred))
        self.__dict__.pop("_out_mask", None)    # (a traced step's tracers are not kept past it)
        return self.get_metrics_result()

    def get_metrics_result(self):
        """``{name: result}`` of every metric, ``compile_metrics``' dict merged in (as Keras 3)."""
        out = {}
        for m in self.metrics:
            r = m.result()
            if isinstance(r, dict):
                out.update(r)
            else:
                out[m.name] = r
        return out

    def _track_loss(self, loss, x):
        # the epoch's loss is the mean over samples: each batch weighs its size (Keras 3's loss tracker)
        self._compiled["loss_tracker"].update_state(loss, sample_weight=_num_samples(x))

    def train_step(self, data):
        """One optimizer step on a batch ``(x, y[, sample_weight])``; returns the running logs."""
        from ..autodiff.tape import GradientTape
        x, y, sw = _unpack(data)
        with GradientTape() as tape:
            pred = self(x, training=True)
            loss = self.compute_loss(x, y, pred, sw, training=True)
            # a LossScaleOptimizer's scaled loss (it unscales the gradients); the logs keep the loss
            scaled = self.optimizer.scale_loss(loss) if isinstance(self.optimizer, LossScaleOptimizer) else loss
        tv = self.trainable_variables
        grads = tape.gradient(scaled, tv)
        self.optimizer.apply_gradients(zip(grads, tv))
        self._track_loss(loss, x)
        return self.compute_metrics(x, y, pred, sw)

    def test_step(self, data):
        """Loss and metrics of a batch, without training; returns the running logs."""
        x, y, sw = _unpack(data)
        pred = self(x, training=False)
        loss = self.compute_loss(x, y, pred, sw, training=False)
        self._track_loss(loss, x)
        return self.compute_metrics(x, y, pred, sw)

    def _results(self, logs, return_dict):
        """Keras 3's return value: a dict (sorted), or loss then compiled metrics in order (a float if alone)."""
        logs = _pythonify(logs)
        if return_dict:
            return logs
        names = [m.name for m in self._flat_metrics()]
        out = [logs[n] for n in names if n in logs] + [logs[k] for k in sorted(logs) if k not in names]
        return out[0] if len(out) == 1 else out

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True,
                       return_dict=False):
        """One gradient step on one batch; returns the loss (and metrics) of this batch
        (accumulated since the last reset with ``reset_metrics=False``)."""
        self._require_compiled("train_on_batch")
        if class_weight is not None:
            sample_weight = _class_weights("train_on_batch", y, class_weight, sample_weight)
        if reset_metrics:
            self.reset_metrics()
        return self._results(self.train_step(_pack(x, y, sample_weight)), return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
        self._require_compiled("test_on_batch")
        if reset_metrics:
            self.reset_metrics()
        return self._results(self.test_step(_pack(x, y, sample_weight)), return_dict)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None, sample_weight=None,
            initial_epoch=0, steps_per_epoch=None, validation_steps=None, validation_batch_size=None,
            validation_freq=1, **kwargs):
        """Mini-batch training on NumPy arrays/tensors (batch_size 32 by default) or on a
        ``tf.data.Dataset`` of ``(x, y[, sample_weight])`` batches. Returns a History: per
        epoch ``loss``, the compiled metrics, and ``val_*`` of the same with validation data."""
        self._require_compiled("fit")
        from ..ops import random_ops
        from .config import _capped_epochs, _capped_steps
        # keras.config.set_max_epochs / set_max_steps_per_epoch (Keras' debugging caps)
        epochs, steps_per_epoch = _capped_epochs(epochs), _capped_steps(steps_per_epoch)
        from .callbacks import CallbackList, History, ProgbarLogger
        dataset = _is_dataset(x)
        if class_weight is not None:
            if dataset:
                raise ValueError("fit: class_weight with a dataset is not supported by tapeflow; put the weights in "
                                 "the dataset's elements as (x, y, sample_weight)")
            # (Keras: each sample weighs its class's weight; it was accepted and ignored)
            sample_weight = _class_weights("fit", y, class_weight, sample_weight)
        if dataset:
            _check_dataset_args(x, y, sample_weight, steps_per_epoch)
            if shuffle:
                _warn_shuffle_ignored(x)
            if validation_split:
                raise ValueError("Argument `validation_split` is only supported for tensors or NumPy arrays. "
                                 f"Found incompatible type in the input: {type(x).__name__}")
        elif validation_split and validation_data is None:
            if not 0 <= validation_split < 1:
                raise ValueError(f"fit: validation_split must be in [0, 1), got {validation_split}")
            # as Keras: the last fraction of the samples, taken before any shuffling
            n_all = _num_samples(x)
            split = int(n_all * (1.0 - validation_split))
            tr, va = np.arange(split), np.arange(split, n_all)
            validation_data = (_take(x, va), _take(y, va))
            if sample_weight is not None:
                # the validation samples keep their weights (Keras 3 splits sample_weight with x and y:
                # val_loss is weighted; dropping them gave an unweighted val_loss)
                validation_data += (_take(sample_weight, va),)
                sample_weight = _take(sample_weight, tr)
            x, y = _take(x, tr), (_take(y, tr) if y is not None else None)
        bs = _batch_size("fit", batch_size)
        batches = _FitBatches(x, y, sample_weight, bs, shuffle, steps_per_epoch)
        hist = History()
        self.history = hist         # as Keras: model.history.history after fit
        # Keras 3's params["steps"]: steps_per_epoch, else the batches in one pass (None when unknown)
        cbs = CallbackList([*(callbacks or []), hist], self, {"epochs": epochs, "verbose": verbose,
                                                              "steps": steps_per_epoch or batches.num_batches})
        self.stop_training = False
        # a ProgbarLogger among the callbacks prints the progress (Keras then adds no logger of its own)
        own_bar = any(isinstance(c, ProgbarLogger) for c in callbacks or ())
        rng = random_ops.get_global_generator()._gen
        cbs.on_train_begin({})
        skip = 0
        resume = self.__dict__.pop("_resume_at", None)     # (epoch, step): set by BackupAndRestore
        if resume is not None:
            if batches._steps is not None:
                # one iterator runs across epochs: pass over the batches of the epochs trained
                # before, so the resumed epochs take the batches an uninterrupted fit takes
                for _ in range(max(0, resume[0] - initial_epoch)):
                    for _ in batches.epoch(rng):
                        pass
            initial_epoch, skip = resume
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cbs.on_epoch_begin(epoch, {})
            logs = {}
            numbered = enumerate(batches.epoch(rng))
            if skip:        # the resumed epoch: the batches the backup had trained are skipped
                numbered, skip = itertools.islice(numbered, skip, None), 0
            for step, batch in numbered:
                cbs.on_train_batch_begin(step, {})
                logs = _pythonify(self.train_step(batch))
                cbs.on_train_batch_end(step, dict(logs))
                if self.stop_training:      # Keras 3 stops within the epoch (TerminateOnNaN)
                    break
            epoch_logs = dict(logs)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                vx, vy, vsw = _unpack(validation_data) if not _is_dataset(validation_data) \
                    else (validation_data, None, None)
                val = self.evaluate(vx, vy, batch_size=validation_batch_size or bs, sample_weight=vsw,
                                    steps=validation_steps, verbose=0, return_dict=True, callbacks=cbs)
                epoch_logs.update({f"val_{k}": v for k, v in val.items()})
            if verbose in (1, 2, True, "auto") and not own_bar:
                print(f"Epoch {epoch + 1}/{epochs} - " + " - ".join(f"{k}: {v:.4f}" for k, v in epoch_logs.items()))
            cbs.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        if epochs > 0 and getattr(self.optimizer, "use_ema", False):
            # Keras 3: an optimizer with use_ema leaves the weights at their moving averages
            self.optimizer.finalize_variable_values(self.trainable_variables)
        cbs.on_train_end({})
        return hist

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, **kwargs):
        """Loss and compiled metrics over the data (arrays or a dataset of batches):
        a float when there are no metrics, else ``[loss, *metrics]`` in compile order
        (a dict with ``return_dict=True``)."""
        self._require_compiled("evaluate")
        from .callbacks import CallbackList
        from .config import _capped_steps
        steps = _capped_steps(steps)
        if _is_dataset(x):
            _check_dataset_args(x, y, sample_weight, steps)
        # fit passes its own CallbackList: the validation pass runs its callbacks' test hooks
        cbs = callbacks if isinstance(callbacks, CallbackList) else \
            CallbackList(callbacks, self, {"verbose": verbose, "steps": steps})
        self.reset_metrics()
        cbs.on_test_begin({})
        logs = {}
        for step, batch in enumerate(_batches(x, y, sample_weight, _batch_size("evaluate", batch_size), False, None,
                                              steps)):
            cbs.on_test_batch_begin(step, {})
            logs = _pythonify(self.test_step(batch))
            cbs.on_test_batch_end(step, dict(logs))
        if not logs:
            logs = _pythonify(self.get_metrics_result())
        cbs.on_test_end(dict(logs))
        return self._results(logs, return_dict)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None, **kwargs):
        """Outputs as NumPy arrays, computed in batches (32 by default; a dataset's own batches)."""
        from .callbacks import CallbackList
        from .config import _capped_steps
        steps = _capped_steps(steps)
        if _is_dataset(x):
            _check_dataset_args(x, None, None, steps)
        cbs = CallbackList(callbacks, self, {"verbose": verbose, "steps": steps})
        cbs.on_predict_begin({})
        outs = []
        for step, batch in enumerate(_batches(x, None, None, _batch_size("predict", batch_size), False, None, steps)):
            cbs.on_predict_batch_begin(step, {})
            xb = _unpack(batch)[0]
            outs.append(nest.map_structure(lambda t: np.asarray(t.numpy()), self(xb, training=False)))
            cbs.on_predict_batch_end(step, {"outputs": outs[-1]})
        cbs.on_predict_end({})
        if not outs:
            return np.zeros((0,), np.float32)
        return nest.map_structure(lambda *ts: np.concatenate(ts, 0), *outs)

    def predict_on_batch(self, x):
        return nest.map_structure(lambda t: np.asarray(t.numpy()), self(x, training=False))


class _CompileMetrics:
    """Keras 3's ``compile_metrics``: the metrics given to ``compile``, created at the
    first update (``"accuracy"`` needs the batch's shapes); ``metrics`` ignore
    sample weights, ``weighted_metrics`` apply them."""

    name = "compile_metrics"

    def __init__(self, wanted, per_output=False):
        self._wanted = wanted
        self._built = None          # [(metric, weighted, output index or None)]
        self.per_output = per_output
        self.output_names = None    # per_output: set by Model.compute_metrics before each update

    def flat(self):
        return [e[0] for e in self._built or ()]

    @property
    def metrics(self):
        return self.flat()

    def _build(self, yts, preds):
        from . import metrics as _metrics
        if not self.per_output:
            if len(preds) > 1:
                raise ValueError("Invalid `metrics`: on a model with several outputs `metrics` should be a dict "
                                 f"{{output name: metrics}} or a list of {len(preds)} lists (one per output); got "
                                 f"a flat list {self._wanted[0][0] if self._wanted else None!r}")
            return [(_metrics.for_compile(m, yts[0], preds[0]), w, None) for m, w in self._wanted]
        names = self.output_names
        built = []
        for spec, weighted in self._wanted:
            if spec is None:
                continue
            if isinstance(spec, dict):
                if names is None or any(k not in names for k in spec):
                    raise ValueError(f"Invalid `metrics`: the keys of {spec!r} should be output names of the "
                                     f"model ({names})")
                per = [spec.get(n) for n in names]
            else:
                if len(spec) != len(preds):
                    raise ValueError(f"Invalid `metrics`: {len(spec)} lists for a model with {len(preds)} outputs")
                per = list(spec)
            for i, ms in enumerate(per):
                for m in ([] if ms is None else [ms] if not isinstance(ms, (list, tuple)) else ms):
                    built.append((_metrics.for_compile(m, yts[i], preds[i]), weighted, i))
        return built

    def update_state(self, y_true, y_pred, sample_weight=None, mask=None):
        preds = nest.flatten(y_pred)
        if len(preds) == 1 and not self.per_output:
            yts = [_to_tensor_like(y_true, y_pred)]
        else:
            yts = [_to_tensor_like(a, p) for a, p in zip(_flat_targets(self.output_names, y_true, y_pred), preds)]
        if self._built is None:
            self._built = self._build(yts, preds)
            for e in self._built:
                e[0].reset_state()
        for m, weighted, i in self._built:
            j = 0 if i is None else i
            sw = sample_weight if weighted else None
            if mask is not None and isinstance(m, _metrics_mod().MeanMetricWrapper):
                # Keras 3's MeanMetricWrapper weighs the output's mask in (0/1), other metrics do not
                from .losses import apply_mask
                sw = apply_mask(sw, mask, aval_of(preds[j]).dtype, "sum")
            m.update_state(yts[j], preds[j], sample_weight=sw)

    def result(self):
        # Keras 3's CompileMetrics.result: a name seen before gets _1, _2... (a weighted
        # metric first tries weighted_<name>), so compile(metrics=[AUC(), "auc"]) logs auc
        # and auc_1 instead of one overwriting the other
        out, seen = {}, {}
        for weighted_pass in (False, True):
            for m, weighted, i in self._built or ():
                if weighted != weighted_pass:
                    continue
                name = m.name if i is None or not self.output_names else f"{self.output_names[i]}_{m.name}"
                if name in seen and weighted:
                    name = f"weighted_{m.name}"
                if name in seen:
                    seen[name] += 1
                    name = f"{name}_{seen[name] - 1}"
                else:
                    seen[name] = 1
                out[name] = m.result()
        return out

    def reset_state(self):
        for m in self.flat():
            m.reset_state()


def _metrics_mod():
    from . import metrics
    return metrics


def _unpack(data):
    """``(x, y, sample_weight)`` of a batch given as ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sw)``."""
    if isinstance(data, tuple) and 1 <= len(data) <= 3:
        return (tuple(data) + (None, None))[:3]
    return data, None, None


def _is_dataset(x):
    """A source of ready batches: a ``tf.data.Dataset``, a ``keras.utils.PyDataset``, or a Python
    generator/iterator of ``(x, y[, sample_weight])`` batches (Keras 3 takes each in
    fit/evaluate/predict)."""
    from ..data import Dataset
    from .utils import PyDataset
    return isinstance(x, (Dataset, PyDataset)) or (hasattr(x, "__next__") and not isinstance(x, (Tensor, np.ndarray)))


def _warn_shuffle_ignored(x):
    """Keras 3's UserWarning when fit's shuffle (True by default) cannot apply: the source gives
    its batches in its own order. Raised here, one place, as Keras raises it from one line of its
    data adapters: Python's default filter shows each text once per process."""
    from ..data import Dataset
    from .utils import PyDataset
    if isinstance(x, Dataset):
        what = ("data `x` was provided as a tf.data.Dataset. The Dataset is expected to already be shuffled "
                "(via `.shuffle(buffer_size)`).")
    elif isinstance(x, PyDataset):
        if getattr(x, "num_batches", None) is not None:
            return
        what = "data `x` was provided as an infinite PyDataset. The PyDataset is expected to already be shuffled."
    elif inspect.isgenerator(x):
        what = "data `x` was provided as a generator. The generator is expected to yield already-shuffled data."
    else:
        return
    warnings.warn(f"`shuffle=True` was passed, but will be ignored since the {what}", UserWarning)


def _cardinality(x):
    """Batches in one pass over a dataset; a generator's are unknown (UNKNOWN_CARDINALITY)."""
    from ..data import UNKNOWN_CARDINALITY
    return x._cardinality() if hasattr(x, "_cardinality") else UNKNOWN_CARDINALITY


def _check_dataset_args(ds, y, sample_weight, steps):
    from ..data import INFINITE_CARDINALITY
    if y is not None:
        raise ValueError("When providing `x` as a tf.data.Dataset, `y` should not be passed. Instead, the "
                         "targets should be included as part of the tf.data.Dataset.")
    if sample_weight is not None:
        raise ValueError("When providing `x` as a tf.data.Dataset, `sample_weight` should not be passed. "
                         "Instead, the sample weights should be included as part of the tf.data.Dataset.")
    if steps is None and _cardinality(ds) == INFINITE_CARDINALITY:
        # Keras would loop for ever: an epoch of an endless dataset never ends
        raise ValueError("the dataset repeats for ever: give `steps_per_epoch` (fit) or `steps` "
                         "(evaluate/predict) to say how many batches make an epoch")


def _pack(x, y, sw):
    """A batch as Keras hands it to ``train_step``: ``(x, y)``, ``(x, y, sw)``, or ``(x,)`` alone."""
    if y is None:
        return (x,)
    return (x, y) if sw is None else (x, y, sw)


def _class_weights(method, y, class_weight, sample_weight):
    """Keras' per-sample weights from ``class_weight`` ({class index: weight}; a class not in
    it weighs 1): labels (n,) or (n, 1) are class indices, one-hot labels (n, k) their argmax."""
    if sample_weight is not None:
        raise ValueError(f"{method}: give class_weight or sample_weight, not both (as Keras)")
    if not isinstance(class_weight, dict):
        raise TypeError(f"{method}: class_weight must be a dict {{class index: weight}}, got {type(class_weight).__name__}")
    flat = [] if y is None else nest.flatten(y)
    if len(flat) != 1:
        raise ValueError(f"{method}: class_weight needs a single array of labels y")
    y = np.asarray(flat[0].numpy() if isinstance(flat[0], Tensor) else flat[0])
    if y.ndim > 1:
        y = np.argmax(y, axis=-1) if y.shape[-1] != 1 else y.reshape(y.shape[:-1])
    classes = np.round(y).astype(np.int64).reshape(-1)
    return np.array([float(class_weight.get(int(c), 1.0)) for c in classes], np.float32).reshape(y.shape)


def _batch_size(method, batch_size):
    """``batch_size`` (None: 32, Keras' default), checked: 0 would silently mean 32."""
    if batch_size is None:
        return 32
    if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"{method}: batch_size must be a positive integer or None, got {batch_size!r}")
    return int(batch_size)


def _batches(x, y, sample_weight, batch_size, shuffle, rng, steps):
    """The batches of one pass: a dataset's elements as they are, or slices of arrays
    packed as Keras packs them (in a fresh permutation when ``shuffle``); at most ``steps``."""
    if _is_dataset(x):
        # islice, not a count checked after next(): a generator's batch past `steps` must not be
        # pulled (and lost) to find out that the pass is over
        it = iter(x)
        yield from (itertools.islice(it, steps) if steps is not None else it)
        return
    n = _num_samples(x)
    sizes = {name: sorted({int(np.shape(a.numpy() if isinstance(a, Tensor) else a)[0]) for a in nest.flatten(v)})
             for name, v in (("x", x), ("y", y), ("sample_weight", sample_weight)) if v is not None}
    if any(k != [n] for k in sizes.values()):
        # else the shorter arrays' last batches come out short, pairing samples with the wrong labels
        raise ValueError("Data cardinality is ambiguous: make sure all arrays contain the same number of samples. "
                         + ", ".join(f"{k} sizes: {', '.join(map(str, v))}" for k, v in sizes.items()))
    idx = rng.permutation(n) if shuffle else np.arange(n)
    for i, start in enumerate(range(0, n, batch_size)):
        if steps is not None and i >= steps:
            break
        b = idx[start:start + batch_size]
        yield _pack(_take(x, b), _take(y, b) if y is not None else None,
                    _take(sample_weight, b) if sample_weight is not None else None)


def _output_names(model, y_pred):
    """Keras 3's ``output_names``: a functional model's output layers' names (a dict of
    outputs: its keys); None for a subclassed model's list of outputs."""
    if isinstance(y_pred, dict):
        return sorted(y_pred)
    f = model.__dict__.get("_functional")
    if f is None:
        layers = model.__dict__.get("_layers") if isinstance(model, Sequential) else None
        return [layers[-1].name] if layers else None
    return [kt._node.layer.name for kt in nest.flatten(f["outputs"])]


def _flat_targets(names, y, y_pred):
    """The targets, one per flat output: ``y`` as a list/tuple in output order, or a dict
    keyed by output names."""
    n = len(nest.flatten(y_pred))
    if isinstance(y, dict):
        if names is None or sorted(y) != sorted(names):
            raise ValueError(f"y_true and y_pred have different structures: targets for {sorted(y)}, outputs "
                             f"{names}")
        return [y[k] for k in names]
    ys = list(y) if isinstance(y, (list, tuple)) else [y]
    if len(ys) != n:
        raise ValueError(f"y_true and y_pred have different structures: {len(ys)} target array(s) for a model "
                         f"with {n} outputs")
    return ys


class _OutputLosses:
    """Keras 3's compiled loss of a model with several outputs: ``loss`` one loss for
    every output, a list (one per output, None for none) or a dict by output name;
    ``loss_weights`` a list or dict. The total is sum(weight * loss) over the outputs;
    with more than one loss each is also logged as ``<output name>_loss`` (a subclassed
    model's outputs have no names: ``<loss name>_loss``, as Keras 3)."""

    def __init__(self, loss, loss_weights):
        self.loss = loss
        self.loss_weights = loss_weights
        self.fns = None
        self.trackers = []

    def _resolve(self, names, n):
        from . import losses as _losses
        from . import metrics as _metrics
        loss = self.loss
        if isinstance(loss, dict):
            if names is None or sorted(loss) != sorted(names):
                raise ValueError(f"Expected keys {names} in loss dict, but found loss.keys()={list(loss)}")
            specs = [loss[k] for k in names]
        elif isinstance(loss, (list, tuple)):
            if len(loss) != n:
                # Keras 3 uses the first len(loss) outputs of a shorter list (a list of 1 on two
                # outputs trains the first alone); tapeflow asks for one entry per output
                raise ValueError(f"compile(loss=[...]) gives {len(loss)} losses for a model with {n} outputs: "
                                 "give one per output (None for an output without a loss)")
            specs = list(loss)
        else:
            specs = [loss] * n
        fns = []
        for sp in specs:
            f = _losses.get(sp) if sp is not None else None
            if f is not None and not isinstance(f, _losses.Loss):
                f = _losses.LossFunctionWrapper(f)
            fns.append(f)
        active = [i for i, f in enumerate(fns) if f is not None]
        w = self.loss_weights
        if w is None:
            weights = [1.0] * n
        elif isinstance(w, dict):
            if names is None or any(k not in names for k in w):
                raise ValueError(f"`loss_weights` keys {list(w)} should be output names of the model ({names})")
            weights = [float(w.get(k, 1.0)) for k in names]
        elif isinstance(w, (list, tuple)):
            if len(w) != len(active):
                raise ValueError(f"`loss_weights` must match the number of losses, got {len(active)} losses and "
                                 f"{len(w)} weights.")
            weights = [1.0] * n
            for i, wi in zip(active, w):
                weights[i] = float(wi)
        else:
            weights = [float(w)] * n
        self.fns, self.weights = fns, weights
        if len(active) > 1:
            seen = {}
            for i in active:
                sp = specs[i]
                base = f"{names[i]}_loss" if names else \
                    f"{sp if isinstance(sp, str) else getattr(fns[i], 'name', 'loss')}_loss"
                seen[base] = seen.get(base, 0) + 1
                self.trackers.append((i, _metrics.Mean(name=base if seen[base] == 1 else f"{base}_{seen[base] - 1}")))
        self.trackers_by_output = dict(self.trackers)
        self.trackers = [t for _, t in self.trackers]

    def __call__(self, model, y, y_pred, sample_weight):
        from ..ops import math_ops as M
        preds = nest.flatten(y_pred)
        names = _output_names(model, y_pred)
        if self.fns is None:
            self._resolve(names, len(preds))
        ys = _flat_targets(names, y, y_pred)
        total = None
        for i, (f, yt, p) in enumerate(zip(self.fns, ys, preds)):
            if f is None:
                continue
            yt = _to_tensor_like(yt, p)
            li = f(yt, p, sample_weight=sample_weight) if sample_weight is not None else f(yt, p)
            t = self.trackers_by_output.get(i)
            if t is not None:
                # an unweighted mean over batches, as Keras 3 keeps <output>_loss (its `loss`
                # weighs each batch by its size: fit on 10 samples in batches of 4 logs
                # o1_loss 108.539, not the sample mean 130.183)
                t.update_state(li)
            li = li * self.weights[i] if self.weights[i] != 1.0 else li
            total = li if total is None else M.add(total, li)
        return total


class _FitBatches:
    """fit's batches epoch by epoch, as Keras 3's EpochIterator hands them out. Without
    ``steps_per_epoch`` each epoch is one fresh pass. With it, one iterator runs on across
    epochs: epoch 2 of ``steps_per_epoch=3`` over a ``repeat()``-ed dataset takes batches 3-5,
    not 0-2 again (restarting trained on the first batches only, a silently different fit). When
    a pass of known length (arrays, a dataset of known cardinality) is used up, the epoch ends
    short and the next epoch starts a new pass, as Keras does (with its "ran out of data" warning)."""

    def __init__(self, x, y, sample_weight, batch_size, shuffle, steps):
        self._args = (x, y, sample_weight, batch_size, shuffle)
        self._steps = steps
        self._it = None
        self._seen = 0
        if _is_dataset(x):
            n = _cardinality(x)
            self.num_batches = int(n) if n >= 0 else None
        else:
            self.num_batches = -(-_num_samples(x) // batch_size) if x is not None else None

    def epoch(self, rng):
        x, y, sw, bs, shuffle = self._args
        if self._steps is None:
            yield from _batches(x, y, sw, bs, shuffle, rng, None)
            return
        if self._it is None:
            self._it, self._seen = _batches(x, y, sw, bs, shuffle, rng, None), 0
        for _ in range(self._steps):
            if self.num_batches is not None and self._seen >= self.num_batches:
                break
            try:
                batch = next(self._it)
            except StopIteration:       # a dataset of unknown length ran out: a new pass next epoch
                self._it = None
                return
            self._seen += 1
            yield batch
        if self.num_batches is not None and self._seen >= self.num_batches:
            self._it = None


def _pythonify(logs):
    """Logs as Python floats (Keras 3 hands callbacks plain numbers), keys sorted."""
    flat = {}
    for k, v in logs.items():
        if isinstance(v, dict):         # a metric whose result is a dict (compile_metrics) gives its entries
            flat.update(v)
        else:
            flat[k] = v
    out = {}
    for k in sorted(flat):
        v = flat[k]
        if isinstance(v, Tensor):
            v = v.numpy()
        out[k] = float(v) if np.ndim(v) == 0 else np.asarray(v)
    return out


def _accepts_training(layer):
    from .engine import _call_arg_info
    return _call_arg_info(type(layer))[0]


def _tuple_shapes(s):
    if _is_shape(s):
        return tuple(s)
    if isinstance(s, dict):
        return {k: _tuple_shapes(v) for k, v in s.items()}
    return [_tuple_shapes(x) for x in s]


# -- summary ---------------------------------------------------------------------------------------
# Keras 3 prints its summary with `rich`; these helpers reproduce that table (box characters, column
# widths from `positions` of the line length, words wrapped, an over-long word cut with an ellipsis)
# so that programs print what they print under TF.

def _cell_lines(text, width):
    lines = []
    for para in str(text).split("\n"):
        line = ""
        for word in para.split(" "):
            if len(word) > width:
                word = word[:width - 1] + "\u2026"
            if not line:
                line = word
            elif len(line) + 1 + len(word) <= width:
                line += " " + word
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return lines


def _fit_widths(widths, total):
    """rich's ratio_reduce: take the excess over ``total`` from the columns in turn."""
    excess = sum(widths) - total
    if excess <= 0:
        return widths
    out, remaining, ratio_left = [], excess, len(widths)
    for w in widths:
        d = min(w, round(remaining / ratio_left))
        out.append(w - d)
        remaining -= d
        ratio_left -= 1
    return out


def _box_table(header, rows, widths, align):
    inner = [w - 2 for w in widths]

    def render(cells, left, mid, right):
        split = [_cell_lines(c, w) for c, w in zip(cells, inner)]
        out = []
        for i in range(max(len(c) for c in split)):
            parts = []
            for c, w, a in zip(split, inner, align):
                t = c[i] if i < len(c) else ""
                parts.append(" " + (t.rjust(w) if a == "right" else t.center(w) if a == "center" else t.ljust(w))
                             + " ")
            out.append(left + mid.join(parts) + right)
        return out

    def rule(l, m, r, ch):
        return l + m.join(ch * (w) for w in widths) + r
    lines = [rule("\u250f", "\u2533", "\u2513", "\u2501")]
    lines += render(header, "\u2503", "\u2503", "\u2503")
    lines.append(rule("\u2521", "\u2547", "\u2529", "\u2501"))
    for i, r in enumerate(rows):
        if i:
            lines.append(rule("\u251c", "\u253c", "\u2524", "\u2500"))
        lines += render(r, "\u2502", "\u2502", "\u2502")
    lines.append(rule("\u2514", "\u2534", "\u2518", "\u2500"))
    return lines


def _readable_size(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n / 1024 < 1:
            return f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} PB"


def _weights_size(ws):
    unique = {id(w): w for w in ws}.values()
    return (sum(int(np.prod(w.shape)) for w in unique),
            float(sum(int(np.prod(w.shape)) * w.dtype.as_numpy_dtype().itemsize for w in unique)))


def _summary_text(model, line_length, positions, expand_nested, show_trainable):
    import shutil
    f = model.__dict__.get("_functional")
    layers = model.layers
    nodes_of = {}
    if f is not None:
        for node in f["nodes"]:
            nodes_of.setdefault(id(node.layer), []).append(node)
    # a functional graph is shown as a chain unless a layer has several nodes or several inputs,
    # or two nodes sit at the same depth (Keras 3's is_sequential_like: an Input feeding two
    # output heads gets the "Connected to" column)
    sequential_like = f is None or all(len(nodes_of.get(id(l), [])) <= 1 for l in layers) and all(
        len(n.parents) <= 1 for n in f["nodes"])
    if sequential_like and f is not None:
        depth = {}
        for node in reversed(f["nodes"]):           # outputs first: depth = longest path to an output
            d = depth.setdefault(id(node), 0)
            for kt in node.parents:
                depth[id(kt._node)] = max(depth.get(id(kt._node), 0), d + 1)
        for kt in nest.flatten(f["inputs"]):
            depth.setdefault(id(kt._node), 0)
        sequential_like = len(set(depth.values())) == len(depth)
    if sequential_like:
        default, positions = 88, positions or [0.45, 0.80, 1.0]
        header, align = ["Layer (type)", "Output Shape", "Param #"], ["left", "left", "right"]
    else:
        default, positions = 108, positions or [0.3, 0.56, 0.74, 1.0]
        header, align = ["Layer (type)", "Output Shape", "Param #", "Connected to"], ["left", "left", "right", "left"]
    if show_trainable:
        default += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header, align = header + ["Trainable"], align + ["center"]
    width = line_length or min(default, shutil.get_terminal_size().columns - 4)
    if positions[-1] <= 1:
        positions = [int(p * width) for p in positions]
    widths, cur = [], 0
    for p in positions:
        if p - cur < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(p - cur)
        cur = p
    widths = _fit_widths(widths, width - len(widths) - 1)      # the borders come out of the width

    node_ref = {}
    if f is not None:
        for kt in nest.flatten(f["inputs"]):
            node_ref[id(kt._node)] = 0
        for nodes in nodes_of.values():
            for i, n in enumerate(nodes):
                node_ref[id(n)] = i

    def shape_of(layer):
        if not layer.built:
            return "?"
        if f is not None:       # the graph's symbolic shapes (batch None), not those of the build call
            if isinstance(layer, InputLayer):
                return _fmt_shapes(layer._batch_input_shape)
            nodes = nodes_of.get(id(layer))
            if nodes:
                return _fmt_shapes(nest.map_structure(lambda kt: tuple(kt.shape), nodes[-1].outputs))
        s = layer.__dict__.get("_last_output_shape")
        if s is None:
            return "?"
        if isinstance(model, Sequential):
            s = _batchless(s)
        return _fmt_shapes(s)

    def fields(layer, prefix=""):
        params = f"{layer.count_params():,}" if layer.built else "0 (unbuilt)"
        row = [f"{prefix}{layer.name} ({type(layer).__name__})", shape_of(layer), params]
        if not sequential_like:
            conns = [f"{p._node.layer.name}[{node_ref.get(id(p._node), 0)}][{p._index}]"
                     for n in nodes_of.get(id(layer), []) for p in n.parents]
            row.append(", ".join(conns) or "-")
        if show_trainable:
            row.append(("Y" if layer.trainable else "N") if layer.weights else "-")
        return row

    rows = []

    def add(layer, level=0):
        rows.append(fields(layer, "   " * level + "\u2514 " if level else ""))
        if expand_nested and isinstance(layer, Model):
            for sub in layer.layers:
                add(sub, level + 1)
    for l in layers:
        add(l)
    t_n, t_b = _weights_size(model.trainable_weights)
    n_n, n_b = _weights_size(model.non_trainable_weights)
    opt = getattr(model, "optimizer", None) if model.__dict__.get("_compiled") else None
    opt_vars = list(opt.variables) if opt is not None and int(opt.iterations.numpy()) > 0 else None
    o_n, o_b = _weights_size(opt_vars or [])
    lines = [f'Model: "{model.name}"'] + _box_table(header, rows, widths, align)
    lines += [f" Total params: {t_n + n_n + o_n:,} ({_readable_size(t_b + n_b + o_b)})",
              f" Trainable params: {t_n:,} ({_readable_size(t_b)})",
              f" Non-trainable params: {n_n:,} ({_readable_size(n_b)})"]
    if opt_vars is not None:
        lines.append(f" Optimizer params: {o_n:,} ({_readable_size(o_b)})")
    return "\n".join(lines)


def _keras_layer_order(flat_in, flat_out):
    """A functional model's layers in Keras 3's order (its map_graph): by depth from the outputs,
    deepest (nearest the inputs) first, ties in the order a depth-first walk from the outputs
    first meets the layers. ``model.layers``, ``summary()`` and the weights' order follow it, so
    set_weights(tf_model.get_weights()) fills a branched model (ResNet's shortcut convolutions)
    as Keras does; a walk of each branch in turn put the shortcut's weights first."""
    index, post, done = {}, [], set()

    def visit(kt):
        node = kt._node
        if id(node) in done:
            return
        index.setdefault(id(node.layer), (len(index), node.layer))
        for p in node.parents:
            visit(p)
        done.add(id(node))
        post.append(node)
    for kt in flat_out:
        visit(kt)
    node_depth, layer_depth = {}, {}
    for node in reversed(post):
        d = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = d
        for p in node.parents:
            node_depth[id(p._node)] = max(d + 1, node_depth.get(id(p._node), 0))
    for kt in flat_in:       # an input no output depends on (Keras keeps it, at depth 0)
        layer = kt._node.layer
        if id(layer) not in layer_depth:
            layer_depth[id(layer)] = 0
            index[id(layer)] = (-1, layer)
    return [layer for _, layer in sorted(((-layer_depth[k], i), layer) for k, (i, layer) in index.items())]


def _num_samples(x):
    flat = nest.flatten(x)
    if not flat:
        raise ValueError("no input data")
    if isinstance(flat[0], _sparse.SparseTensor):
        return int(flat[0].shape[0])
    shape = np.shape(flat[0].numpy() if isinstance(flat[0], Tensor) else flat[0])
    if not shape:
        # a nested Python list of numbers flattens to scalars (Keras 3 refuses it too, with a ValueError)
        raise ValueError(f"Unrecognized data type: x={_short_repr(x)} (of type {type(x)}): give a NumPy array or "
                         "a tensor (np.asarray(x)), or a list/dict of them, one per model input")
    return int(shape[0])


def _short_repr(x):
    r = repr(x)
    return r if len(r) <= 80 else r[:77] + "..."


def _take(x, idx):
    if x is None:
        return None
    return nest.map_structure(lambda a: _sparse._take_rows(a, idx) if isinstance(a, _sparse.SparseTensor)
                              else np.asarray(a.numpy() if isinstance(a, Tensor) else a)[idx], x)


def _to_tensor_like(y, pred):
    if isinstance(y, Tensor):
        return y
    if isinstance(y, (list, tuple, dict)):
        return nest.map_structure(lambda a, p: _to_tensor_like(a, p), y, pred)
    arr = np.asarray(y)
    if arr.dtype.kind == "f" and isinstance(pred, Tensor):
        arr = arr.astype(aval_of(pred).dtype)
    return convert_to_tensor(arr)


def _functional_config(model):
    """Keras 3's functional layout: each layer serialized with its inbound nodes,
    tensors referenced as ``[layer name, node index, tensor index]``."""
    from .saving import serialize_keras_object
    f = model._functional
    names = {}
    for l in model._layers:
        if l.name in names and names[l.name] is not l:
            raise ValueError(f"model '{model.name}' has two layers named {l.name!r}; layer names must be unique "
                             "to save a functional model")
        names[l.name] = l
    node_ref = {}       # id(node) -> (layer name, node index)
    count = {}
    for kt in nest.flatten(f["inputs"]):
        node_ref[id(kt._node)] = (kt._node.layer.name, 0)
    for node in f["nodes"]:
        i = count.get(id(node.layer), 0)
        count[id(node.layer)] = i + 1
        node_ref[id(node)] = (node.layer.name, i)

    def ref(x):
        if isinstance(x, KerasTensor):
            name, i = node_ref[id(x._node)]
            return {"class_name": "__keras_tensor__",
                    "config": {"shape": list(x.shape), "dtype": x.dtype.name, "keras_history": [name, i, x._index]}}
        return serialize_keras_object(x)
    inbound = {}
    for node in f["nodes"]:
        inbound.setdefault(id(node.layer), []).append(
            {"args": [nest.map_structure(ref, a) if isinstance(a, (list, tuple, dict)) else ref(a)
                      for a in node.args],
             "kwargs": {k: (nest.map_structure(ref, v) if isinstance(v, (list, tuple, dict)) else ref(v))
                        for k, v in node.kwargs.items()}})
    layers = []
    for l in model._layers:
        if isinstance(l, InputLayer):
            layers.append({"module": "keras.layers", "class_name": "InputLayer",
                           "config": {"batch_shape": list(l._batch_input_shape), "dtype": l.dtype, "name": l.name},
                           "registered_name": None, "name": l.name, "inbound_nodes": []})
            continue
        entry = serialize_keras_object(l)
        entry["name"] = l.name
        entry["inbound_nodes"] = inbound.get(id(l), [])
        layers.append(entry)

    def io(structure):
        return nest.map_structure(ref, structure) if not isinstance(structure, KerasTensor) else ref(structure)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": io(f["inputs"]), "output_layers": io(f["outputs"])}


def _functional_from_config(cls, config, custom_objects=None):
    """Rebuild a functional model: create the layers, then replay their nodes in
    an order where every input already exists."""
    from .saving import deserialize_keras_object
    made = {}          # (layer name, node index) -> flat outputs
    layers = []
    for lc in config["layers"]:
        if lc.get("class_name") == "InputLayer":
            c = lc.get("config", {})
            kt = Input(batch_shape=tuple(c.get("batch_shape", c.get("batch_input_shape"))), dtype=c.get("dtype"),
                       name=c.get("name", lc.get("name")))
            made[(lc.get("name", c.get("name")), 0)] = [kt]
            continue
        body = {k: v for k, v in lc.items() if k not in ("name", "inbound_nodes")}
        layer = deserialize_keras_object(body, custom_objects, where=f" (layer {lc.get('name')!r})")
        layers.append((lc.get("name", layer.name), layer, list(lc.get("inbound_nodes", []))))

    def is_ref(x):
        return isinstance(x, dict) and x.get("class_name") == "__keras_tensor__"

    def refs(x):
        if is_ref(x):
            return [x]
        if isinstance(x, list):
            return [r for v in x for r in refs(v)]
        if isinstance(x, dict):
            return [r for v in x.values() for r in refs(v)]
        return []

    def get(x):
        if is_ref(x):
            name, i, j = x["config"]["keras_history"]
            return made[(name, i)][j]
        if isinstance(x, list):
            return [get(v) for v in x]
        if isinstance(x, dict):
            return {k: get(v) for k, v in x.items()}
        return x
    done = {name: 0 for name, _, _ in layers}
    remaining = sum(len(n) for _, _, n in layers)
    while remaining:
        progress = False
        for name, layer, nodes in layers:
            while done[name] < len(nodes):
                node = nodes[done[name]]
                needed = refs(node.get("args", [])) + refs(node.get("kwargs", {}))
                if not all(tuple(r["config"]["keras_history"][:2]) in made for r in needed):
                    break
                args = [get(a) for a in node.get("args", [])]
                out = layer(*args, **get(node.get("kwargs", {})))
                made[(name, done[name])] = nest.flatten(out)
                done[name] += 1
                remaining -= 1
                progress = True
        if not progress:
            raise ValueError(f"functional model {config.get('name')!r}: its config's layer graph cannot be "
                             "rebuilt (a node's inputs are never produced); the file is corrupted")
    inputs = get(config["input_layers"])
    outputs = get(config["output_layers"])
    return cls(inputs, outputs, name=config.get("name"), trainable=config.get("trainable", True))


def save_model(model, filepath, overwrite=True, include_optimizer=True, **kwargs):
    """``keras.models.save_model``: same as ``model.save(filepath)``."""
    from .saving import save_model as _save
    _save(model, filepath, overwrite=overwrite, include_optimizer=include_optimizer, **kwargs)


def model_from_json(json_string, custom_objects=None):
    """A new model (fresh weights) from ``Model.to_json()``'s text."""
    import json
    from .saving import deserialize_keras_object
    try:
        config = json.loads(json_string)
    except (TypeError, ValueError) as e:
        raise ValueError(f"model_from_json: not a JSON model config ({e})") from None
    return deserialize_keras_object(config, custom_objects, where=" (model_from_json)")


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """``keras.models.load_model``: a model written by ``Model.save`` (tapeflow's .keras format)."""
    from .saving import load_model as _load
    return _load(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


# Keras exposes the functional model as keras.Model too
Functional = Model


class Sequential(Model):
    """A linear stack of layers: ``Sequential([Dense(64, activation="relu"), Dense(2)])``.

    The first layer may carry ``input_shape=`` (or start with ``keras.Input``),
    which builds the model at once; otherwise it builds on its first call.
    """

    def __init__(self, layers=None, name=None, trainable=True, **kwargs):
        Layer.__init__(self, name=name, trainable=trainable, **kwargs)
        self._compiled = None
        self._layers = []
        self._seq_input_shape = None
        self._seq_input_dtype = None
        self._seq_in_init = True
        try:
            for l in (layers or []):
                self.add(l)
        finally:
            self._seq_in_init = False
        if self.built and self._layers:
            self._count_rebuild()

    def _count_rebuild(self):
        # Keras 3 rebuilds a Sequential as a functional model (once for the constructor's list,
        # then at each add/pop/build/first call), and each rebuild takes a "functional" name:
        # the next keras.Model(...) is "functional_1" in TF 2.21, and summary() prints that
        if not self.__dict__.get("_seq_in_init"):
            backend.unique_object_name("functional")

    def _walk_children(self):
        return [("layers", self._layers)] + [kv for kv in Layer._walk_children(self)]

    def add(self, layer):
        """Append a layer (or set the input shape with a ``keras.Input``)."""
        if isinstance(layer, KerasTensor):
            layer = layer._node.layer
        if isinstance(layer, InputLayer):
            if self._layers:
                raise ValueError("Sequential.add: an Input/InputLayer must come first")
            self._seq_input_shape = tuple(layer._batch_input_shape)
            self._seq_input_dtype = layer.dtype
            self._seq_input_layer = layer
            return
        if not isinstance(layer, Layer):
            raise ValueError("Only instances of `keras.Layer` can be added to a Sequential model. "
                             f"Received: {layer!r} (of type {type(layer)})")
        if any(l.name == layer.name for l in self._layers):
            # Keras 3's check: weights are saved and loaded by layer name, so two layers named
            # alike would trade (or refuse) their weights in a save/load round trip
            raise ValueError("All layers added to a Sequential model should have unique names. Name "
                             f"'{layer.name}' is already the name of a layer in this model. Update the `name` "
                             "argument to pass a unique name.")
        self._layers.append(layer)
        _VERSION[0] += 1
        if len(self._layers) == 1 and self._seq_input_shape is None and layer._batch_input_shape is not None:
            self._seq_input_shape = tuple(layer._batch_input_shape)
        if self._seq_input_shape is not None:
            self._build_seq()

    def _build_seq(self):
        dummy = _zeros_for(self._seq_input_shape, self._seq_input_dtype)
        _TRAINING.append(False)
        try:
            x = dummy
            for l in self._layers:
                built_before = l.built
                x = l(x)
                if l.__dict__.get("_last_output_shape") is not None and self._seq_input_shape[0] is None:
                    l._last_output_shape = _batchless(l._last_output_shape)
                if not built_before and l.built and self._seq_input_shape[0] is None:
                    # (the build shape Keras 3 records from its symbolic input: batch None, not the dummy's 1)
                    l._build_input_shape = _batchless(l.__dict__.get("_build_input_shape"))
        finally:
            _TRAINING.pop()
        self._build_input_shape = tuple(self._seq_input_shape)
        self._build_input_dtypes = self._seq_input_dtype or backend.floatx()
        self._last_output_shape = _shapes(x) if self._seq_input_shape[0] is not None else _batchless(_shapes(x))
        self.built = True
        if _is_shape(self._seq_input_shape):
            # the layers called on a keras.Input too, as Keras 3 builds a Sequential as a functional
            # graph: `model.inputs`, `layer.output` for feature extraction
            # (`Model(m.inputs, [l.output for l in m.layers])`)
            inp = self.__dict__.get("_seq_input_layer")
            if inp is None or tuple(inp._batch_input_shape) != tuple(self._seq_input_shape):
                inp = self._seq_input_layer = InputLayer(batch_input_shape=self._seq_input_shape,
                                                         dtype=self._seq_input_dtype)
            kt = inp._output
            for l in self._layers:
                kt = l(kt)
                # the symbolic shapes (unknown dims None), not the zeros probe's 1s
                l._last_output_shape = nest.map_structure(lambda k: tuple(k.shape), kt)
            self._seq_graph = (inp._output, kt)
            self._last_output_shape = nest.map_structure(lambda k: tuple(k.shape), kt)
        self._count_rebuild()

    def pop(self):
        if not self._layers:
            raise TypeError("Sequential.pop: there are no layers")
        l = self._layers.pop()
        _VERSION[0] += 1
        # as Keras 3's pop(rebuild=True): output_shape and summary() describe the stack left,
        # not the popped layer's output
        if self._seq_input_shape is not None and self._layers:
            self._build_seq()
        else:
            self._last_output_shape = None
        return l

    @property
    def layers(self):
        return list(self._layers)

    def build(self, input_shape=None):
        if self.__dict__.get("_building_from_call"):
            self.built = True
            self._count_rebuild()
            return
        if input_shape is None:
            input_shape = self._seq_input_shape
        if input_shape is None:
            raise ValueError("Sequential.build: give the input shape, e.g. build((None, 4))")
        self._seq_input_shape = tuple(input_shape)
        self._build_seq()

    def call(self, inputs, training=None, mask=None):
        x = inputs
        for layer in self._layers:
            if mask is None and not layer._mask_source:
                x = layer(x)        # no mask to pass on or make: the plain call (every call pays this)
            else:
                x, mask = masked_call(layer, x, mask)
        if mask is not None:
            self.__dict__["_out_mask"] = (x, mask)     # for the loss and metrics (_output_mask)
        elif "_out_mask" in self.__dict__:
            del self.__dict__["_out_mask"]             # (an earlier call's: not this output's)
        return x

    def get_config(self):
        """Keras 3's layout: the layers serialized in order, an InputLayer first when
        the input shape is known."""
        from .saving import serialize_keras_object
        layers = []
        if self._seq_input_shape is not None:
            layers.append({"module": "keras.layers", "class_name": "InputLayer",
                           "config": {"batch_shape": list(self._seq_input_shape),
                                      "dtype": self._seq_input_dtype or backend.floatx()},
                           "registered_name": None})
        layers += [serialize_keras_object(l) for l in self._layers]
        cfg = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype, "layers": layers}
        if self.built and self._seq_input_shape is None and self.__dict__.get("_build_input_shape") is not None:
            cfg["build_input_shape"] = list(_batchless(self._build_input_shape))
        return cfg

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .saving import deserialize_keras_object
        m = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for lc in config.get("layers", []):
            if isinstance(lc, dict) and lc.get("class_name") == "InputLayer":
                c = lc.get("config", {})
                shape = c.get("batch_shape", c.get("batch_input_shape"))
                m.add(Input(batch_shape=tuple(shape), dtype=c.get("dtype")))
                continue
            name = (lc.get("config") or {}).get("name") if isinstance(lc, dict) else None
            m.add(deserialize_keras_object(lc, custom_objects, where=f" (layer {name!r} of Sequential "
                                                                      f"'{m.name}')"))
        bis = config.get("build_input_shape")
        if not m.built and bis is not None:
            m.build(tuple(bis))
        return m


# -- cloning -----------------------------------------------------------------------------------------

def _clone_layer(layer):
    """A new, unbuilt layer of the same configuration (fresh weights)."""
    cls = type(layer)
    if isinstance(layer, Sequential) or (isinstance(layer, Model) and layer.__dict__.get("_functional") is not None):
        return clone_model(layer)
    if cls.__module__.startswith("tapeflow."):
        return cls.from_config(layer.get_config())
    user_config = any("get_config" in k.__dict__ for k in cls.__mro__
                      if k is not object and not k.__module__.startswith("tapeflow."))
    if user_config:
        try:
            return cls.from_config(layer.get_config())
        except Exception:
            pass
    init_args = layer.__dict__.get("_init_args")
    if init_args is not None:
        args, kwargs = init_args
        return cls(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    new = copy.deepcopy(layer)
    new._reinitialize()
    return new


def clone_model(model, input_tensors=None, clone_function=None):
    """Same architecture, fresh variables (new initial values).

    Sequential and functional models are rebuilt from each layer's config
    (``clone_function(layer)`` if given); a subclassed model from its
    ``get_config``/``from_config`` or by replaying its constructor arguments.
    The clone is built on the original's input shapes when the original is
    built. Copy the weights with ``clone.set_weights(model.get_weights())``.
    """
    fn = clone_function or _clone_layer
    if isinstance(model, Sequential):
        new = Sequential(name=model.name)
        if model._seq_input_shape is not None:
            new.add(Input(batch_shape=model._seq_input_shape, dtype=model._seq_input_dtype))
        for l in model.layers:
            new.add(fn(l))
        if not new.built and model.built and model._build_input_shape is not None:
            _call_once_like(new, model)
        return new
    f = model.__dict__.get("_functional") if isinstance(model, Model) else None
    if f is not None:
        mapping = {}
        new_inputs = nest.map_structure(
            lambda kt: Input(batch_shape=tuple(kt.shape), dtype=kt.dtype.name, name=kt.name), f["inputs"])
        for old, new_kt in zip(nest.flatten(f["inputs"]), nest.flatten(new_inputs)):
            mapping[id(old)] = new_kt
        layer_map = {}
        for node in f["nodes"]:
            l = node.layer
            if id(l) not in layer_map:
                layer_map[id(l)] = fn(l)
            get = (lambda x: mapping[id(x)] if isinstance(x, KerasTensor) else x)
            args = nest.map_structure(get, list(node.args))
            kwargs = nest.map_structure(get, dict(node.kwargs))
            out = layer_map[id(l)](*args, **kwargs)
            for kt, o in zip(nest.flatten(node.outputs), nest.flatten(out)):
                mapping[id(kt)] = o
        new_outputs = nest.map_structure(lambda kt: mapping[id(kt)], f["outputs"])
        return Model(new_inputs, new_outputs, name=model.name)
    if not isinstance(model, Layer):
        raise TypeError(f"clone_model: expected a Keras model or layer, got {type(model).__name__}")
    new = _clone_layer(model)
    if model.built and not new.built and model.__dict__.get("_build_input_shape") is not None:
        _call_once_like(new, model)
    return new


def _call_once_like(self, other):
    """Build ``self`` by calling it on zeros shaped like ``other``'s first-call inputs."""
    dummy = _zeros_for(other._build_input_shape, other.__dict__.get("_build_input_dtypes"))
    rest = [_zeros_for(r[1], r[2]) if r[0] == "tensor" else r[1] for r in other.__dict__.get("_build_rest", ())]
    _TRAINING.append(False)
    try:
        self(dummy, *rest)
    finally:
        _TRAINING.pop()
    self._last_output_shape = other.__dict__.get("_last_output_shape")

