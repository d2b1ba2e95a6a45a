import assert from "node:assert/strict";
import { tensor, zeros } from "../creation.ts";
import { Rng } from "../random.ts";
import { getBackend, tidy } from "../runtime.ts";
import type { Tensor } from "../tensor.ts";
import { AdamW } from "./adamw.ts";
import type { Optimizer } from "./optimizer.ts";
import { SGD } from "./sgd.ts";

// The state round trip is compared bit for bit: a resumed run must do exactly the arithmetic
// of an uninterrupted one.

const SHAPES = [[3, 2], [2], [4]];

function makeParams(): Tensor[] {
  return SHAPES.map((s, i) =>
    tensor(
      Array.from({ length: s.reduce((a, b) => a * b, 1) }, (_, j) => (i + 1) * 0.3 - j * 0.1),
      { shape: s, requiresGrad: true },
    )
  );
}

/** Deterministic gradients for step `k`; the third parameter gets none on even steps. */
function setGrads(params: Tensor[], k: number): void {
  const rng = new Rng(1000 + k);
  params.forEach((p, i) => {
    if (i === 2 && k % 2 === 0) return;
    p.grad = tensor(Array.from({ length: p.size }, () => rng.normal()), { shape: p.shape });
  });
}

async function snapshot(params: Tensor[]): Promise<number[][]> {
  return await Promise.all(params.map(async (p) => Array.from(await p.data())));
}

type Make = (params: Tensor[]) => Optimizer;

const MAKERS: [string, Make][] = [
  [
    "AdamW",
    (ps) =>
      new AdamW([{ params: ps.slice(0, 2) }, { params: ps.slice(2), weightDecay: 0 }], {
        lr: 0.05,
      }),
  ],
  [
    "SGD",
    (ps) =>
      new SGD([{ params: ps.slice(0, 2) }, { params: ps.slice(2), nesterov: true }], {
        lr: 0.1,
        momentum: 0.9,
        weightDecay: 0.01,
      }),
  ],
];

for (const [name, make] of MAKERS) {
  Deno.test(`${name}: state() → loadState() into a fresh optimizer resumes bit-identically`, async () => {
    // Uninterrupted: 6 steps, with an lr change after step 3.
    const ref = makeParams();
    const refOpt = make(ref);
    for (let k = 0; k < 6; k++) {
      if (k === 3) refOpt.paramGroups[0]!.lr *= 0.5;
      setGrads(ref, k);
      refOpt.step();
      refOpt.zeroGrad();
    }

    // Interrupted: 3 steps, checkpoint (params + optimizer state), then resume elsewhere.
    const first = makeParams();
    const firstOpt = make(first);
    for (let k = 0; k < 3; k++) {
      setGrads(first, k);
      firstOpt.step();
      firstOpt.zeroGrad();
    }
    firstOpt.paramGroups[0]!.lr *= 0.5;
    const saved = await firstOpt.state();
    const savedParams = await snapshot(first);
    assert.equal(saved.kind, name);
    assert.equal(saved.stepCount, 3);
    assert.deepEqual(saved.groups.map((g) => g.params), [[0, 1], [2]]);
    assert.equal(saved.params[2]!.step, 1); // the third parameter had a gradient on step 1 only
    // The checkpoint is plain data: it survives structuredClone (as a worker/IndexedDB copy).
    const copy = structuredClone(saved);
    firstOpt.dispose();

    const resumed = SHAPES.map((s, i) => tensor(savedParams[i]!, { shape: s, requiresGrad: true }));
    const resumedOpt = make(resumed);
    resumedOpt.loadState(copy);
    assert.equal(resumedOpt.stepCount, 3);
    assert.equal(resumedOpt.paramGroups[0]!.lr, refOpt.paramGroups[0]!.lr);
    for (let k = 3; k < 6; k++) {
      setGrads(resumed, k);
      resumedOpt.step();
      resumedOpt.zeroGrad();
    }
    assert.deepEqual(await snapshot(resumed), await snapshot(ref));
    assert.deepEqual(await resumedOpt.state(), await refOpt.state());
    for (const o of [refOpt, resumedOpt]) o.dispose();
    for (const p of [...ref, ...first, ...resumed]) p.dispose();
  });
}

Deno.test("loadState: accepts plain arrays (JSON) and rejects mismatched checkpoints before changing anything", async () => {
  const ps = makeParams();
  const opt = new AdamW(ps, { lr: 0.1 });
  setGrads(ps, 1);
  opt.step();
  const saved = await opt.state();
  const json = JSON.parse(
    JSON.stringify(saved, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float32Array) : v)),
  );
  const other = new AdamW(ps, { lr: 0.1 });
  other.loadState(json);
  assert.deepEqual(await other.state(), saved);

  const fresh = new AdamW(ps);
  assert.throws(
    () => fresh.loadState({ ...saved, kind: "SGD" }),
    /AdamW.loadState: state.kind is "SGD", expected "AdamW"; load a checkpoint into the optimizer class that wrote it/,
  );
  assert.throws(
    () => fresh.loadState({ ...saved, groups: [...saved.groups, saved.groups[0]!] }),
    /AdamW.loadState: state.groups has 2 groups but this optimizer has 1/,
  );
  const shortM = structuredClone(saved);
  shortM.params[0]!.buffers.m = [1, 2];
  assert.throws(
    () => fresh.loadState(shortM),
    /AdamW.loadState: state.params\[0\].buffers.m has 2 values but parameter 0 has 6 elements \(shape \[3,2\]\)/,
  );
  const badLr = structuredClone(saved);
  badLr.groups[0]!.lr = -3;
  assert.throws(
    () => fresh.loadState(badLr),
    /AdamW: state.groups\[0\].lr must be a finite number >= 0, got -3/,
  );
  const unknown = structuredClone(saved);
  unknown.params[0]!.buffers.exp_avg = [0, 0, 0, 0, 0, 0];
  assert.throws(() => fresh.loadState(unknown), /unknown buffer "exp_avg"; AdamW uses m, v/);
  assert.equal(fresh.stepCount, 0);
  assert.deepEqual((await fresh.state()).params, [null, null, null]);
  for (const o of [opt, other, fresh]) o.dispose();
  for (const p of ps) p.dispose();
});

Deno.test("Optimizer: zeroGrad disposes and nulls grads; lr get/set; params; stepCount", () => {
  const backend = getBackend();
  const ps = makeParams();
  const opt = new SGD([{ params: ps.slice(0, 1) }, { params: ps.slice(1), lr: 0.3 }], { lr: 0.1 });
  setGrads(ps, 1);
  const grads = ps.map((p) => p.grad!);
  const live = backend.memory().liveBuffers;
  opt.zeroGrad();
  assert.ok(ps.every((p) => p.grad === null));
  assert.ok(grads.every((g) => g.isDisposed));
  assert.equal(backend.memory().liveBuffers, live - 3);
  assert.equal(opt.lr, 0.1);
  opt.lr = 0.2;
  assert.deepEqual(opt.paramGroups.map((g) => g.lr), [0.2, 0.2]);
  assert.deepEqual(opt.params, ps);
  opt.step(); // no gradients: nothing happens but the count
  assert.equal(opt.stepCount, 1);
  opt.dispose();
  assert.throws(() => opt.step(), /SGD: step\(\) after dispose\(\); create a new optimizer/);
  for (const p of ps) p.dispose();
});

Deno.test("Optimizer: step() inside tidy keeps the optimizer's state alive", async () => {
  const w = tensor([1, 2], { requiresGrad: true });
  const opt = new AdamW([w], { lr: 0.1 });
  tidy(() => {
    w.grad = tensor([1, 1]);
    opt.step(); // allocates m and v here: they must not belong to this scope
  });
  const st = await opt.state(); // would throw "used after dispose" if tidy had freed m/v
  assert.equal(st.params[0]!.step, 1);
  opt.dispose();
  w.dispose();
});

Deno.test("Optimizer: rejects bad parameter lists with the position and the fix", () => {
  const w = tensor([1], { requiresGrad: true });
  const y = w.mul(2);
  const i = tensor([1], { dtype: "i32" });
  assert.throws(
    () => new AdamW([]),
    /AdamW: got an empty parameter list; pass the model's parameters/,
  );
  assert.throws(() => new AdamW([w, w]), /AdamW: params\[1\] appears more than once/);
  assert.throws(
    () => new AdamW([{ params: [w] }, { params: [w] }]),
    /AdamW: paramGroups\[1\].params\[0\] appears more than once/,
  );
  assert.throws(
    () => new AdamW([y]),
    /AdamW: params\[0\] is not a leaf \(it was computed by mul\)/,
  );
  assert.throws(
    () => new AdamW([i]),
    /AdamW: params\[0\] has dtype i32; only f32 tensors can be optimized/,
  );
  assert.throws(
    () => new SGD([{ params: [w], momentom: 0.9 } as never]),
    /SGD: paramGroups\[0\] has an unknown option "momentom"/,
  );
  assert.throws(() => new SGD([w, { params: [w] }] as never), /SGD: params\[1\] must be a Tensor/);
  const opt = new AdamW([w]);
  w.grad = zeros([2]);
  assert.throws(() => opt.step(), /AdamW: paramGroups\[0\].params\[0\] .* has an unusable grad/);
  opt.dispose();
  for (const t of [w, y, i]) t.dispose();
});
