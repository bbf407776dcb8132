"""Graph-to-graph passes, in pipeline order (see compiler/pipeline.py):

1. simplify           algebraic identities (x*1, x+0, reshape to the same shape, ...)
2. constant_folding   pure equations on constants only are evaluated once
3. cse                common-subexpression elimination (reads merged between writes)
4. dce                dead-code elimination (effects are always live)
5. push_slices        a slice of a GEMM's product becomes a GEMM of sliced operands
6. reads_into_branches  a cond operand that reads a variable the cond writes: read in each branch
7. buffers            buffer planning by liveness (an annotation, not a rewrite)
"""
