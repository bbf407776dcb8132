"""Creates and probes the peers venv (.venv-peers): PyTorch, JAX, TensorFlow.

The peers are never imported into tapeflow's .venv: run.py starts their
workers with this venv's interpreter. Usable on its own:

    python benchmarks/peers_env.py            # create/update .venv-peers, print what works
    python benchmarks/peers_env.py --probe    # only probe an existing one

Install failures are reported, never fatal: the requirements are first
installed together; if that fails, each section of requirements-peers.txt
(lines under a `# == name ==` header) is installed on its own, constrained by
the whole file, so that one framework that does not install leaves the others.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv-peers")
REQS = os.path.join(ROOT, "requirements-peers.txt")
STAMP_NAME = ".bench-installed"
FAILED_NAME = ".bench-install-failed"  # hash and time of the last failed install
RETRY_AFTER_S = 6 * 3600

# module to import -> distribution names whose versions are reported
PROBES = {
    "torch": ["torch"],
    "jax": ["jax", "jaxlib", "optax"],
    "tensorflow": ["tensorflow", "keras"],
    "matplotlib": ["matplotlib"],
    "numpy": ["numpy"],
}

_PROBE_CODE = r"""
import importlib, json, sys, warnings
warnings.filterwarnings("ignore")
mods = json.loads(sys.argv[1])
out = {}
for mod, extra in mods.items():
    try:
        m = importlib.import_module(mod)
        v = {mod: getattr(m, "__version__", "?")}
        for e in extra:
            if e == mod:
                continue
            try:
                v[e] = getattr(importlib.import_module(e), "__version__", "?")
            except Exception as exc:
                v[e] = "missing"
        out[mod] = {"ok": True, "versions": v}
    except Exception as exc:
        out[mod] = {"ok": False, "error": (type(exc).__name__ + ": " + str(exc))[:300]}
print("PROBE_JSON " + json.dumps(out))
"""


def venv_python(venv: str = VENV) -> str:
    return os.path.join(venv, "bin", "python")


def _base_python() -> str:
    """A plain CPython (not a venv's) of the running version, for `-m venv`."""
    base = getattr(sys, "_base_executable", None)
    if base and os.path.exists(base):
        return base
    return shutil.which("python3") or sys.executable


def _hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def sections(path: str = REQS) -> dict[str, list[str]]:
    """requirements lines grouped by `# == name ==` headers."""
    out: dict[str, list[str]] = {}
    cur = "base"
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith("# ==") and s.endswith("=="):
                cur = s.strip("# =").strip()
                continue
            if not s or s.startswith("#"):
                continue
            out.setdefault(cur, []).append(s)
    return out


def probe(venv: str = VENV, timeout: int = 180) -> dict:
    py = venv_python(venv)
    if not os.path.exists(py):
        return {}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
    try:
        p = subprocess.run([py, "-c", _PROBE_CODE, json.dumps(PROBES)], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd="/")
    except subprocess.TimeoutExpired:
        return {m: {"ok": False, "error": "probe timed out"} for m in PROBES}
    for line in p.stdout.splitlines():
        if line.startswith("PROBE_JSON "):
            return json.loads(line[len("PROBE_JSON "):])
    err = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["probe failed"]
    return {m: {"ok": False, "error": err[0][:300]} for m in PROBES}


def _pip(py: str, args: list[str], log, timeout: int) -> tuple[bool, str]:
    cmd = [py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *args]
    log.write(f"\n$ {' '.join(cmd)}\n")
    log.flush()
    try:
        p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"pip timed out after {timeout}s"
    if p.returncode != 0:
        return False, f"pip exited {p.returncode}"
    return True, ""


def ensure(venv: str = VENV, reqs: str = REQS, log_path: str | None = None, install: bool = True,
           say=print, timeout: int = 1800, reinstall: bool = False) -> dict:
    """Make sure the peers venv exists and is installed from `reqs`.

    Returns {"python": path or None, "frameworks": probe(), "install": {...}}.
    """
    report: dict = {"venv": venv, "requirements": os.path.relpath(reqs, ROOT), "install": {}}
    py = venv_python(venv)
    stamp = os.path.join(venv, STAMP_NAME)
    failed_stamp = os.path.join(venv, FAILED_NAME)
    want = _hash(reqs) if os.path.exists(reqs) else None
    up_to_date = os.path.exists(stamp) and open(stamp).read().strip() == want
    if install and not up_to_date and not reinstall and os.path.exists(failed_stamp):
        # a failed install of these very requirements, recently: do not retry on every run
        # (an offline machine would wait for pip's timeouts each time)
        try:
            f_hash, f_time = open(failed_stamp).read().split()
            if f_hash == want and time.time() - float(f_time) < RETRY_AFTER_S:
                say(f"peers: the last install of these requirements failed {time.time() - float(f_time):.0f} s ago; "
                    f"not retrying (--reinstall forces it); using what is installed")
                report["install"]["all"] = "previous install failed; not retried"
                install = False
        except (OSError, ValueError):
            pass
    if install and not up_to_date:
        log_path = log_path or os.path.join(ROOT, "benchmarks", "results", "logs", "peers-install.log")
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        say(f"peers: installing {report['requirements']} into {os.path.relpath(venv, ROOT)} "
            f"(log: {os.path.relpath(log_path, ROOT)}) ...")
        t0 = time.time()
        with open(log_path, "a") as log:
            log.write(f"\n===== {time.ctime()} =====\n")
            if not os.path.exists(py):
                p = subprocess.run([_base_python(), "-m", "venv", venv], stdout=log, stderr=subprocess.STDOUT)
                if p.returncode != 0 or not os.path.exists(py):
                    report["install"]["venv"] = f"failed: python -m venv exited {p.returncode}"
                    os.makedirs(venv, exist_ok=True)
                    with open(failed_stamp, "w") as f:
                        f.write(f"{want} {time.time()}\n")
                    say(f"peers: could not create {venv}: see {log_path}")
                    report["python"] = None
                    report["frameworks"] = {}
                    return report
            _pip(py, ["--quiet", "--upgrade", "pip"], log, 600)
            ok, err = _pip(py, ["-r", reqs], log, timeout)
            if ok:
                report["install"]["all"] = "ok"
            else:
                report["install"]["all"] = f"failed ({err}); installing section by section"
                say(f"peers: installing everything at once failed ({err}); trying each section")
                for name, lines in sections(reqs).items():
                    ok_s, err_s = _pip(py, ["-c", reqs, *lines], log, timeout)
                    report["install"][name] = "ok" if ok_s else f"failed ({err_s})"
                    say(f"peers:   section {name}: {'ok' if ok_s else 'FAILED: ' + err_s}")
            if ok:
                with open(stamp, "w") as f:
                    f.write(want or "")
                if os.path.exists(failed_stamp):
                    os.remove(failed_stamp)
            else:
                os.makedirs(venv, exist_ok=True)
                with open(failed_stamp, "w") as f:
                    f.write(f"{want} {time.time()}\n")
        report["install_s"] = round(time.time() - t0, 1)
    elif up_to_date:
        report["install"]["all"] = "up to date"
    else:
        report["install"].setdefault(
            "all", "not installed (install disabled)" if not os.path.exists(py) else "existing venv used as is")
    report["python"] = py if os.path.exists(py) else None
    report["frameworks"] = probe(venv) if report["python"] else {}
    for mod, st in report["frameworks"].items():
        if st.get("ok"):
            vs = ", ".join(f"{k} {v}" for k, v in st["versions"].items())
            say(f"peers: {mod:10s} ok ({vs})")
        else:
            say(f"peers: {mod:10s} UNAVAILABLE: {st.get('error')}")
    return report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", action="store_true", help="only probe an existing venv")
    ap.add_argument("--reinstall", action="store_true", help="retry even if the last install failed recently")
    ap.add_argument("--venv", default=VENV)
    ap.add_argument("--requirements", default=REQS)
    args = ap.parse_args(argv)
    rep = ensure(args.venv, args.requirements, install=not args.probe, reinstall=args.reinstall)
    print(json.dumps(rep, indent=1))


if __name__ == "__main__":
    main()
