"""The numba compiler pipeline of the native tier's kernels: numba's own ``Compiler``
with its ``noalias`` flag set (imported by the generated kernel modules only, so that
importing the numba backend does not import numba).

Why: a kernel writes its array results into arrays the caller passes (planned buffers,
a variable's own array). Without ``noalias`` LLVM must assume any result may overlap
any operand, so it tests every store against every load at run time, and past a few
results it leaves the loop scalar (Adam over 65,536 float32, 4 results passed in: 80 us
against 43 with the results allocated in the kernel). ``Flags.noalias`` marks every
pointer argument of the compiled function ``noalias`` (``callconv.decorate_function``),
but ``njit`` has no option for it; ``pipeline_class`` is njit's documented hook for a
compiler of one's own, and this one only sets the flag before numba's pipeline runs.

The promise it makes must be true: no array is passed as two arguments of a kernel
when either is written. The callers keep it: every result argument is a planned slot
(the planner never gives a result a slot one of its equation's operands lives in), an
array made for the call, or a variable's own array that the kernel reads and writes
through that one argument (the wrapper passes the variable's array nowhere else).

Relies on numba 0.68's ``Compiler.__init__(typingctx, targetctx, library, args,
return_type, flags, locals)`` and ``Flags.noalias`` (numba is pinned in
requirements.txt). The kernels' on-disk cache is keyed by their source file, whose
decorator names this class, so a noalias kernel never loads a plain one's machine code.
"""
from __future__ import annotations

from numba.core.compiler import Compiler


class NoAliasCompiler(Compiler):
    def __init__(self, typingctx, targetctx, library, args, return_type, flags, locals):
        flags.noalias = True
        super().__init__(typingctx, targetctx, library, args, return_type, flags, locals)
