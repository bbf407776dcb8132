"""Interleaved rounds: every implementation of a case timed beside the others.

The host has slow phases lasting minutes (a 256^3 sgemm: 192 µs in one, ~226 µs
in the next), so a ratio between two implementations timed minutes apart
measures the host as much as the code. run.py therefore starts all of a
workload's workers at once (one process per implementation, ``worker.py``),
lets each build, check and warm up in turn, then runs rounds: in each round
every implementation times one block while the others wait, blocked on their
stdin, in a rotating order (AB BA BA AB ..., ABC CBA BCA ACB ...), so that no
implementation always runs first or after the same neighbour. Each round's
ratio then compares blocks timed seconds apart. A host probe (worker.py's
``probe``: two 256^3 sgemms, min of a few) opens every round.

This module is the orchestrator's side (tapeflow's venv, standard library only):
``Worker`` (a worker process and its request/reply pipes), ``rotation``,
``run_rounds`` and ``round_timing``.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time

from benchmarks.common import stats

#: a timed block's time limit: this many times what the warm-up predicts, and at least MIN_BLOCK_TIMEOUT_S
BLOCK_TIMEOUT_FACTOR, MIN_BLOCK_TIMEOUT_S = 20.0, 60.0
#: after its reply, a worker is quiet once none of its threads is runnable (state R in /proc: a
#: thread spinning at a barrier is R even while another process holds the CPU, where its CPU time
#: would stand still) at two looks QUIET_POLL_S apart; waited for at most SETTLE_MAX_S. OpenBLAS's
#: threads spin 40-100 ms after a GEMM before they sleep (the host probe's process: 40-100 ms of
#: CPU in the 0.5 s after its two GEMMs): the next block must not share the CPUs with them.
QUIET_POLL_S, SETTLE_MAX_S = 0.002, 0.5
#: a round longer than this prints a progress line
PROGRESS_S = 5.0


class WorkerDied(Exception):
    """The worker crashed, exited or was killed after a timeout; the message says which."""


def _runnable_threads(pid):
    """How many of a process's threads are runnable now, from /proc; None elsewhere."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    n = 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                n += f.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):  # a thread that just ended
            pass
    return n


def _proc_cpu_s(pid):
    """CPU seconds (user + system, all threads) of a live process, from /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _peak_rss_mib(pid):
    """A live process's peak resident memory (VmHWM) in MiB, from /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/status") as f:
            kib = next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))
        return round(kib / 1024, 1)
    except (OSError, ValueError, StopIteration):
        return None


class Worker:
    """A worker process: requests are JSON lines on its stdin, replies JSON lines on a
    pipe of their own (its stdout and stderr go to its log, stdout echoed by `echo`).

    While it waits for a request it should take no CPU: ``idle_cpu_s`` sums the CPU
    time it took between a reply and the next request (a framework whose threads spin
    after a block shows there, and would slow the neighbour timed meanwhile), except
    while ``settle`` waits for it after a block: no other block runs then, and what it
    takes there goes to ``settle_cpu_s`` (OpenBLAS's threads spin 40-100 ms after every
    block: counted as idle, they made every NumPy/tapeflow worker of a quick run warn that
    it slowed its neighbours, ~2 s of CPU in 30 s, though no neighbour ran meanwhile)."""

    def __init__(self, tag, cmd, env, cwd, log_path, echo=None):
        self.tag, self.dead, self.t0 = tag, None, time.time()
        self.idle_cpu_s = self.idle_wall_s = self.settle_s = self.settle_cpu_s = 0.0
        self._idle_from = None
        self.log_path = log_path
        self._log = open(log_path, "a", buffering=1)  # O_APPEND: the worker's stderr shares it
        r, w = os.pipe()
        try:
            self.proc = subprocess.Popen(cmd + ["--reply-fd", str(w)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._log, text=True, env=env, cwd=cwd,
                                         bufsize=1, pass_fds=(w,))
        except OSError as exc:
            os.close(r)
            self.proc, self.dead = None, f"could not start {cmd[0]}: {exc}"
            return
        finally:
            os.close(w)
        self._replies = queue.Queue()
        threading.Thread(target=self._read_replies, args=(os.fdopen(r),), daemon=True).start()
        self._pump = threading.Thread(target=self._echo, args=(echo,), daemon=True)
        self._pump.start()

    def _read_replies(self, f):
        with f:
            for line in f:
                self._replies.put(line)
        self._replies.put(None)  # end of file: the worker exited

    def _echo(self, echo):
        for line in self.proc.stdout:
            if echo is not None:
                echo(line)
            self._log.write(line)

    def _log_tail(self):
        try:
            with open(self.log_path) as f:
                lines = [ln.strip() for ln in f if ln.strip()]
            return f" ({lines[-1][:200]})" if lines else ""
        except OSError:
            return ""

    def _fail(self, why):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._pump.join(timeout=10)  # its last lines in the log, for the tail below
        self.dead = why + self._log_tail()
        raise WorkerDied(self.dead)

    def _reply(self, timeout):
        try:
            line = self._replies.get(timeout=timeout)
        except queue.Empty:
            self._fail(f"timed out after {timeout:.0f} s")
        if line is None:
            self._fail(f"worker exited with code {self.proc.wait()}")
        try:
            rep = json.loads(line)
        except ValueError:
            self._fail(f"garbled reply {line[:100]!r}")
        self._idle_from = (time.perf_counter(), _proc_cpu_s(self.proc.pid))
        return rep

    def settle(self):
        """Wait until the worker's threads are quiet after its reply (see QUIET_POLL_S);
        returns the seconds waited."""
        t0 = time.perf_counter()
        quiet_looks = 0
        while quiet_looks < 2 and time.perf_counter() - t0 < SETTLE_MAX_S:
            n = _runnable_threads(self.proc.pid)
            if n is None:
                break
            quiet_looks = quiet_looks + 1 if n == 0 else 0
            time.sleep(QUIET_POLL_S)
        waited = time.perf_counter() - t0
        self.settle_s += waited
        if self._idle_from is not None:
            # the idle time that can overlap another worker's block starts now
            cpu, now = self._idle_from[1], _proc_cpu_s(self.proc.pid)
            if cpu is not None and now is not None:
                self.settle_cpu_s += now - cpu
            self._idle_from = (time.perf_counter(), now)
        return waited

    def hello(self, timeout):
        """The worker's first reply (its framework imported: versions, CPUs, pid)."""
        if self.dead:
            raise WorkerDied(self.dead)
        return self._reply(timeout)

    def request(self, obj, timeout):
        if self.dead:
            raise WorkerDied(self.dead)
        if self._idle_from is not None:
            wall, cpu = self._idle_from
            now = _proc_cpu_s(self.proc.pid)
            self.idle_wall_s += time.perf_counter() - wall
            if cpu is not None and now is not None:
                self.idle_cpu_s += now - cpu
            self._idle_from = None
        try:
            self.proc.stdin.write(json.dumps(obj) + "\n")
            self.proc.stdin.flush()
        except OSError:  # a broken pipe: it is gone
            self._fail(f"worker exited with code {self.proc.wait()}")
        return self._reply(timeout)

    def close(self, timeout=30):
        """Ask the worker to quit (kill it if it does not); returns its summary for the JSON
        (wall time, CPU and wall seconds idle, peak memory: all of a workload's workers live
        at once, and must fit in the machine's memory together)."""
        peak = _peak_rss_mib(self.proc.pid) if self.proc is not None else None
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self._pump.join(timeout=10)
        self._log.close()
        out = {"wall_s": round(time.time() - self.t0, 2), "idle_cpu_s": round(self.idle_cpu_s, 3),
               "idle_wall_s": round(self.idle_wall_s, 2), "settle_s": round(self.settle_s, 2),
               "settle_cpu_s": round(self.settle_cpu_s, 3),
               "peak_rss_mib": peak}
        if self.dead:
            out["failed"] = self.dead
        return out


def rotation(n, r):
    """The order of n implementations in round r: a rotation of 0..n-1 by r // 2 places,
    reversed in odd rounds (n = 2: AB BA BA AB; n = 3: ABC CBA BCA ACB CAB BAC), so each
    one runs in every position and next to every other, before and after."""
    k = (r // 2) % n if n else 0
    order = list(range(k, n)) + list(range(k))
    return order[::-1] if r % 2 else order


def run_rounds(slots, rounds, probe=None, say=print):
    """Time `rounds` rounds of the `slots` ({"worker", "impl", "calls", "timeout"}); each
    slot gets "s" and "cpu_s" (one entry per round, None where it did not run) and
    "error" when its worker failed (it runs no more rounds; the others go on). Returns
    the host probe's seconds per round (None where it failed or there is no probe)."""
    for sl in slots:
        sl["s"], sl["cpu_s"] = [None] * rounds, [None] * rounds
    probes = [None] * rounds
    for r in range(rounds):
        t_round = time.perf_counter()
        if probe is not None and not probe.dead:
            try:
                probes[r] = probe.request({"cmd": "probe"}, MIN_BLOCK_TIMEOUT_S)["s"]
                probe.settle()
            except (WorkerDied, KeyError) as exc:
                say(f"  host probe failed: {exc}")
        for i in rotation(len(slots), r):
            sl = slots[i]
            if sl.get("error"):
                continue
            if sl["worker"].dead:
                sl["error"] = f"worker stopped during the rounds ({sl['worker'].dead})"
                continue
            try:
                rep = sl["worker"].request({"cmd": "time", "impl": sl["impl"], "calls": sl["calls"]}, sl["timeout"])
            except WorkerDied as exc:
                sl["error"] = f"worker stopped during the rounds ({exc})"
                say(f"  [{sl['worker'].tag}] {sl['impl']}: {sl['error']}")
                continue
            if "error" in rep:
                sl["error"], sl["traceback"] = rep["error"], rep.get("traceback")
                say(f"  [{sl['worker'].tag}] {sl['impl']}: failed in round {r + 1}: {rep['error']}")
                continue
            sl["s"][r], sl["cpu_s"][r] = rep["s"], rep["cpu_s"]
            sl["worker"].settle()
        if time.perf_counter() - t_round > PROGRESS_S:  # long rounds (chunks of a run): say where it is
            done = ", ".join(f"{sl['impl']} {sl['s'][r] * 1e3:.3g} ms" for sl in slots if sl["s"][r] is not None)
            probe_txt = f"; host probe {probes[r] * 1e6:.0f} µs" if probes[r] is not None else ""
            say(f"    round {r + 1}/{rounds}: {done} per unit{probe_txt}")
    return probes


def round_timing(slot, series, first_call_s=None, units=1.0):
    """A row's "timing" from its slot's rounds: the statistics over the rounds it ran,
    the per-round figures themselves ("rounds", None where missing, and "series":
    rows timed in the same rounds share it, and only they are compared round by round)
    and "total_s", the seconds all its timed blocks took."""
    done = [s for s in slot["s"] if s is not None]
    out = stats(done)
    cpu = [c for c in slot["cpu_s"] if c is not None]
    out.update({"rounds": slot["s"], "cpu_rounds": slot["cpu_s"], "series": series, "blocks": len(done),
                "calls_per_block": slot["calls"], "units_per_call": units, "first_call_s": first_call_s,
                "total_s": sum(done) * slot["calls"] * units,
                "cpu_median": stats(cpu)["median"] if cpu else None})
    return out
