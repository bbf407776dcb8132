"""``tf.saved_model``: a program saved without its Python code.

``save(obj, export_dir)`` writes what TF's SavedModel holds: the object graph
(tracked children, variables by path, ``tapeflow.function``\\ s by attribute
name), each function's concrete functions (those its ``input_signature`` gives,
and every trace made before saving) as serialized IR graphs
(``tapeflow/ir/serialize.py``), the variables, and ``signatures``.
``load(export_dir)`` in any process, without the classes that were saved,
rebuilds an object whose attributes are the restored functions, variables and
children. Loaded functions go through the compiler like traced ones (the
serialized graph is the trace, so the same passes and backend give the same
bits); under a GradientTape or inside another trace they run the graph op by op
(``inline_graph``), so gradients flow through them as through TF's.

Layout of ``export_dir``::

    saved_model.json          object graph, functions (IR JSON), signatures
    variables/variables.json  + .data-*.safetensors: the variables (a tapeflow checkpoint)
    functions/arrays.json     + .data-*.safetensors: the graphs' captured constants

The variables are tapeflow's checkpoint format (safetensors), not TF's
``variables.index``, keyed as ``tf.train.Checkpoint(obj)`` keys them (the same walk:
attribute paths, the first path met), so as in TF
``tf.train.Checkpoint(obj).read(export_dir + "/variables/variables")`` restores a live
object's variables from a SavedModel; neither framework reads the other's files. The whole
directory is written to a temporary sibling and renamed into place, so a crash
mid-save leaves either the old directory or none at ``export_dir``, never a
partial one that ``load`` accepts.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import warnings

import numpy as np

from ..core.state import STATE
from ..core.tensor import Tensor, Variable
from ..ir import serialize as S
from ..ir.graph import Graph
from ..module import Module
from ..util import nest

__all__ = ["save", "load", "contains_saved_model", "SaveOptions", "LoadOptions", "Asset",
           "SAVED_MODEL_FILENAME", "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "VARIABLES_DIRECTORY",
           "VARIABLES_FILENAME", "ASSETS_DIRECTORY", "SERVING", "TRAINING", "GPU", "TPU"]

FORMAT = "tapeflow-saved-model"
VERSION = 1
SAVED_MODEL_FILENAME = "saved_model.json"
#: TF's names for its files: tapeflow's differ (JSON + safetensors), the constants are TF's
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
# TF 2.21's tf.saved_model constants (signature-def keys and method names of TF Serving's APIs; file
# names of its format), the same strings, so programs that build signatures with them run unchanged
ASSETS_KEY = "saved_model_assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
SAVED_MODEL_SCHEMA_VERSION = 1
CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"
REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"
SERVING, TRAINING, GPU, TPU = "serve", "train", "gpu", "tpu"
_ARRAYS = os.path.join("functions", "arrays")


class SaveOptions:
    """TF's SaveOptions: accepted and kept; none changes what tapeflow writes (there are
    no devices, protos or TF ops to choose among)."""

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        self.namespace_whitelist = list(namespace_whitelist or [])
        self.save_debug_info = save_debug_info
        self.function_aliases = dict(function_aliases or {})
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_custom_gradients = experimental_custom_gradients
        self.experimental_image_format = experimental_image_format
        self.experimental_skip_saver = experimental_skip_saver
        self.extra_tags = extra_tags


class LoadOptions:
    """TF's LoadOptions: accepted and kept."""

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_load_function_aliases=False, experimental_variable_policy=None,
                 experimental_skip_checkpoint=False):
        self.allow_partial_checkpoint = allow_partial_checkpoint
        self.experimental_io_device = experimental_io_device
        self.experimental_load_function_aliases = experimental_load_function_aliases
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_skip_checkpoint = experimental_skip_checkpoint


class Asset:
    """TF's Asset (a file a SavedModel carries): tapeflow saves no asset files."""

    def __init__(self, path):
        self.asset_path = path


def contains_saved_model(export_dir):
    """Whether ``export_dir`` holds a (tapeflow) SavedModel, as TF's: a check for its file."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), SAVED_MODEL_FILENAME))


# -- saving --------------------------------------------------------------------------------------------

def _functions_of(obj):
    """(name, Function) of ``obj``: ``tapeflow.function`` methods of its class (bound to it)
    and Functions stored on the instance, sorted by name."""
    from ..compiler.function import Function
    out = {}
    for klass in reversed(type(obj).__mro__):
        for name, attr in vars(klass).items():
            if isinstance(attr, Function):
                out[name] = getattr(obj, name)
    for name, attr in (getattr(obj, "__dict__", None) or {}).items():
        if isinstance(attr, Function) and not name.startswith("_tf_saved"):
            out[name] = attr
    return sorted(out.items())


def _is_plain_object(v):
    from ..module import _plain_walkable
    return isinstance(v, Module) or _plain_walkable(v)


class _Saver:
    def __init__(self, root, custom_gradients=True):
        self.root = root
        self.custom_gradients = custom_gradients
        self.nodes = []
        self.memo = {}
        self.variables = {}     # key -> Variable
        self.var_keys = {}      # id(Variable) -> key
        self.functions = []     # serialized concrete functions
        self.cf_index = {}      # id(ConcreteFunction) -> index
        self.tables = S.Tables(variable_ref=self.variable_ref)
        self._keep = []

    # -- the object graph ----------------------------------------------------------------------------
    def node(self, obj, path, depth=0):
        from ..compiler.function import Function
        i = self.memo.get(id(obj))
        if i is not None:
            return i
        if depth > 64:
            return None
        if isinstance(obj, Variable):
            key = path or "variable"
            while key in self.variables:  # first path wins; a clash gets a suffix
                key += "_"
            self.variables[key] = obj
            self.var_keys[id(obj)] = key
            rec = {"kind": "variable", "key": key, "name": obj._name, "trainable": bool(obj.trainable)}
        elif isinstance(obj, (Function, RestoredFunction)):
            rec = {"kind": "function", "name": obj.__name__, "concrete": []}
        elif isinstance(obj, (list, tuple)):
            rec = {"kind": "list" if isinstance(obj, list) else "tuple", "items": []}
        elif isinstance(obj, dict):
            rec = {"kind": "dict", "items": []}
        elif _is_plain_object(obj):
            rec = {"kind": "object", "class": type(obj).__qualname__, "children": []}
        else:
            return None
        i = self.memo[id(obj)] = len(self.nodes)
        self._keep.append(obj)
        self.nodes.append(rec)
        sub = (path + "/") if path else ""
        if rec["kind"] == "function":
            rec["concrete"] = self.function(obj, path)
        elif rec["kind"] in ("list", "tuple"):
            rec["items"] = [self.node(v, f"{sub}{k}", depth + 1) for k, v in enumerate(obj)]
        elif rec["kind"] == "dict":
            rec["items"] = [[k, c] for k, v in obj.items() if isinstance(k, str)
                            and (c := self.node(v, sub + k, depth + 1)) is not None]
        elif rec["kind"] == "object":
            from ..module import _children
            seen = set()
            extra = [("__call__", obj._restored_call)] if isinstance(obj, _UserObject) and \
                obj._restored_call is not None else []
            for name, v in list(_children(obj)) + _functions_of(obj) + extra:
                if isinstance(obj, _UserObject) and name.startswith("_saved_") and name[7:] in obj._saved_lists:
                    name = name[7:]  # a loaded Model.export's variable lists keep their names
                if name in seen or name.startswith("__") and name != "__call__":
                    continue
                c = self.node(v, sub + name, depth + 1)
                if c is not None:
                    seen.add(name)
                    rec["children"].append([name, c])
        return i

    def variable_ref(self, v):
        key = self.var_keys.get(id(v))
        if key is None:
            # a variable the functions use but the object graph does not reach (a
            # closure's, a random stream's state): saved too, as TF saves captures
            key = f"__captured__/{len(self.variables)}"
            self.variables[key] = v
            self.var_keys[id(v)] = key
            self._keep.append(v)
        return key

    # -- functions -----------------------------------------------------------------------------------
    def function(self, fn, path):
        if isinstance(fn, RestoredFunction):  # a loaded object saved again: its saved traces
            return [i for c in fn._concretes if (i := self.concrete(c, path or fn.__name__)) is not None]
        if fn.input_signature is not None and not fn._cache:
            fn.get_concrete_function()  # TF traces an input_signature function to save it
        elif not fn._cache:
            # only ever called inside other traces (inlined): TF traced it there as a function
            # of its own and saves that trace; tapeflow traces it now from the noted specs
            for a, k in list(getattr(fn, "_inlined", ())):
                try:
                    fn.get_concrete_function(*a, **k)
                except Exception:  # noqa: BLE001 -- a call that cannot be traced alone is not saved
                    pass
        out = []
        seen = set()
        for cf in list(fn._cache.values()):
            if id(cf) in seen or not hasattr(cf, "raw_graph"):
                continue
            seen.add(id(cf))
            i = self.concrete(cf, f"{path or fn.__name__}")
            if i is not None:
                rec = self.functions[i]
                # the loaded trace compiles as this one did: the same tiers give the same bits
                rec["jit_compile"] = fn._jit_compile
                rec["backend"] = fn._backend if isinstance(fn._backend, str) else None
                out.append(i)
        return out

    def concrete(self, cf, where):
        i = self.cf_index.get(id(cf))
        if i is not None:
            return i
        if isinstance(cf, _Concrete):
            rec = dict(cf.rec, where=where,
                       args=[_enc(a, self.tables) for a in cf.args],
                       kwargs=[[k, _enc(v, self.tables)] for k, v in cf.kwargs.items()],
                       outputs=_enc_outputs(cf, self.tables),
                       graph=S.graph_to_json(cf.raw_graph, self.tables, f"function {where!r}"))
            rec.pop("custom_gradients", None)
            if cf.regions:   # (their gradient graphs, in this file's tables; dropped as the option says)
                rec["custom_gradients"] = [
                    dict(r.rec, grad=S.graph_to_json(r.grad, self.tables, f"function {where!r}"))
                    if r.grad is not None and self.custom_gradients else dict(r.rec, grad=None, captures=[], present=[])
                    for r in cf.regions]
            i = self.cf_index[id(cf)] = len(self.functions)
            self._keep.append(cf)
            self.functions.append(rec)
            return i
        regions = getattr(cf, "custom_regions", None) if getattr(cf, "custom_gradient", None) else None
        if getattr(cf, "custom_gradient", None) and self.custom_gradients:
            if regions is None:
                raise S.UnserializableError(
                    f"tf.saved_model.save: {where!r} calls custom_gradient function {cf.custom_gradient!r} inside "
                    "a cond or loop body, or with a gradient function for variables (variables=): tapeflow saves "
                    "the gradient functions of custom_gradient calls at the function's top level without "
                    "variables only, so the loaded function's gradient would be that of the forward ops, not "
                    "the custom one. Save with tf.saved_model.SaveOptions(experimental_custom_gradients=False) "
                    "to accept that (TF's meaning of the option), or call it outside the cond/loop")
        if cf.var_slots:
            warnings.warn(f"tf.saved_model.save: a trace of {where!r} takes Variables as arguments; it is not "
                          "saved (pass tensors, or let the function reach the variables as attributes)",
                          stacklevel=4)
            return None
        from ..compiler.signature_text import public_signature
        try:
            args, kwargs = public_signature(cf, cf._signature_key)
            names = [p for p in (cf.python_signature.parameters if cf.python_signature else ())]
            if cf.bound_method and names:
                names = names[1:]
            defaults = {}
            for k, prm in (cf.python_signature.parameters.items() if cf.python_signature else ()):
                d = prm.default
                if d is not prm.empty and (d is None or isinstance(d, (bool, int, float, str))):
                    defaults[k] = d  # a call leaving it out matches the trace that had it
            rec = {"name": cf.name, "where": where, "defaults": defaults,
                   "args": [_enc(a, self.tables) for a in args],
                   "kwargs": [[k, _enc(v, self.tables)] for k, v in kwargs.items()],
                   "names": names,
                   "outputs": _enc_outputs(cf, self.tables),
                   "graph": S.graph_to_json(cf.raw_graph, self.tables, f"function {where!r}")}
            if regions:
                rec["custom_gradients"] = [self.region(r, cf.raw_graph, where, self.custom_gradients)
                                           for r in regions]
        except _SkipTrace as e:
            warnings.warn(f"tf.saved_model.save: a trace of {where!r} is not saved ({e})", stacklevel=4)
            return None
        i = self.cf_index[id(cf)] = len(self.functions)
        self._keep.append(cf)
        self.functions.append(rec)
        return i

    def region(self, r, graph, where, with_gradient=True):
        """A custom_gradient call of a trace (``autodiff/custom_gradient.py`` Region) as TF saves it
        with ``experimental_custom_gradients=True``: its gradient function traced into a graph of
        the output cotangents and the trace's values it closes over (a sub-trace of the finished
        trace, so those values are its captures), and the span of the trace's equations it
        replaces under a tape. The values are named by position in ``graph`` (_var_refs)."""
        from ..ir.tracer import Trace, Tracer
        refs = _var_refs(graph)

        def ref(x, what):
            v = x._var if isinstance(x, Tracer) and x._trace is r.trace else None
            got = refs.get(id(v)) if v is not None else None
            if got is None:
                raise S.UnserializableError(
                    f"tf.saved_model.save: {where!r}: custom_gradient function {r.name!r}: its {what} is not a "
                    "value of the traced function (a constant or a value of another trace); save with "
                    "tf.saved_model.SaveOptions(experimental_custom_gradients=False) to drop the custom gradient")
            return got
        ins = [ref(x, "input") for x in r.inputs]
        outs = [ref(x, "output") for x in r.outputs]
        rec = {"name": r.name, "start": r.start, "end": r.end, "inputs": ins, "outputs": outs}
        if not with_gradient:
            # experimental_custom_gradients=False: the span is kept, its gradient not (the loaded
            # function's gradient then raises TF's LookupError, _Region.run)
            return dict(rec, captures=[], present=[], grad=None)
        t = Trace(parent=r.trace, kind="branch")
        t.local_vars = _EVERY   # a variable the gradient reads is read there (the parent trace is finished)
        try:
            with t:
                cts = [t.new_input(o._var.aval) for o in r.outputs]
                g = r.grad_fn(*cts)
            g = list(g) if isinstance(g, (list, tuple)) else [g]
            if len(g) != len(r.inputs):
                raise ValueError(f"it returned {len(g)} gradients for {len(r.inputs)} tensor inputs")
            present = [i for i, x in enumerate(g) if x is not None]
            grad = t.finish([g[i] for i in present])
        except S.UnserializableError:
            raise
        except Exception as e:  # noqa: BLE001 -- any failure of the user's gradient function, named
            raise S.UnserializableError(
                f"tf.saved_model.save: {where!r}: the gradient function of custom_gradient function {r.name!r} "
                f"could not be traced ({type(e).__name__}: {e}); TF traces it to save it. Save with "
                "tf.saved_model.SaveOptions(experimental_custom_gradients=False) to drop the custom "
                "gradient") from None
        caps = [ref(outer, "gradient function's captured value") for outer, _ in t.captures]
        return dict(rec, captures=caps, present=present,
                    grad=S.graph_to_json(grad, self.tables, f"function {where!r} (gradient of {r.name!r})"))

    def signatures(self, signatures):
        from ..compiler.function import ConcreteFunction, Function
        if signatures is None:
            return {}
        if not isinstance(signatures, dict):
            signatures = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: signatures}
        out = {}
        from ..compiler.signature_text import RankGenericConcreteFunction
        for key, f in signatures.items():
            if isinstance(f, SignatureFunction):  # a loaded object's signature, saved again
                idx = [self.concrete(c, f"signature {key}") for c in f._all]
                out[key] = {"concrete": idx[0], "more": idx[1:], "inputs": list(f.inputs),
                            "outputs": list(f.output_keys)}
                continue
            spec_names = None
            more = []  # the traces of other ranks, for a spec of unknown rank
            if isinstance(f, Function):
                if f.input_signature is not None:
                    spec_names = [getattr(x, "name", None) for x in nest.flatten(f.input_signature)]
                if f.input_signature is None:
                    raise ValueError(
                        f"tf.saved_model.save: signature {key!r}: the function {f.__name__!r} has no "
                        "input_signature; pass f.get_concrete_function(tf.TensorSpec(...)) or give it one")
                fn, f = f, f.get_concrete_function()
                if any(x.shape is None for x in nest.flatten(fn.input_signature)):
                    more = _rank_traces(lambda r: fn.get_concrete_function(*[
                        Tensor(np.zeros((1,) * r if x.shape is None else tuple(1 if d is None else d for d in x.shape),
                                        x.dtype.np)) for x in fn.input_signature]))
            elif isinstance(f, RankGenericConcreteFunction):
                # TF traces a TensorSpec(None) once with an unknown rank; tapeflow has a trace
                # per rank met (rank 0 at least): the signature keeps them all
                rg, f = f, f._probe
                more = _rank_traces(lambda r: rg._function.get_concrete_function(
                    *rg._with_rank(rg._args, (None,) * r), **rg._with_rank(rg._kwargs, (None,) * r)))
            if not isinstance(f, ConcreteFunction):
                raise ValueError(f"tf.saved_model.save: signature {key!r} must be a tapeflow.function with an "
                                 f"input_signature or a ConcreteFunction, got {type(f).__name__}")
            i = self.concrete(f, f"signature {key}")
            if i is None:
                raise ValueError(f"tf.saved_model.save: signature {key!r} cannot be saved")
            rec = self.functions[i]
            in_names = _signature_input_names(rec)
            if spec_names is not None and len(spec_names) == len(in_names):
                in_names = [a or b for a, b in zip(spec_names, in_names)]  # TF: a spec's name names it
            out_keys = _signature_output_keys(f)
            others = [j for c in more if (j := self.concrete(c, f"signature {key}")) is not None]
            out[key] = {"concrete": i, "more": others, "inputs": in_names, "outputs": out_keys}
        return out


#: a signature whose TensorSpec has an unknown rank is saved with a trace for each rank
#: up to this (TF saves one graph of unknown rank; tapeflow's graphs have ranks)
MAX_SIGNATURE_RANK = 4


def _with_rank(struct, r):
    """``struct`` (get_concrete_function's arguments) with each spec of unknown rank (a
    TensorSpec(None), an extension type's Spec holding one) given rank ``r``, every dim unknown."""
    from ..compiler.function import TensorSpec

    def fix(s):
        if isinstance(s, TensorSpec):
            return TensorSpec((None,) * r, s.dtype, s.name) if s.shape is None else s
        if hasattr(type(s), "_tf_mismatch"):   # an ExtensionType's Spec
            from ..extension_type import _spec_compose, _spec_decompose
            specs = []
            static = _spec_decompose(s, specs)
            return _spec_compose(static, iter([fix(t) for t in specs]))
        return s
    return nest.map_structure(fix, struct)


def _trace_generic(root):
    """Before saving: each Function reachable from ``root`` that was asked for a concrete function
    of unknown rank (``_generic``) is traced at the ranks a SavedModel holds (0 to
    MAX_SIGNATURE_RANK), as TF saves the one graph of unknown rank it traced there; first, so that
    the functions those traces inline are noted (``_inlined``) before any is saved."""
    from ..compiler.function import Function
    from ..module import _children
    seen = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or len(seen) > 100000:
            continue
        seen.add(id(obj))
        if isinstance(obj, Function):
            for args, kwargs in list(obj._generic):
                _rank_traces(lambda r, a=args, k=kwargs, f=obj: f.get_concrete_function(
                    *_with_rank(a, r), **_with_rank(k, r)), first=0)
            continue
        if isinstance(obj, (list, tuple, dict)) or _is_plain_object(obj):
            stack.extend(v for _, v in list(_children(obj)))
            if not isinstance(obj, (list, tuple, dict)):
                stack.extend(f for _, f in _functions_of(obj))


def _rank_traces(trace, first=1):
    import contextlib
    import io
    out = []
    # TF traces such a signature once: the extra traces are tapeflow's, so the Python side
    # effects of tracing (a print('Tracing with', x)) and the retracing warning stay quiet
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        for r in range(first, MAX_SIGNATURE_RANK + 1):
            try:
                out.append(trace(r))
            except Exception:  # noqa: BLE001 -- a rank the function cannot take is not served
                continue
    return out


class _SkipTrace(Exception):
    pass


class _Every:
    """A set holding everything (a gradient sub-trace's ``local_vars``: no read is hoisted)."""

    def __contains__(self, x):
        return True


_EVERY = _Every()


def _var_refs(graph):
    """id(Var) -> its JSON name by position in ``graph``: ["in", i], ["const", i], ["eq", j, k]."""
    refs = {id(v): ["in", i] for i, v in enumerate(graph.inputs)}
    refs.update({id(v): ["const", i] for i, (v, _) in enumerate(graph.consts)})
    for j, e in enumerate(graph.eqns):
        for k, v in enumerate(e.outputs):
            refs[id(v)] = ["eq", j, k]
    return refs


def _var_at(graph, ref):
    if ref[0] == "in":
        return graph.inputs[ref[1]]
    if ref[0] == "const":
        return graph.consts[ref[1]][0]
    if ref[0] == "eq":
        return graph.eqns[ref[1]].outputs[ref[2]]
    raise S.SerializedGraphError(f"bad value reference {ref!r}")


class _Region:
    """A saved custom_gradient call (``_Saver.region``): under a tape (or inside another trace) the
    loaded graph's equations ``start:end`` run as one ``custom_gradient`` function whose gradient is
    the saved gradient graph, so the tape records TF's custom gradient, not the forward ops'."""

    def __init__(self, rec, graph, tables, where):
        self.rec = {k: v for k, v in rec.items() if k != "grad"}
        self.name = rec["name"]
        self.start, self.end = int(rec["start"]), int(rec["end"])
        if not 0 <= self.start < self.end <= len(graph.eqns):
            raise S.SerializedGraphError(f"{where}: custom gradient {self.name!r} spans equations "
                                         f"{self.start}:{self.end} of {len(graph.eqns)}")
        self.inputs = [_var_at(graph, r) for r in rec["inputs"]]
        self.outputs = [_var_at(graph, r) for r in rec["outputs"]]
        self.captures = [_var_at(graph, r) for r in rec["captures"]]
        self.present = [int(i) for i in rec["present"]]
        #: None: saved with experimental_custom_gradients=False (differentiating it raises, as TF)
        self.grad = None if rec["grad"] is None else \
            S.graph_from_json(rec["grad"], tables, f"{where} (gradient of {self.name!r})")
        if self.grad is not None and (len(self.grad.inputs) != len(self.outputs) + len(self.captures) or
                                      len(self.grad.outputs) != len(self.present)):
            raise S.SerializedGraphError(f"{where}: the gradient graph of {self.name!r} does not fit its call")
        eqns = graph.eqns[self.start:self.end]
        made = {v for e in eqns for v in e.outputs}
        reads = list(self.inputs)
        for e in eqns:
            for v in e.inputs:
                if isinstance(v, type(self.outputs[0])) and v not in made and v not in reads:
                    reads.append(v)
        #: the span as a graph of the call's tensor inputs, then the other values it reads
        #: (constants, earlier values: no gradient through the custom function, as TF's)
        self.forward = Graph(reads, [], eqns, [v for e in eqns for v in e.outputs], graph.variables)

    def run(self, env, done):
        """Run the span as a custom_gradient call: ``env`` holds the values computed so far;
        ``done`` gets each span equation's outputs (the call's outputs: the recorded ones)."""
        from ..autodiff.custom_gradient import custom_gradient
        from ..ir.control_flow import inline_graph
        made = {}

        def fn(*xs):
            vals = inline_graph(self.forward, list(xs))
            made.update(zip(self.forward.outputs, vals))
            caps = [made[v] if v in made else env[v] for v in self.captures]
            ys = [made[v] for v in self.outputs]

            def grad_fn(*cts):
                if self.grad is None:
                    # TF 2.21 (a SavedModel saved with experimental_custom_gradients=False, loaded in
                    # another process): LookupError "No gradient defined for operation'IdentityN' (op
                    # type: IdentityN)", raised at the call under the tape; tapeflow raises at tape.gradient
                    raise LookupError(
                        f"No gradient defined for the custom_gradient function {self.name!r} of this loaded "
                        "function: its SavedModel was saved with tf.saved_model.SaveOptions("
                        "experimental_custom_gradients=False), which drops the gradient function (TF 2.21 raises "
                        "this LookupError too). Save it with experimental_custom_gradients=True (the default), or "
                        "wrap the call in tf.stop_gradient where no gradient is needed")
                cts = [c if c is not None else _zeros(y) for c, y in zip(cts, ys)]
                g = inline_graph(self.grad, list(cts) + caps)
                full = [None] * len(xs)
                for i, gi in zip(self.present, g):
                    full[i] = gi if isinstance(gi, Tensor) else Tensor(np.asarray(gi))
                return full
            return (ys[0] if len(ys) == 1 else tuple(ys)), grad_fn
        fn.__name__ = self.name
        out = custom_gradient(fn)(*[env[v] for v in self.forward.inputs])
        outs = [out] if len(self.outputs) == 1 else list(out)
        made.update(zip(self.outputs, outs))   # the recorded values, for the equations after the span
        for e in self.forward.eqns:
            done[id(e)] = tuple(made[v] for v in e.outputs) if e.prim.multiple_results else made[e.outputs[0]]


def _zeros(y):
    from ..ops.array_ops import zeros_like
    return zeros_like(y)


def _run_with_regions(graph, regions, args):
    """``inline_graph`` of a loaded trace whose custom_gradient calls were saved: each span runs as
    one custom_gradient call (_Region.run) with the saved gradient; the other equations bind."""
    from ..ir import interpreter
    from ..ir.control_flow import _bind_eqn
    env = dict(zip(graph.inputs, args))
    env.update(graph.consts)
    at = {id(graph.eqns[r.start]): r for r in regions}
    done = {}

    def apply(e, vals):
        r = at.get(id(e))
        if r is not None:
            r.run(env, done)
        out = done.pop(id(e)) if id(e) in done else _bind_eqn(e, vals)
        if e.prim.multiple_results:
            env.update(zip(e.outputs, out))
        else:
            env[e.outputs[0]] = out
        return out
    return interpreter.evaluate(graph, list(args), apply)


def _enc(x, tables):
    """A structured input or output value: TensorSpecs, Python constants, containers."""
    from ..compiler.function import TensorSpec
    if isinstance(x, TensorSpec):
        return {"$spec": [None if x.shape is None else list(x.shape), x.dtype.np.name, x.name]}
    if isinstance(x, Tensor):
        return {"$tensor": tables.add_array(x._v)}
    if type(x).__name__ == "RaggedTensorSpec":   # a ragged argument's spec (wave 20)
        dims = None if x.shape.rank is None else list(x.shape)
        return {"$ragged_spec": [dims, x.dtype.np.name, x.ragged_rank]}
    if hasattr(type(x), "_tf_mismatch"):   # an ExtensionType's Spec: its registered name, fields, TensorSpecs
        from ..extension_type import _spec_decompose
        specs = []
        static = _spec_decompose(x, specs)
        return {"$ext_spec": [_enc_static(static, tables, x), [_enc(s, tables) for s in specs]]}
    from ..extension_type import _Static
    if isinstance(x, _Static):   # an extension-type result's static half (in its _CompositeTag)
        return {"$ext_static": _enc_static(x.value, tables, x)}
    from ..compiler.function import _CompositeTag, _Parts
    if isinstance(x, (_Parts, _CompositeTag)):   # a composite result taken apart (its kind, its parts)
        return {"$parts" if isinstance(x, _Parts) else "$ctag": [_enc(v, tables) for v in x]}
    if isinstance(x, tuple):
        return {"$tuple": [_enc(v, tables) for v in x]}
    if isinstance(x, list):
        return [_enc(v, tables) for v in x]
    if isinstance(x, dict):
        if not all(isinstance(k, str) for k in x):
            raise _SkipTrace("a dict argument or output with non-string keys")
        return {"$dict": [[k, _enc(v, tables)] for k, v in x.items()]}
    if x is None or isinstance(x, (bool, int, str)) or (isinstance(x, float) and np.isfinite(x)):
        return x
    raise _SkipTrace(f"a Python argument or output {type(x).__name__} that is not a number, string or None")


def _enc_static(st, tables, what):
    """An extension type's static half (``extension_type._decompose``'s tuple: the class, the
    structure, the Python fields; "T" a tensor slot) as JSON. A class is saved as TF saves it: by
    its registered name (``__name__ = "pkg.MaskedTensor"`` in its body) and field names, so a
    process that registered the name gets the class back and one that did not gets TF's
    AnonymousExtensionType of the same fields."""
    kind = st[0]
    if kind == "T":
        return "T"
    if kind == "E":
        from ..extension_type import registered_name
        cls = st[1]
        name = registered_name(cls)
        if name is None:
            # TF 2.21: NotEncodableError("No encoder for object MT.Spec(...) of type <class '__main__.MT.Spec'>.")
            raise S.UnserializableError(
                f"tf.saved_model.save: No encoder for object {what!r} of type <class "
                f"'{cls.__module__}.{cls.__qualname__}.Spec'>: an extension type in a saved function's "
                f"arguments or results must be registered, as in TF: give the class a name in its body "
                f"(__name__ = 'mypackage.{cls.__name__}'), which the SavedModel records")
        return {"E": name, "fields": list(cls._tf_fields), "v": [_enc_static(s, tables, what) for s in st[2]]}
    if kind == "tuple":
        return {"tuple": [_enc_static(s, tables, what) for s in st[1]]}
    if kind == "map" and all(isinstance(k, str) for k, _ in st[1]):
        return {"map": [[k, _enc_static(s, tables, what)] for k, s in st[1]]}
    if kind == "shape":
        return {"shape": None if st[1] is None else list(st[1])}
    if kind == "py":
        from ..core import dtypes as _dt
        if isinstance(st[1], _dt.DType):
            return {"dtype": st[1].name}
        return {"py": _enc(st[1], tables)}
    raise S.UnserializableError(f"tf.saved_model.save: {what!r} holds a {kind!r} field (a SparseTensor or "
                                "RaggedTensor inside an extension type), which tapeflow cannot save")


def _dec_static(d):
    """The inverse of _enc_static (the class by its registered name, else an AnonymousExtensionType)."""
    if d == "T":
        return ("T",)
    if "E" in d:
        from ..extension_type import lookup_registered
        return ("E", lookup_registered(d["E"], d["fields"]), tuple(_dec_static(s) for s in d["v"]))
    if "tuple" in d:
        return ("tuple", tuple(_dec_static(s) for s in d["tuple"]))
    if "map" in d:
        return ("map", tuple((k, _dec_static(s)) for k, s in d["map"]))
    if "shape" in d:
        return ("shape", None if d["shape"] is None else tuple(d["shape"]))
    if "dtype" in d:
        from ..core import dtypes as _dt
        return ("py", _dt.as_dtype(d["dtype"]))
    return ("py", _dec(d["py"], None, lambda x: x))


def _note_ext_tag(x):
    """A saved extension-type result's tag names its class (``MaskedTensor``): every extension type
    rebuilds through ExtensionType._tf_from_components (the class is in the static half), so the
    name is made known to compiler/function.py's _rebuild in a process that never took one apart."""
    name, static = x["$ctag"][:2]
    name = name.get("$const") if isinstance(name, dict) else name
    static = static.get("$const", static) if isinstance(static, dict) else static
    if isinstance(name, str) and isinstance(static, dict) and "$ext_static" in static:
        from ..compiler.function import _COMPOSITE_CLASSES
        from ..extension_type import ExtensionType
        _COMPOSITE_CLASSES.setdefault(name, ExtensionType)


def _dec(x, tables, leaf):
    if isinstance(x, list):
        return [_dec(v, tables, leaf) for v in x]
    if isinstance(x, dict):
        if "$tuple" in x:
            return tuple(_dec(v, tables, leaf) for v in x["$tuple"])
        if "$ext_spec" in x:
            from ..extension_type import _spec_compose
            static, specs = x["$ext_spec"]
            return _spec_compose(_dec_static(static), iter([_dec(s, tables, leaf) for s in specs]))
        if "$ext_static" in x:
            from ..extension_type import _Static
            return _Static(_dec_static(x["$ext_static"]))
        if "$parts" in x or "$ctag" in x:
            from ..compiler.function import _CompositeTag, _Parts
            if "$ctag" in x:
                _note_ext_tag(x)
            kind = _Parts if "$parts" in x else _CompositeTag
            return kind(_dec(v, tables, leaf) for v in x["$parts" if kind is _Parts else "$ctag"])
        if "$dict" in x:
            return {k: _dec(v, tables, leaf) for k, v in x["$dict"]}
        return leaf(x)
    return x


class _Out:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _enc_outputs(cf, tables):
    from ..compiler.function import _TENSOR
    kind, payload = cf.out_tree
    if kind == "single":
        return {"single": True}
    structure, leaves = payload
    marks = nest.pack_sequence_as(structure, [_Out(i) for i in range(len(leaves))]) \
        if isinstance(structure, (list, tuple, dict)) else _Out(0)
    n = iter(range(len(leaves)))
    index = {}
    for j, leaf in enumerate(leaves):
        if leaf is _TENSOR:
            index[j] = next(n)

    from ..compiler.function import _CompositeTag, _Parts

    def enc(m):
        if isinstance(m, (_Parts, _CompositeTag)):   # (before tuple: the composite's kind must survive)
            return {"$parts" if isinstance(m, _Parts) else "$ctag": [enc(v) for v in m]}
        if isinstance(m, _Out):
            leaf = leaves[m.i]
            return {"$out": index[m.i]} if leaf is _TENSOR else {"$const": _enc(leaf, tables)}
        if isinstance(m, tuple):
            return {"$tuple": [enc(v) for v in m]}
        if isinstance(m, list):
            return [enc(v) for v in m]
        if isinstance(m, dict):
            if not all(isinstance(k, str) for k in m):
                raise _SkipTrace("an output dict with non-string keys")
            return {"$dict": [[k, enc(v)] for k, v in m.items()]}
        return {"$const": _enc(m, tables)}
    return {"tree": enc(marks)}


def _signature_input_names(rec):
    names = []
    for j, a in enumerate(rec["args"]):
        pname = rec["names"][j] if j < len(rec["names"]) else f"args_{j}"
        flat = _flat_specs(a)
        for k, s in enumerate(flat):
            names.append(s[2] or (pname if len(flat) == 1 else f"{pname}_{k}"))
    for k, a in rec["kwargs"]:
        flat = _flat_specs(a)
        names += [s[2] or (k if len(flat) == 1 else f"{k}_{i}") for i, s in enumerate(flat)]
    return names


def _flat_specs(enc):
    out = []

    def walk(x):
        if isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            if "$spec" in x:
                out.append(x["$spec"])
            elif "$tuple" in x:
                for v in x["$tuple"]:
                    walk(v)
            elif "$dict" in x:
                for _, v in sorted(x["$dict"], key=lambda kv: kv[0]):
                    walk(v)
    walk(enc)
    return out


def _signature_output_keys(cf):
    """TF's signature outputs: a dict's keys, else output_0, output_1, ... in flatten order."""
    from ..compiler.function import _TENSOR
    kind, payload = cf.out_tree
    if kind == "single":
        return ["output_0"]
    structure, leaves = payload
    if isinstance(structure, dict) and all(isinstance(k, str) for k in structure) and \
            all(not isinstance(v, (dict, list, tuple)) for v in structure.values()):
        keys = sorted(structure, key=nest._sort_key)
        return [k for k, leaf in zip(keys, leaves) if leaf is _TENSOR]
    return [f"output_{i}" for i in range(sum(leaf is _TENSOR for leaf in leaves))]


def save(obj, export_dir, signatures=None, options=None):
    """Save ``obj`` (a Module, a Keras model, any object holding Variables and
    ``tapeflow.function``\\ s) to ``export_dir``; see the module docstring."""
    from ..train import storage
    if options is not None and not isinstance(options, SaveOptions):
        raise TypeError(f"tf.saved_model.save: options must be a tf.saved_model.SaveOptions, got "
                        f"{type(options).__name__}")
    export_dir = os.fspath(export_dir)
    from ..keras.models import Model as _KerasModel
    if signatures is None and isinstance(obj, _KerasModel) and obj.__dict__.get("built"):
        # TF 2.21: a Keras model gets serving_default, its call on inputs named "inputs"
        from .keras_export import serving_function
        signatures = serving_function(obj, names=["inputs"] if len(_keras_specs(obj)) == 1 else None)
    if signatures is None and isinstance(obj, _UserObject) and obj.signatures:
        signatures = dict(obj.signatures)  # a loaded object keeps its signatures when saved again
    _trace_generic(obj)
    s = _Saver(obj, custom_gradients=options is None or options.experimental_custom_gradients)
    if s.node(obj, "") is None:
        raise ValueError(f"tf.saved_model.save: expected a trackable object (a tf.Module, a Keras model, an "
                         f"object holding variables or functions), got {type(obj).__name__}")
    sigs = s.signatures(signatures)
    from .. import __version__
    doc = {"format": FORMAT, "version": VERSION, "tapeflow_version": __version__,
           "nodes": s.nodes, "functions": s.functions, "signatures": sigs, "rngs": s.tables.rngs}
    text = json.dumps(doc, allow_nan=False)
    arrays = {k: v.numpy() if hasattr(v, "numpy") else np.asarray(v._v) for k, v in s.variables.items()}
    info = {k: {"name": v._name, "trainable": bool(v.trainable)} for k, v in s.variables.items()}
    try:
        # the file must load: build the object graph from it now (no variables, no compiling),
        # so a save bug raises here with nothing written, never at load in another process
        _Loader(json.loads(text), arrays, {str(i): a for i, a in enumerate(s.tables.arrays)}, export_dir,
                dry=True).build()
    except Exception as e:  # noqa: BLE001 -- any failure is a bug of this module
        raise RuntimeError(f"tf.saved_model.save: the SavedModel for {export_dir!r} would not load "
                           f"({type(e).__name__}: {e}); nothing was written (a tapeflow bug: please "
                           "report it)") from e
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    if os.path.exists(export_dir) and not (os.path.isdir(export_dir) and (
            contains_saved_model(export_dir) or not os.listdir(export_dir))):
        raise FileExistsError(f"tf.saved_model.save: {export_dir!r} exists and is not a SavedModel directory "
                              "(or an empty one); tapeflow replaces a SavedModel as a whole, so it will not "
                              "write into another directory: choose a new path")
    tmp = storage.tmp_name(os.path.abspath(export_dir))
    os.mkdir(tmp)
    try:
        storage.write_checkpoint(os.path.join(tmp, VARIABLES_DIRECTORY, VARIABLES_FILENAME), arrays, info)
        storage.write_checkpoint(os.path.join(tmp, _ARRAYS),
                                 {str(i): a for i, a in enumerate(s.tables.arrays)})
        _write_text(os.path.join(tmp, SAVED_MODEL_FILENAME), text)
        storage._fsync_dir(tmp)
        _replace_dir(tmp, export_dir)
    except BaseException:
        storage._silent_remove(tmp)
        raise


def _keras_specs(model):
    from .keras_export import input_specs
    return input_specs(model)


def _write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _replace_dir(tmp, export_dir):
    """Move the finished ``tmp`` to ``export_dir``. A directory cannot be renamed over a
    non-empty one, so an old SavedModel is first renamed aside: a crash between the two
    renames leaves no directory at ``export_dir`` (load raises), never a partial one."""
    from ..train import storage
    old = None
    if os.path.isdir(export_dir):
        old = os.path.join(os.path.dirname(tmp), f".{os.path.basename(export_dir)}.old-{secrets.token_hex(4)}")
        os.rename(export_dir, old)
    os.rename(tmp, export_dir)
    storage._fsync_dir(os.path.dirname(os.path.abspath(export_dir)))
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# -- loading ---------------------------------------------------------------------------------------------

class _UserObject(Module):
    """A restored object: its saved children, variables and functions as attributes.
    Callable when the saved object's ``__call__`` was a ``tapeflow.function``."""

    _bookkeeping = frozenset({"_restored_call", "signatures", "_saved_lists"})

    def __init__(self):
        super().__init__()
        self._restored_call = None
        self.signatures = None
        self._saved_lists = {}

    # A saved attribute of these names (Model.export saves the three lists) is what they
    # return; otherwise they are Module's, computed from the restored children.
    @property
    def variables(self):
        return self._saved_lists.get("variables", Module.variables.fget(self))

    @property
    def trainable_variables(self):
        return self._saved_lists.get("trainable_variables", Module.trainable_variables.fget(self))

    @property
    def non_trainable_variables(self):
        return self._saved_lists.get("non_trainable_variables", Module.non_trainable_variables.fget(self))

    def __call__(self, *args, **kwargs):
        if self._restored_call is None:
            raise TypeError(f"'{type(self).__name__}' object is not callable (the saved object's __call__ was "
                            "not a tapeflow.function)")
        return self._restored_call(*args, **kwargs)


class _Concrete:
    """One saved trace: its graph, its input structure, and (compiled on first use) the
    ConcreteFunction that runs it."""

    def __init__(self, rec, graph, tables):
        self.name = rec["name"]
        self.rec = rec
        self.raw_graph = graph
        from ..compiler.function import TensorSpec
        spec = lambda d: TensorSpec(d["$spec"][0], d["$spec"][1], d["$spec"][2]) if "$spec" in d else \
            Tensor(tables.arrays[d["$tensor"]]) if "$tensor" in d else \
            _ragged_spec(d["$ragged_spec"]) if "$ragged_spec" in d else d  # noqa: E731
        self.args = [_dec(a, tables, spec) for a in rec["args"]]
        self.kwargs = {k: _dec(v, tables, spec) for k, v in rec["kwargs"]}
        self.names = rec["names"]
        self.out_tree = _dec_outputs(rec["outputs"], tables)
        self._cf = None
        where = f"function {rec.get('where', self.name)!r}"
        self.regions = [_Region(r, graph, tables, where) for r in rec.get("custom_gradients", ())]

    @property
    def structured_input_signature(self):
        return tuple(self.args), dict(self.kwargs)

    @property
    def concrete(self):
        if self._cf is None:
            from ..compiler import pipeline
            from ..compiler.function import ConcreteFunction
            graph, plan, log = pipeline.optimize(self.raw_graph, name=self.name)
            jit = self.rec.get("jit_compile")
            backend = self.rec.get("backend")
            compiled, backend = pipeline.compile(graph, plan, name=self.name,
                                                 backend=backend if isinstance(backend, str) else None)
            cf = ConcreteFunction(self.name, self.raw_graph, graph, compiled, self.out_tree,
                                  len(self.raw_graph.outputs), backend, {}, log,
                                  jit_compile=jit if isinstance(jit, bool) else None)
            cf.captured_ids = {id(v) for v in self.raw_graph.variables}
            self._cf = cf
        return self._cf

    def match(self, args, kwargs):
        """The flat input tensors for this call, or None if it does not match."""
        n = len(self.args)
        if len(args) > n:
            return None
        pos = list(args) + [_MISSING] * (n - len(args))
        rest = {}
        for k, v in kwargs.items():
            j = self.names.index(k) if k in self.names[:n] else -1
            if j >= 0:
                if pos[j] is not _MISSING:
                    return None
                pos[j] = v
            else:
                rest[k] = v
        defaults = self.rec.get("defaults", {})
        for j, p in enumerate(pos):
            if p is _MISSING and j < len(self.names) and self.names[j] in defaults:
                pos[j] = defaults[self.names[j]]
        for k in self.kwargs:
            if k not in rest and k in defaults:
                rest[k] = defaults[k]
        if any(p is _MISSING for p in pos) or set(rest) != set(self.kwargs):
            return None
        flat = []
        for want, got in list(zip(self.args, pos)) + [(self.kwargs[k], rest[k]) for k in self.kwargs]:
            if not _match(want, got, flat):
                return None
        return flat

    def call_flat(self, tensors):
        if STATE.tapes or STATE.trace is not None:
            # op by op, so the tapes record it (gradients) or the outer trace inlines it
            from ..ir.control_flow import inline_graph
            outs = _run_with_regions(self.raw_graph, self.regions, tensors) if self.regions else \
                inline_graph(self.raw_graph, tensors)
            from ..compiler.function import _pack_tensors
            return _pack_tensors(self.out_tree, [o if isinstance(o, Tensor) else Tensor(o) for o in outs])
        return self.concrete.run([t._v for t in tensors])

    def describe(self):
        from ..compiler.signature_text import spec_text
        parts = []
        for name, a in zip(self.names, self.args):
            parts.append(f"{name}: {_describe(a, spec_text)}")
        for k, a in self.kwargs.items():
            parts.append(f"{k}: {_describe(a, spec_text)}")
        return "(" + ", ".join(parts) + ")"


def _describe(a, spec_text):
    from ..compiler.function import TensorSpec
    return nest.map_structure(lambda s: spec_text(s.shape, s.dtype.np.name) if isinstance(s, TensorSpec)
                              else repr(s), a) if not isinstance(a, TensorSpec) else spec_text(a.shape, a.dtype.np.name)


_MISSING = object()


def _ragged_spec(enc):
    from ..ragged import RaggedTensorSpec
    return RaggedTensorSpec(enc[0], enc[1], enc[2])


def _match(want, got, flat):
    from ..compiler.function import TensorSpec, _composite_leaves, _is_composite_spec
    if _is_composite_spec(want):   # a RaggedTensorSpec: the argument's component tensors
        try:
            flat.extend(_composite_leaves("", "", want, got))
        except TypeError:
            return False
        return True
    if isinstance(want, TensorSpec):
        if isinstance(got, Variable):
            got = got.read_value()
        if isinstance(got, Tensor):
            t = got
            if t.aval.dtype != want.dtype.np:
                return False
        else:
            if isinstance(got, float) and want.dtype.np.kind in "iub":
                return False
            if got is None or isinstance(got, (str, bytes, dict)):
                return False
            try:
                t = Tensor(np.asarray(got, dtype=want.dtype.np) if not isinstance(got, np.ndarray) else got)
            except (TypeError, ValueError):
                return False
            if t.aval.dtype != want.dtype.np:
                return False
        if not want.is_compatible_with(t):
            return False
        flat.append(t)
        return True
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return False
        return all(_match(w, g, flat) for w, g in zip(want, got))
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return False
        return all(_match(want[k], got[k], flat) for k in sorted(want, key=nest._sort_key))
    if isinstance(want, Tensor):
        return False
    return type(want) is type(got) and want == got


def _dec_outputs(enc, tables):
    from ..compiler.function import _TENSOR
    if enc.get("single"):
        return ("single", None)

    def leaf(d):
        if "$out" in d:
            return _Out(_TENSOR)
        c = _dec(d["$const"], tables, lambda x: Tensor(tables.arrays[x["$tensor"]]))
        return _Out(c)
    tree = _dec(enc["tree"], tables, leaf)
    leaves = [m.i for m in nest.flatten(tree)] if not isinstance(tree, _Out) else [tree.i]
    structure = nest.map_structure(lambda m: None, tree) if not isinstance(tree, _Out) else None
    return ("tree", (structure, leaves))


class RestoredFunction:
    """A loaded ``tapeflow.function``: calls go to the saved trace their arguments match
    (TF's rule: no new traces, there is no Python code to trace)."""

    def __init__(self, name, concretes):
        self.__name__ = name
        self._concretes = concretes
        #: (shape, dtype) of a call with one array -> the trace it matched: the match depends
        #: on nothing else, so later calls skip it (it cost ~6 us of a ~9 us call: measured
        #: on a 2-layer MLP, 400 interleaved pairs against the original function)
        self._fast = {}

    @property
    def concrete_functions(self):
        return list(self._concretes)

    def __call__(self, *args, **kwargs):
        one = None
        if len(args) == 1 and not kwargs and not STATE.tapes and STATE.trace is None:
            a = args[0]
            one = a._v if a.__class__ is Tensor else a if a.__class__ is np.ndarray else None
            if one is not None:
                c = self._fast.get((one.shape, one.dtype))
                if c is not None:
                    return c.concrete.run([one])
        for c in self._concretes:
            flat = c.match(args, kwargs)
            if flat is not None:
                if one is not None:
                    self._fast[(one.shape, one.dtype)] = c
                return c.call_flat(flat)
        got = ", ".join([_show(a) for a in args] + [f"{k}={_show(v)}" for k, v in kwargs.items()])
        options = "\n".join(f"  Option {i + 1}: {c.describe()}" for i, c in enumerate(self._concretes))
        raise ValueError(
            f"Could not find matching concrete function to call loaded from the SavedModel ({self.__name__!r}). "
            f"Got: ({got}).\n Expected these arguments to match one of the following "
            f"{len(self._concretes)} option(s):\n{options or '  (none: the function was never traced before saving)'}")

    def __repr__(self):
        return f"<RestoredFunction {self.__name__!r}: {len(self._concretes)} concrete function(s)>"


def _show(a):
    if isinstance(a, Tensor):
        return f"Tensor(shape={tuple(a.aval.shape)}, dtype={a.aval.dtype.name})"
    return repr(a)


class SignatureFunction:
    """A signature (``loaded.signatures["serving_default"]``): keyword arguments named
    after the inputs, a dict of named outputs (TF's signature calling convention)."""

    def __init__(self, key, concretes, inputs, outputs):
        self.name = key
        self._c = concretes[0]
        self._all = concretes  # one per rank, for a signature of unknown rank
        self.inputs = inputs
        self.output_keys = outputs

    def _specs(self, c, unknown_rank=False):
        from ..compiler.function import TensorSpec
        flat = [s for a in c.rec["args"] for s in _flat_specs(a)] + \
            [s for _, a in c.rec["kwargs"] for s in _flat_specs(a)]
        return {n: TensorSpec(None if unknown_rank else s[0], s[1], n) for n, s in zip(self.inputs, flat)}

    @property
    def structured_input_signature(self):
        return (), self._specs(self._c, unknown_rank=len(self._all) > 1)

    @property
    def structured_outputs(self):
        from ..compiler.function import TensorSpec
        avals = [v.aval for v in self._c.raw_graph.outputs]
        generic = len(self._all) > 1  # one trace per rank: the shapes are unknown, as TF prints them
        return {k: TensorSpec(None if generic else a.shape, a.dtype, k) for k, a in zip(self.output_keys, avals)}

    def __call__(self, *args, **kwargs):
        if args:
            raise TypeError(f"signature {self.name!r} takes keyword arguments only (TF's signature functions: "
                            f"{', '.join(self.inputs)}); got {len(args)} positional argument(s)")
        if set(kwargs) != set(self.inputs):
            raise TypeError(f"signature {self.name!r} takes the arguments {sorted(self.inputs)}; got "
                            f"{sorted(kwargs)}")
        for c in self._all:
            specs = self._specs(c)
            flat = []
            if all(_match(specs[n], kwargs[n], flat) for n in self.inputs):
                break
        else:
            specs = self.structured_input_signature[1]
            raise ValueError(f"signature {self.name!r}: the arguments do not match its inputs "
                             f"{[specs[n] for n in self.inputs]}")
        out = c.call_flat(flat)
        outs = [x for x in nest.flatten(out) if isinstance(x, Tensor)]
        return dict(zip(self.output_keys, outs))

    def __repr__(self):
        return f"<SignatureFunction {self.name!r}: ({', '.join(self.inputs)}) -> {self.output_keys}>"


class _SignatureMap(dict):
    def __repr__(self):
        return f"_SignatureMap({dict.__repr__(self)})"


def _load_error(export_dir, what):
    return OSError(f"SavedModel at {export_dir!r} cannot be loaded: {what}")


def load(export_dir, tags=None, options=None):
    """Load a SavedModel written by ``save``: an object with the saved attributes
    (functions, variables, children) and ``signatures``. The classes saved are not
    needed: the functions run their saved graphs."""
    from ..train import storage
    export_dir = os.fspath(export_dir)
    path = os.path.join(export_dir, SAVED_MODEL_FILENAME)
    if not os.path.isfile(path):
        tf_file = os.path.join(export_dir, SAVED_MODEL_FILENAME_PB)
        extra = (" (it holds TensorFlow's saved_model.pb: tapeflow reads only the SavedModels it writes)"
                 if os.path.isfile(tf_file) else "")
        raise OSError(f"SavedModel file does not exist at: {path}{extra}")
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise OSError(f"Cannot parse file {path!r}: not JSON (truncated, corrupted or another format)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise OSError(f"Cannot parse file {path!r}: not a tapeflow SavedModel")
    if not isinstance(doc.get("version"), int) or doc["version"] > VERSION:
        raise OSError(f"{path}: SavedModel version {doc.get('version')!r} is not supported (reads up to {VERSION})")
    try:
        values, _, _ = storage.read_checkpoint(os.path.join(export_dir, VARIABLES_DIRECTORY, VARIABLES_FILENAME))
        arrays, _, _ = storage.read_checkpoint(os.path.join(export_dir, _ARRAYS))
    except storage.CheckpointError as e:
        raise _load_error(export_dir, str(e)) from None
    try:
        return _Loader(doc, values, arrays, export_dir).build()
    except S.SerializedGraphError as e:
        raise _load_error(export_dir, str(e)) from None
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise _load_error(export_dir, f"malformed {SAVED_MODEL_FILENAME} ({type(e).__name__}: {e})") from None


class _DryVariable:
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key


class _Loader:
    def __init__(self, doc, values, arrays, export_dir, dry=False):
        self.dry = dry  # save's check that its file loads: no Variables made, nothing compiled
        self.doc = doc
        self.values = values
        self.export_dir = export_dir
        self.vars = {}
        n = len(arrays)
        try:
            arr_list = [arrays[str(i)] for i in range(n)]
        except KeyError as e:
            raise _load_error(export_dir, f"constant array {e} is missing") from None
        self.tables = S.Tables(variable_of=self.variable, arrays=arr_list, rngs=doc.get("rngs", []))
        self.objs = {}
        self.concretes = {}

    def variable(self, key):
        v = self.vars.get(key)
        if v is None:
            if key not in self.values:
                raise S.SerializedGraphError(f"variable {key!r} is not in {VARIABLES_DIRECTORY}/")
            rec = self._var_recs().get(key, {})
            if self.dry:
                v = self.vars[key] = _DryVariable(key)
                return v
            v = self.vars[key] = Variable(self.values[key], name=rec.get("name") or key.rsplit("/", 1)[-1],
                                          trainable=rec.get("trainable", True))
        return v

    def _var_recs(self):
        r = getattr(self, "_vr", None)
        if r is None:
            r = self._vr = {n["key"]: n for n in self.doc["nodes"] if n.get("kind") == "variable"}
        return r

    def concrete(self, i):
        c = self.concretes.get(i)
        if c is None:
            rec = self.doc["functions"][i]
            g = S.graph_from_json(rec["graph"], self.tables, f"function {rec.get('where', rec['name'])!r}")
            c = self.concretes[i] = _Concrete(rec, g, self.tables)
        return c

    def obj(self, i):
        if i in self.objs:
            return self.objs[i]
        rec = self.doc["nodes"][i]
        kind = rec["kind"]
        if kind == "variable":
            o = self.objs[i] = self.variable(rec["key"])
        elif kind == "function":
            o = self.objs[i] = RestoredFunction(rec["name"], [self.concrete(j) for j in rec["concrete"]])
        elif kind in ("list", "tuple"):
            # an item that holds nothing trackable (a number in a list) is saved as null
            items = [None if j is None else self.obj(j) for j in rec["items"]]
            o = self.objs[i] = items if kind == "list" else tuple(items)
        elif kind == "dict":
            o = self.objs[i] = {}
            for k, j in rec["items"]:
                o[k] = self.obj(j)
        elif kind == "object":
            o = self.objs[i] = _UserObject()
            for name, j in rec["children"]:
                child = self.obj(j)
                if name == "__call__":
                    o._restored_call = child
                elif isinstance(getattr(_UserObject, name, None), property):
                    o._saved_lists[name] = child
                    # the list's variables are also children of the object (walks, checkpoints)
                    setattr(o, f"_saved_{name}", child)
                else:
                    setattr(o, name, child)
        else:
            raise S.SerializedGraphError(f"object node {i} has unknown kind {kind!r}")
        return o

    def build(self):
        for i in range(len(self.doc["functions"])):
            self.concrete(i)  # every graph parsed now: a bad file fails at load, not at a call
        for key in self.values:
            self.variable(key)
        root = self.obj(0)
        sigs = _SignatureMap()
        for key, s in self.doc.get("signatures", {}).items():
            sigs[key] = SignatureFunction(key, [self.concrete(j) for j in [s["concrete"]] + s.get("more", [])],
                                          s["inputs"], s["outputs"])
        if isinstance(root, _UserObject):
            root.signatures = sigs
        return root


# wave 22 (api22): tf.saved_model.experimental (VariablePolicy; the rest refused with its reason)
from . import experimental  # noqa: E402,F401
