"""Serves one framework's implementations of one workload, in its own process.

Started by run.py (through rounds.py) with the interpreter of the right venv
(tapeflow's .venv for NumPy and tapeflow, .venv-peers for PyTorch/JAX/
TensorFlow), with the thread variables already in its environment; run.py
sends it requests on stdin (build a case, time one block, end the case) and
reads the replies on a pipe of their own (``--reply-fd``), so nothing a
framework prints can be mistaken for one. See ``Server``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

# glibc malloc: free one 1 MiB block first, so that every worker starts from
# the same allocator state. glibc raises its mmap threshold to the size of the
# largest mmapped block freed so far, and that history alone moved the NumPy
# DQN step between ~560 µs (no page faults) and ~1,100 µs (~200 page faults a
# step: 128 KiB-ish temporaries mmapped and unmapped at every step, or the heap
# trimmed and regrown): freeing nothing, or freeing a 32 MiB block, gave the
# slow state; 256 KiB to 4 MiB the fast one. Frameworks that free larger
# blocks later (their imports, their data) move on from there as they would in
# any program.
_warm = bytearray(1 << 20)
del _warm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def setup_framework(framework: str, threads: int) -> dict:
    """Import the framework, set its thread counts; return versions/settings."""
    info: dict = {"python": platform.python_version(), "executable": sys.executable}
    import numpy as np

    info["numpy"] = np.__version__
    if framework == "torch":
        import torch

        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(threads)
        except RuntimeError:
            pass
        info["torch"] = torch.__version__
        info["threads"] = {"torch.get_num_threads": torch.get_num_threads(),
                           "torch.get_num_interop_threads": torch.get_num_interop_threads()}
    elif framework == "tensorflow":
        import tensorflow as tf

        tf.get_logger().setLevel("ERROR")
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        info["tensorflow"] = tf.__version__
        try:
            import keras

            info["keras"] = keras.__version__
        except Exception:
            pass
        info["threads"] = {"intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
                           "inter_op": tf.config.threading.get_inter_op_parallelism_threads()}
    elif framework == "jax":
        import jax

        jax.config.update("jax_platforms", "cpu")
        info["jax"] = jax.__version__
        try:
            import jaxlib

            info["jaxlib"] = jaxlib.__version__
        except Exception:
            pass
        try:
            import optax

            info["optax"] = optax.__version__
        except Exception:
            pass
        info["threads"] = {"XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}
    elif framework == "tapeflow":
        try:
            import numba

            info["numba"] = numba.__version__
        except Exception:
            pass
        import tapeflow  # may fail while the core is being written

        info["tapeflow"] = getattr(tapeflow, "__version__", "unknown")
        cfg = getattr(getattr(tapeflow, "config", None), "threading", None)
        for fn in ("set_intra_op_parallelism_threads", "set_inter_op_parallelism_threads"):
            if cfg is not None and hasattr(cfg, fn):
                try:
                    getattr(cfg, fn)(threads)
                except Exception:
                    pass
        info["threads"] = {"NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS", "")}
    elif framework == "numpy":
        info["threads"] = {"OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "")}
    return info


def reference_variants(wl, case):
    """None (the default reference) plus every variant an implementation asks for."""
    out = [None]
    for i in wl.IMPLS:
        v = getattr(i, "reference_variant", None)
        if v and v not in out and (i.cases is None or case["name"] in i.cases):
            out.append(v)
    return out


def compute_reference(wl, case, data, variant):
    return wl.reference(case, data) if variant is None else wl.reference(case, data, variant=variant)


def write_references(args):
    """Float64 references of every case, in this process (NumPy only), to an npz."""
    import numpy as np

    from benchmarks.common import SEED
    from benchmarks.workloads import get_workload

    wl = get_workload(args.workload)
    arrays = {}
    if hasattr(wl, "reference"):
        for case in wl.cases(args.mode):
            data = wl.make_data(case, SEED)
            for v in reference_variants(wl, case):
                for k, a in compute_reference(wl, case, data, v).items():
                    arrays[f"{case['name']}|{v or ''}|{k}"] = np.asarray(a)
    tmp = args.reference_out + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, args.reference_out)
    return 0


def load_references(path):
    import numpy as np

    refs = {}
    with np.load(path) as z:
        for key in z.files:
            case, variant, k = key.split("|", 2)
            refs.setdefault((case, variant or None), {})[k] = z[key]
    return refs


class Server:
    """One worker's implementations of a workload, served one request at a time.

    Requests (JSON lines on stdin) and replies (JSON lines on the reply pipe):
    ``{"cmd": "case", "case": NAME}`` builds, checks and warms up this worker's
    implementations of the case and replies ``{"rows": [...]}`` (one row each:
    status, check, build and first-call times, seconds per call; a runner's row
    comes complete); ``{"cmd": "time", "impl": NAME, "calls": N}`` times one block
    (``{"s": .., "cpu_s": ..}`` per unit); ``{"cmd": "end", "extras": bool}`` ends
    the case (``{"metrics": {impl: {...}}, "extras": {...}}``); ``{"cmd": "probe"}``
    times the host probe. Between requests the worker blocks on its stdin."""

    def __init__(self, args, log):
        from benchmarks.common import cpu_affinity, short_error
        from benchmarks.workloads import get_workload

        self.args, self.log = args, log
        self.cpus = cpu_affinity(args.threads)
        self.wl = get_workload(args.workload) if args.workload else None
        self.impls = []
        if self.wl is not None:
            self.impls = [i for i in self.wl.IMPLS if i.framework == args.framework and args.mode in i.modes]
            if args.impls:
                wanted = set(args.impls.split(","))
                self.impls = [i for i in self.impls if i.name in wanted]
        try:
            self.env = setup_framework(args.framework, args.threads)
            self.setup_error = None
        except Exception as exc:
            self.setup_error = exc
            self.env = {"python": platform.python_version()}
            log(f"  [{args.framework}] import failed: {short_error(exc)}")
        self.refs = load_references(args.reference) if args.reference and os.path.exists(args.reference) else {}
        self.case, self.data, self.benches = None, None, {}

    def hello(self):
        from benchmarks.common import short_error

        return {"env": self.env, "cpus": self.cpus, "pid": os.getpid(),
                "setup_error": short_error(self.setup_error) if self.setup_error else None}

    def _reference(self, impl):
        from benchmarks.common import short_error

        v = getattr(impl, "reference_variant", None)
        key = (self.case["name"], v)
        if key not in self.refs and hasattr(self.wl, "reference"):
            try:  # no reference file (standalone use): compute it here
                self.refs[key] = compute_reference(self.wl, self.case, self.data, v)
            except Exception as exc:
                self.log(f"    reference failed: {short_error(exc)}")
                self.refs[key] = None
        return self.refs.get(key)

    def build(self, impl):
        from benchmarks.common import TIMING, compare, format_tb, short_error, warm_up

        case = self.case
        res = {"impl": impl.name, "framework": impl.framework, "label": impl.label, "case": case["name"]}
        if self.setup_error is not None:
            return dict(res, status="unavailable", error=short_error(self.setup_error),
                        traceback=format_tb(self.setup_error))
        t0 = time.perf_counter()
        try:
            if impl.runner is not None:  # its own protocol: one complete run, no rounds
                res.update(impl.runner(case, self.data, self.args.mode))
                res.setdefault("status", "ok")
                return res
            bench = impl.build(case, self.data)
            res["build_s"] = time.perf_counter() - t0
            if bench.note:
                res["note"] = bench.note
            ref = bench.reference if bench.reference is not None else self._reference(impl)
            if bench.check is not None and ref is not None:
                chk = compare(bench.check(), ref, case.get("tol", getattr(self.wl, "TOL", 1e-4)))
                res["check"] = chk
                self.log(f"    check {impl.label}: max abs diff {chk['max_abs']:.3g}, max rel diff "
                         f"{chk['max_rel']:.3g} -> {'ok' if chk['ok'] else 'MISMATCH'}")
            res.update(warm_up(bench, TIMING[self.args.mode]))
            res["units_per_call"] = float(bench.units)
            if bench.calls is not None:
                res["calls"] = bench.calls
            res["metrics"] = dict(bench.metrics)
            res["status"] = "ok"
            self.benches[impl.name] = bench
        except Exception as exc:  # any failure: report it, the run goes on
            res.update(status="unavailable", error=short_error(exc), traceback=format_tb(exc))
            self.log(f"    {impl.label}: unavailable: {res['error']}")
        return res

    def do_case(self, req):
        from benchmarks.common import SEED, fingerprint

        self.case = next(c for c in self.wl.cases(self.args.mode) if c["name"] == req["case"])
        self.data = self.wl.make_data(self.case, SEED)
        self.benches = {}
        fp = fingerprint(self.data)
        rows = []
        for impl in self.impls:
            if impl.cases is None or self.case["name"] in impl.cases:
                self.log(f"  [{self.args.framework}] {self.args.workload}/{self.case['name']}: {impl.label}")
                rows.append(dict(self.build(impl), data_fingerprint=fp))
        return {"rows": rows}

    def do_time(self, req):
        from benchmarks.common import time_block

        return time_block(self.benches[req["impl"]], int(req["calls"]))

    def do_end(self, req):
        from benchmarks.common import short_error

        out = {"metrics": {}, "extras": None}
        for name, bench in self.benches.items():
            if bench.finish is not None:
                try:
                    out["metrics"][name] = dict(bench.finish())
                except Exception as exc:
                    self.log(f"    finish of {name} failed: {short_error(exc)}")
        if req.get("extras") and self.setup_error is None and hasattr(self.wl, "framework_extras"):
            try:
                out["extras"] = self.wl.framework_extras(self.args.framework, self.case, self.args.mode)
            except Exception as exc:
                self.log(f"    extras failed: {short_error(exc)}")
        self.case, self.data, self.benches = None, None, {}
        return out

    def do_probe(self, req):
        from benchmarks.common import sgemm_pair_probe

        return {"s": sgemm_pair_probe()}


def serve(args):
    """Answer requests until stdin closes or says quit (see ``Server``)."""
    from benchmarks.common import format_tb, short_error

    reply_pipe = os.fdopen(args.reply_fd, "w", buffering=1)

    def log(msg):
        print(msg, flush=True)

    def reply(obj):
        reply_pipe.write(json.dumps(obj, default=float) + "\n")

    server = Server(args, log)
    reply(server.hello())
    # blocked in readline between requests: an idle worker takes no CPU (its framework's
    # own threads aside, which rounds.py measures)
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "quit":
            break
        try:
            out = getattr(server, "do_" + req["cmd"])(req)
        except Exception as exc:
            out = {"error": short_error(exc), "traceback": format_tb(exc)}
        reply(out)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default=None, help="none: a host-probe worker")
    ap.add_argument("--framework", default="numpy")
    ap.add_argument("--mode", default="quick", choices=["tiny", "quick", "full"])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--impls", default="")
    ap.add_argument("--reply-fd", type=int, default=None, help="file descriptor for the replies (run.py's pipe)")
    ap.add_argument("--reference", default=None, help="npz of references written by --reference-out")
    ap.add_argument("--reference-out", default=None,
                    help="only compute the workload's float64 references (NumPy) and save them here")
    args = ap.parse_args(argv)
    if args.reference_out:
        return write_references(args)
    if args.reply_fd is None:
        ap.error("--reply-fd is required (workers are started by benchmarks/run.py)")
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
