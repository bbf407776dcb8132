"""Runs one framework's implementations of one workload, in its own process.

Started by run.py with the interpreter of the right venv (tapeflow's .venv for
NumPy and tapeflow, .venv-peers for PyTorch/JAX/TensorFlow), with the thread
variables already in its environment. Writes a JSON file of results.

    python benchmarks/worker.py --workload dispatch --framework torch \
        --mode quick --threads 2 --out /tmp/r.json [--impls a,b]
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


def run_one(impl, case, data, ref, tol, mode, log):
    from benchmarks.common import compare, format_tb, measure, short_error

    res = {"impl": impl.name, "framework": impl.framework, "label": impl.label, "case": case["name"]}
    t0 = time.perf_counter()
    try:
        if impl.runner is not None:
            res.update(impl.runner(case, data, mode))
            res.setdefault("status", "ok")
            return res
        bench = impl.build(case, data)
        res["build_s"] = time.perf_counter() - t0
        if bench.note:
            res["note"] = bench.note
        if bench.reference is not None:
            ref = bench.reference
        if bench.check is not None and ref is not None:
            out = bench.check()
            chk = compare(out, ref, case.get("tol", tol))
            res["check"] = chk
            log(f"    check {impl.label}: max abs diff {chk['max_abs']:.3g}, max rel diff {chk['max_rel']:.3g}"
                f" -> {'ok' if chk['ok'] else 'MISMATCH'}")
        res["timing"] = measure(bench, mode)
        res["metrics"] = dict(bench.metrics)
        if bench.finish is not None:
            res["metrics"].update(bench.finish())
        res["status"] = "ok"
    except Exception as exc:  # any failure: report it, the run goes on
        res["status"] = "unavailable"
        res["error"] = short_error(exc)
        res["traceback"] = format_tb(exc)
        log(f"    {impl.label}: unavailable: {res['error']}")
    return res


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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", required=True)
    ap.add_argument("--framework", required=True)
    ap.add_argument("--mode", default="quick", choices=["tiny", "quick", "full"])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--impls", default="")
    ap.add_argument("--cases", default="")
    ap.add_argument("--out", default=None)
    ap.add_argument("--reference", default=None, help="npz of references written by --reference-out")
    ap.add_argument("--reference-out", default=None,
                    help="only compute the workload's float64 references (NumPy) and save them here")
    args = ap.parse_args(argv)
    if args.reference_out:
        return write_references(args)
    if not args.out:
        ap.error("--out is required")

    from benchmarks.common import SEED, cpu_affinity, fingerprint, format_tb, short_error
    from benchmarks.workloads import get_workload

    def log(msg):
        print(msg, flush=True)

    cpus = cpu_affinity(args.threads)
    result = {"workload": args.workload, "framework": args.framework, "mode": args.mode,
              "threads": args.threads, "cpus": cpus, "results": []}
    wl = get_workload(args.workload)
    impls = [i for i in wl.IMPLS if i.framework == args.framework and args.mode in i.modes]
    if args.impls:
        wanted = set(args.impls.split(","))
        impls = [i for i in impls if i.name in wanted]
    try:
        result["env"] = setup_framework(args.framework, args.threads)
        setup_error = None
    except Exception as exc:
        setup_error = exc
        result["env"] = {"python": platform.python_version()}
        log(f"  [{args.framework}] import failed: {short_error(exc)}")
    def save():  # after every row, so that a crash later keeps what was measured
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1, default=float)
        os.replace(tmp, args.out)

    loaded = load_references(args.reference) if args.reference and os.path.exists(args.reference) else {}
    wanted_cases = set(args.cases.split(",")) if args.cases else None
    for case in wl.cases(args.mode):
        if wanted_cases and case["name"] not in wanted_cases:
            continue
        case_impls = [i for i in impls if i.cases is None or case["name"] in i.cases]
        if not case_impls:
            continue
        log(f"  [{args.framework}] {args.workload}/{case['name']}")
        data = wl.make_data(case, SEED)
        fp = fingerprint(data)

        def ref_for(impl):
            v = getattr(impl, "reference_variant", None)
            if (case["name"], v) in loaded:
                return loaded[(case["name"], v)]
            if setup_error is not None or not hasattr(wl, "reference"):
                return None
            try:  # no reference file (standalone use): compute it here
                loaded[(case["name"], v)] = compute_reference(wl, case, data, v)
                return loaded[(case["name"], v)]
            except Exception as exc:
                log(f"    reference failed: {short_error(exc)}")
                return None
        for impl in case_impls:
            if setup_error is not None:
                result["results"].append({
                    "impl": impl.name, "framework": impl.framework, "label": impl.label, "case": case["name"],
                    "status": "unavailable", "error": short_error(setup_error),
                    "traceback": format_tb(setup_error), "data_fingerprint": fp})
                continue
            r = run_one(impl, case, data, ref_for(impl), getattr(wl, "TOL", 1e-4), args.mode, log)
            r["data_fingerprint"] = fp
            if r.get("status") == "ok" and "timing" in r:
                t = r["timing"]
                blocks = f"; {t['blocks']}x{t['calls_per_block']} calls" if "blocks" in t else ""
                log(f"    {impl.label}: median {t['median'] * 1e6:.3f} µs/{case.get('unit', 'call')} "
                    f"(min {t['min'] * 1e6:.3f}, max {t['max'] * 1e6:.3f}{blocks})")
            result["results"].append(r)
            save()
        # extra per-case measurements of the framework (e.g. matmul peak)
        if setup_error is None and hasattr(wl, "framework_extras"):
            try:
                result.setdefault("extras", {})[case["name"]] = wl.framework_extras(args.framework, case, args.mode)
            except Exception as exc:
                log(f"    extras failed: {short_error(exc)}")
    result["complete"] = True
    save()


if __name__ == "__main__":
    sys.exit(main())
