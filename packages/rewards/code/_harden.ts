/**
 * Internal: locks the JavaScript intrinsics of a sandbox child before untrusted code runs.
 *
 * A verdict computed in the same realm as the program under test is only as good as the
 * built-ins it relies on: a program that replaces `Promise.prototype.then`, `Object.is`,
 * `JSON.stringify` or `Array.prototype.every` (or adds `Object.prototype.toJSON`) could make a
 * failing test look passing. {@link hardenIntrinsics} walks every ECMAScript intrinsic reachable
 * from the standard globals (constructors, prototypes, namespaces such as `Math` and `JSON`,
 * hidden ones such as `%IteratorPrototype%`) and the extra roots it is given (e.g.
 * `node:assert`), makes every own property read-only and non-configurable, and makes the global
 * bindings of the intrinsics read-only. Web and Deno APIs are left alone.
 *
 * Objects are also made non-extensible, except the ones passed as `extensible` (the JavaScript
 * sandbox passes the prototypes of `Array`, `Function`, `String`, `Number` and `Date`):
 * programs legitimately extend those (`Array.prototype.last = ...` is a classic exercise), so
 * a caller that allows it must seal them itself once the program's own set-up has run, after
 * checking that no hook a built-in operation looks up by name (`toJSON`, `Symbol.toPrimitive`,
 * ...) was added there (pinning such hooks to `undefined` instead would take V8 off its fast
 * paths: `Symbol.isConcatSpreadable` made `concat` 25 times slower).
 *
 * Read-only prototypes break ordinary code through the "override mistake" (assigning
 * `obj.toString = f` fails when `Object.prototype.toString` is read-only), so, as SES does, the
 * properties that programs commonly override by assignment (every property of
 * `Object.prototype`; `name`, `message`, `constructor` and `toString` of the error prototypes;
 * `constructor`, `bind` and `toString` of `Function.prototype`) become accessors whose setter
 * defines an own property on the receiver and refuses the prototype itself. Other prototypes
 * keep data properties: making methods such as `Array.prototype.push` accessors slowed
 * array-heavy code about three times. `Error` keeps a writable `stackTraceLimit` (V8 reads it,
 * runtimes assign it) and stays extensible (`Error.prepareStackTrace = f`).
 *
 * It takes about 10 ms. The function is self-contained (no imports, no outer references) so that
 * a sandbox child can run its source text (`String(hardenIntrinsics)`).
 *
 * @module
 */

/**
 * Locks the intrinsics of this realm and everything reachable from `extraRoots`; idempotent.
 * Returns how many objects it locked (0 when the realm was locked already). The objects in
 * `extensible` stay extensible (their existing properties are locked all the same).
 *
 * @example Usage
 * ```ts ignore
 * import { hardenIntrinsics } from "./_harden.ts";
 * hardenIntrinsics();
 * // Promise.prototype.then = () => {}; // now throws a TypeError (modules are strict)
 * ```
 */
export function hardenIntrinsics(
  extraRoots: readonly unknown[] = [],
  extensible: readonly unknown[] = [],
): number {
  const g = globalThis as unknown as Record<string, unknown>;
  const marker = Symbol.for("rlvr.hardened");
  if (g[marker as unknown as string] === true) return 0;
  const {
    defineProperty,
    getOwnPropertyDescriptor,
    getPrototypeOf,
    freeze,
    isFrozen,
  } = Object;
  const ownKeys = Reflect.ownKeys;
  const TypeErrorCtor = TypeError;
  type Obj = Record<PropertyKey, unknown>;
  const isObject = (v: unknown): v is Obj =>
    (typeof v === "object" && v !== null) || typeof v === "function";
  const names = [
    "Object",
    "Function",
    "Array",
    "Number",
    "Boolean",
    "String",
    "Symbol",
    "BigInt",
    "Math",
    "JSON",
    "Reflect",
    "Atomics",
    "Intl",
    "Temporal",
    "Promise",
    "Proxy",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "FinalizationRegistry",
    "Date",
    "RegExp",
    "Error",
    "AggregateError",
    "EvalError",
    "RangeError",
    "ReferenceError",
    "SyntaxError",
    "TypeError",
    "URIError",
    "SuppressedError",
    "ArrayBuffer",
    "SharedArrayBuffer",
    "DataView",
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
    "Iterator",
    "DisposableStack",
    "AsyncDisposableStack",
    "parseInt",
    "parseFloat",
    "isNaN",
    "isFinite",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "unescape",
    "eval",
  ];
  const roots: unknown[] = [];
  for (const n of names) if (n in g) roots.push(g[n]);
  // Intrinsics that no global names: reach them through an instance. (Not the `Intl.Segmenter`
  // ones: making a segmenter costs more than all the rest.)
  const hidden: (() => unknown)[] = [
    () => getPrototypeOf(function* () {}),
    () => getPrototypeOf(async function () {}),
    () => getPrototypeOf(async function* () {}),
    () => getPrototypeOf([][Symbol.iterator]()),
    () => getPrototypeOf(new Map()[Symbol.iterator]()),
    () => getPrototypeOf(new Set()[Symbol.iterator]()),
    () => getPrototypeOf(""[Symbol.iterator]()),
    () => getPrototypeOf("a".matchAll(/a/g)),
    () => getPrototypeOf([].values().map((x) => x)),
    () => getPrototypeOf(Iterator.from({ next: () => ({ done: true, value: undefined }) })),
    () => getPrototypeOf(getPrototypeOf((async function* () {})())),
    () => getPrototypeOf(Int8Array),
  ];
  for (const h of hidden) {
    try {
      roots.push(h());
    } catch { /* not in this runtime */ }
  }
  roots.push(...extraRoots);

  // Override taming: these become accessors before the lock.
  const tame = (proto: unknown, keys: readonly PropertyKey[] | "*") => {
    if (!isObject(proto) || isFrozen(proto)) return;
    for (const key of keys === "*" ? ownKeys(proto) : keys) {
      const d = getOwnPropertyDescriptor(proto, key);
      if (d === undefined || !("value" in d) || !d.configurable) continue;
      const value = d.value;
      defineProperty(proto, key, {
        get: function () {
          return value;
        },
        set: function (this: unknown, v: unknown) {
          if (this === proto) {
            throw new TypeErrorCtor(`Cannot assign to read only property '${String(key)}'`);
          }
          if (!isObject(this)) return;
          defineProperty(this, key, {
            value: v,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        },
        enumerable: d.enumerable === true,
        configurable: false,
      });
    }
  };
  tame(Object.prototype, "*");
  tame(Function.prototype, ["constructor", "bind", "toString"]);
  tame(Error.prototype, ["constructor", "message", "name", "toString"]);
  for (
    const E of [EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError]
  ) tame(E.prototype, ["constructor", "message", "name"]);
  if (typeof AggregateError === "function") {
    tame(AggregateError.prototype, ["constructor", "message", "name"]);
  }
  const open = new Set<unknown>(extensible);
  // Every own property becomes read-only and non-configurable; objects other than the ones
  // above also become non-extensible. `Error.stackTraceLimit` stays writable (V8 reads it;
  // runtimes and libraries assign it) and `Error` extensible (`Error.prepareStackTrace = f`).
  open.add(Error);
  const seen = new Set<unknown>();
  const stack: unknown[] = [...roots];
  let locked = 0;
  while (stack.length > 0) {
    const o = stack.pop();
    if (!isObject(o) || seen.has(o)) continue;
    seen.add(o);
    locked++;
    stack.push(getPrototypeOf(o));
    const keepOpen = open.has(o);
    for (const key of ownKeys(o)) {
      const d = getOwnPropertyDescriptor(o, key)!;
      if ("value" in d) {
        stack.push(d.value);
        if (!keepOpen) continue;
        if (o === (Error as unknown) && key === "stackTraceLimit") {
          if (d.configurable) defineProperty(o, key, { configurable: false });
        } else if (d.writable || d.configurable) {
          defineProperty(o, key, { writable: false, configurable: false });
        }
      } else {
        stack.push(d.get, d.set);
        if (keepOpen && d.configurable) defineProperty(o, key, { configurable: false });
      }
    }
    // One call per object is much faster than one per property.
    if (!keepOpen) freeze(o);
  }
  // The global bindings of the intrinsics become read-only too.
  for (const n of [...names, "globalThis", "NaN", "Infinity", "undefined"]) {
    const d = getOwnPropertyDescriptor(g, n);
    if (d === undefined || !d.configurable) continue;
    if ("value" in d) defineProperty(g, n, { writable: false, configurable: false });
    else defineProperty(g, n, { configurable: false });
  }
  defineProperty(g, marker, { value: true });
  return locked;
}
