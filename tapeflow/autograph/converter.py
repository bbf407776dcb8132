"""The AutoGraph converter: a function's source in, a function whose
``if``/``while``/``for`` statements call ``ag__.if_stmt``/``while_stmt``/
``for_stmt`` out (see operators.py for what those do at run time).

Three rewrites of the function's AST, in order:

1. ``return`` inside a block becomes ``do_return__ = True; retval__ = value``;
   what follows a statement that may return runs under ``if not do_return__``
   (or moves into the ``else`` of an ``if`` whose body always returns, so both
   paths of a tensor ``if`` define the return value).
2. ``break``/``continue`` become flags in the same way; the loop also tests
   the break flag.
3. Every ``if``/``while``/``for`` (innermost first) becomes local functions
   over the names the block assigns, and one call: ``(a, b) = ag__.if_stmt(
   test, body_fn, else_fn, (a, b), ('a', 'b'))``.

Names a block assigns start as ``ag__.Undefined`` at the top of the function,
so a block can always pass its state in; using one before assignment still
raises UnboundLocalError, as in Python.
"""
from __future__ import annotations

import ast
import copy
import functools
import inspect
import linecache
import textwrap
import types

from . import operators

RET_FLAG, RET_VAL = "do_return__", "retval__"


class ConversionError(Exception):
    """The function cannot be converted; it runs as written."""


# -- analysis ------------------------------------------------------------------------------------

class _Assigned(ast.NodeVisitor):
    """Names a list of statements binds, not looking into nested scopes. The
    converter's own names (``ag__``) are left out, except exit flags where a
    ``break``/``continue`` sets them, or a converted ``if`` around one returns
    them (``_ag_state``): the flag is state of the blocks around the exit, up
    to its loop (an ``if`` on a tensor must return it, or the loop never stops)."""

    def __init__(self):
        self.names = []

    def _add(self, n):
        if n not in self.names and not n.startswith("ag__"):
            self.names.append(n)

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._add(node.id)

    def visit_Assign(self, node):
        self.generic_visit(node)
        for n in getattr(node, "_ag_state", ()):
            if n not in self.names:
                self.names.append(n)

    def visit_FunctionDef(self, node):
        self._add(node.name)  # the def binds its name; its body is another scope

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._add(node.name)

    def visit_Lambda(self, node):
        pass

    def visit_ListComp(self, node):
        pass

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_Global(self, node):
        raise ConversionError("`global` inside converted control flow")

    visit_Nonlocal = visit_Global


def assigned(stmts):
    v = _Assigned()
    for s in stmts:
        v.visit(s)
    return v.names


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _contains(stmts, types_):
    """Whether the statements contain a node of ``types_``, not looking into
    nested scopes, nor into nested loops when looking for break/continue
    (those belong to the nested loop)."""
    skip_loops = all(t in (ast.Break, ast.Continue) for t in types_)

    def walk(node):
        if isinstance(node, types_):
            return True
        if isinstance(node, _SCOPES) or (skip_loops and isinstance(node, (ast.For, ast.While))):
            return False
        return any(walk(c) for c in ast.iter_child_nodes(node))
    return any(walk(s) for s in stmts)


def _always_exits(stmts, kinds):
    """Whether every path through ``stmts`` ends in one of ``kinds``."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, ast.If) and _always_exits(s.body, kinds) and _always_exits(s.orelse, kinds):
            return True
    return False


def _name(n, ctx=ast.Load):
    return ast.Name(id=n, ctx=ctx())


def _assign(n, value):
    return ast.Assign(targets=[_name(n, ast.Store)], value=value)


def _not(flag):
    return ast.Call(func=ast.Attribute(value=_name("ag__"), attr="not_", ctx=ast.Load()), args=[_name(flag)],
                    keywords=[])


# -- 1 and 2: early exits become flags -----------------------------------------------------------

def guard(stmts, may_exit, flag, exits, into_loops):
    """Rewrite a statement list, and every block nested in it, so that after a
    statement which may set ``flag`` the rest runs only if it did not. When
    that statement is an ``if`` whose body always exits, the rest becomes its
    ``else`` (so a tensor ``if`` defines the exit's values on both paths)."""
    for s in stmts:
        if isinstance(s, _SCOPES) or (not into_loops and isinstance(s, (ast.For, ast.While))):
            continue
        for field in ("body", "orelse", "finalbody"):
            blk = getattr(s, field, None)
            if isinstance(blk, list) and blk:
                setattr(s, field, guard(blk, may_exit, flag, exits, into_loops))
        for h in getattr(s, "handlers", []) or []:
            h.body = guard(h.body, may_exit, flag, exits, into_loops)
    return _guard_level(stmts, may_exit, flag, exits)


def _guard_level(stmts, may_exit, flag, exits):
    for i, s in enumerate(stmts):
        if may_exit(s) and i + 1 < len(stmts):
            rest = _guard_level(stmts[i + 1:], may_exit, flag, exits)
            if isinstance(s, ast.If) and _always_exits(s.body, exits):
                s.orelse = _guard_level(s.orelse + rest, may_exit, flag, exits)
                return stmts[:i + 1]
            if isinstance(s, ast.If) and s.orelse and _always_exits(s.orelse, exits):
                s.body = _guard_level(s.body + rest, may_exit, flag, exits)
                return stmts[:i + 1]
            return stmts[:i + 1] + [ast.If(test=_not(flag), body=rest, orelse=[])]
    return stmts


class _ReturnRewriter(ast.NodeTransformer):
    def visit_Return(self, node):
        val = node.value if node.value is not None else ast.Constant(value=None)
        return [_assign(RET_FLAG, ast.Constant(value=True)), _assign(RET_VAL, val)]

    def visit_FunctionDef(self, node):
        return node  # nested functions keep their own returns

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef


def _may_return(s):
    return _contains([s], (ast.Return,))


def rewrite_returns(fn):
    """Only when a return sits inside a block: a function whose returns are all
    top-level statements needs nothing."""
    nested = any(_contains(getattr(s, f, []) or [], (ast.Return,)) for s in fn.body
                 if isinstance(s, (ast.If, ast.For, ast.While, ast.With, ast.Try))
                 for f in ("body", "orelse", "finalbody", "handlers"))
    if not nested:
        return
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.While)) and _contains(node.body, (ast.Return,)):
            node._ag_exit_flags = getattr(node, "_ag_exit_flags", []) + [RET_FLAG]
    body = guard(fn.body, _may_return, RET_FLAG, (ast.Return,), into_loops=True)
    body = _flatten([_ReturnRewriter().visit(s) for s in body])
    fn.body = ([_assign(RET_FLAG, ast.Constant(value=False)), _assign(RET_VAL, _undefined_call(RET_VAL))]
               + body + [ast.Return(value=ast.Call(func=ast.Attribute(value=_name("ag__"), attr="retval",
                                                                      ctx=ast.Load()),
                                                   args=[_name(RET_VAL)], keywords=[]))])


def _undefined_call(n):
    return ast.Call(func=ast.Attribute(value=_name("ag__"), attr="Undefined", ctx=ast.Load()),
                    args=[ast.Constant(value=n)], keywords=[])


def _flatten(stmts):
    """NodeTransformer returns lists for replaced statements: splice them, recursively."""
    out = []
    for s in stmts:
        if isinstance(s, list):
            out.extend(_flatten(s))
            continue
        for field in ("body", "orelse", "finalbody"):
            if hasattr(s, field) and isinstance(getattr(s, field), list):
                setattr(s, field, _flatten(getattr(s, field)))
        out.append(s)
    return out


class _LoopExits:
    """break/continue of each loop (not of loops nested in it) become flags."""

    def __init__(self):
        self.n = 0

    def rewrite(self, stmts):
        out = []
        for s in stmts:
            out.extend(self._visit(s))
        return out

    def _visit(self, s):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [s]
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, self.rewrite(getattr(s, field)))
        if not isinstance(s, (ast.For, ast.While)):
            return [s]
        before = []
        for kind, what in ((ast.Continue, "cont"), (ast.Break, "brk")):
            if not _contains(s.body, (kind,)):
                continue
            self.n += 1
            flag = f"ag__{what}{self.n}"
            body = guard(s.body, lambda x, k=kind: _contains([x], (k,)), flag, (kind,), into_loops=False)
            body = _replace_exit(body, kind, flag)
            if kind is ast.Continue:  # cleared at the start of every iteration
                s.body = [_assign(flag, ast.Constant(value=False))] + body
            else:  # set once: the loop's test checks it
                s.body = body
                s._ag_exit_flags = getattr(s, "_ag_exit_flags", []) + [flag]
                before.append(_assign(flag, ast.Constant(value=False)))
        return before + [s]


def _replace_exit(stmts, kind, flag):
    class R(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            return node

        visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

        def visit_For(self, node):  # a nested loop's break/continue are its own
            node.orelse = [self.visit(c) for c in node.orelse]
            return node

        visit_While = visit_For

    def exit_(self, node):
        a = _assign(flag, ast.Constant(value=True))
        a._ag_state = [flag]  # the flag is state of the blocks around it (see _Assigned)
        return a
    setattr(R, f"visit_{kind.__name__}", exit_)
    return [R().visit(s) for s in stmts]


# -- loop variables: TF's liveness rule ------------------------------------------------------------
# TF's AutoGraph carries through a loop only the names its body modifies that are live into the body
# (read before written in an iteration: the previous iteration's value flows in) or live after the
# loop; a name each iteration assigns before reading it and nothing outside the loop reads is the
# iteration's own (the tutorial's `optional_data = it.get_next_as_optional()`, an Optional that no
# loop could carry). The analysis below is conservative: any doubt keeps the name carried, as before.

def _reads(node, n):
    """Whether ``node`` reads name ``n`` (nested scopes included: a closure reads it too)."""
    return any(isinstance(x, ast.Name) and x.id == n and not isinstance(x.ctx, ast.Store) for x in ast.walk(node))


def _first_use(stmts, n):
    """"read" if some path through ``stmts`` may read ``n`` before assigning it, "def" if every path
    assigns it before any read, None if neither (no read; assigned on some paths at most)."""
    for s in stmts:
        u = _stmt_use(s, n)
        if u is not None:
            return u
    return None


def _stmt_use(s, n):
    if isinstance(s, (ast.Assign, ast.AnnAssign)):
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        if (s.value is not None and _reads(s.value, n)) or any(_reads(t, n) for t in targets):
            return "read"
        stored = any(isinstance(x, ast.Name) and x.id == n for t in targets for x in ast.walk(t))
        return "def" if stored and s.value is not None else None
    if isinstance(s, ast.If):
        if _reads(s.test, n):
            return "read"
        a, b = _first_use(s.body, n), _first_use(s.orelse, n)
        if "read" in (a, b):
            return "read"
        return "def" if a == b == "def" else None
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if any(_reads(d, n) for d in s.decorator_list) or _reads(s, n):
            return "read"
        return "def" if s.name == n else None
    # loops may run no iteration, and anything else (with, try, del, global, walrus...): a read anywhere
    # counts as a read first, and nothing counts as a definite assignment
    return "read" if _reads(s, n) else None


def _block_locals(block, root, names):
    """The names of ``names`` (assigned in ``block``, a loop or an ``if``) that TF's AutoGraph would not
    make the block's variables: each path through the block (each iteration of a loop, each branch of
    an ``if``) assigns them before reading them, and nothing outside the block (the rest of function
    ``root``, the loop's iterable and tests included) reads them. Such a name's value never leaves the
    block, so it need not be defined before it nor on every path of an ``if`` on a tensor."""
    out = set()
    # a global/nonlocal name assigned in the block must reach its scope: kept, as before
    declared = {x for g in ast.walk(root) if isinstance(g, (ast.Global, ast.Nonlocal)) for x in g.names}
    if isinstance(block, ast.If):
        paths = [block.body, block.orelse]
    elif isinstance(block, ast.For):
        paths = [[ast.Assign(targets=[block.target], value=ast.Constant(value=None))] + block.body]
    else:
        paths = [block.body]
    for n in names:
        if n.startswith("ag__") or n in (RET_FLAG, RET_VAL) or n in declared:
            continue
        if any(_first_use(p, n) == "read" for p in paths):
            continue
        if any(_reads(x, n) for x in _outside(root, block)):
            continue
        out.add(n)
    return out


def _outside(root, block):
    """The nodes of ``root`` outside ``block``'s body (a loop's iterable and test, an ``if``'s test
    included)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node is block:
            yield (block.iter if isinstance(block, ast.For) else block.test)
            if not isinstance(block, ast.If):
                yield from block.orelse
            continue
        if isinstance(node, ast.Name):
            yield node
            continue
        stack.extend(ast.iter_child_nodes(node))


# -- 3: control flow becomes calls ---------------------------------------------------------------

class _Converter(ast.NodeTransformer):
    def __init__(self, root=None):
        self.n = 0
        self.state_names = []
        self.root = root   # the function (liveness of loop variables looks outside the loop)

    def _fresh(self, what):
        self.n += 1
        return f"ag__{what}{self.n}"

    def _note(self, names):
        for n in names:
            if n not in self.state_names:
                self.state_names.append(n)

    def _fn(self, name, params, body, returns):
        args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                             kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        ret = ast.Return(value=ast.Tuple(elts=[_name(n) for n in returns], ctx=ast.Load()))
        return ast.FunctionDef(name=name, args=args, body=(body or []) + [ret], decorator_list=[], returns=None)

    def _call(self, op, args, state, keywords=()):
        call = ast.Call(func=ast.Attribute(value=_name("ag__"), attr=op, ctx=ast.Load()),
                        args=args + [ast.Tuple(elts=[_name(n) for n in state], ctx=ast.Load()),
                                     ast.Tuple(elts=[ast.Constant(value=n) for n in state], ctx=ast.Load())],
                        keywords=list(keywords))
        if not state:
            return ast.Expr(value=call)
        return ast.Assign(targets=[ast.Tuple(elts=[_name(n, ast.Store) for n in state], ctx=ast.Store())],
                          value=call)

    def _test(self, expr):
        return _LogicalOps().visit(expr)

    def _extra_test(self, node, state):
        flags = getattr(node, "_ag_exit_flags", [])
        if not flags:
            return [], []
        name = self._fresh("extra_test")
        test = _not(flags[0])
        for f in flags[1:]:
            test = ast.Call(func=ast.Attribute(value=_name("ag__"), attr="and_", ctx=ast.Load()),
                            args=[test, ast.Lambda(args=_no_args(), body=_not(f))], keywords=[])
        fn = self._fn(name, state, [], [])
        fn.body = [ast.Return(value=test)]
        return [fn], [ast.keyword(arg="extra_test", value=_name(name))]

    def visit_FunctionDef(self, node):
        return node  # nested functions are left as written

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_If(self, node):
        local = (_block_locals(node, self.root, assigned(node.body + node.orelse)) if self.root is not None
                 else set())
        self.generic_visit(node)
        state = [n for n in assigned(node.body + node.orelse) if n not in local]
        self._note(state)
        body, orelse = self._fresh("if_body"), self._fresh("else_body")
        call = self._call("if_stmt", [self._test(node.test), _name(body), _name(orelse)], state)
        call._ag_state = [n for n in state if n.startswith("ag__")]  # exit flags set inside
        init = _locals_undefined(local)
        return [self._fn(body, state, init + node.body, state), self._fn(orelse, state, init + node.orelse, state),
                call]

    def visit_IfExp(self, node):
        # `a if c else b` on a tensor c is a cond of the two expressions, as TF's AutoGraph
        # converts it; on a Python value it stays Python's (if_exp calls one of the two)
        self.generic_visit(node)
        return ast.Call(func=ast.Attribute(value=_name("ag__"), attr="if_exp", ctx=ast.Load()),
                        args=[self._test(node.test), ast.Lambda(args=_no_args(), body=node.body),
                              ast.Lambda(args=_no_args(), body=node.orelse)], keywords=[])

    def visit_While(self, node):
        if node.orelse:
            raise ConversionError("`while ... else`")
        local = _block_locals(node, self.root, assigned(node.body)) if self.root is not None else set()
        self.generic_visit(node)
        state = [n for n in _loop_state(node.body) if n not in local]
        for f in getattr(node, "_ag_exit_flags", []):
            if f not in state:
                state.append(f)
        self._note(state)
        test, body = self._fresh("while_test"), self._fresh("while_body")
        test_fn = self._fn(test, state, [], [])
        test_fn.body = [ast.Return(value=self._test(node.test))]
        extra_defs, kw = self._extra_test(node, state)
        return [test_fn, self._fn(body, state, _locals_undefined(local) + node.body, state)] + extra_defs + [
            self._call("while_stmt", [_name(test), _name(body)], state, kw)]

    def visit_For(self, node):
        if node.orelse:
            raise ConversionError("`for ... else`")
        target_assign = ast.Assign(targets=[node.target], value=_name("ag__itr"))
        local = (_block_locals(node, self.root, assigned([target_assign] + node.body))
                 if self.root is not None else set())
        self.generic_visit(node)
        itr = "ag__itr"
        state = [n for n in _loop_state([target_assign] + node.body) if n not in local]
        for f in getattr(node, "_ag_exit_flags", []):
            if f not in state:
                state.append(f)
        self._note(state)
        body = self._fresh("for_body")
        fn = self._fn(body, [itr] + state, _locals_undefined(local) + [target_assign] + node.body, state)
        extra_defs, kw = self._extra_test(node, state)
        if isinstance(node.target, ast.Name) and node.target.id in state:
            kw = kw + [ast.keyword(arg="target", value=ast.Constant(value=node.target.id))]
        return [fn] + extra_defs + [self._call("for_stmt", [_range_call(node.iter), _name(body)], state, kw)]


def _locals_undefined(names):
    """An iteration's own names start each iteration undefined in the body function (a nested block
    passes its state in, as the function's top does for the names blocks assign)."""
    return [_assign(n, _undefined_call(n)) for n in sorted(names)]


def _loop_state(body):
    """A loop's state: the names its body assigns, without exit flags (a continue
    flag is reset at every iteration; a loop's break flag is added as its own;
    an inner loop's flags are set before that loop runs)."""
    return [n for n in assigned(body) if not n.startswith("ag__")]


def _no_args():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def _range_call(it):
    """``range(...)`` / ``<mod>.range(...)`` as a loop's iterable stays lazy when
    its bounds are tensors (``ag__.range_``), so the loop can count symbolically."""
    if isinstance(it, ast.Call) and not it.keywords and (
            (isinstance(it.func, ast.Name) and it.func.id == "range") or
            (isinstance(it.func, ast.Attribute) and it.func.attr == "range")):
        return ast.Call(func=ast.Attribute(value=_name("ag__"), attr="range_", ctx=ast.Load()),
                        args=[it.func] + it.args, keywords=[])
    return it


class _LogicalOps(ast.NodeTransformer):
    """``not``/``and``/``or`` in a test work on tensors (Python's call bool())."""

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(func=ast.Attribute(value=_name("ag__"), attr="not_", ctx=ast.Load()),
                            args=[node.operand], keywords=[])
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        op = "and_" if isinstance(node.op, ast.And) else "or_"
        expr = node.values[-1]
        for v in reversed(node.values[:-1]):
            expr = ast.Call(func=ast.Attribute(value=_name("ag__"), attr=op, ctx=ast.Load()),
                            args=[v, ast.Lambda(args=_no_args(), body=expr)], keywords=[])
        return expr

    def visit_Lambda(self, node):
        return node


# -- driver --------------------------------------------------------------------------------------

def _has_control_flow(fn_node):
    return any(isinstance(n, (ast.If, ast.For, ast.While, ast.IfExp)) for n in ast.walk(fn_node))


def convert_ast(fn_node):
    """The three rewrites on a FunctionDef (in place); returns it."""
    fn_node.decorator_list = []
    rewrite_returns(fn_node)
    fn_node.body = _flatten(_LoopExits().rewrite(fn_node.body))
    conv = _Converter(fn_node)
    fn_node.body = _flatten([conv.visit(s) for s in fn_node.body])
    params = {a.arg for a in fn_node.args.posonlyargs + fn_node.args.args + fn_node.args.kwonlyargs}
    for extra in (fn_node.args.vararg, fn_node.args.kwarg):
        if extra is not None:
            params.add(extra.arg)
    undef = [n for n in conv.state_names if n not in params and n not in (RET_FLAG, RET_VAL)]
    init = [_assign(n, _undefined_call(n)) for n in undef]
    fn_node.body = init + fn_node.body
    return fn_node


def _source_node(fn):
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise ConversionError(f"no source ({e})") from None
    tree = ast.parse(src)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__name__:
        raise ConversionError("not a plain def (a lambda, or a def made by exec)")
    return node


_CACHE: dict = {}


def convert(fn):
    """The converted function (cached per code object), or ``fn`` itself when
    it has no control flow or cannot be converted (it then runs as written)."""
    if inspect.ismethod(fn):  # tapeflow.function(obj.method): convert the function, bind it again
        conv = convert(fn.__func__)
        return fn if conv is fn.__func__ else types.MethodType(conv, fn.__self__)
    code = getattr(fn, "__code__", None)
    if code is None:
        return fn
    hit = _CACHE.get(code)
    if hit is not None:
        return _rebind(hit, fn) if hit is not False else fn
    try:
        node = _source_node(fn)
        if not _has_control_flow(node):
            _CACHE[code] = False
            return fn
        new_code = _compile(convert_ast(copy.deepcopy(node)), fn)
    except (ConversionError, SyntaxError) as e:
        import logging
        logging.getLogger("tapeflow").debug("autograph: %s runs unconverted: %s", fn.__qualname__, e)
        _CACHE[code] = False
        return fn
    _CACHE[code] = new_code
    return _rebind(new_code, fn)


def _compile(node, fn):
    """Compile the converted def inside a factory whose parameters are ``ag__``
    and the original's free variables, so the new code closes over the same
    cells as the original (a later rebinding in the enclosing scope is seen)."""
    free = list(fn.__code__.co_freevars)
    shown = ast.unparse(ast.fix_missing_locations(node))
    # Defined under its own name inside the factory, the function's name would be a local
    # of the factory, so a recursive call would close over it (and find no cell for it in
    # the original); renamed, the name stays a global, as in the original function.
    node.name = f"ag__converted_{node.name}"
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in ["ag__"] + free], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    factory = ast.FunctionDef(name="ag__factory", args=args, body=[node, ast.Return(value=_name(node.name))],
                              decorator_list=[], returns=None)
    mod = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(mod)
    source = ast.unparse(mod)
    filename = f"<tapeflow autograph {fn.__qualname__}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(mod, filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == "ag__factory")
    inner = next(c for c in fcode.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    _SOURCES[inner] = shown
    return inner


_SOURCES: dict = {}


def _rebind(new_code, fn):
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(types.CellType(operators) if n == "ag__" else cells[n] for n in new_code.co_freevars)
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(new, fn, updated=())
    return new


def to_code(fn):
    """The converted source of ``fn`` (TF's tf.autograph.to_code)."""
    fn = getattr(fn, "python_function", fn)
    conv = convert(fn)
    if conv is fn:
        return textwrap.dedent(inspect.getsource(fn))
    return _SOURCES[conv.__code__] + "\n"
