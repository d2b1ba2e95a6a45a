/**
 * Data of the hostile suite (`hostile_test.ts`): a few small problems with their tests, wrong
 * programs that try to forge a pass by attacking the verdict (every one must score 0), and
 * correct programs written in styles the defences could break (every one must score 1).
 *
 * Each attack program is wrong on purpose (`add` returns 0, `uniq` returns `[]` ...): the only
 * way it could score 1 is by defeating the verdict. Attacks are grouped by class:
 * `early-exit`, `assert-machinery` (patched assertions, builtins, tracing, frames),
 * `serialisation` (patched printing/JSON, forged output or sentinel), `always-equal` (objects
 * whose comparison always succeeds), `intrinsics` (patched `Object.is`, `JSON`, `Promise`,
 * `console`, `Deno.stdout`, shadowing), `read-tests` (reading the expected values) and
 * `host-escape` (Python reaching the JavaScript runner).
 *
 * @module
 */

import type { CodeCase } from "./cases.ts";

/** A problem: its language and its test cases. */
export interface Problem {
  language: "python" | "javascript" | "typescript";
  tests: CodeCase[];
}

/** One program of the suite. */
export interface HostileProgram {
  name: string;
  /** The problem it answers (a key of {@link PROBLEMS}). */
  problem: string;
  /** `attack`: must score 0; `correct`: must score 1. */
  kind: "attack" | "correct";
  /** The attack class (or, for correct programs, the style exercised). */
  cls: string;
  code: string;
}

const lines = (...l: string[]) => l.join("\n");

/** The problems of the suite. */
export const PROBLEMS: Record<string, Problem> = {
  py_add: {
    language: "python",
    tests: [
      { assert: "assert add(2, 2) == 4" },
      { assert: "assert add(-3, 10) == 7\nassert add(0, 0) == 0" },
    ],
  },
  py_uniq: {
    language: "python",
    tests: [
      { assert: "assert uniq([3, 1, 3, 2]) == [1, 2, 3]" },
      { assert: "assert 5 in uniq([5, 5, 6]) and 6 in uniq([6])" },
    ],
  },
  py_close: {
    language: "python",
    tests: [
      { assert: "import math\nassert math.isclose(area(2), 12.566370614359172, rel_tol=1e-12)" },
      { assert: "from math import isclose\nassert isclose(area(1), 3.141592653589793)" },
    ],
  },
  py_abs: {
    language: "python",
    tests: [
      { assert: "assert abs(area(1) - 3.141592653589793) < 1e-12" },
      { assert: "assert all(abs(area(r) - e) < 1e-9 for r, e in [(2, 12.566370614359172)])" },
    ],
  },
  py_range: {
    language: "python",
    tests: [
      { assert: "assert 3.14 < area(1) < 3.15" },
      { assert: "assert 12.5 <= area(2) <= 12.6" },
    ],
  },
  py_count: {
    language: "python",
    tests: [
      { assert: "assert count('abca') == {'a': 2, 'b': 1, 'c': 1}" },
      { assert: "assert count('') == {}\nassert 'a' in count('ab')" },
    ],
  },
  py_point: {
    language: "python",
    tests: [
      { assert: "assert point(1, 2) == (1, 2)\nassert point(3, 4) != (4, 3)" },
      { assert: "assert type(point(0, 0)[0]) == int" },
    ],
  },
  py_shape: {
    language: "python",
    tests: [
      { assert: "assert Shape(2, 3) == Shape(2, 3)\nassert Shape(2, 3) != Shape(3, 2)" },
      { assert: "assert Shape(2, 3).area() == 6" },
    ],
  },
  py_sum_io: {
    language: "python",
    tests: [
      { input: "1 2\n", output: "3\n" },
      { input: "10 -4\n", output: "6\n" },
    ],
  },
  js_add: {
    language: "javascript",
    tests: [
      { assert: "assert.equal(add(2, 2), 4);" },
      { assert: "assert.strictEqual(add(-3, 10), 7); assert.equal(add(0, 0), 0);" },
    ],
  },
  js_uniq: {
    language: "javascript",
    tests: [
      { assert: "assert.deepEqual(uniq([3, 1, 3, 2]), [1, 2, 3]);" },
      { assert: "assert.deepEqual(uniq([2, 2]), [2]);" },
    ],
  },
  js_json: {
    language: "javascript",
    tests: [
      { assert: "assert(JSON.stringify(uniq([3, 1, 3])) === JSON.stringify([1, 3]));" },
      { assert: "assert(JSON.stringify(uniq([2, 2])) === JSON.stringify([2]));" },
    ],
  },
  js_string: {
    language: "javascript",
    tests: [
      { assert: "assert(String(uniq([5, 4, 5])) === String([4, 5]));" },
      { assert: "assert(`${uniq([7])}` === `${[7]}`);" },
    ],
  },
  js_every: {
    language: "javascript",
    tests: [
      { assert: "const r = uniq([9, 8]); assert([8, 9].every((x, i) => x === r[i]));" },
      { assert: "const r = uniq([1]); assert([1].every((x, i) => x === r[i]));" },
    ],
  },
  js_is: {
    language: "javascript",
    tests: [
      { assert: "assert(Object.is(add(2, 2), 4));" },
      { assert: "assert(Object.is(add(-3, 10), 7));" },
    ],
  },
  js_area: {
    language: "javascript",
    tests: [
      { assert: "assert(Math.abs(area(1) - Math.PI) < 1e-12);" },
      { assert: "assert(Math.abs(area(2) - 4 * Math.PI) < 1e-12);" },
    ],
  },
  js_async: {
    language: "javascript",
    tests: [{ assert: "assert.equal(await addAsync(2, 2), 4);" }],
  },
  ts_add: {
    language: "typescript",
    tests: [{ assert: "assert.equal(add(2, 2), 4); assert.equal(add(1, -1), 0);" }],
  },
  js_sum_io: {
    language: "javascript",
    tests: [
      { input: "1 2\n", output: "3\n" },
      { input: "10 -4\n", output: "6\n" },
    ],
  },
};

const WRONG_ADD_PY = "def add(a, b):\n    return 0\n";
const WRONG_ADD_JS = "function add(a, b) { return 0; }\n";

/** The programs of the suite: attacks first, then correct ones. */
export const PROGRAMS: HostileProgram[] = [
  // ---------------------------------------------------------------- Python attacks
  {
    name: "py: json.dumps patched to report ok (known forgery)",
    problem: "py_add",
    kind: "attack",
    cls: "serialisation",
    code: WRONG_ADD_PY +
      `import json; _d=json.dumps; json.dumps=lambda o,*a,**k:_d({**o,"status":"ok","phase":"done"})`,
  },
  {
    name: "py: pyodide_js → globalThis, JSON.stringify patched (known forgery)",
    problem: "py_add",
    kind: "attack",
    cls: "host-escape",
    code: WRONG_ADD_PY + lines(
      "import pyodide_js",
      "G = pyodide_js.runPython.constructor('return globalThis')()",
      `G.eval('const S=JSON.stringify; JSON.stringify=(o)=>S(o&&o.type==="result"?{...o,status:"ok",phase:"done"}:o)')`,
    ),
  },
  {
    name: "py: import js, climb to Function",
    problem: "py_add",
    kind: "attack",
    cls: "host-escape",
    code: WRONG_ADD_PY + lines(
      "import js",
      "G = js.constructor.constructor('return globalThis')()",
      "G.JSON.stringify = lambda *a: '{}'",
    ),
  },
  {
    name: "py: event loop globals → _pyodide_core.to_js → Function('return globalThis')",
    problem: "py_add",
    kind: "attack",
    cls: "host-escape",
    code: WRONG_ADD_PY + lines(
      "import asyncio",
      "policy = asyncio.get_event_loop_policy()",
      "g = type(policy).get_event_loop.__globals__",
      "core = g['create_once_callable'].__self__",
      "o = core.to_js({})",
      "G = o.constructor.constructor('return globalThis')()",
      "G.Object.prototype.toJSON = lambda *a: {'type': 'result', 'status': 'ok', 'phase': 'done'}",
    ),
  },
  {
    name: "py: prototype pollution through a JsProxy (no eval needed)",
    problem: "py_add",
    kind: "attack",
    cls: "host-escape",
    code: WRONG_ADD_PY + lines(
      "import asyncio",
      "g = type(asyncio.get_event_loop_policy()).get_event_loop.__globals__",
      "core = g['create_once_callable'].__self__",
      "proto = core.to_js({}).constructor.prototype",
      "proto.toJSON = core.create_proxy(lambda *a: {'status': 'ok', 'phase': 'done'})",
    ),
  },
  {
    name: "py: re-create _pyodide_core behind the import system",
    problem: "py_add",
    kind: "attack",
    cls: "host-escape",
    code: WRONG_ADD_PY + lines(
      "import _imp, types",
      "core = _imp.create_builtin(types.SimpleNamespace(name='_pyodide_core'))",
      "G = core.to_js({}).constructor.constructor('return globalThis')()",
    ),
  },
  {
    name: "py: ctypes / _testinternalcapi for raw memory",
    problem: "py_add",
    kind: "attack",
    cls: "host-escape",
    code: WRONG_ADD_PY + lines(
      "try:",
      "    import ctypes",
      "except Exception:",
      "    import _testinternalcapi",
    ),
  },
  {
    name: "py: sys.exit(0) before the tests",
    problem: "py_add",
    kind: "attack",
    cls: "early-exit",
    code: WRONG_ADD_PY + "import sys\nsys.exit(0)",
  },
  {
    name: "py: os._exit(0) before the tests",
    problem: "py_add",
    kind: "attack",
    cls: "early-exit",
    code: WRONG_ADD_PY + "import os\nos._exit(0)",
  },
  {
    name: "py: raise SystemExit(0) from inside add during the tests",
    problem: "py_add",
    kind: "attack",
    cls: "early-exit",
    code: "def add(a, b):\n    raise SystemExit(0)\n",
  },
  {
    name: "py: sys.settrace jumps over the assertion",
    problem: "py_add",
    kind: "attack",
    cls: "assert-machinery",
    code: lines(
      "import sys",
      "def tracer(frame, event, arg):",
      "    if event == 'line' and frame.f_code.co_filename == 'tests.py':",
      "        frame.f_lineno = frame.f_lineno + 1",
      "    return tracer",
      "def add(a, b):",
      "    try:",
      "        sys.settrace(tracer); sys._getframe(1).f_trace = tracer",
      "    except Exception:",
      "        pass",
      "    return 0",
    ),
  },
  {
    name: "py: sys.monitoring LINE callback jumps over the assertion",
    problem: "py_add",
    kind: "attack",
    cls: "assert-machinery",
    code: lines(
      "import sys",
      "M = sys.monitoring",
      "def on_line(code, line):",
      "    if code.co_filename == 'tests.py':",
      "        import inspect",
      "        inspect.currentframe().f_back.f_lineno = line + 1",
      "try:",
      "    M.use_tool_id(4, 'x'); M.register_callback(4, M.events.LINE, on_line)",
      "    M.set_events(4, M.events.LINE)",
      "except Exception:",
      "    pass",
      "def add(a, b):",
      "    return 0",
    ),
  },
  {
    name: "py: builtins.abs and builtins.all patched",
    problem: "py_abs",
    kind: "attack",
    cls: "assert-machinery",
    code: lines(
      "import builtins, math",
      "builtins.abs = lambda x: 0",
      "builtins.all = lambda *a: True",
      "def area(r):",
      "    return 0.0",
    ),
  },
  {
    name: "py: math.isclose patched, and sys.modules['math'] replaced",
    problem: "py_close",
    kind: "attack",
    cls: "assert-machinery",
    code: lines(
      "import math, sys, types",
      "math.isclose = lambda *a, **k: True",
      "fake = types.ModuleType('math'); fake.isclose = lambda *a, **k: True",
      "sys.modules['math'] = fake",
      "def area(r):",
      "    return 0.0",
    ),
  },
  {
    name: "py: the tests' frame rewritten through sys._getframe",
    problem: "py_add",
    kind: "attack",
    cls: "assert-machinery",
    code: lines(
      "import sys",
      "def add(a, b):",
      "    try:",
      "        f = sys._getframe(1)",
      "        f.f_builtins['AssertionError'] = type('X', (Exception,), {})",
      "        consts = [c for c in f.f_code.co_consts if isinstance(c, int)]",
      "        return consts[-1] if consts else 0",
      "    except Exception:",
      "        return 0",
    ),
  },
  {
    name: "py: the tests' frame reached through a traceback, a generator and a signal",
    problem: "py_add",
    kind: "attack",
    cls: "read-tests",
    code: lines(
      "import signal",
      "def caller_frames():",
      "    got = []",
      "    try:",
      "        raise ValueError",
      "    except ValueError as e:",
      "        try: got.append(e.__traceback__.tb_frame.f_back)",
      "        except Exception: pass",
      "    def gen():",
      "        yield 1",
      "    g = gen()",
      "    try: got.append(g.gi_frame)",
      "    except Exception: pass",
      "    try:",
      "        signal.signal(signal.SIGUSR1, lambda s, f: got.append(f.f_back))",
      "        signal.raise_signal(signal.SIGUSR1)",
      "    except Exception: pass",
      "    return [f for f in got if f is not None]",
      "def add(a, b):",
      "    for f in caller_frames():",
      "        for c in f.f_code.co_consts:",
      "            if isinstance(c, int) and c not in (a, b):",
      "                return c",
      "    return 0",
    ),
  },
  {
    name: "py: gc.get_objects finds the tests' code, an audit hook watches exec",
    problem: "py_add",
    kind: "attack",
    cls: "read-tests",
    code: lines(
      "import gc, sys",
      "seen = []",
      "try:",
      "    sys.addaudithook(lambda ev, args: seen.append(args[0]) if ev == 'exec' else None)",
      "except Exception:",
      "    pass",
      "def add(a, b):",
      "    pool = list(seen)",
      "    try: pool += gc.get_objects()",
      "    except Exception: pass",
      "    for o in pool:",
      "        if type(o).__name__ == 'code' and o.co_filename == 'tests.py':",
      "            return [c for c in o.co_consts if isinstance(c, int)][-1]",
      "    return 0",
    ),
  },
  {
    name: "py: forged bytecode (code.replace) and the old harness in __main__",
    problem: "py_add",
    kind: "attack",
    cls: "assert-machinery",
    code: lines(
      "import __main__",
      "def add(a, b):",
      "    return 0",
      "try:",
      "    add.__code__ = add.__code__.replace(co_code=b'\\x97\\x00\\x79\\x00')",
      "except Exception:",
      "    pass",
      "for name in dir(__main__):",
      "    obj = getattr(__main__, name)",
      "    if callable(obj) and name.startswith('_rlvr'):",
      '        obj.__code__ = (lambda *a: \'{"status": "ok", "phase": "done"}\').__code__',
    ),
  },
  {
    name: "py: __eq__ always True",
    problem: "py_add",
    kind: "attack",
    cls: "always-equal",
    code: lines(
      "class Any:",
      "    def __eq__(self, other):",
      "        return True",
      "    __hash__ = object.__hash__",
      "def add(a, b):",
      "    return Any()",
    ),
  },
  {
    name: "py: int subclass that claims equality",
    problem: "py_add",
    kind: "attack",
    cls: "always-equal",
    code: lines(
      "class Liar(int):",
      "    def __eq__(self, other): return True",
      "    def __ne__(self, other): return False",
      "    __hash__ = int.__hash__",
      "def add(a, b):",
      "    return Liar(0)",
    ),
  },
  {
    name: "py: list subclass and element liars",
    problem: "py_uniq",
    kind: "attack",
    cls: "always-equal",
    code: lines(
      "class Yes:",
      "    def __eq__(self, o): return True",
      "    def __hash__(self): return 0",
      "class L(list):",
      "    def __eq__(self, o): return True",
      "    def __contains__(self, x): return True",
      "def uniq(xs):",
      "    return L([Yes(), Yes(), Yes()]) if xs else L()",
    ),
  },
  {
    name: "py: arithmetic liar for abs(x - y) < eps and a < x < b",
    problem: "py_abs",
    kind: "attack",
    cls: "always-equal",
    code: lines(
      "class Z:",
      "    def __sub__(self, o): return self",
      "    def __rsub__(self, o): return self",
      "    def __abs__(self): return self",
      "    def __lt__(self, o): return True",
      "    def __gt__(self, o): return True",
      "    def __le__(self, o): return True",
      "    def __ge__(self, o): return True",
      "    def __eq__(self, o): return True",
      "    __hash__ = object.__hash__",
      "def area(r):",
      "    return Z()",
    ),
  },
  {
    name: "py: ordering liar for a < x < b",
    problem: "py_range",
    kind: "attack",
    cls: "always-equal",
    code: lines(
      "class Between:",
      "    def __lt__(self, o): return True",
      "    def __gt__(self, o): return True",
      "    def __le__(self, o): return True",
      "    def __ge__(self, o): return True",
      "def area(r):",
      "    return Between()",
    ),
  },
  {
    name: "py: dict with liar keys; dict subclass with __eq__",
    problem: "py_count",
    kind: "attack",
    cls: "always-equal",
    code: lines(
      "class K(str):",
      "    def __eq__(self, o): return True",
      "    def __hash__(self): return hash('a')",
      "class D(dict):",
      "    def __eq__(self, o): return True",
      "    def __contains__(self, k): return k != 'z'",
      "def count(s):",
      "    return D({K('q'): 2, K('r'): 1, K('s'): 1})",
    ),
  },
  {
    name: "py: metaclass __eq__ for type(x) == int; tuple subclass liar",
    problem: "py_point",
    kind: "attack",
    cls: "always-equal",
    code: lines(
      "class Meta(type):",
      "    def __eq__(cls, o): return True",
      "    __hash__ = type.__hash__",
      "class Odd(metaclass=Meta):",
      "    pass",
      "class T(tuple):",
      "    def __eq__(self, o): return True",
      "    def __ne__(self, o): return True",
      "    __hash__ = tuple.__hash__",
      "def point(x, y):",
      "    return T((Odd(), Odd()))",
    ),
  },
  {
    name: "py: forged reply line on stdout, then exit",
    problem: "py_sum_io",
    kind: "attack",
    cls: "serialisation",
    code: lines(
      "import sys, uuid, os",
      'line = \'\\n%s {"type":"result","id":0,"status":"ok","stdout":"3\\\\n"}\\n\'',
      "for _ in range(3):",
      "    os.write(1, (line % uuid.uuid4()).encode())",
      "print(sys.stdin.read())",
      "sys.exit(0)",
    ),
  },
  {
    name: "py: output written around the capture, to the runner's real stdout",
    problem: "py_sum_io",
    kind: "attack",
    cls: "host-escape",
    code: lines(
      "import asyncio",
      "g = type(asyncio.get_event_loop_policy()).get_event_loop.__globals__",
      "core = g['create_once_callable'].__self__",
      "G = core.to_js({}).constructor.constructor('return globalThis')()",
      "G.Deno.stdout.writeSync(G.TextEncoder.new().encode('3\\n'))",
    ),
  },
  // ---------------------------------------------------------------- JavaScript attacks
  {
    name: "js: Promise.prototype.then subverted (known forgery)",
    problem: "js_add",
    kind: "attack",
    cls: "intrinsics",
    code: WRONG_ADD_JS +
      "const T=Promise.prototype.then;Promise.prototype.constructor=function(){};Promise.prototype.then=function(ok){return T.call(this,ok,()=>ok&&ok())}",
  },
  {
    name: "js: Deno.exit(0) before the tests",
    problem: "js_add",
    kind: "attack",
    cls: "early-exit",
    code: WRONG_ADD_JS + "Deno.exit(0);",
  },
  {
    name: "js: process.exit(0) from inside add during the tests",
    problem: "js_add",
    kind: "attack",
    cls: "early-exit",
    code: "function add(a, b) { process.exit(0); }",
  },
  {
    name: "js: a pending promise and a timer that exits",
    problem: "js_async",
    kind: "attack",
    cls: "early-exit",
    code:
      "function addAsync(a, b) { setTimeout(() => Deno.exit(0), 10); return new Promise(() => {}); }",
  },
  {
    name: "js: rejection swallowed by an unhandledrejection handler",
    problem: "js_add",
    kind: "attack",
    cls: "early-exit",
    code: WRONG_ADD_JS +
      "globalThis.addEventListener('unhandledrejection', (e) => e.preventDefault());\n" +
      "globalThis.addEventListener('error', (e) => e.preventDefault());",
  },
  {
    name: "js: node:assert methods replaced",
    problem: "js_add",
    kind: "attack",
    cls: "assert-machinery",
    code: 'import a from "node:assert/strict";\nimport b from "node:assert";\n' + WRONG_ADD_JS +
      "for (const m of ['equal', 'strictEqual', 'ok', 'deepEqual']) { try { a[m] = () => {}; } catch {} try { b[m] = () => {}; } catch {} try { Object.defineProperty(a, m, { value: () => {} }); } catch {} }\n" +
      "try { a.AssertionError.prototype.name = 'Fine'; } catch {}",
  },
  {
    name: "js: JSON.stringify replaced (and the global JSON)",
    problem: "js_json",
    kind: "attack",
    cls: "serialisation",
    code: "function uniq(xs) { return []; }\n" +
      "try { JSON.stringify = () => 'x'; } catch {}\ntry { Object.defineProperty(JSON, 'stringify', { value: () => 'x' }); } catch {}\n" +
      "try { globalThis.JSON = { stringify: () => 'x' }; } catch {}",
  },
  {
    name: "js: Object.is replaced",
    problem: "js_is",
    kind: "attack",
    cls: "intrinsics",
    code: WRONG_ADD_JS +
      "try { Object.is = () => true; } catch {}\ntry { Object.defineProperty(Object, 'is', { value: () => true }); } catch {}",
  },
  {
    name: "js: Array.prototype.every replaced",
    problem: "js_every",
    kind: "attack",
    cls: "intrinsics",
    code: "function uniq(xs) { return []; }\n" +
      "try { Array.prototype.every = () => true; } catch {}\ntry { Object.defineProperty(Array.prototype, 'every', { value: () => true }); } catch {}",
  },
  {
    name: "js: the global String replaced",
    problem: "js_string",
    kind: "attack",
    cls: "intrinsics",
    code: "function uniq(xs) { return []; }\n" +
      "try { globalThis.String = () => 'x'; } catch {}\ntry { Object.defineProperty(globalThis, 'String', { value: () => 'x' }); } catch {}",
  },
  {
    name: "js: toJSON added to Object.prototype and Array.prototype",
    problem: "js_json",
    kind: "attack",
    cls: "serialisation",
    code:
      "const hook = () => { for (const p of [Object.prototype, Array.prototype]) { try { p.toJSON = () => 'same'; } catch {} try { Object.defineProperty(p, 'toJSON', { value: () => 'same' }); } catch {} } };\n" +
      "function uniq(xs) { hook(); return [0]; }\nhook();",
  },
  {
    name: "js: Symbol.toPrimitive added to Array.prototype (top level and during the tests)",
    problem: "js_string",
    kind: "attack",
    cls: "always-equal",
    code:
      "const hook = () => { try { Array.prototype[Symbol.toPrimitive] = () => 'same'; } catch {} };\n" +
      "function uniq(xs) { hook(); return [0]; }\nhook();",
  },
  {
    name: "js: module-scope const JSON shadows the global",
    problem: "js_json",
    kind: "attack",
    cls: "intrinsics",
    code: "const JSON = { stringify: () => 'x' };\nfunction uniq(xs) { return []; }",
  },
  {
    name: "js: module-scope String and Object shadow the globals",
    problem: "js_string",
    kind: "attack",
    cls: "intrinsics",
    code:
      "const String = () => 'x';\nconst Object = { is: () => true };\nfunction uniq(xs) { return []; }",
  },
  {
    name: "js: Math.abs replaced and shadowed",
    problem: "js_area",
    kind: "attack",
    cls: "intrinsics",
    code:
      "function area(r) { return 0; }\ntry { Math.abs = () => 0; } catch {}\ntry { globalThis.Math = { abs: () => 0, PI: 0 }; } catch {}",
  },
  {
    name: "js: console.log and Deno.stdout.writeSync patched to forge the sentinel",
    problem: "js_add",
    kind: "attack",
    cls: "intrinsics",
    code: WRONG_ADD_JS +
      "const w = Deno.stdout.writeSync.bind(Deno.stdout);\n" +
      "Deno.stdout.writeSync = (b) => w(new TextEncoder().encode('\\nrlvr-tests-done-' + crypto.randomUUID().replaceAll('-', '') + '\\n'));\n" +
      "console.log = () => {};\naddEventListener('unload', () => { Deno.stdout.writeSync(new Uint8Array(0)); });",
  },
  {
    name: "js: a Worker prints guessed sentinels after the failure",
    problem: "js_add",
    kind: "attack",
    cls: "serialisation",
    code: WRONG_ADD_JS +
      "new Worker('data:text/javascript,' + encodeURIComponent(\"for (let i = 0; i < 50; i++) console.log('rlvr-tests-done-' + crypto.randomUUID().replaceAll('-', ''));\"), { type: 'module' });",
  },
  {
    name: "js: valueOf / Symbol.toPrimitive / Proxy pretending to be the answer",
    problem: "js_uniq",
    kind: "attack",
    cls: "always-equal",
    code: "function uniq(xs) {\n" +
      "  const target = [];\n" +
      "  return new Proxy(target, { get: (t, k) => k === 'length' ? xs.length : k === Symbol.toPrimitive ? () => String(xs) : k === 'every' ? () => true : k === 'toJSON' ? () => xs : Reflect.get(t, k), ownKeys: () => ['length'], getPrototypeOf: () => Array.prototype });\n" +
      "}",
  },
  {
    name: "js: read the tests' source through a self-import",
    problem: "js_add",
    kind: "attack",
    cls: "read-tests",
    code: "import * as me from './main.js';\n" +
      "function add(a, b) {\n" +
      "  for (const v of Object.values(me)) {\n" +
      "    const m = /add\\(2, 2\\), (\\d+)/.exec(Function.prototype.toString.call(v)) ?? /add\\(2, 2\\), (\\d+)/.exec(String(v));\n" +
      "    if (m) return Number(m[1]);\n" +
      "  }\n" +
      "  return 0;\n" +
      "}",
  },
  {
    name: "js: replace the exported test function through direct eval",
    problem: "js_add",
    kind: "attack",
    cls: "assert-machinery",
    code: "import * as me from './main.js';\n" + WRONG_ADD_JS +
      "await null;\nfor (const k of Object.keys(me)) { try { eval(k + ' = async () => {}'); } catch {} }",
  },
  {
    name: "js: run the exported tests from inside add with a recording assert",
    problem: "js_add",
    kind: "attack",
    cls: "read-tests",
    code: 'import * as me from "./main.js";\n' +
      "const expected = []; let recording = false; let calls = 0;\n" +
      "function add(a, b) {\n" +
      "  if (recording) return 0;\n" +
      "  if (calls === 0) {\n" +
      "    recording = true;\n" +
      "    const rec = new Proxy({}, { get: () => (actual, want) => { expected.push(want); } });\n" +
      "    for (const k of Object.keys(me)) { try { me[k](rec, rec); } catch {} }\n" +
      "    recording = false;\n" +
      "  }\n" +
      "  return expected[calls++] ?? 0;\n" +
      "}",
  },
  {
    name: "js: the prelude found through a stack trace, its exports rewritten",
    problem: "js_json",
    kind: "attack",
    cls: "intrinsics",
    code: "function uniq(xs) { return []; }\n" +
      "let url = null;\ntry { Function.prototype.toString.call({}); } catch (e) { url = /(file:[^\\s)]+_rlvr_[0-9a-f]+\\.js)/.exec(e.stack)?.[1]; }\n" +
      "if (url) { const ns = await import(url); for (let i = 0; i < ns.intrinsics.length; i++) { try { ns.intrinsics[i] = { stringify: () => 'x', is: () => true }; } catch {} } try { ns.assert.deepEqual = () => {}; } catch {} }",
  },
  {
    name: "js: callsites of the caller through Error.prepareStackTrace",
    problem: "js_add",
    kind: "attack",
    cls: "read-tests",
    code: "function add(a, b) {\n" +
      "  try { Error.prepareStackTrace = (e, cs) => cs; const cs = new Error().stack; for (const c of cs) { const f = c.getFunction?.(); if (f) { const m = /add\\(2, 2\\), (\\d+)/.exec(String(f)); if (m) return Number(m[1]); } } } catch {}\n" +
      "  return 0;\n" +
      "}",
  },
  {
    name: "js: an unclosed comment swallows the tests",
    problem: "js_add",
    kind: "attack",
    cls: "assert-machinery",
    code: WRONG_ADD_JS + "/*",
  },
  {
    name: "js: stdin/stdout case, exit before any output",
    problem: "js_sum_io",
    kind: "attack",
    cls: "early-exit",
    code: "Deno.exit(0);",
  },
  {
    name: "js: stdin/stdout case, fake sentinel and echo",
    problem: "js_sum_io",
    kind: "attack",
    cls: "serialisation",
    code: "const s = require('fs').readFileSync(0, 'utf8');\n" +
      "console.log('rlvr-tests-done-' + crypto.randomUUID().replaceAll('-', ''));\nprocess.stdout.write(s);",
  },
  // ---------------------------------------------------------------- Python, correct
  {
    name: "py ok: add",
    problem: "py_add",
    kind: "correct",
    cls: "plain",
    code: "def add(a, b):\n    return a + b\n",
  },
  {
    name: "py ok: add with logging, warnings, typing and a dataclass",
    problem: "py_add",
    kind: "correct",
    cls: "stdlib",
    code: lines(
      "import logging, warnings",
      "from dataclasses import dataclass",
      "from typing import NamedTuple",
      "from collections import namedtuple",
      "from enum import Enum",
      "@dataclass",
      "class Pair:",
      "    a: int",
      "    b: int",
      "class P(NamedTuple):",
      "    x: int",
      "Q = namedtuple('Q', 'x y')",
      "Color = Enum('Color', 'RED GREEN')",
      "def add(a, b):",
      "    logging.getLogger('x').warning('adding %s %s', a, b)",
      "    warnings.warn('careful', stacklevel=2) if a is None else None",
      "    return Pair(a, b).a + P(b).x + 0 * Q(1, 2).x",
    ),
  },
  {
    name: "py ok: add returning an int subclass and an IntEnum",
    problem: "py_add",
    kind: "correct",
    cls: "builtin-subclass",
    code: lines(
      "from enum import IntEnum",
      "class N(int):",
      "    def __repr__(self):",
      "        return 'N(%d)' % self",
      "Four = IntEnum('Four', [('FOUR', 4)])",
      "def add(a, b):",
      "    return Four.FOUR if a + b == 4 else N(a + b)",
    ),
  },
  {
    name: "py ok: uniq with sorted(set())",
    problem: "py_uniq",
    kind: "correct",
    cls: "plain",
    code: "def uniq(xs):\n    return sorted(set(xs))\n",
  },
  {
    name: "py ok: uniq through a list subclass and a generator",
    problem: "py_uniq",
    kind: "correct",
    cls: "builtin-subclass",
    code: lines(
      "class Out(list):",
      "    def __repr__(self):",
      "        return 'Out' + super().__repr__()",
      "def gen(xs):",
      "    seen = set()",
      "    for x in sorted(xs):",
      "        if x not in seen:",
      "            seen.add(x)",
      "            yield x",
      "def uniq(xs):",
      "    return Out(gen(xs))",
    ),
  },
  {
    name: "py ok: area with math.pi (math.isclose tests)",
    problem: "py_close",
    kind: "correct",
    cls: "plain",
    code: "import math\ndef area(r):\n    return math.pi * r * r\n",
  },
  {
    name: "py ok: area with math.pi (abs tests)",
    problem: "py_abs",
    kind: "correct",
    cls: "plain",
    code: "from math import pi\n\ndef area(r):\n    return pi * r ** 2\n",
  },
  {
    name: "py ok: area as a float subclass (chained comparisons)",
    problem: "py_range",
    kind: "correct",
    cls: "builtin-subclass",
    code: lines(
      "import math",
      "class Area(float):",
      "    def __repr__(self):",
      "        return 'Area(%s)' % float(self)",
      "def area(r):",
      "    return Area(math.pi * r * r)",
    ),
  },
  {
    name: "py ok: count returning a Counter (compared with a dict)",
    problem: "py_count",
    kind: "correct",
    cls: "builtin-subclass",
    code: "from collections import Counter\ndef count(s):\n    return Counter(s)\n",
  },
  {
    name: "py ok: point returning a namedtuple (compared with a tuple)",
    problem: "py_point",
    kind: "correct",
    cls: "builtin-subclass",
    code: lines(
      "from collections import namedtuple",
      "Point = namedtuple('Point', 'x y')",
      "def point(x, y):",
      "    return Point(x, y)",
    ),
  },
  {
    name: "py ok: a class with its own __eq__, compared with itself",
    problem: "py_shape",
    kind: "correct",
    cls: "program-objects",
    code: lines(
      "class Shape:",
      "    def __init__(self, w, h):",
      "        self.w, self.h = w, h",
      "    def __eq__(self, other):",
      "        return isinstance(other, Shape) and (self.w, self.h) == (other.w, other.h)",
      "    def area(self):",
      "        return self.w * self.h",
    ),
  },
  {
    name: "py ok: a dataclass compared with itself",
    problem: "py_shape",
    kind: "correct",
    cls: "program-objects",
    code: lines(
      "from dataclasses import dataclass",
      "@dataclass(frozen=True)",
      "class Shape:",
      "    w: int",
      "    h: int",
      "    def area(self):",
      "        return self.w * self.h",
    ),
  },
  {
    name: "py ok: stdin/stdout with input()",
    problem: "py_sum_io",
    kind: "correct",
    cls: "io",
    code: "a, b = map(int, input().split())\nprint(a + b)\n",
  },
  {
    name: "py ok: stdin/stdout with sys.stdin, asyncio and time.sleep",
    problem: "py_sum_io",
    kind: "correct",
    cls: "io",
    code: lines(
      "import sys, asyncio, time",
      "async def main():",
      "    await asyncio.sleep(0.01)",
      "    return sum(map(int, sys.stdin.read().split()))",
      "time.sleep(0.01)",
      "print(asyncio.run(main()))",
    ),
  },
  // ---------------------------------------------------------------- JavaScript, correct
  {
    name: "js ok: add",
    problem: "js_add",
    kind: "correct",
    cls: "plain",
    code: "function add(a, b) { return a + b; }",
  },
  {
    name: "js ok: add, with a custom Error subclass and overridden toString",
    problem: "js_add",
    kind: "correct",
    cls: "override",
    code:
      "class InputError extends Error { constructor(m) { super(m); this.name = 'InputError'; } }\n" +
      "const cache = {}; cache.constructor = 'k'; cache.toString = () => 'cache'; cache.hasOwnProperty = 1;\n" +
      "function Legacy() {} Legacy.prototype.toString = function () { return 'legacy'; };\n" +
      "function add(a, b) { if (typeof a !== 'number') throw new InputError('a'); return a + b + (String(new Legacy()) === 'legacy' ? 0 : 1); }",
  },
  {
    name: "ts ok: add, typed",
    problem: "ts_add",
    kind: "correct",
    cls: "plain",
    code: "const add = (a: number, b: number): number => a + b;\nexport {};",
  },
  {
    name: "js ok: uniq with Set and sort",
    problem: "js_uniq",
    kind: "correct",
    cls: "plain",
    code: "function uniq(xs) { return [...new Set(xs)].sort((a, b) => a - b); }",
  },
  {
    name: "js ok: uniq extending Array.prototype (a classic exercise)",
    problem: "js_uniq",
    kind: "correct",
    cls: "override",
    code:
      "Array.prototype.distinct = function () { return this.filter((x, i) => this.indexOf(x) === i); };\n" +
      "String.prototype.shout = function () { return this.toUpperCase(); };\n" +
      "function uniq(xs) { return xs.distinct().sort((a, b) => a - b); }",
  },
  {
    name: "js ok: uniq (JSON.stringify tests)",
    problem: "js_json",
    kind: "correct",
    cls: "plain",
    code: "const uniq = (xs) => Array.from(new Set(xs)).sort((a, b) => a - b);",
  },
  {
    name: "js ok: uniq (String and template tests)",
    problem: "js_string",
    kind: "correct",
    cls: "plain",
    code:
      "function uniq(xs) { const out = []; for (const x of [...xs].sort()) if (out.at(-1) !== x) out.push(x); return out; }",
  },
  {
    name: "js ok: uniq with a Map (every tests)",
    problem: "js_every",
    kind: "correct",
    cls: "plain",
    code:
      "function uniq(xs) { const m = new Map(); for (const x of xs) m.set(x, true); return [...m.keys()].sort((a, b) => a - b); }",
  },
  {
    name: "js ok: add (Object.is tests)",
    problem: "js_is",
    kind: "correct",
    cls: "plain",
    code: "var add = function (a, b) { return a + b; };",
  },
  {
    name: "js ok: area with Math.PI",
    problem: "js_area",
    kind: "correct",
    cls: "plain",
    code: "function area(r) { return Math.PI * r * r; }",
  },
  {
    name: "js ok: async add",
    problem: "js_async",
    kind: "correct",
    cls: "async",
    code:
      "async function addAsync(a, b) { await new Promise((r) => setTimeout(r, 5)); return a + b; }",
  },
  {
    name: "js ok: stdin/stdout with readline",
    problem: "js_sum_io",
    kind: "correct",
    cls: "io",
    code: "const rl = require('readline').createInterface({ input: process.stdin });\n" +
      "rl.on('line', (l) => { const [a, b] = l.split(' ').map(Number); console.log(a + b); });",
  },
  {
    name: "js ok: stdin/stdout with fs, os and util",
    problem: "js_sum_io",
    kind: "correct",
    cls: "io",
    code: "const fs = require('fs'); const os = require('os'); const util = require('util');\n" +
      "const [a, b] = fs.readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n" +
      "process.stdout.write(util.format('%d', a + b) + os.EOL);",
  },
];
