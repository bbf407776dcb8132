"""tapeflow.config: TF's ``tf.config`` on a CPU-only NumPy runtime.

TF2 programs written for GPUs call these at start-up (list the GPUs, turn on
memory growth, hide devices). tapeflow answers as TF does on a machine with
no GPU: the lists hold one CPU, GPU loops run zero times, and the calls that
only make sense for a GPU raise TF's errors when given the CPU.
``run_functions_eagerly(True)`` makes every ``tapeflow.function`` call its
Python function directly (for debugging with print and pdb), as in TF.
"""
from __future__ import annotations

import collections

__all__ = ["PhysicalDevice", "LogicalDevice", "list_physical_devices", "list_logical_devices",
           "get_visible_devices", "set_visible_devices", "run_functions_eagerly", "functions_run_eagerly",
           "LogicalDeviceConfiguration", "set_logical_device_configuration", "get_logical_device_configuration",
           "experimental", "threading", "optimizer"]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
from ._unsupported import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("config", "tapeflow.config")

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_visible = [_CPU]
_cpu_configs = []  # set_logical_device_configuration(CPU, [...]): one logical CPU per entry


class LogicalDeviceConfiguration(collections.namedtuple(
        "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority", "experimental_device_ordinal"])):
    """One logical (virtual) device to make of a physical one (tf.config.LogicalDeviceConfiguration)."""

    def __new__(cls, memory_limit=None, experimental_priority=None, experimental_device_ordinal=None):
        return super().__new__(cls, memory_limit, experimental_priority, experimental_device_ordinal)


def set_logical_device_configuration(device, logical_devices):
    """As TF on a CPU: split the CPU into ``len(logical_devices)`` logical CPUs: a
    tf.distribute.MirroredStrategy then has one replica per logical CPU (tapeflow/distribute);
    every op still runs on the one CPU."""
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    configs = list(logical_devices)
    if not all(isinstance(c, LogicalDeviceConfiguration) for c in configs):
        raise ValueError("set_logical_device_configuration: give a list of LogicalDeviceConfiguration")
    _cpu_configs[:] = configs


def get_logical_device_configuration(device):
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    return list(_cpu_configs) or None


def _of_type(devices, device_type):
    if device_type is None:
        return list(devices)
    return [d for d in devices if d.device_type == str(device_type).upper()]


def list_physical_devices(device_type=None):
    return _of_type([_CPU], device_type)


def list_logical_devices(device_type=None):
    cpus = [LogicalDevice(f"/device:CPU:{i}", "CPU") for i in range(max(1, len(_cpu_configs)))]
    return _of_type(cpus if _CPU in _visible else [], device_type)


def get_visible_devices(device_type=None):
    return _of_type(_visible, device_type)


def set_visible_devices(devices, device_type=None):
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for d in devices:
        if d not in list_physical_devices():
            raise ValueError(f"Unrecognized device: {d!r}")
    kept = [d for d in _visible if device_type is not None and d.device_type != str(device_type).upper()]
    new = kept + [d for d in devices if d not in kept]
    if _CPU not in new:
        raise ValueError("Cannot hide the CPU: tapeflow runs every op on it")
    _visible[:] = new


def set_memory_growth(device, enable):
    if not isinstance(device, PhysicalDevice) or device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")


def get_memory_growth(device):
    set_memory_growth(device, None)  # raises as TF does for anything but a GPU


def run_functions_eagerly(run_eagerly):
    from .compiler import function as _function
    _function.RUN_EAGERLY[0] = bool(run_eagerly)


def functions_run_eagerly():
    from .compiler import function as _function
    return _function.RUN_EAGERLY[0]


# TF 2.21 still exports the deprecated spellings (they warn "Use tf.config.functions_run_eagerly instead")
experimental_run_functions_eagerly = run_functions_eagerly
experimental_functions_run_eagerly = functions_run_eagerly

_soft_placement = [True]   # TF 2.21's default: get_soft_device_placement() is True


def set_soft_device_placement(enabled):
    """Recorded only: with one device (the CPU) every op is placed on it, soft or not."""
    _soft_placement[0] = bool(enabled)


def get_soft_device_placement():
    return _soft_placement[0]


_log_placement = [False]


def set_log_device_placement(enabled):
    """Recorded only (tf.debugging.set_log_device_placement): every op runs on the one CPU."""
    _log_placement[0] = bool(enabled)


def get_log_device_placement():
    return _log_placement[0]


# wave 25 (api25): tf.config.experimental's switches of TF's runtime. tapeflow's kernels are deterministic
# (NumPy's, run in program order, no atomics), so op determinism is a recorded flag; TensorFloat-32 is an
# Ampere GPU matmul mode (recorded: the CPU computes float32 in float32). Memory statistics are TF's for
# the CPU, which tracks none ({'current': 0, 'peak': 0}); any other device is TF's "No matching devices".
_determinism = [False]
_tf32 = [True]            # TF 2.21's default
_device_policy = ["silent"]   # what TF 2.21 reports on a machine with no GPU (its default policy resolved)
_sync = [True]
_DEVICE_POLICIES = {"explicit", "warn", "silent", "silent_for_int32"}


def _the_cpu(device):
    d = str(device).upper().replace("/DEVICE:", "").replace("/PHYSICAL_DEVICE:", "")
    d = d.split("/")[-1] if "/" in d else d
    if d not in ("CPU:0", "CPU"):
        raise ValueError(f"No matching devices found for '{device}'")


def _memory_info(device):
    _the_cpu(device)
    return {"current": 0, "peak": 0}


def _memory_usage(device):
    return _memory_info(device)["current"]


def _reset_memory_stats(device):
    _the_cpu(device)


def _device_details(device):
    """TF's details of a physical device ({} for a CPU; a GPU's name and compute capability)."""
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"device must be a tf.config.PhysicalDevice, but got: {device!r}")
    return {}


def _set_device_policy(device_policy):
    if device_policy is not None and device_policy not in _DEVICE_POLICIES:
        raise ValueError(f"Invalid argument `device_policy`: {device_policy!r}. Please refer to "
                         "https://www.tensorflow.org/api_docs/python/tf/config/experimental/set_device_policy for "
                         "valid `device_policy` arguments.")
    # None restores the default, which is "silent" on a machine without GPUs (TF 2.21 reports that)
    _device_policy[0] = "silent" if device_policy is None else device_policy


def _set_synchronous_execution(enable):
    """Recorded: tapeflow's eager ops always run synchronously (TF's async mode defers their errors)."""
    _sync[0] = True if enable is None else bool(enable)


def _mlir_bridge_switch():
    """TF's MLIR-based XLA bridge switch: recorded as nothing (tapeflow.function compiles with its own
    backends)."""


def _enable_op_determinism():
    _determinism[0] = True


def _disable_op_determinism():
    _determinism[0] = False


def is_op_determinism_enabled():
    """Whether enable_op_determinism was called (tapeflow's ops are deterministic either way)."""
    return _determinism[0]


class _Experimental:  # (tf.config.experimental namespace: an instance, so that out-of-scope names refuse)
    enable_op_determinism = staticmethod(_enable_op_determinism)
    disable_op_determinism = staticmethod(_disable_op_determinism)
    enable_tensor_float_32_execution = staticmethod(lambda enabled: _tf32.__setitem__(0, bool(enabled)))
    tensor_float_32_execution_enabled = staticmethod(lambda: _tf32[0])
    get_memory_info = staticmethod(_memory_info)
    get_memory_usage = staticmethod(_memory_usage)
    reset_memory_stats = staticmethod(_reset_memory_stats)
    get_device_details = staticmethod(_device_details)
    get_device_policy = staticmethod(lambda: _device_policy[0])
    set_device_policy = staticmethod(_set_device_policy)
    get_synchronous_execution = staticmethod(lambda: _sync[0])
    set_synchronous_execution = staticmethod(_set_synchronous_execution)
    enable_mlir_bridge = staticmethod(_mlir_bridge_switch)
    disable_mlir_bridge = staticmethod(_mlir_bridge_switch)

    def __getattr__(self, name):
        from ._unsupported import NAMES, unsupported_name
        if name.startswith("__") or f"config.experimental.{name}" not in NAMES:
            raise AttributeError(f"module 'tapeflow.config.experimental' has no attribute {name!r}")
        raise unsupported_name(f"config.experimental.{name}")
    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)
    get_visible_devices = staticmethod(get_visible_devices)
    set_visible_devices = staticmethod(set_visible_devices)
    set_memory_growth = staticmethod(set_memory_growth)
    get_memory_growth = staticmethod(get_memory_growth)
    VirtualDeviceConfiguration = LogicalDeviceConfiguration
    set_virtual_device_configuration = staticmethod(set_logical_device_configuration)
    get_virtual_device_configuration = staticmethod(get_logical_device_configuration)


experimental = _Experimental()


class threading:  # noqa: N801  (tf.config.threading namespace)
    """Thread counts: 0 means "the runtime's choice", as in TF. tapeflow's
    parallelism is the BLAS library's, which reads its own settings; these
    record the request so programs that set and read them run unchanged."""
    _intra = [0]
    _inter = [0]

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads):
        threading._intra[0] = int(num_threads)

    @staticmethod
    def get_intra_op_parallelism_threads():
        return threading._intra[0]

    @staticmethod
    def set_inter_op_parallelism_threads(num_threads):
        threading._inter[0] = int(num_threads)

    @staticmethod
    def get_inter_op_parallelism_threads():
        return threading._inter[0]


# Grappler's rewriter options as TF 2.21's eager context reports them: the toggles in
# RewriterConfig's order (get_experimental_options lists only those set), then min_graph_nodes
_TOGGLES = ("layout_optimizer", "constant_folding", "shape_optimization", "remapping", "arithmetic_optimization",
            "dependency_optimization", "loop_optimization", "function_optimization", "debug_stripper",
            "disable_model_pruning", "scoped_allocator_optimization", "pin_to_host_optimization",
            "implementation_selector", "auto_mixed_precision", "use_plugin_optimizers", "disable_meta_optimizer",
            "auto_mixed_precision_onednn_bfloat16", "auto_mixed_precision_mkl")
#: the two plain booleans of RewriterConfig: always reported (False unless set)
_BOOLS = ("disable_model_pruning", "disable_meta_optimizer")


class optimizer:  # noqa: N801  (tf.config.optimizer namespace)
    """TF's graph-optimizer (Grappler) options and XLA's auto-clustering switch. They are
    recorded and reported as TF 2.21 does (``set_experimental_options`` merges into the
    options set before; unknown keys are kept but not reported), and change nothing:
    tapeflow's own graph passes (``compiler/passes``) run on every traced function whatever
    they say, and there is no XLA (docs/differences.md)."""
    _options = {}
    _jit = [None]

    @staticmethod
    def set_experimental_options(options):
        optimizer._options.update(options)     # (TF 2.21: a dict update, its TypeErrors included)

    @staticmethod
    def get_experimental_options():
        opts = optimizer._options
        out = {}
        for k in _TOGGLES:
            if k in _BOOLS:
                out[k] = bool(opts.get(k, False))
            elif opts.get(k) is not None:
                out[k] = bool(opts[k])
        if opts.get("min_graph_nodes"):
            out["min_graph_nodes"] = int(opts["min_graph_nodes"])
        return out

    @staticmethod
    def set_jit(enabled):
        """``True`` or ``"autoclustering"`` turn XLA auto-clustering on in TF; anything else off."""
        optimizer._jit[0] = enabled in (True, "autoclustering")

    @staticmethod
    def get_jit():
        return "autoclustering" if optimizer._jit[0] else ""
