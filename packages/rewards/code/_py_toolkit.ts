/**
 * Internal: the Python half of the Python sandbox's verdict, run by `_py_runner.ts` inside each
 * interpreter before any untrusted code (the parent sends it in the child's config frame).
 *
 * The verdict itself is computed by the runner in JavaScript: an assertion case passes only when
 * the runner's call of `run(code, globals)` on the pre-compiled test code returns without an
 * exception. What the program can do in Python is what this toolkit limits, so that "returned
 * without an exception" still means "the assertions held":
 *
 * - **Pristine pieces, captured first.** `_rlvr_build` runs in a fresh interpreter (no program
 *   has run there yet) and binds everything it needs as default arguments of the functions it
 *   returns: they read no global or builtin when they run (their globals hold an empty
 *   `__builtins__`, and the runner checks their bytecode for global loads) and have no closure
 *   cells. The runner holds them; no Python object refers to them.
 * - **Tests compiled before the program runs**, from the parent's list of snippets, with every
 *   comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`) rewritten into a call of a
 *   checker. The checker first converts both operands to plain data (exact `int`, `float`, `str`,
 *   `list`, `dict`, ... recursively; subclasses of built-in types are converted with the base
 *   type's own C methods, so a `__eq__` override is never consulted) and compares those with the
 *   built-in operators. A program-defined object compared with plain data is equal to nothing;
 *   two program-defined objects compare with their own `__eq__`, which must return a `bool` and
 *   must not also claim equality with a fresh canary object. So an object "equal to everything"
 *   (`__eq__` returning `True`, an `int` subclass that lies) fails.
 * - **A fresh namespace per case for the tests**: a copy of the program's globals whose
 *   `__builtins__` is a copy of the builtins taken before any program ran (so `builtins.all =
 *   lambda *a: True` does not reach the tests), whose `__import__` hands out fresh copies of
 *   common standard-library modules as they were then (so `math.isclose = ...` does not either).
 * - **An audit hook** (PEP 578, cannot be removed) that denies what would let a program reach
 *   the tests' frames or rewrite running code: `sys._getframe`, frame attributes of tracebacks
 *   and generators, `sys.settrace`/`setprofile`/`sys.monitoring` callbacks (which can jump over
 *   lines), `gc.get_objects`/`get_referrers`/`get_referents`, `sys.addaudithook`, new code
 *   objects (`code.replace`, `marshal.loads`), assigning `__code__`/`__defaults__`, reading the
 *   code and defaults of the tests' and the toolkit's own functions, and importing `ctypes`, the
 *   `_test*` C-API modules and the Pyodide bridge (`js`, `pyodide_js`, `pyodide`,
 *   `_pyodide_core`). Python signal handlers are refused too (a handler receives the current
 *   frame), as is re-creating a built-in module behind the import system's back.
 * - **The JavaScript bridge is cut**: `js` and the real `pyodide_js` are gone (a stand-in
 *   `pyodide_js` keeps Pyodide's asyncio support working); what stays reachable (the event
 *   loop's JavaScript callbacks) leads only into a realm whose intrinsics the runner has locked
 *   and where code generation from strings is disabled.
 *
 * Residual limits (documented in the README): a test that hands one of its own functions to the
 * program gives the program that function's `__globals__` (the tests' namespace); classes of the
 * standard library are shared with the program (only module namespaces are copied); and a
 * comparison of two program-defined objects can only be as honest as their `__eq__`.
 *
 * @module
 */

/**
 * The toolkit's source (Python). Evaluating it defines `_rlvr_build(B, cmp_name, mark, snap_names,
 * run_until_complete)` (`B` the builtins' dict, `snap_names` comma-separated module names), which
 * returns a tuple: `prepare, new_globals, begin, end, run_source, run_code, test_globals,
 * describe, install, check`, then the other functions it made (for `check`).
 *
 * @example Usage
 * ```ts
 * import { PY_TOOLKIT } from "./_py_toolkit.ts";
 * import assert from "node:assert/strict";
 * assert.ok(PY_TOOLKIT.includes("def _rlvr_build(B, cmp_name, mark, snap_names,"));
 * ```
 */
export const PY_TOOLKIT = String.raw`
def _rlvr_build(B, cmp_name, mark, snap_names, run_until_complete):
    imp = B["__import__"]
    sys = imp("sys")
    ast = imp("ast")
    io = imp("io")
    posix = imp("posix")
    types = imp("types")
    operator = imp("operator")
    collections = imp("collections")
    decimal = imp("decimal")
    array = imp("array")
    copy = imp("copy")
    dis = imp("dis")
    _signal = imp("_signal")
    _imp = imp("_imp")
    builtins_module = imp("builtins")
    type_ = B["type"]
    object_ = B["object"]
    tuple_ = B["tuple"]
    list_ = B["list"]
    dict_ = B["dict"]
    str_ = B["str"]
    int_ = B["int"]
    float_ = B["float"]
    complex_ = B["complex"]
    bool_ = B["bool"]
    bytes_ = B["bytes"]
    bytearray_ = B["bytearray"]
    set_ = B["set"]
    frozenset_ = B["frozenset"]
    range_ = B["range"]
    slice_ = B["slice"]
    issubclass_ = B["issubclass"]
    len_ = B["len"]
    repr_ = B["repr"]
    BaseException_ = B["BaseException"]
    TypeError_ = B["TypeError"]
    AssertionError_ = B["AssertionError"]
    SystemExit_ = B["SystemExit"]
    MemoryError_ = B["MemoryError"]
    SyntaxError_ = B["SyntaxError"]
    OSError_ = B["OSError"]
    RuntimeError_ = B["RuntimeError"]
    ValueError_ = B["ValueError"]
    compile_ = B["compile"]
    exec_ = B["exec"]
    NoneType = type_(None)
    FunctionType = types.FunctionType
    str_str = str_.__dict__["__str__"]
    str_partition = str_.__dict__["partition"]
    str_startswith = str_.__dict__["startswith"]
    dict_get = dict_.__dict__["get"]
    dict_copy = dict_.__dict__["copy"]
    dict_items = dict_.__dict__["items"]
    func_globals = FunctionType.__dict__["__globals__"].__get__

    # -- plain data and the comparison checker ---------------------------------------------
    scalars = [int_, bool_, float_, complex_, str_, bytes_, bytearray_, NoneType, range_,
               type_(B["Ellipsis"]), type_(B["NotImplemented"]), FunctionType,
               types.BuiltinFunctionType,
               types.ModuleType, array.array]
    if type_(decimal.Decimal.__dict__["__eq__"]) is type_(int_.__dict__["__eq__"]):
        scalars.append(decimal.Decimal)  # the C implementation: its comparisons are C code
    scalars = tuple_(scalars)
    deque_tag = object_()

    def plain(x, T=type_, SC=scalars, list_=list_, tuple_=tuple_, dict_=dict_, set_=set_,
              frozenset_=frozenset_, type_=type_, sub=issubclass_, int_=int_, float_=float_,
              complex_=complex_, str_=str_, bytes_=bytes_, items=dict_items, TE=TypeError_,
              deque=collections.deque, tag=deque_tag, sl=slice_(None),
              as_int=int_.__dict__["__int__"], as_float=float_.__dict__["__float__"],
              as_complex=complex_.__dict__["__complex__"], as_str=str_.__dict__["__str__"],
              as_bytes=bytes_.__dict__["__bytes__"], tuple_get=tuple_.__dict__["__getitem__"],
              list_copy=list_.__dict__["copy"], dict_copy=dict_copy,
              set_copy=set_.__dict__["copy"], frozenset_copy=frozenset_.__dict__["copy"]):
        # Returns (True, an equal value made of exact built-in types) or (False, None). Program
        # code may run (an overridden __iter__ of a dict subclass) but only to produce values
        # that are checked in turn; no comparison method of the program is ever called.
        def go(v, depth):
            t = T(v)
            for s in SC:
                if t is s:
                    return True, v
            if depth > 100:
                return False, None
            if t is list_ or t is tuple_:
                out = []
                for item in v:
                    ok, p = go(item, depth + 1)
                    if not ok:
                        return False, None
                    out.append(p)
                return True, (out if t is list_ else tuple_(out))
            if t is dict_:
                out = {}
                for k, val in items(v):
                    ok, pk = go(k, depth + 1)
                    if not ok:
                        return False, None
                    ok, pv = go(val, depth + 1)
                    if not ok:
                        return False, None
                    try:
                        out[pk] = pv
                    except TE:
                        return False, None
                return True, out
            if t is set_ or t is frozenset_:
                out = []
                for item in v:
                    ok, p = go(item, depth + 1)
                    if not ok:
                        return False, None
                    out.append(p)
                try:
                    return True, (set_(out) if t is set_ else frozenset_(out))
                except TE:
                    return False, None
            if t is deque:
                ok, p = go(tuple_(v), depth + 1)
                return (True, (tag, p)) if ok else (False, None)
            if t is type_:
                return True, v  # a class with the plain metaclass: compared by identity
            if sub(t, int_):
                return go(as_int(v), depth + 1)
            if sub(t, float_):
                return go(as_float(v), depth + 1)
            if sub(t, complex_):
                return go(as_complex(v), depth + 1)
            if sub(t, str_):
                return go(as_str(v), depth + 1)
            if sub(t, bytes_):
                return go(as_bytes(v), depth + 1)
            if sub(t, tuple_):
                return go(tuple_get(v, sl), depth + 1)
            if sub(t, list_):
                return go(list_copy(v), depth + 1)
            if sub(t, dict_):
                return go(dict_copy(v), depth + 1)
            if sub(t, frozenset_):
                return go(frozenset_copy(v), depth + 1)
            if sub(t, set_):
                return go(set_copy(v), depth + 1)
            return False, None
        return go(x, 0)

    ComparisonError = type_("ComparisonError", (TypeError_,), {"__module__": "sandbox"})
    Canary = type_("Canary", (object_,), {"__slots__": (), "__module__": "sandbox"})

    def compare(op, a, b, plain=plain, T=type_, bool_=bool_, list_=list_, tuple_=tuple_,
                dict_=dict_, Err=ComparisonError, Canary=Canary, BE=BaseException_,
                eq=operator.eq, ne=operator.ne, lt=operator.lt, le=operator.le, gt=operator.gt,
                ge=operator.ge, contains=operator.contains):
        if op == "is":
            return a is b
        if op == "is not":
            return a is not b
        oka, pa = plain(a)
        okb, pb = plain(b)
        if op == "in" or op == "not in":
            if okb and oka:
                found = contains(pb, pa)
            elif okb:
                # An object of the program is equal to nothing plain: only itself is in there.
                found = False
                for item in (pb if T(pb) is list_ or T(pb) is tuple_ else ()):
                    if item is a:
                        found = True
            else:
                found = contains(b, a)
                liar = False
                try:
                    liar = contains(b, Canary())
                except BE:
                    pass
                if liar:
                    raise Err("a container of the program claims to contain anything")
            return found if op == "in" else not found
        if oka and okb:
            a, b = pa, pb
        elif oka or okb:
            if op == "==":
                return False
            if op == "!=":
                return True
            raise Err("cannot order an object of a program-defined type against plain data")
        if op == "==":
            r = eq(a, b)
        elif op == "!=":
            r = ne(a, b)
        elif op == "<":
            r = lt(a, b)
        elif op == "<=":
            r = le(a, b)
        elif op == ">":
            r = gt(a, b)
        else:
            r = ge(a, b)
        if oka and okb:
            return r
        if T(r) is not bool_:
            ok, pr = plain(r)
            if not ok:
                raise Err("a comparison of the program returned " + T(r).__qualname__)
            r = not not pr
        if op == "==" or op == "!=":
            for side in (a, b):
                liar = False
                try:
                    liar = eq(side, Canary())
                except BE:
                    pass
                if liar is not False:
                    raise Err("an object of the program claims equality with anything")
        return r

    # -- compiling the tests (now, while nothing of the program has run) -------------------
    opnames = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
               ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}

    def visit_compare(self, node, T=type_, opnames=opnames, ast=ast, name=cmp_name, str_=str_,
                      len_=len_, zip_=B["zip"], enumerate_=B["enumerate"], all_=B["all"]):
        self.generic_visit(node)
        ops = [opnames[T(o)] for o in node.ops]
        if all_(o == "is" or o == "is not" for o in ops):
            return node
        def call(op, left, right):
            return ast.Call(ast.Name(name, ast.Load()), [ast.Constant(op), left, right], [])
        if len_(ops) == 1:
            return ast.copy_location(call(ops[0], node.left, node.comparators[0]), node)
        if not self.chains:
            return node
        parts = []
        left = node.left
        for i, (op, right) in enumerate_(zip_(ops, node.comparators)):
            if i < len_(ops) - 1:
                self.counter += 1
                tmp = name + "_t" + str_(self.counter)
                right = ast.NamedExpr(ast.Name(tmp, ast.Store()), right)
                parts.append(call(op, left, right))
                left = ast.Name(tmp, ast.Load())
            else:
                parts.append(call(op, left, right))
        return ast.copy_location(ast.BoolOp(ast.And(), parts), node)

    Rewriter = type_("Rewriter", (ast.NodeTransformer,), {
        "visit_Compare": visit_compare, "chains": True, "counter": 0})

    def prepare(source, ast=ast, Rewriter=Rewriter, compile_=compile_, SE=SyntaxError_,
                BE=BaseException_, deepcopy=copy.deepcopy):
        # Returns (code, None), or (None, [the exception]) when the snippet does not compile.
        try:
            tree = ast.parse(source, "tests.py")
        except BE as e:
            return (None, [e])
        for chains in (True, False):
            rewriter = Rewriter()
            rewriter.chains = chains
            rewritten = ast.fix_missing_locations(rewriter.visit(deepcopy(tree)))
            try:
                return (compile_(rewritten, "tests.py", "exec", 0, True, 0), None)
            except SE:
                pass  # e.g. a chained comparison inside a comprehension of a class body
        try:
            return (compile_(source, "tests.py", "exec", 0, True, 0), None)
        except BE as e:
            return (None, [e])

    # -- one case ------------------------------------------------------------------------
    def new_globals(builtins_module=builtins_module):
        return {"__name__": "__main__", "__builtins__": builtins_module}

    def begin(sys=sys, fstat=posix.fstat, os_open=posix.open, dup2=posix.dup2,
              close=posix.close, open_=io.open, OE=OSError_,
              fds=((0, "/dev/stdin", posix.O_RDONLY), (1, "/dev/stdout", posix.O_WRONLY),
                   (2, "/dev/stderr", posix.O_WRONLY))):
        # A program may have closed fd 0/1/2 (open(0) closes it when collected): reopen them.
        for fd, path, flags in fds:
            try:
                fstat(fd)
            except OE:
                new = os_open(path, flags)
                if new != fd:
                    dup2(new, fd)
                    close(new)
        out = open_(1, "w", encoding="utf-8", errors="replace", closefd=False)
        err = open_(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stdin = open_(0, "r", encoding="utf-8", errors="replace", closefd=False)
        sys.stdout = out
        sys.stderr = err
        return (out, err)

    def end(streams, sys=sys, BE=BaseException_):
        for s in (sys.stdout, sys.stderr, streams[0], streams[1], sys.__stdout__, sys.__stderr__):
            try:
                s.flush()
            except BE:
                pass

    # Both return None when the code ran to its end, else [the exception]: a list, because
    # Pyodide would hand an exception that wraps a JavaScript error back as that error.
    def run_source(source, g, compile_=compile_, exec_=exec_, BE=BaseException_):
        try:
            exec_(compile_(source, "solution.py", "exec", 0, True, 0), g)
        except BE as e:
            return [e]
        return None

    def run_code(code, g, exec_=exec_, BE=BaseException_):
        try:
            exec_(code, g)
        except BE as e:
            return [e]
        return None

    module_copies = []
    for name in snap_names.split(","):
        module_copies.append((name, dict_copy(imp(name).__dict__)))
    module_copies = tuple_(module_copies)

    def make_importer(copies=module_copies, Module=types.ModuleType, real=B["__import__"],
                      str_str=str_str, dict_get=dict_get, dict_copy=dict_copy):
        mods = {}
        for name, namespace in copies:
            m = Module(name)
            m.__dict__.update(dict_copy(namespace))
            mods[name] = m
        def importer(name, globals=None, locals=None, fromlist=(), level=0, mods=mods,
                     real=real, str_str=str_str, dict_get=dict_get):
            if level == 0:
                m = dict_get(mods, str_str(name))
                if m is not None:
                    return m
            return real(name, globals, locals, fromlist, level)
        return importer

    master = dict_copy(B)
    sentinel = object_()

    def test_globals(g, master=master, dict_copy=dict_copy, compare=compare,
                     make_importer=make_importer, cmp_name=cmp_name, mark=mark,
                     sentinel=sentinel):
        t = dict_copy(g)
        b = dict_copy(master)
        b[cmp_name] = compare
        b["__import__"] = make_importer()
        t["__builtins__"] = b
        t[mark] = sentinel
        return t

    # -- describing an exception, with the frames of its traceback ---------------------------
    window = [False]  # True while describe() reads frames; no program code runs then

    tb_next = types.TracebackType.__dict__["tb_next"].__get__
    tb_lineno = types.TracebackType.__dict__["tb_lineno"].__get__
    tb_frame = types.TracebackType.__dict__["tb_frame"].__get__
    f_code = types.FrameType.__dict__["f_code"].__get__
    co_filename = types.CodeType.__dict__["co_filename"].__get__
    co_name = types.CodeType.__dict__["co_name"].__get__
    exc_args = BaseException_.__dict__["args"].__get__
    exc_tb = BaseException_.__dict__["__traceback__"].__get__
    qualname = type_.__dict__["__qualname__"].__get__
    se = SyntaxError_.__dict__
    se_fields = (se["msg"].__get__, se["filename"].__get__, se["lineno"].__get__,
                 se["offset"].__get__, se["text"].__get__)
    exit_code = SystemExit_.__dict__["code"].__get__

    def render(v, T=type_, str_=str_, repr_=repr_, qualname=qualname, str_str=str_str,
               safe=(int_, bool_, float_, NoneType)):
        t = T(v)
        if t is str_:
            return v
        for s in safe:
            if t is s:
                return repr_(v)
        return "<" + str_str(qualname(t)) + " object>"

    def describe_inner(e, sources, T=type_, sub=issubclass_, render=render, qualname=qualname,
                       str_str=str_str, repr_=repr_, len_=len_, str_=str_, int_=int_,
                       tb_next=tb_next, tb_lineno=tb_lineno, tb_frame=tb_frame, f_code=f_code,
                       co_filename=co_filename, co_name=co_name, exc_args=exc_args,
                       exc_tb=exc_tb, se_fields=se_fields, exit_code=exit_code,
                       AE=AssertionError_, SE=SyntaxError_, SX=SystemExit_, ME=MemoryError_,
                       KE=B["KeyError"], NoneType=NoneType, dict_=dict_):
        t = T(e)
        kind = "error"
        code = 1
        if sub(t, AE):
            kind = "assert"
        elif sub(t, SX):
            kind = "exit"
            c = exit_code(e)
            if c is None:
                code = 0
            elif T(c) is int_:
                code = c
        elif sub(t, ME):
            kind = "memory"
        args = exc_args(e)
        if len_(args) == 0:
            text = ""
        elif len_(args) == 1:
            text = repr_(args[0]) if sub(t, KE) and T(args[0]) is str_ else render(args[0])
        else:
            text = "(" + ", ".join([render(a) for a in args]) + ")"
        name = str_str(qualname(t))
        lines = []
        tb = exc_tb(e)
        while tb is not None:
            code_obj = f_code(tb_frame(tb))
            filename = str_str(co_filename(code_obj))
            if filename != "<rlvr>":
                line = tb_lineno(tb)
                lines.append('  File "' + filename + '", line ' + str_(line) + ", in " +
                             str_str(co_name(code_obj)))
                src = sources.get(filename) if T(sources) is dict_ else None
                if src is not None and T(line) is int_ and 0 < line <= len_(src):
                    lines.append("    " + src[line - 1].strip())
            tb = tb_next(tb)
        if lines:
            lines.insert(0, "Traceback (most recent call last):")
        if sub(t, SE):
            msg, filename, lineno, offset, source_line = [f(e) for f in se_fields]
            if T(filename) is str_ and T(lineno) is int_:
                lines.append('  File "' + filename + '", line ' + str_(lineno))
            if T(source_line) is str_:
                stripped = source_line.rstrip("\n")
                lines.append("    " + stripped.strip())
                if T(offset) is int_ and offset > 0:
                    indent = len_(stripped) - len_(stripped.lstrip())
                    lines.append("    " + " " * (offset - 1 - indent) + "^")
            text = render(msg) if msg is not None else text
        lines.append(name + (": " + text if text else ""))
        return kind + "\x1f" + str_(code) + "\x1f" + "\n".join(lines)

    def describe(box, solution, tests, window=window, inner=describe_inner, BE=BaseException_):
        window[0] = True
        try:
            return inner(box[0], {"solution.py": solution.splitlines(),
                                  "tests.py": tests.splitlines()})
        except BE:
            return "error\x1f1\x1fan exception that cannot be described"
        finally:
            window[0] = False

    # -- the audit hook and the cut -----------------------------------------------------------
    class_bases = (RuntimeError_, ValueError_)
    Denied = type_("Denied", class_bases, {"__module__": "sandbox"})
    denied_events = frozenset_([
        "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.settrace",
        "sys.setprofile", "sys._settraceallthreads", "sys._setprofileallthreads",
        "sys.monitoring.register_callback", "sys.addaudithook", "sys.remote_exec",
        "gc.get_objects", "gc.get_referrers", "gc.get_referents", "code.__new__",
        "marshal.loads", "marshal.load", "cpython.remote_debugger_script"])
    frame_attrs = frozenset_(["tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_code",
                              "f_back", "gi_yieldfrom"])
    private_attrs = frozenset_(["__code__", "__defaults__", "__kwdefaults__"])
    denied_modules = frozenset_([
        "js", "pyodide", "_pyodide", "_pyodide_core", "pyodide_http", "micropip", "ctypes",
        "_ctypes", "_testcapi", "_testinternalcapi", "_testlimitedcapi", "_testbuffer",
        "_testclinic", "_testclinic_limited", "_xxtestfuzz", "_remote_debugging", "_lsprof",
        "_posixsubprocess", "_multiprocessing", "xxsubtype", "_signal"])

    def hook(event, args, window=window, T=type_, str_=str_, str_str=str_str,
             partition=str_partition, startswith=str_startswith, Denied=Denied,
             denied_events=denied_events, frame_attrs=frame_attrs,
             private_attrs=private_attrs, denied_modules=denied_modules,
             func_globals=func_globals, FunctionType=FunctionType, dict_get=dict_get,
             mark=mark, sentinel=sentinel, own_globals=func_globals(plain)):
        if window[0]:
            return
        if T(event) is not str_:
            event = str_str(event)
        if event in denied_events:
            raise Denied("the sandbox does not allow " + event)
        if event == "object.__getattr__" or event == "object.__setattr__":
            attr = args[1]
            if T(attr) is not str_:
                attr = str_str(attr)
            if event == "object.__getattr__":
                if attr in frame_attrs:
                    raise Denied("the sandbox does not allow reading ." + attr)
                if attr in private_attrs and T(args[0]) is FunctionType:
                    g = func_globals(args[0])
                    if g is own_globals or dict_get(g, mark) is sentinel:
                        raise Denied("the sandbox does not allow reading ." + attr +
                                     " of a function of the tests")
            elif attr == "__code__":
                raise Denied("the sandbox does not allow assigning .__code__")
            elif attr in private_attrs and T(args[0]) is FunctionType:
                g = func_globals(args[0])
                if g is own_globals or dict_get(g, mark) is sentinel:
                    raise Denied("the sandbox does not allow assigning ." + attr +
                                 " of a function of the tests")
            return
        if event == "import":
            top = partition(str_str(args[0]), ".")[0]
            if top in denied_modules:
                raise Denied("the sandbox does not allow importing " + top)
            return
        if startswith(event, "ctypes."):
            raise Denied("the sandbox does not allow " + event)

    def refuse_signal(signalnum, handler, Denied=Denied):
        raise Denied("the sandbox does not allow signal handlers")

    def create_builtin(spec, real=_imp.create_builtin, Denied=Denied, str_str=str_str,
                       partition=str_partition, denied=denied_modules, modules=sys.modules,
                       dict_get=dict_get, Spec=types.SimpleNamespace):
        # The import system creates built-in modules through this; called directly, it would
        # re-create a module the audit hook refuses to import (the "import" event is raised
        # by the import system, not here). The name is read once and passed on in a spec of
        # ours, so that a spec whose .name changes between two reads cannot slip through.
        name = str_str(spec.name)
        if partition(name, ".")[0] in denied or dict_get(modules, name) is not None:
            raise Denied("the sandbox does not allow re-creating the built-in module " + name)
        return real(Spec(name=name, origin="built-in"))

    def install(sys=sys, hook=hook, types=types, _signal=_signal, _imp=_imp,
                refuse_signal=refuse_signal, create_builtin=create_builtin,
                partition=str_partition, list_=list_, T=type_,
                bridge=frozenset_(["js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core",
                                   "micropip"]),
                run_until_complete=run_until_complete):
        for name in list_(sys.modules):
            if partition(name, ".")[0] in bridge:
                del sys.modules[name]
        # Pyodide's asyncio.run and event loop import pyodide_js._api.config when they run.
        stand_in = types.ModuleType("pyodide_js")
        api = types.ModuleType("pyodide_js._api")
        api.config = types.SimpleNamespace(enableRunUntilComplete=run_until_complete)
        stand_in._api = api
        sys.modules["pyodide_js"] = stand_in
        sys.modules["pyodide_js._api"] = api
        sys.meta_path[:] = [f for f in sys.meta_path if T(f).__name__ != "JsFinder"]
        sys.path_importer_cache.clear()
        _signal.signal = refuse_signal
        _imp.create_builtin = create_builtin
        main = sys.modules.get("__main__")
        if main is not None:
            main.__dict__.clear()
            main.__dict__["__name__"] = "__main__"
        sys.addaudithook(hook)

    def check(fns, dis=dis, T=type_, CodeType=types.CodeType, str_=str_,
              bad=frozenset_(["LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL",
                              "STORE_NAME", "DELETE_NAME"])):
        # A toolkit function that looked up a global or a builtin, or had closure cells shared
        # with its siblings, could be subverted by a program that reached its globals or cells:
        # the runner refuses to start when check() reports one.
        found = []
        def visit(code, where):
            for ins in dis.get_instructions(code):
                if ins.opname in bad:
                    found.append(where + ": " + ins.opname + " " + str_(ins.argval))
            for c in code.co_consts:
                if T(c) is CodeType:
                    visit(c, where + "." + c.co_name)
        for fn in fns:
            if fn.__closure__ is not None:
                found.append(fn.__name__ + ": closure")
            visit(fn.__code__, fn.__name__)
        return found

    return (prepare, new_globals, begin, end, run_source, run_code, test_globals, describe,
            install, check, plain, compare, make_importer, hook, create_builtin, refuse_signal,
            render, describe_inner)
`;

/**
 * Standard-library modules that tests get fresh copies of (as they were before the program ran)
 * when they import them; the runner also imports them into the memory snapshot, with the
 * modules the toolkit itself uses, so that a new interpreter has them loaded already.
 *
 * @example Usage
 * ```ts
 * import { PY_TEST_MODULES } from "./_py_toolkit.ts";
 * import assert from "node:assert/strict";
 * assert.ok(PY_TEST_MODULES.includes("math"));
 * ```
 */
export const PY_TEST_MODULES: readonly string[] = [
  "math",
  "cmath",
  "itertools",
  "functools",
  "operator",
  "collections",
  "heapq",
  "bisect",
  "re",
  "string",
  "fractions",
  "decimal",
  "statistics",
  "random",
  "copy",
  "typing",
  "json",
  "datetime",
];

/**
 * Modules `_rlvr_build` imports besides {@link PY_TEST_MODULES}.
 *
 * @example Usage
 * ```ts
 * import { PY_TOOLKIT_MODULES } from "./_py_toolkit.ts";
 * import assert from "node:assert/strict";
 * assert.ok(PY_TOOLKIT_MODULES.includes("ast"));
 * ```
 */
export const PY_TOOLKIT_MODULES: readonly string[] = [
  "ast",
  "dis",
  "io",
  "posix",
  "types",
  "array",
  "_signal",
  "_imp",
];
