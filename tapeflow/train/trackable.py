"""Which variables a checkpoint holds, and under which keys.

``collect(roots)`` walks the objects given to a ``Checkpoint`` (models,
layers, optimizers, plain Variables, user objects holding any of these,
lists/tuples/dicts of them) and returns ``{key: Variable}`` with TF-like keys:

* attribute paths joined by ``/``: ``policy/actor/l1/kernel``,
  ``agent/critics/0/bias`` (list index), ``nets/q/kernel`` (dict key);
* optimizer slots keyed by the variable they belong to, as TF does:
  ``q/layer_0/kernel/.OPTIMIZER_SLOT/optimizer/m`` -- so a checkpoint does not
  depend on the order in which an optimizer happened to create its slots;
* the optimizer's other variables (``iterations``, a learning-rate Variable)
  under the optimizer's path: ``optimizer/iterations``.

A variable reachable by several paths is stored once, under the first path
met; roots are walked in the order given, and optimizers after everything
else, so a model's weights are keyed by the model even when the optimizer
also holds references to them.

The walk is ``tapeflow.module``'s one walker (same children, same
bookkeeping policy, same order as ``Module.variables``), with plain objects
walked through ``__dict__`` and optimizers set aside until the end.
"""
from __future__ import annotations

from ..core.tensor import Variable
from ..module import _Walk

__all__ = ["collect", "is_optimizer", "slot_triples"]

def is_optimizer(obj):
    """Duck-typed: an object with ``apply_gradients`` and slot accessors."""
    t = type(obj)
    return callable(getattr(t, "apply_gradients", None)) and (
        callable(getattr(t, "get_slot", None)) or callable(getattr(t, "_checkpoint_slots", None)))


def slot_triples(opt, primaries):
    """``[(primary_variable, slot_name, slot_variable)]`` for an optimizer.

    Uses ``opt._checkpoint_slots()`` or ``opt.slots()`` when the optimizer
    provides it (an iterable of such triples), else TF's ``get_slot_names()`` /
    ``get_slot(var, name)`` over the candidate ``primaries``.
    """
    own = getattr(type(opt), "_checkpoint_slots", None)
    if callable(own):
        return [(p, str(n), s) for p, n, s in opt._checkpoint_slots()
                if isinstance(p, Variable) and isinstance(s, Variable)]
    slots = getattr(type(opt), "slots", None)
    if callable(slots):  # tapeflow.optimizers.Optimizer.slots(): (variable, slot_name, slot_variable)
        return [(p, str(n), s) for p, n, s in opt.slots()
                if isinstance(p, Variable) and isinstance(s, Variable)]
    get_names = getattr(opt, "get_slot_names", None)
    get_slot = getattr(opt, "get_slot", None)
    if not callable(get_slot):
        return []
    try:
        names = list(get_names()) if callable(get_names) else []
    except Exception:
        names = []
    out = []
    if not names:
        return out
    for p in primaries:
        for n in names:
            try:
                s = get_slot(p, n)
            except Exception:
                continue
            if isinstance(s, Variable) and s is not p:
                out.append((p, str(n), s))
    return out


def collect(roots, tables=None):
    """``{key: Variable}`` for an ordered mapping ``{root_name: object}``.

    With a list ``tables``, the objects met that save tensors of their own (a
    ``tf.lookup.experimental.MutableHashTable``: ``_checkpoint_tensors()``) are appended to it
    as ``(path, object)``.

    A root named ``""`` contributes its children at the top level (the
    ``Checkpoint(model)`` / ``save_weights`` form). Raises ValueError when
    two different variables would get the same key.
    """
    out = []           # (path, var) in walk order
    optimizers = []    # (path, optimizer), walked last
    walk = _Walk(plain=True, descend=lambda obj: not is_optimizer(obj))

    def take(items):
        for path, v, _ in items:
            if isinstance(v, Variable):
                out.append((path, v))
            elif tables is not None and callable(getattr(type(v), "_checkpoint_tensors", None)):
                tables.append((path, v))
            elif is_optimizer(v):
                optimizers.append((path, v))

    # the objects given by name keep that name even when another root also holds them
    # (a compiled Keras model's .optimizer, a step counter kept on the agent)
    walk_roots = []
    for name, obj in roots.items():
        if id(obj) in walk.seen:
            continue
        walk.seen[id(obj)] = obj
        if isinstance(obj, Variable):
            out.append((name or obj._name, obj))
        elif tables is not None and callable(getattr(type(obj), "_checkpoint_tensors", None)):
            tables.append((name, obj))
        elif is_optimizer(obj):
            optimizers.append((name, obj))
        else:
            walk_roots.append((name, obj))
    for name, obj in walk_roots:
        take(walk(obj, name))
    # optimizers: slots keyed by their variable, then the optimizer's own variables
    i = 0
    while i < len(optimizers):  # (an optimizer may hold another one: appended while walking)
        opt_path, opt = optimizers[i]
        i += 1
        primary_path = {id(v): p for p, v in out}
        primaries = [v for _, v in out]
        for p, slot_name, s in slot_triples(opt, primaries):
            if id(s) in walk.seen:
                continue
            pp = primary_path.get(id(p))
            if pp is None:
                continue  # slot of a variable not in this checkpoint: saved under the optimizer below
            walk.seen[id(s)] = s
            out.append((f"{pp}/.OPTIMIZER_SLOT/{opt_path}/{slot_name}" if opt_path else
                        f"{pp}/.OPTIMIZER_SLOT/{slot_name}", s))
        take(walk(opt, opt_path))
    result = {}
    for path, v in out:
        other = result.get(path)
        if other is not None and other is not v:
            raise ValueError(f"checkpoint: two different variables would be saved under the key {path!r} "
                             f"({other._name} and {v._name}); rename one of the attributes")
        result[path] = v
    return result
