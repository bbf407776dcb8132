"""``tapeflow.errors``: TensorFlow's exception classes (``tf.errors``).

The classes, their hierarchy, their error codes and their constructor
``(node_def, op, message)`` with ``.node_def``, ``.op``, ``.message`` and
``.error_code`` are TF 2.21's.

Two decisions where TF and existing Python code pull apart:

* **Builtin bases.** tapeflow raised ``ValueError``/``TypeError``/``IndexError``
  before these classes existed, and user code catches them. So each class also
  derives from the builtin exception that plays its role:
  ``InvalidArgumentError`` is a ``ValueError``, ``ResourceExhaustedError`` a
  ``MemoryError``, ``UnimplementedError`` a ``NotImplementedError``,
  ``NotFoundError`` a ``LookupError``, ``OutOfRangeError`` an ``IndexError``.
  Two tapeflow-only subclasses cover what TF folds into InvalidArgument:
  ``InvalidArgumentTypeError`` (a dtype mismatch: an InvalidArgumentError *and*
  a ``TypeError``, since TF raises InvalidArgumentError eagerly but TypeError
  while tracing) and ``InvalidArgumentIndexError`` (an index out of range: an
  InvalidArgumentError *and* an ``IndexError``). ``except tf.errors.OpError``,
  ``except tf.errors.InvalidArgumentError`` and ``except ValueError`` all work.
* **One-argument construction.** ``InvalidArgumentError("msg")`` is accepted
  and means ``InvalidArgumentError(None, None, "msg")``: code that re-raises an
  exception with added context as ``type(e)(new_message)`` (the tracer, the
  compiled-function runtime) then keeps the class.

``str(e)`` is the message, as TF's.
"""
from __future__ import annotations

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
UNAUTHENTICATED = 16
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15


class OpError(Exception):
    """The base of every error an op raises (``tf.errors.OpError``)."""

    _code = UNKNOWN

    def __init__(self, node_def=None, op=None, message=None, error_code=None, *args):
        if message is None and op is None and isinstance(node_def, str):
            node_def, message = None, node_def  # the one-argument form, see the module docstring
        message = "" if message is None else str(message)
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = self._code if error_code is None else error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (type(self), (self._node_def, None, self._message, self._error_code))


def _subclass(name, code, *bases, doc):
    return type(name, (OpError,) + bases, {"_code": code, "__doc__": doc, "__module__": __name__})


CancelledError = _subclass("CancelledError", CANCELLED, doc="An operation was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, doc="An error of no other class.")
InvalidArgumentError = _subclass("InvalidArgumentError", INVALID_ARGUMENT, ValueError,
                                 doc="An op got a bad argument: shape, dtype, axis, index or value.")
DeadlineExceededError = _subclass("DeadlineExceededError", DEADLINE_EXCEEDED, doc="A deadline expired.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND, LookupError, doc="A file or entity was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS, doc="An entity already exists.")
PermissionDeniedError = _subclass("PermissionDeniedError", PERMISSION_DENIED, doc="Not permitted.")
UnauthenticatedError = _subclass("UnauthenticatedError", UNAUTHENTICATED, doc="No valid credentials.")
ResourceExhaustedError = _subclass("ResourceExhaustedError", RESOURCE_EXHAUSTED, MemoryError,
                                   doc="A result would not fit in memory (raised before allocating).")
FailedPreconditionError = _subclass("FailedPreconditionError", FAILED_PRECONDITION,
                                    doc="The system is not in a state the op needs (e.g. an uninitialized value).")
AbortedError = _subclass("AbortedError", ABORTED, doc="An operation was aborted.")
OutOfRangeError = _subclass("OutOfRangeError", OUT_OF_RANGE, IndexError,
                            doc="Iteration past the end of a sequence.")
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED, NotImplementedError,
                               doc="The op or this use of it is not implemented.")
InternalError = _subclass("InternalError", INTERNAL, doc="An invariant of tapeflow itself was broken.")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE, doc="A service is unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS, doc="Unrecoverable data loss or corruption.")


class InvalidArgumentTypeError(InvalidArgumentError, TypeError):
    """tapeflow-only: a dtype error. TF raises InvalidArgumentError eagerly and
    TypeError while tracing; this is both, in every mode."""


class InvalidArgumentIndexError(InvalidArgumentError, IndexError):
    """tapeflow-only: an index or label outside its valid range."""


class OperatorNotAllowedInGraphError(TypeError):
    """TF's error for a Python operation a graph cannot hold (a traced tensor used as a Python bool, or
    iterated over). A TypeError, not an OpError, as in TF 2.21."""


_BY_CODE = {c._code: c for c in (CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
                                  NotFoundError, AlreadyExistsError, PermissionDeniedError,
                                  UnauthenticatedError, ResourceExhaustedError, FailedPreconditionError,
                                  AbortedError, OutOfRangeError, UnimplementedError, InternalError,
                                  UnavailableError, DataLossError)}


def exception_type_from_error_code(error_code):
    """The class for a TF error code (``tf.errors.exception_type_from_error_code``)."""
    return _BY_CODE[error_code]


def error_code_from_exception_type(cls):
    return cls._code


__all__ = [n for n in dir() if not n.startswith("_") and n != "annotations"]
