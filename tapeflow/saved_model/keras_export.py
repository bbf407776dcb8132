"""Keras on SavedModel: ``Model.export`` (Keras 3's serving artifact), the default
``serving_default`` of ``tf.saved_model.save(model)``, and ``TFSMLayer``.

TF 2.21 + Keras 3, for a ``Sequential([Input((3,)), Dense(2)])``:
  * ``model.export(path)`` writes an object with ``serve`` (the model's call on its
    inputs' specs, positional), ``variables``, ``trainable_variables``,
    ``non_trainable_variables``, and the signature ``serving_default`` (= ``serve``; its
    input named after the Input, ``keras_tensor``; output ``output_0``);
  * ``tf.saved_model.save(model, path)`` gives a ``serving_default`` whose input is named
    ``inputs``; the loaded object is not callable;
  * ``TFSMLayer(path, call_endpoint="serve")`` is a layer calling that endpoint.
"""
from __future__ import annotations

from ..util import nest


def input_specs(model):
    """The model's inputs as TensorSpecs with an unknown batch dim (a nest for several)."""
    from ..compiler.function import TensorSpec
    ins = model.inputs if hasattr(type(model), "inputs") else None
    if ins:
        # Keras 3 names an unnamed Input "keras_tensor" (TF 2.21's exported signature input)
        specs = [TensorSpec((None,) + tuple(k.shape)[1:], k.dtype, getattr(k, "name", None) or
                            ("keras_tensor" if len(ins) == 1 else f"keras_tensor_{i}")) for i, k in enumerate(ins)]
        return specs
    shape = model.__dict__.get("_build_input_shape")
    if shape is None:
        raise ValueError(f"model {model.name!r} is not built: call it on data (or model.build(input_shape)) "
                         "before saving it, so its input signature is known")
    dtypes = model.__dict__.get("_build_input_dtypes")
    shapes = shape if isinstance(shape, list) else [shape]
    dts = dtypes if isinstance(dtypes, list) else [dtypes] * len(shapes)
    return [TensorSpec((None,) + tuple(s)[1:], d or "float32", None) for s, d in zip(shapes, dts)]


def serving_function(model, names=None):
    """``tapeflow.function`` calling ``model`` in inference mode on its input specs."""
    from ..compiler.function import TensorSpec, function
    specs = input_specs(model)
    if names is not None:
        specs = [TensorSpec(s.shape, s.dtype, n) for s, n in zip(specs, names)]
    if len(specs) == 1:
        def serve(x):
            return model(x, training=False)
    else:
        def serve(*xs):
            return model(list(xs), training=False)
    return function(serve, input_signature=specs)


class _ExportArchive:
    """What ``Model.export`` saves: the endpoint and the variable lists, not the layers
    (a plain object: a Module's ``variables`` is a property, here it is a saved list)."""

    def _walk_children(self):
        return sorted(self.__dict__.items())

    def __init__(self, model):
        self.variables = list(model.variables)
        self.trainable_variables = list(model.trainable_variables)
        self.non_trainable_variables = list(model.non_trainable_variables)
        self.serve = serving_function(model)


def export(model, filepath, format="tf_saved_model", verbose=True, input_signature=None):
    """Keras 3's ``Model.export``: a SavedModel with the ``serve`` endpoint."""
    from . import save
    if format != "tf_saved_model":
        raise ValueError(f"Model.export: format {format!r} is not supported; tapeflow exports "
                         "format='tf_saved_model' (its own SavedModel files)")
    archive = _ExportArchive(model)
    if input_signature is not None:
        from ..compiler.function import function
        fn = archive.serve.python_function
        archive.serve = function(fn, input_signature=list(input_signature))
    save(archive, filepath, signatures={"serve": archive.serve, "serving_default": archive.serve})
    if verbose:
        cf = archive.serve.get_concrete_function()
        print(f"Saved artifact at '{filepath}'. The following endpoints are available:\n\n"
              f"* Endpoint 'serve'\n  {cf.pretty_printed_signature()}")
    return None


def tfsm_layer_class():
    from ..keras.engine import Layer

    class TFSMLayer(Layer):
        """Keras 3's TFSMLayer: a layer calling an endpoint of a SavedModel (a tapeflow one)."""

        def __init__(self, filepath, call_endpoint="serve", call_training_endpoint=None, trainable=True,
                     name=None, dtype=None):
            super().__init__(name=name, trainable=trainable, dtype=dtype)
            from . import load
            self._tfsm = load(filepath)
            self.filepath = filepath
            self.call_endpoint = call_endpoint
            self.call_training_endpoint = call_training_endpoint
            ep = getattr(self._tfsm, call_endpoint, None)
            if ep is None:
                ep = (self._tfsm.signatures or {}).get(call_endpoint)
            if ep is None:
                raise ValueError(f"TFSMLayer: the SavedModel at {filepath!r} has no endpoint {call_endpoint!r}")
            self._endpoint = ep
            self._training_endpoint = getattr(self._tfsm, call_training_endpoint) if call_training_endpoint \
                else None
            # the loaded object is an attribute: the layer's weight walk finds its variables
            self.built = True

        def call(self, inputs, training=False):
            ep = self._training_endpoint if training and self._training_endpoint is not None else self._endpoint
            return ep(*inputs) if isinstance(inputs, (list, tuple)) and not nest.is_nested(inputs[0]) \
                and len(inputs) > 1 else ep(inputs)

        def get_config(self):
            return dict(super().get_config(), filepath=self.filepath, call_endpoint=self.call_endpoint,
                        call_training_endpoint=self.call_training_endpoint)

    return TFSMLayer
