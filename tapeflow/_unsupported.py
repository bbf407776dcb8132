"""TF namespaces tapeflow does not implement (issue 11, item 9: out of scope, documented).

A ported program that reaches `tf.sparse.to_dense(...)` must stop with an error that names the
feature and says it is out of scope, not with `module 'tapeflow' has no attribute 'ragged'`,
which reads like a typo or a broken install. (String and ragged tensors left this list in
wave 19: tapeflow/strings.py, tapeflow/ragged/; so did tf.io: tapeflow/io.py; tf.lookup left in
wave 20: tapeflow/lookup.py; complex dtypes in wave 21: core/dtypes.py.)
"""
from __future__ import annotations

# namespace -> what it is, as the error message names it
FEATURES = {
    # a sub-namespace (tapeflow.distribute makes it an UnsupportedNamespace): clusters of machines
    "distribute.cluster_resolver": "cluster resolvers (tf.distribute across machines; one machine's strategies "
                                   "need none)",
    # wave 20 (benchmarks/tf_api_surface.py): TF's namespaces that are TF's runtime, TF1 or other hardware
    "feature_column": "feature columns (TF1's Estimator input API, deprecated in TF 2; use Keras preprocessing "
                      "layers: keras.layers.Normalization, StringLookup, CategoryEncoding, Hashing)",
    "lite": "TensorFlow Lite (a converter to TF's mobile runtime)",
    "tpu": "TPUs",
    "dtensor": "DTensor (tensors sharded over device meshes)",
    "xla": "TF's XLA compiler API (tapeflow.function compiles to its own backends)",
    "mlir": "TF's MLIR compiler API (tapeflow.function compiles to its own backends)",
    "queue": "TF1's input queues (use tf.data)",
    "raw_ops": "TF's C++ kernels called by op name (tf.raw_ops); use the public ops",
    "graph_util": "TF1's GraphDef utilities (tapeflow's traced graphs are IR: "
                  "tapeflow.function(...).get_concrete_function()"
                  ".graph)",
    "security": "TF's fuzzing harness (tf.security.fuzzing tests TF's own C++ ops)",
    "tools": "TF's own tooling (its API-docs generator and the TF1 -> TF2 upgrade script)",
    # wave 22 (api22): experimental namespaces whose every name is out of scope
    "dtypes.experimental": "the 8-, 4- and 2-bit dtypes (float8_e4m3fn, float8_e5m2, int4, uint4, int2, ...: "
                           "tapeflow's kernels are NumPy's, which computes on none of them; bfloat16 is supported)",
    "sysconfig": "TF's build configuration (the headers, libraries and flags for compiling custom C++ ops against "
                 "TF; tapeflow has no C++ op registry)",
    # wave 25 (api25): the namespaces outside the 30 of benchmarks/tf_api_surface.py
    "debugging.experimental": "TF's Debugger V2 dumps (enable_dump_debug_info writes every op's tensors for "
                              "TensorBoard's debugger plugin); tf.debugging.enable_check_numerics finds the first "
                              "op that makes a NaN or an inf",
    "quantization.experimental": "TF's SavedModel quantizer (quantize_saved_model rewrites a SavedModel's "
                                 "GraphDef into TF's quantized kernels); tf.quantization's fake-quantization ops "
                                 "train for quantization",
    "experimental.dlpack": "DLPack tensor exchange (to_dlpack/from_dlpack hand TF's device buffers to other "
                           "frameworks); tapeflow's tensors are NumPy arrays: t.numpy() and tf.constant(array) "
                           "share them with NumPy, and np.from_dlpack reads other frameworks' tensors",
    "experimental.tensorrt": "TF-TRT (NVIDIA TensorRT's converter of TF's GraphDefs for GPUs)",
    "experimental.dtensor": "DTensor (tensors sharded over device meshes)",
    "experimental.extension_type": "TF's ExtensionType batch encoders (ExtensionTypeBatchEncoder, the "
                                   "tf.experimental.extension_type module); tf.experimental.ExtensionType and "
                                   "BatchableExtensionType are here",
    "types.experimental.distributed": "tf.distribute's per-replica value types (Mirrored, PerReplica); "
                                      "tapeflow's strategies run one replica",
    "profiler.experimental.client": "TF's remote profiling (a profiler server in a TF job, traced from TensorBoard); "
                                    "tf.profiler.experimental.start/stop trace this process",
    "profiler.experimental.server": "TF's remote profiling (a profiler server in a TF job, traced from TensorBoard); "
                                    "tf.profiler.experimental.start/stop trace this process",
}


# top-level names of the same features: using the name raises at once
NAMES = {
    # TF1's API, reached through TF2's namespaces
    "Session": "TF1's API (sessions); tapeflow ports TF2 programs: call functions eagerly or through "
               "tapeflow.function",
    "placeholder": "TF1's API (placeholders); tapeflow ports TF2 programs: pass tensors as arguments",
    "train.AdamOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.Adam (the same update)",
    "train.GradientDescentOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.SGD",
    "train.MomentumOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.SGD(momentum=...)",
    "train.RMSPropOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.RMSprop",
    "train.AdagradOptimizer": "TF1's optimizers; use tapeflow.keras.optimizers.Adagrad",
    "train.Saver": "TF1's API (Saver); use tapeflow.train.Checkpoint",
    "train.get_or_create_global_step": "TF1's API (global steps); keep the step in a Variable",
    # wave 20 (benchmarks/tf_api_surface.py): names of TF's graph runtime, TF1, clusters, other hardware
    "CriticalSection": "TF's runtime resources (a CriticalSection serializes ops on a resource in TF's executor); "
                       "tapeflow runs a function's Python in order: guard shared Python state with a threading.Lock",
    "nondifferentiable_batch_function": "TF Serving's request batching (it merges concurrent calls into one batch)",
    "strings.unicode_script": "ICU's Unicode script table (tapeflow's string ops use Python's unicodedata, which has "
                              "no script property)",
    "Graph": "TF1's graphs (tf.Graph); tapeflow.function traces into its own IR: "
             "f.get_concrete_function(...).graph",
    "Operation": "TF's graph operations (tf.Operation); tapeflow's traced graphs are IR equations",
    "import_graph_def": "TF's GraphDef protos",
    "RegisterGradient": "TF's C++ op registry (gradients by op name); use tf.custom_gradient",
    "no_gradient": "TF's C++ op registry (gradients by op name); use tf.stop_gradient or tf.custom_gradient",
    "load_op_library": "custom C++ ops compiled against TF",
    "load_library": "custom C++ ops compiled against TF",
    "qint8": "quantized dtypes", "qint16": "quantized dtypes", "qint32": "quantized dtypes",
    "quint8": "quantized dtypes", "quint16": "quantized dtypes",
    "dtypes.qint8": "quantized dtypes", "dtypes.qint16": "quantized dtypes", "dtypes.qint32": "quantized dtypes",
    "dtypes.quint8": "quantized dtypes", "dtypes.quint16": "quantized dtypes",
    "dtypes.QUANTIZED_DTYPES": "quantized dtypes",
    "resource": "TF's resource handles (a dtype of TF's runtime); tapeflow's Variables are Python objects",
    "variant": "TF's variant tensors (a dtype of TF's runtime)",
    "dtypes.resource": "TF's resource handles (a dtype of TF's runtime); tapeflow's Variables are Python objects",
    "dtypes.variant": "TF's variant tensors (a dtype of TF's runtime)",
    "config.experimental_connect_to_cluster": "clusters of machines (TF servers); one machine's strategies need none",
    "config.experimental_connect_to_host": "clusters of machines (TF servers); one machine's strategies need none",
    "distribute.Server": "clusters of machines (TF servers); one machine's strategies need none",
    "distribute.coordinator": "clusters of machines (ParameterServerStrategy's coordinator)",
    "train.ClusterDef": "clusters of machines (TF servers' protos)",
    "train.JobDef": "clusters of machines (TF servers' protos)",
    "train.ServerDef": "clusters of machines (TF servers' protos)",
    "io.write_graph": "TF's GraphDef protos",
    "io.decode_proto": "protobuf messages by descriptor (TF's proto ops)",
    "io.encode_proto": "protobuf messages by descriptor (TF's proto ops)",
    # wave 21 (seqex21): tf.data.experimental's names of TF's runtime, its data service and TF1
    "data.experimental.service": "the tf.data service (datasets processed by a cluster of data workers)",
    "data.experimental.ServiceOptions": "the tf.data service (datasets processed by a cluster of data workers)",
    "data.experimental.distributed_save": "the tf.data service (datasets processed by a cluster of data workers)",
    "data.experimental.SqlDataset": "SQL datasets (TF's SQLite reader); read the rows in Python and use "
                                    "tf.data.Dataset.from_tensor_slices",
    "data.experimental.to_variant": "TF's variant tensors (a dataset as a tensor of TF's runtime)",
    "data.experimental.from_variant": "TF's variant tensors (a dataset as a tensor of TF's runtime)",
    "data.experimental.get_model_proto": "tf.data's autotuning model (a protobuf of TF's runtime)",
    "data.experimental.make_saveable_from_iterator": "TF1's saveable objects (tf.compat.v1 Saver); "
                                                     "tf.train.Checkpoint(iterator=it) saves an iterator",
    "nn.RNNCellDeviceWrapper": "TF1's RNN cell wrappers (device placement); wrap a Keras cell in keras.layers.RNN",
    "nn.RNNCellDropoutWrapper": "TF1's RNN cell wrappers; use the Keras cells' dropout= and recurrent_dropout=",
    "nn.RNNCellResidualWrapper": "TF1's RNN cell wrappers; add the residual in a Keras layer",
    "keras.layers.JaxLayer": "other Keras backends' models (JAX)",
    "keras.layers.FlaxLayer": "other Keras backends' models (Flax)",
    "keras.layers.TorchModuleWrapper": "other Keras backends' models (PyTorch)",
    "keras.callbacks.OrbaxCheckpoint": "Orbax checkpoints (a JAX library); use keras.callbacks.ModelCheckpoint",
    # wave 22 (api22): tf.train.experimental's checkpoint sharding policies
    "train.experimental.ShardableTensor": "checkpoint sharding policies (TF's sharded checkpoint writer splits "
                                          "tensors across files by a callback); tapeflow writes one shard",
    "train.experimental.ShardingCallback": "checkpoint sharding policies (TF's sharded checkpoint writer); "
                                           "tapeflow writes one shard",
    "train.experimental.ShardByTaskPolicy": "checkpoint sharding policies (one shard per TF task: clusters of "
                                            "machines); tapeflow writes one shard",
    "train.experimental.MaxShardSizePolicy": "checkpoint sharding policies (TF's sharded checkpoint writer); "
                                             "tapeflow writes one shard",
    # wave 22 (api22): tf.saved_model.experimental's names of TF's SavedModel protos and resource handles
    "saved_model.experimental.Fingerprint": "SavedModel fingerprints (TF hashes the protos of its saved_model.pb "
                                            "into fingerprint.pb; tapeflow's SavedModel is JSON + safetensors)",
    "saved_model.experimental.read_fingerprint": "SavedModel fingerprints (TF hashes the protos of its "
                                                 "saved_model.pb into fingerprint.pb; tapeflow's SavedModel is "
                                                 "JSON + safetensors)",
    "saved_model.experimental.TrackableResource": "TF's resource handles (TrackableResource is the base class of "
                                                  "objects owning one); tapeflow's tables and variables are Python "
                                                  "objects",
    # wave 25 (api25): the names outside benchmarks/tf_api_surface.py's 30 namespaces
    "config.experimental.ClusterDeviceFilters": "clusters of machines (TF servers' device filters); one machine's "
                                                "strategies need none",
    "test.assert_equal_graph_def": "TF's GraphDef protos (tapeflow's traced graphs are IR: compare "
                                   "f.get_concrete_function(...).graph's printed form)",
    "test.benchmark_config": "TF1's session ConfigProto (it turns off TF's graph dependency optimizer for "
                             "benchmarks run in a tf.compat.v1.Session)",
    "test.create_local_cluster": "clusters of machines (TF servers in this process)",
    "test.Benchmark.run_op_benchmark": "TF1's sessions (run_op_benchmark times an op in a tf.compat.v1.Session); "
                                       "time a tapeflow.function with timeit and call report_benchmark",
    "experimental.StructuredTensor": "StructuredTensor (TF's tensors of named fields over a ragged shape); use a "
                                     "dict of tensors, or tf.experimental.ExtensionType",
    "experimental.ExtensionTypeBatchEncoder": "TF's ExtensionType batch encoders (custom encodings of a batchable "
                                              "extension type as variant tensors); BatchableExtensionType's own "
                                              "batching is here",
    "experimental.async_scope": "TF's asynchronous eager execution (ops queued on a device, errors raised later); "
                                "tapeflow's ops run synchronously, raising at once",
    "experimental.async_clear_error": "TF's asynchronous eager execution (ops queued on a device, errors raised "
                                      "later); tapeflow's ops run synchronously, raising at once",
    "experimental.dispatch_for_binary_elementwise_assert_apis": "dispatch of tf.debugging's binary assertions to "
                                                                "extension types (the elementwise dispatchers "
                                                                "dispatch_for_binary_elementwise_apis and "
                                                                "dispatch_for_unary_elementwise_apis are here)",
    "experimental.enable_strict_mode": "TF's strict mode (it turns TF's deprecation warnings into errors)",
    "experimental.function_executor_type": "TF's function executors (a runtime choice of TF's graph executor); "
                                           "tapeflow.function chooses its backend with jit_compile",
    "experimental.register_filesystem_plugin": "TF's file-system plugins (shared libraries of TF's C file-system "
                                               "API); tf.io.gfile reads local paths",
    "types.experimental.AtomicFunction": "TF's function runtime internals (an AtomicFunction is one GraphDef "
                                         "function of TF's runtime); use ConcreteFunction",
    "types.experimental.FunctionType": "TF's function signatures of trace types (FunctionType); "
                                       "tapeflow.function's get_concrete_function(...).structured_input_signature "
                                       "gives the inputs",
    "types.experimental.SupportsTracingProtocol": "TF's custom trace types (__tf_tracing_type__); tapeflow's "
                                                  "tracing keys on tensors' specs and Python values",
    # wave 24 (api24)
    "image.generate_bounding_box_proposals": "tf.image.generate_bounding_box_proposals (TF 2.21 registers only a "
                                             "CUDA kernel for it: on a CPU TF itself raises NotFoundError, so there "
                                             "are no CPU numbers to match); compose keras.utils.bounding_boxes."
                                             "decode_deltas_to_boxes, clip_to_image_size and "
                                             "tf.image.non_max_suppression",
    "keras.utils.plot_model": "model plots (pydot and Graphviz are not dependencies); Model.summary() prints the "
                              "layers",
    "keras.utils.model_to_dot": "model plots (pydot and Graphviz are not dependencies); Model.summary() prints the "
                                "layers",
}
for _dt in ("float4_e2m1fn", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
            "int2", "int4", "uint2", "uint4"):
    NAMES[f"experimental.{_dt}"] = FEATURES["dtypes.experimental"]


class UnsupportedFeatureError(NotImplementedError, AttributeError):
    """Raised on any use of an out-of-scope TF namespace. Also an AttributeError, so that
    `hasattr(tf.ragged, "constant")` and getattr-with-default probes see a missing attribute."""


class UnsupportedNamespace:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        if attr.startswith("__"):   # copy/pickle/inspect probes: plain missing attributes
            raise AttributeError(attr)
        raise UnsupportedFeatureError(
            f"tf.{self._name}.{attr}: tapeflow does not implement {FEATURES[self._name]}; "
            f"it is out of scope (see docs/differences.md, 'Differences from TensorFlow')")

    def __repr__(self):
        return f"<unsupported namespace tf.{self._name}: {FEATURES[self._name]}>"


def module_getattr(prefix: str, module: str):
    """A module's ``__getattr__`` (PEP 562) for a TF namespace that exists in part
    (``tf.train``, ``tf.dtypes``): its out-of-scope names (``NAMES["train.Saver"]``) say so,
    any other missing name is a plain AttributeError."""
    def __getattr__(name):
        if f"{prefix}.{name}" in NAMES:
            raise unsupported_name(f"{prefix}.{name}")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__


def unsupported_name(name: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        f"tf.{name}: tapeflow does not implement {NAMES[name]}; it is out of scope "
        f"(see docs/differences.md, 'Differences from TensorFlow')")


# --- names that exist and refuse when used (wave 25) ---------------------------------------------------
# A module ``__getattr__`` that raises loses its message under ``from keras.layers import JaxLayer``
# (Python turns the AttributeError into a bare "cannot import name" ImportError), and the name is
# missing from dir(). So TF's names whose feature tapeflow does not have exist as a class or function
# that raises UnsupportedFeatureError (its NAMES entry) when instantiated or called: a program that
# imports it, subclasses it or tests it with isinstance runs; the first use says what and why.

def _refusal_doc(path):
    return f"tf.{path}: not implemented in tapeflow ({NAMES[path]}); using it raises UnsupportedFeatureError."


def unsupported_class(path: str, what: str | None = None, base: type = object) -> type:
    """A class named as TF's ``tf.<path>`` whose instantiation (a subclass's too) raises."""
    if what is not None:
        NAMES.setdefault(path, what)

    def __new__(cls, *args, **kwargs):
        raise unsupported_name(path)
    module, name = path.rsplit(".", 1)
    return type(name, (base,), {"__new__": __new__, "__doc__": _refusal_doc(path),
                                "__module__": f"tapeflow.{module}"})


def unsupported_function(path: str, what: str | None = None):
    """A function named as TF's ``tf.<path>`` whose every call raises."""
    if what is not None:
        NAMES.setdefault(path, what)

    def refused(*args, **kwargs):
        raise unsupported_name(path)
    module, name = path.rsplit(".", 1)
    refused.__name__ = refused.__qualname__ = name
    refused.__module__ = f"tapeflow.{module}"
    refused.__doc__ = _refusal_doc(path)
    return refused
