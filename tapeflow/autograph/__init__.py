"""tapeflow.autograph: Python control flow on tensors inside ``tapeflow.function``.

Inside a traced function, ``if``/``while``/``for`` statements whose condition
or iterable is a symbolic tensor become ``cond``/``while_loop``, with
``break``/``continue``/``return`` inside them, as TF's AutoGraph does; on Python
values they stay Python. Only the decorated function is converted (functions
it calls run as written: decorate them with ``tapeflow.function`` too, which
inlines them, converted, into the caller's trace). ``to_code(f)`` shows the
converted source; ``tapeflow.config.run_functions_eagerly(True)`` runs the
original Python instead.
"""
import enum

from .converter import convert, to_code  # noqa: F401
from .operators import set_loop_options as _set_loop_options


def to_graph(f, recursive=True, experimental_optional_features=None):
    """The converted Python function (TF's tf.autograph.to_graph)."""
    return convert(getattr(f, "python_function", f))


def do_not_convert(func=None):
    """Mark a function to run unconverted (as TF's decorator)."""
    def mark(f):
        from .converter import _CACHE
        if getattr(f, "__code__", None) is not None:
            _CACHE[f.__code__] = False
        return f
    return mark if func is None else mark(func)


class Feature(enum.Enum):
    """TF's AutoGraph conversion options (``tf.function(experimental_autograph_options=...)``). tapeflow's
    converter has one behaviour; the values are accepted for TF programs that name them."""
    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


_VERBOSITY = [0]


def set_verbosity(level, alsologtostdout=False):
    """TF's AutoGraph log verbosity (kept; tapeflow's converter logs nothing more at higher levels)."""
    _VERBOSITY[0] = int(level)


def trace(*args):
    """TF's ``tf.autograph.trace``: prints its arguments when the code runs in Python, that is while a
    function is traced (a tensor shows as its symbolic repr), as TF's."""
    print(*args)


class experimental:  # noqa: N801
    do_not_convert = staticmethod(do_not_convert)
    set_loop_options = staticmethod(_set_loop_options)
    Feature = Feature
