import assert from "node:assert/strict";
import fc from "fast-check";
import type { Backend } from "../backend/types.ts";
import { createCpuBackend } from "../backend/cpu/cpu_backend.ts";
import { tensor } from "../creation.ts";
import { tidy } from "../runtime.ts";
import type { Tensor } from "../tensor.ts";
import { assertClose, gradcheck } from "../testing.ts";
import { crossEntropy, entropyFromLogits, logprobsOf } from "./loss.ts";

const F64 = createCpuBackend({ precision: "f64" });
const F32 = createCpuBackend();

const reals = (n: number, lim = 3) =>
  fc.array(fc.double({ min: -lim, max: lim, noNaN: true }), { minLength: n, maxLength: n });

/**
 * Logits `[...lead, V]` with 0..2 leading axes and V of 1..6, one token per row, and per row a
 * flag saying whether crossEntropy should see it as ignored.
 */
const lossCase = (lim = 3) =>
  fc.record({
    lead: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
    vocab: fc.integer({ min: 1, max: 6 }),
  })
    .chain(({ lead, vocab }) => {
      const rows = lead.reduce((a, b) => a * b, 1);
      return fc.record({
        lead: fc.constant(lead),
        vocab: fc.constant(vocab),
        logits: reals(rows * vocab, lim),
        tokens: fc.array(fc.integer({ min: 0, max: vocab - 1 }), {
          minLength: rows,
          maxLength: rows,
        }),
        ignore: fc.array(fc.boolean(), { minLength: rows, maxLength: rows }),
        up: reals(rows, 1),
      });
    });

type LossCase = ReturnType<typeof lossCase> extends fc.Arbitrary<infer T> ? T : never;

const logitsOf = (lc: LossCase, backend: Backend, requiresGrad = false): Tensor =>
  tensor(lc.logits, { shape: [...lc.lead, lc.vocab], backend, requiresGrad });
const tokensOf = (lc: LossCase, backend: Backend, ignoreIndex?: number): Tensor =>
  tensor(lc.tokens.map((t, r) => (ignoreIndex !== undefined && lc.ignore[r] ? ignoreIndex : t)), {
    shape: lc.lead,
    dtype: "i32",
    backend,
  });

/** `fn(logits)` and the gradient of `Σ fn(logits)·up` (a plain sum for scalar outputs). */
async function valueAndGrad(
  lc: LossCase,
  backend: Backend,
  fn: (logits: Tensor) => Tensor,
): Promise<{ y: number[]; grad: number[] }> {
  const logits = logitsOf(lc, backend, true);
  // tidy frees the reference compositions' intermediates; the graph keeps what it needs.
  const y = tidy(() => fn(logits));
  const u = y.ndim === 0 ? tensor(1, { backend }) : tensor(lc.up, { shape: y.shape, backend });
  const loss = y.mul(u).sum();
  loss.backward();
  const out = { y: [...await y.data()], grad: [...await logits.grad!.data()] };
  for (const t of [logits, y, u, loss]) t.dispose();
  return out;
}

const rounded = (lc: LossCase): LossCase => ({
  ...lc,
  logits: lc.logits.map(Math.fround),
  up: lc.up.map(Math.fround),
});

/** Compares a fused op with a reference composition: f64 at 1e-10, f32 against f64 truth at 1e-5. */
async function compareBackends(
  lc: LossCase,
  fusedFn: (logits: Tensor) => Tensor,
  refFn: (logits: Tensor) => Tensor,
): Promise<void> {
  for (const [backend, tol] of [[F64, 1e-10], [F32, 1e-5]] as const) {
    const input = backend === F32 ? rounded(lc) : lc;
    const want = await valueAndGrad(input, F64, refFn);
    const got = await valueAndGrad(input, backend, fusedFn);
    assertClose(got.y, want.y, { rtol: tol, atol: tol, msg: `${backend.name} value` });
    assertClose(got.grad, want.grad, { rtol: tol, atol: tol, msg: `${backend.name} grad` });
  }
}

Deno.test("logprobsOf / entropyFromLogits / crossEntropy: gradients match central differences (f64)", async () => {
  // rtol 1e-5, atol 1e-6 (float64, step 1e-6); all three are smooth in the logits.
  await fc.assert(
    fc.asyncProperty(lossCase(), fc.constantFrom("mean", "sum", "none"), async (lc, reduction) => {
      const logits = logitsOf(lc, F64, true);
      const tokens = tokensOf(lc, F64);
      const targets = tokensOf(lc, F64, -100);
      const o = { rtol: 1e-5, atol: 1e-6 };
      await gradcheck((z) => logprobsOf(z, tokens), [logits], { ...o, msg: "logprobsOf" });
      await gradcheck((z) => entropyFromLogits(z), [logits], { ...o, msg: "entropyFromLogits" });
      await gradcheck((z) => crossEntropy(z, targets, { reduction }), [logits], {
        ...o,
        msg: `crossEntropy ${reduction}`,
      });
      for (const t of [logits, tokens, targets]) t.dispose();
    }),
    { numRuns: 20 },
  );
});

Deno.test("logprobsOf: value and gradient equal logSoftmax + gather, f32 and f64", async () => {
  // Tolerances as in compareBackends: f64 rtol/atol 1e-10, f32 (vs f64 truth) rtol/atol 1e-5.
  await fc.assert(
    fc.asyncProperty(lossCase(), async (lc) => {
      const tokens = (be: Backend) => tokensOf(lc, be);
      await compareBackends(
        lc,
        (z) => logprobsOf(z, tokens(z.backend)),
        (z) => z.logSoftmax(-1).gather(tokens(z.backend).unsqueeze(-1), -1).squeeze(-1),
      );
    }),
    { numRuns: 40 },
  );
});

Deno.test("entropyFromLogits: value and gradient equal -(softmax · logSoftmax).sum(-1), f32 and f64", async () => {
  // Tolerances as in compareBackends: f64 rtol/atol 1e-10, f32 (vs f64 truth) rtol/atol 1e-5.
  await fc.assert(
    fc.asyncProperty(lossCase(), async (lc) => {
      await compareBackends(
        lc,
        (z) => entropyFromLogits(z),
        (z) => z.softmax(-1).mul(z.logSoftmax(-1)).sum(-1).neg(),
      );
    }),
    { numRuns: 40 },
  );
});

Deno.test("crossEntropy: matches a plain-loop reference; ignored positions give zero loss and zero gradient", async () => {
  // Value: rtol/atol 1e-10 against float64 loops. Gradient rows of ignored positions: exactly 0.
  await fc.assert(
    fc.asyncProperty(lossCase(), async (lc) => {
      const { vocab } = lc;
      const nll = lc.tokens.map((t, r) => {
        if (lc.ignore[r]) return 0;
        const row = lc.logits.slice(r * vocab, (r + 1) * vocab);
        const m = Math.max(...row);
        return m + Math.log(row.reduce((s, z) => s + Math.exp(z - m), 0)) - row[t]!;
      });
      const sum = nll.reduce((a, b) => a + b, 0);
      const counted = lc.ignore.filter((i) => !i).length;
      const expected = { none: nll, sum: [sum], mean: [counted === 0 ? 0 : sum / counted] };
      for (const reduction of ["none", "sum", "mean"] as const) {
        const targets = tokensOf(lc, F64, -100);
        const { y, grad } = await valueAndGrad(
          lc,
          F64,
          (z) => crossEntropy(z, targets, { reduction }),
        );
        assertClose(y, expected[reduction], { rtol: 1e-10, atol: 1e-10, msg: reduction });
        lc.ignore.forEach((ign, r) => {
          if (ign) {
            assert.ok(
              grad.slice(r * vocab, (r + 1) * vocab).every((g) => g === 0),
              `row ${r}: ${grad}`,
            );
          }
        });
        targets.dispose();
      }
    }),
    { numRuns: 40 },
  );
});

Deno.test("crossEntropy: a custom ignoreIndex and an all-ignored batch (loss 0, gradient 0)", async () => {
  const logits = tensor([[1, 2, 3], [3, 2, 1]], { backend: F64, requiresGrad: true });
  const targets = tensor([7, 7], { dtype: "i32", backend: F64 });
  const loss = crossEntropy(logits, targets, { ignoreIndex: 7 });
  assert.equal(await loss.item(), 0);
  loss.backward();
  assert.deepEqual(await logits.grad!.toArray(), [[0, 0, 0], [0, 0, 0]]);
  const some = crossEntropy(logits, tensor([7, 0], { dtype: "i32", backend: F64 }), {
    ignoreIndex: 7,
    reduction: "sum",
  });
  // Only row 1 counts: −log softmax([3, 2, 1])[0] (rtol 1e-12).
  assertClose(await some.item(), Math.log(1 + Math.exp(-1) + Math.exp(-2)), { rtol: 1e-12 });
});

Deno.test("logprobsOf / entropyFromLogits: logits of ±1e4 stay finite in value and gradient", async () => {
  for (const backend of [F32, F64]) {
    const logits = tensor([[1e4, 0, -1e4], [-1e4, -1e4, -1e4], [1e4, 1e4, 0]], {
      backend,
      requiresGrad: true,
    });
    const tokens = tensor([1, 2, 0], { dtype: "i32", backend });
    const lp = logprobsOf(logits, tokens);
    const h = entropyFromLogits(logits);
    const ce = crossEntropy(logits, tokens);
    const total = lp.sum().add(h.sum()).add(ce);
    total.backward();
    for (const t of [lp, h, ce, logits.grad!]) {
      assert.ok(
        (await t.data()).every(Number.isFinite),
        `${backend.name}: ${t} has a non-finite value`,
      );
    }
    // Row 0 puts all mass on token 0 (e^-1e4 underflows), row 1 is uniform, row 2 splits two
    // ways; rtol 1e-6 covers f32 rounding of the stored values.
    assertClose(await lp.data(), [-1e4, -Math.log(3), -Math.LN2], { rtol: 1e-6 });
    assertClose(await h.data(), [0, Math.log(3), Math.LN2], { rtol: 1e-6, atol: 1e-7 });
    for (const t of [logits, tokens, lp, h, ce, total]) t.dispose();
  }
});

Deno.test("logprobsOf / entropyFromLogits: properties over drawn logits up to ±50", async () => {
  // logprobsOf <= 0; Σ_t exp(logprobsOf(z, t)) = 1 (f64: atol 1e-12, f32: atol 1e-5);
  // 0 <= entropy <= log V (f32 slack 1e-5 for rounding of the stored value).
  await fc.assert(
    fc.asyncProperty(lossCase(50), async (lc) => {
      const { vocab } = lc;
      const rows = lc.tokens.length;
      for (const [backend, tol] of [[F64, 1e-12], [F32, 1e-5]] as const) {
        // Every row repeated V times, scored against every token.
        const rep = [...Array(rows).keys()].flatMap((r) =>
          Array.from({ length: vocab }, () => lc.logits.slice(r * vocab, (r + 1) * vocab))
        );
        const z = tensor(rep.flat(), { shape: [rows, vocab, vocab], backend });
        const all = tensor([...Array(rows)].flatMap(() => [...Array(vocab).keys()]), {
          shape: [rows, vocab],
          dtype: "i32",
          backend,
        });
        const lp = logprobsOf(z, all);
        const v = [...await lp.data()];
        assert.ok(v.every((x) => x <= 0), `${backend.name}: a log-probability is positive`);
        const sums = [...Array(rows).keys()].map((r) =>
          v.slice(r * vocab, (r + 1) * vocab).reduce((s, x) => s + Math.exp(x), 0)
        );
        assertClose(sums, new Array(rows).fill(1), {
          rtol: 0,
          atol: tol,
          msg: `${backend.name} Σ p`,
        });
        const h = entropyFromLogits(logitsOf(lc, backend));
        for (const x of await h.data()) {
          assert.ok(x >= 0 && x <= Math.log(vocab) + tol, `${backend.name}: entropy ${x}`);
        }
        for (const t of [z, all, lp, h]) t.dispose();
      }
    }),
    { numRuns: 40 },
  );
});

Deno.test("entropyFromLogits: a masked vocabulary (−Infinity logits) gives finite values and zero gradient there", async () => {
  const logits = tensor([[0, 0, -Infinity], [-Infinity, 5, -Infinity]], {
    backend: F64,
    requiresGrad: true,
  });
  const h = entropyFromLogits(logits);
  assertClose(await h.data(), [Math.LN2, 0], { rtol: 1e-12 });
  h.sum().backward();
  const g = await logits.grad!.toArray() as number[][];
  assert.deepEqual([g[0]![2], g[1]![0], g[1]![2]], [0, 0, 0]);
  assert.ok(g.flat().every(Number.isFinite));
  const lp = logprobsOf(logits, tensor([1, 1], { dtype: "i32", backend: F64 }));
  assertClose(await lp.data(), [-Math.LN2, 0], { rtol: 1e-12 });
});

Deno.test("logprobsOf / entropyFromLogits / crossEntropy: bad arguments fail with the op, the values and the fix", () => {
  const logits = tensor([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]]);
  assert.throws(
    () => crossEntropy(logits, tensor([0, 7], { dtype: "i32" })),
    /^RangeError: crossEntropy: target 7 at flat position 1 is out of range for a vocabulary of V=5 \(valid ids 0\.\.4\); targets must be class ids in \[0, 5\) or ignoreIndex \(-100\)$/,
  );
  assert.throws(
    () => crossEntropy(logits, tensor([-1, 0], { dtype: "i32" })),
    /crossEntropy: target -1 at flat position 0/,
  );
  assert.throws(
    () => logprobsOf(logits, tensor([5, 0], { dtype: "i32" })),
    /^RangeError: logprobsOf: token 5 at flat position 0 is out of range for a vocabulary of V=5 .*; ids must be in \[0, 5\)$/,
  );
  assert.throws(
    () => logprobsOf(logits, tensor([0, 1])),
    /logprobsOf: tokens must be i32, got f32/,
  );
  assert.throws(
    () => logprobsOf(logits, tensor([[0, 1]], { dtype: "i32" })),
    /logprobsOf: tokens shape \[1,2\] must equal the logits shape without its last axis \(\[2,5\] -> \[2\]\)/,
  );
  assert.throws(
    () => entropyFromLogits(tensor(1)),
    /entropyFromLogits: logits must be \[\.\.\., V\]/,
  );
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => crossEntropy(logits, tensor([0, 1], { dtype: "i32" }), { reduction: "avg" as any }),
    /crossEntropy: reduction must be "mean", "sum" or "none", got "avg"/,
  );
});

Deno.test("logprobsOf / entropyFromLogits / crossEntropy: forward, backward and failures free every temporary", () => {
  const be = createCpuBackend();
  const logits = tensor([[1, 2, 3], [0, 0, 1]], { backend: be, requiresGrad: true });
  const tokens = tensor([2, -100], { dtype: "i32", backend: be });
  const valid = tensor([2, 0], { dtype: "i32", backend: be });
  for (
    const y of [logprobsOf(logits, valid), entropyFromLogits(logits), crossEntropy(logits, tokens)]
  ) {
    const loss = y.sum();
    loss.backward();
    loss.dispose();
    y.dispose();
  }
  const bad = tensor([3, 0], { dtype: "i32", backend: be });
  assert.throws(() => crossEntropy(logits, bad));
  assert.throws(() => logprobsOf(logits, bad));
  for (const t of [logits, tokens, valid, bad]) t.dispose();
  assert.deepEqual(be.memory(), { liveBuffers: 0, liveBytes: 0 });
});
