"""tf.print: prints when the op runs (every call of a compiled function), not when
it is traced; the text is TF's (core/primitives/print_op.py)."""
from __future__ import annotations

import os
import sys

from ..core.primitive import bind
from ..core.primitives.print_op import print_p
from ..core.tensor import Tensor, Variable
from ..util import nest


class _Slot:
    """Stands for a tensor inside a printed Python structure: str() of the structure
    leaves a marker where the tensor's text goes."""
    MARK = "\x00tensor\x00"

    def __repr__(self):
        return self.MARK


def _stream_name(output_stream):
    if output_stream is None or output_stream is sys.stderr or output_stream is sys.__stderr__:
        return "stderr"
    if output_stream is sys.stdout or output_stream is sys.__stdout__:
        return "stdout"
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    raise ValueError(
        f"tf.print: unsupported output_stream {output_stream!r}. Supported streams are sys.stdout, "
        "sys.stderr and files given as 'file://<filepath>' (TF's message; tapeflow has no tf.logging levels)")


def tf_print(*inputs, output_stream=None, summarize=3, sep=" ", end=os.linesep, name=None):
    """Print ``inputs`` separated by ``sep`` on every run of the op, as TF 2.21: tensors as
    ``[1 2 3]`` with ``summarize`` entries at each end of every dimension (None: 3, -1: all),
    Python values and structures as str() shows them, to ``output_stream``: sys.stderr
    (the default, TF's: None stands for it, as sys.stderr is looked up when printing),
    sys.stdout or 'file://<path>'."""
    stream = _stream_name(output_stream)
    template, values = [], []
    for k, x in enumerate(inputs):
        if k:
            template.append(str(sep))
        if isinstance(x, Tensor):
            template.append(None)
            values.append(x.read_value() if isinstance(x, Variable) else x)
            continue
        flat = nest.flatten(x)
        tensors = [t for t in flat if isinstance(t, Tensor)]
        if not tensors or flat == [x]:
            template.append(str(x))
            continue
        # a structure holding tensors: its str() with each tensor's text in place
        text = str(nest.map_structure(lambda t: _Slot() if isinstance(t, Tensor) else t, x))
        pieces = text.split(_Slot.MARK)
        for i, piece in enumerate(pieces):
            if i:
                template.append(None)
            template.append(piece)
        values += [t.read_value() if isinstance(t, Variable) else t for t in tensors]
    bind(print_p, *values, template=tuple(t for t in template if t != ""), output_stream=stream,
         summarize=3 if summarize is None else int(summarize), end=str(end))
