import assert from "node:assert/strict";
import { tensor } from "../creation.ts";
import { getBackend } from "../runtime.ts";
import { assertClose } from "../testing.ts";
import { SGD, type SGDOptions } from "./sgd.ts";

// Tolerance: values are stored in f32 on the default CPU backend and each step rounds a few
// times, so golden values (exact decimals) are compared with rtol 1e-6 / atol 1e-7.
const TOL = { rtol: 1e-6, atol: 1e-7 };

const GRADS = [[0.5, -1], [0.5, 1], [-0.25, 0]];

/** Runs three SGD steps from θ = [1, −2] with GRADS; returns θ and the momentum buffer after each. */
async function run(
  options: SGDOptions,
): Promise<{ params: number[][]; buffers: (number[] | null)[] }> {
  const p = tensor([1, -2], { requiresGrad: true });
  const buffer = p.buffer;
  const opt = new SGD([p], options);
  const params: number[][] = [];
  const buffers: (number[] | null)[] = [];
  for (const g of GRADS) {
    p.grad = tensor(g);
    opt.step();
    opt.zeroGrad();
    params.push(Array.from(await p.data()));
    const b = (await opt.state()).params[0]!.buffers.momentumBuffer;
    buffers.push(b === undefined ? null : Array.from(b));
  }
  assert.equal(p.buffer, buffer, "updated in place");
  opt.dispose();
  p.dispose();
  return { params, buffers };
}

Deno.test("SGD: momentum, golden values (torch: b = g on step 1, then b = μ·b + g)", async () => {
  const { params, buffers } = await run({ lr: 0.1, momentum: 0.9 });
  // step 1: b = g1 = [0.5, −1];                        θ = [1, −2] − 0.1·b = [0.95, −1.9]
  // step 2: b = 0.9·[0.5, −1] + [0.5, 1] = [0.95, 0.1]; θ = [0.95 − 0.095, −1.9 − 0.01] = [0.855, −1.91]
  // step 3: b = 0.9·[0.95, 0.1] + [−0.25, 0] = [0.605, 0.09]; θ = [0.855 − 0.0605, −1.91 − 0.009]
  assertClose(buffers.map((b) => b!), [[0.5, -1], [0.95, 0.1], [0.605, 0.09]], TOL);
  assertClose(params, [[0.95, -1.9], [0.855, -1.91], [0.7945, -1.919]], TOL);
});

Deno.test("SGD: Nesterov momentum, golden values (torch: d = g + μ·b)", async () => {
  const { params } = await run({ lr: 0.1, momentum: 0.9, nesterov: true });
  // step 1: b = [0.5, −1];   d = g1 + 0.9·b = [0.95, −1.9];   θ = [0.905, −1.81]
  // step 2: b = [0.95, 0.1]; d = [0.5 + 0.855, 1 + 0.09] = [1.355, 1.09]; θ = [0.7695, −1.919]
  // step 3: b = [0.605, 0.09]; d = [−0.25 + 0.5445, 0.081] = [0.2945, 0.081]; θ = [0.74005, −1.9271]
  assertClose(params, [[0.905, -1.81], [0.7695, -1.919], [0.74005, -1.9271]], TOL);
});

Deno.test("SGD: weight decay is an L2 term added to the gradient (torch semantics)", async () => {
  const { params, buffers } = await run({ lr: 0.1, weightDecay: 0.1 });
  // step 1: d = [0.5 + 0.1, −1 − 0.2] = [0.6, −1.2];            θ = [0.94, −1.88]
  // step 2: d = [0.5 + 0.094, 1 − 0.188] = [0.594, 0.812];       θ = [0.8806, −1.9612]
  // step 3: d = [−0.25 + 0.08806, −0.19612] = [−0.16194, −0.19612]; θ = [0.896794, −1.941588]
  assertClose(params, [[0.94, -1.88], [0.8806, -1.9612], [0.896794, -1.941588]], TOL);
  assert.deepEqual(buffers, [null, null, null]); // no momentum buffer without momentum
});

Deno.test("SGD: dampening scales the new gradient in the buffer after the first step", async () => {
  const { params, buffers } = await run({
    lr: 0.1,
    momentum: 0.9,
    dampening: 0.5,
    weightDecay: 0.1,
  });
  // step 1: d = [0.6, −1.2]; b = d (no dampening on the first step);       θ = [0.94, −1.88]
  // step 2: d = [0.594, 0.812]; b = 0.9·[0.6, −1.2] + 0.5·d = [0.837, −0.674]; θ = [0.8563, −1.8126]
  // step 3: d = [−0.16437, −0.18126]; b = 0.9·b + 0.5·d = [0.671115, −0.69723]; θ = [0.7891885, −1.742877]
  assertClose(buffers.map((b) => b!), [[0.6, -1.2], [0.837, -0.674], [0.671115, -0.69723]], TOL);
  assertClose(params, [[0.94, -1.88], [0.8563, -1.8126], [0.7891885, -1.742877]], TOL);
});

Deno.test("SGD: plain SGD, grad === null skipped, no leaks over many steps", async () => {
  const backend = getBackend();
  const a = tensor([1, 2], { requiresGrad: true });
  const b = tensor([3], { requiresGrad: true });
  const opt = new SGD([a, b], { lr: 0.5, momentum: 0.9 });
  let after1 = -1;
  for (let i = 0; i < 40; i++) {
    a.grad = tensor([1, -1]);
    opt.step();
    opt.zeroGrad();
    if (i === 0) after1 = backend.memory().liveBuffers;
  }
  assert.equal(backend.memory().liveBuffers, after1);
  assert.deepEqual(Array.from(await b.data()), [3]);
  opt.dispose();
  a.dispose();
  b.dispose();
});

Deno.test("SGD: invalid options name the field, the value and the fix", () => {
  const w = tensor([1], { requiresGrad: true });
  assert.throws(
    () => new SGD([w], { momentum: -0.1 }),
    /SGD: options.momentum must be a finite number >= 0, got -0.1/,
  );
  assert.throws(
    () => new SGD([w], { nesterov: true }),
    /SGD: options.nesterov needs momentum > 0 and dampening = 0, got momentum 0 and dampening 0/,
  );
  assert.throws(
    () => new SGD([w], { nesterov: "yes" } as never),
    /SGD: options.nesterov must be true or false, got "yes"/,
  );
  w.dispose();
});
