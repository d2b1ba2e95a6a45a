import assert from "node:assert/strict";
import fc from "fast-check";
import { Registry } from "./registry.ts";

type Fn = (x: number) => number;

/** Keys of the default rule, short enough to collide and to be near each other. */
const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,6}(?:-[a-z0-9_]{1,3}){0,2}\+?$/);
/** Keys over a tiny alphabet: many keys at equal distance from a query (ties). */
const nearKey = fc.stringMatching(/^[ab][ab]{0,3}$/);
const keys = fc.oneof(
  fc.uniqueArray(key, { minLength: 1, maxLength: 10 }),
  fc.uniqueArray(nearKey, { minLength: 1, maxLength: 10 }),
);
const kind = fc.constantFrom("estimator", "policy loss", "aggregation mode", "KL estimator");
const DEFAULT_RULE = /^[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*\+?$/;

/** A registry holding `names` in order; the i-th function returns i. */
function filled(k: string, names: readonly string[]): Registry<Fn> {
  const r = new Registry<Fn>(k);
  names.forEach((name, i) => r.register(name, () => i));
  return r;
}

/** Reference optimal-string-alignment distance: the full table, written out independently. */
function osa(a: string, b: string): number {
  const d = Array.from(
    { length: a.length + 1 },
    (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const sub = d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, sub);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The message of what `f` throws, checking its class. */
function thrown(f: () => unknown, cls: typeof TypeError | typeof RangeError): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${e}`);
    return e.message;
  }
  assert.fail("did not throw");
}

/** Parses `unknown <kind> "<q>"; valid keys: <list>[ (did you mean "<s>"?)]`. */
function parseUnknown(message: string, k: string, q: string) {
  const head = `unknown ${k} ${JSON.stringify(q)}; valid keys: `;
  assert.ok(message.startsWith(head), message);
  const rest = message.slice(head.length);
  const m = rest.match(/^(.*?)(?: \(did you mean ("(?:[^"\\]|\\.)*")\?\))?$/s)!;
  return { list: m[1]!, suggestion: m[2] === undefined ? undefined : JSON.parse(m[2]) as string };
}

/** A string one edit away from `s` (delete, insert, substitute or swap adjacent characters). */
const oneEdit = (s: string) =>
  fc.tuple(fc.nat(), fc.constantFrom("d", "i", "s", "t"), fc.constantFrom(..."abz09_-+")).map(
    ([n, op, c]) => {
      const p = n % (s.length + 1);
      if (op === "i") return s.slice(0, p) + c + s.slice(p);
      const q = Math.min(p, s.length - 1);
      if (op === "d") return s.slice(0, q) + s.slice(q + 1);
      if (op === "s") return s.slice(0, q) + c + s.slice(q + 1);
      if (q + 1 >= s.length) return s.slice(0, q) + c + s.slice(q + 1);
      return s.slice(0, q) + s[q + 1] + s[q] + s.slice(q + 2);
    },
  );

Deno.test("Registry: register/get round trip; has; names() and entries() in registration order", () => {
  fc.assert(
    fc.property(kind, keys, (k, names) => {
      const r = filled(k, names);
      names.forEach((name, i) => {
        assert.equal(r.has(name), true);
        assert.equal(r.get(name)(0), i);
      });
      assert.deepEqual(r.names(), names);
      assert.deepEqual(r.entries().map(([name, f]) => [name, f(0)]), names.map((n, i) => [n, i]));
      r.names().pop(); // a fresh array each call
      assert.deepEqual(r.names(), names);
    }),
  );
});

Deno.test("Registry: a taken key is refused without override (registry unchanged); override replaces in place", () => {
  fc.assert(
    fc.property(kind, keys, fc.nat(), (k, names, n) => {
      const r = filled(k, names);
      const dup = names[n % names.length]!;
      const before = names.indexOf(dup);
      for (const options of [undefined, {}, { override: false }]) {
        const msg = thrown(() => r.register(dup, () => -1, options), RangeError);
        assert.equal(
          msg,
          `${k} ${
            JSON.stringify(dup)
          } is already registered; pass { override: true } to replace it`,
        );
        assert.equal(r.get(dup)(0), before);
      }
      r.register(dup, () => -1, { override: true });
      assert.equal(r.get(dup)(0), -1);
      assert.deepEqual(r.names(), names); // the key keeps its place
    }),
  );
});

Deno.test("Registry: an unknown key lists every valid key in order, and suggests only close keys", () => {
  const query = (names: string[]) =>
    fc.oneof(
      fc.string({ maxLength: 10 }),
      key,
      nearKey,
      fc.constantFrom(...names).chain(oneEdit),
      fc.constantFrom(...names).map((s) => s.toUpperCase()),
    ).filter((q) => !names.includes(q));
  fc.assert(
    fc.property(
      kind,
      keys.chain((names) => fc.tuple(fc.constant(names), query(names))),
      (k, [names, q]) => {
        const r = filled(k, names);
        assert.equal(r.has(q), false);
        const { list, suggestion } = parseUnknown(thrown(() => r.get(q), RangeError), k, q);
        assert.equal(list, names.join(", "));
        const distances = names.map((n) => osa(q.toLowerCase(), n));
        const min = Math.min(...distances);
        const limit = Math.max(1, Math.floor(q.length / 3));
        if (min <= limit) {
          // the earliest registered key at the smallest distance
          assert.equal(suggestion, names[distances.indexOf(min)]);
        } else {
          assert.equal(suggestion, undefined);
        }
      },
    ),
  );
});

Deno.test("Registry: a key one edit from a registered key always gets a registered suggestion within one edit", () => {
  fc.assert(
    fc.property(
      keys.chain((names) => fc.tuple(fc.constant(names), fc.constantFrom(...names).chain(oneEdit))),
      ([names, q]) => {
        fc.pre(!names.includes(q));
        const r = filled("estimator", names);
        const { suggestion } = parseUnknown(thrown(() => r.get(q), RangeError), "estimator", q);
        assert.ok(suggestion !== undefined && names.includes(suggestion), `${q}: ${suggestion}`);
        assert.ok(osa(q, suggestion) <= 1);
      },
    ),
  );
});

Deno.test("Registry: bad keys and non-functions are TypeErrors naming the kind and the value; nothing is registered", () => {
  fc.assert(
    fc.property(
      kind,
      fc.oneof(
        fc.string({ maxLength: 12 }).filter((s) => !DEFAULT_RULE.test(s)),
        // a valid key broken in one place
        fc.tuple(key, fc.nat(), fc.constantFrom("A", "Z", " ", ".", "/", "--", "é")).map(
          ([k, n, c]) => k.slice(0, n % (k.length + 1)) + c + k.slice(n % (k.length + 1)),
        ).filter((s) => !DEFAULT_RULE.test(s)),
        fc.tuple(fc.constantFrom("0", "_", "-", "+", "A"), key).map(([c, k]) => c + k),
        fc.integer(),
      ),
      (k, bad) => {
        const r = new Registry<Fn>(k);
        const msg = thrown(() => r.register(bad as string, (x) => x), TypeError);
        assert.ok(msg.startsWith(`invalid ${k} key ${JSON.stringify(bad)}: `), msg);
        assert.deepEqual(r.names(), []);
      },
    ),
  );
  fc.assert(
    fc.property(kind, key, fc.oneof(fc.integer(), fc.string(), fc.constant(null)), (k, name, v) => {
      const r = new Registry<Fn>(k);
      const msg = thrown(() => r.register(name, v as never), TypeError);
      assert.equal(
        msg,
        `${k} ${JSON.stringify(name)} must be a function, got ${JSON.stringify(v)}`,
      );
      assert.equal(r.has(name), false);
    }),
  );
});

Deno.test("Registry: the default key rule admits every built-in name of the workspace's registries", () => {
  const r = new Registry<() => void>("name");
  const builtIns = [
    "grpo",
    "reinforce_plus_plus_baseline",
    "grpo_passk",
    "seq-mean-token-mean",
    "seq-mean-token-sum-norm",
    "token-mean",
    "w_reinforce",
    "k3",
    "low_var_kl",
    "k3+",
    "low_var_kl+",
  ];
  for (const name of builtIns) r.register(name, () => {});
  assert.deepEqual(r.names(), builtIns);
  for (const bad of ["", "Grpo", "1grpo", "-grpo", "grpo-", "a--b", "k3++", "a+b", "a b", "_a"]) {
    assert.throws(() => r.register(bad, () => {}), TypeError, bad);
  }
});

Deno.test("Registry: custom key rule, context prefix, empty registry, constructor checks", () => {
  const r = new Registry<() => void>("handler", { key: /^[A-Z]+$/, keyRule: "capitals only" });
  r.register("ON", () => {});
  assert.throws(
    () => r.register("on", () => {}),
    /^TypeError: invalid handler key "on": capitals only$/,
  );
  assert.throws(
    () => r.get("OM", "switch: mode"),
    /^RangeError: switch: mode: unknown handler "OM"; valid keys: ON \(did you mean "ON"\?\)$/,
  );
  assert.throws(
    () => new Registry<() => void>("thing").get("x"),
    /^RangeError: unknown thing "x"; valid keys: \(none registered\)$/,
  );
  assert.throws(() => new Registry(""), /^TypeError: Registry: kind must be a non-empty string/);
  assert.throws(() => new Registry("x", { key: "a" as never }), /options\.key must be a RegExp/);
  assert.equal(r.has(3 as never), false);
  assert.throws(() => r.get(3 as never), /^RangeError: unknown handler 3; valid keys: ON$/);
});
