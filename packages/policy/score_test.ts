import assert from "node:assert/strict";
import { webgpuSuite } from "@rlvr/tensor/testing";
import {
  type Backend,
  createCpuBackend,
  entropyFromLogits,
  getBackend,
  type KernelParams,
  logprobsOf,
  noGrad,
  Rng,
  type Tensor,
  tensor,
  tidy,
  withBackend,
} from "@rlvr/tensor";
import { samplingLogprobs } from "@rlvr/sampling";
import {
  attachLora,
  CausalLM,
  generate,
  type ModelConfig,
  modelConfig,
  scoreCompletions,
  type ScoreItem,
} from "@rlvr/policy";

const QWEN2 = modelConfig({
  modelType: "qwen2",
  vocabSize: 48,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
});
const LLAMA_TIED = modelConfig({
  modelType: "llama",
  vocabSize: 40,
  hiddenSize: 16,
  intermediateSize: 32,
  numLayers: 2,
  numHeads: 2,
  tieWordEmbeddings: true,
});

function randomModel(config: ModelConfig, seed: number, backend?: Backend): CausalLM {
  const make = () => CausalLM.random(config, { seed, std: 0.5 });
  return backend === undefined ? make() : withBackend(backend, make);
}

/** Ragged batch: prompt lengths 3, 1, 5, 2; completion lengths 4, 6, 1, 3. */
function batchOf(vocab: number, seed: number): ScoreItem[] {
  const rng = new Rng(seed);
  const ids = (n: number) => Array.from({ length: n }, () => Math.floor(rng.uniform() * vocab));
  return [[3, 4], [1, 6], [5, 1], [2, 3]].map(([p, c]) => ({
    promptIds: ids(p!),
    completionIds: ids(c!),
  }));
}

async function rows(t: Tensor): Promise<number[][]> {
  return (await t.toArray()) as number[][];
}

/** Float64 log softmax(row / T) and its entropy, from f32 logits. */
function reference(row: ArrayLike<number>, T: number): { lp: Float64Array; h: number } {
  let m = -Infinity;
  for (let i = 0; i < row.length; i++) m = Math.max(m, row[i]! / T);
  let s = 0;
  for (let i = 0; i < row.length; i++) s += Math.exp(row[i]! / T - m);
  const lp = new Float64Array(row.length);
  let h = 0;
  for (let i = 0; i < row.length; i++) {
    lp[i] = row[i]! / T - m - Math.log(s);
    h -= Math.exp(lp[i]!) * lp[i]!;
  }
  return { lp, h };
}

/** The logits of `prompt ++ completion` alone (batch 1, no padding), as host rows. */
async function fullLogits(model: CausalLM, item: ScoreItem): Promise<Float32Array[]> {
  const ids = [...item.promptIds, ...item.completionIds];
  const be = model.params.get("model.embed_tokens.weight")!.backend;
  const logits = noGrad(() =>
    tidy(() => model.forward(tensor([ids], { dtype: "i32", backend: be })))
  );
  const all = (await logits.data()) as Float32Array;
  logits.dispose();
  const V = model.config.vocabSize;
  return ids.map((_, i) => all.slice(i * V, (i + 1) * V));
}

Deno.test("scoreCompletions: log-probs and entropies of softmax(logits / T) at every completion token (1e-5)", async () => {
  for (const config of [QWEN2, LLAMA_TIED]) {
    const model = randomModel(config, 1);
    const batch = batchOf(config.vocabSize, 2);
    for (const T of [1, 0.7]) {
      const out = noGrad(() => scoreCompletions(model, batch, { temperature: T }));
      assert.deepEqual(out.logprobs.shape, [4, 6]);
      assert.deepEqual(out.completionLengths, [4, 6, 1, 3]);
      const lp = await rows(out.logprobs);
      const ent = await rows(out.entropies!);
      const mask = await rows(out.mask);
      let worst = 0;
      for (let b = 0; b < batch.length; b++) {
        const item = batch[b]!;
        const logits = await fullLogits(model, item);
        for (let i = 0; i < 6; i++) {
          if (i >= item.completionIds.length) {
            assert.equal(mask[b]![i], 0);
            assert.equal(lp[b]![i], 0, "padding scores are 0");
            assert.equal(ent[b]![i], 0);
            continue;
          }
          assert.equal(mask[b]![i], 1);
          const ref = reference(logits[item.promptIds.length - 1 + i]!, T);
          const want = ref.lp[item.completionIds[i]!]!;
          worst = Math.max(worst, Math.abs(lp[b]![i]! - want), Math.abs(ent[b]![i]! - ref.h));
        }
      }
      // Tolerance 1e-5: f32 log-softmax of O(3) logits over <= 48 tokens vs a float64 reference.
      assert.ok(worst < 1e-5, `${config.modelType} T=${T}: worst difference ${worst}`);
      for (const t of [out.logprobs, out.entropies!, out.mask]) t.dispose();
    }
    model.dispose();
  }
});

Deno.test("scoreCompletions: any chunking gives bit-identical scores (CPU)", async () => {
  const model = randomModel(QWEN2, 3);
  const batch = batchOf(QWEN2.vocabSize, 4);
  const run = async (opts: { chunkTokens?: number; rowsPerChunk?: number }) => {
    const out = noGrad(() => scoreCompletions(model, batch, { temperature: 0.9, ...opts }));
    const r = [await out.logprobs.data(), await out.entropies!.data()];
    for (const t of [out.logprobs, out.entropies!, out.mask]) t.dispose();
    return r;
  };
  const whole = await run({});
  for (
    const opts of [{ chunkTokens: 1 }, { chunkTokens: 5, rowsPerChunk: 1 }, { rowsPerChunk: 3 }]
  ) {
    assert.deepEqual(await run(opts), whole, JSON.stringify(opts));
  }
  model.dispose();
});

Deno.test("scoreCompletions: learner log-probs equal the sampler's scaledLogprob within 1e-5 (greedy and sampled with top-k/top-p)", async () => {
  const model = randomModel(QWEN2, 5);
  const prompts = [[3, 9, 27, 4, 11], [7], [30, 2, 15]];
  const samplers = [
    { seed: 0, temperature: 0 },
    { seed: 9, temperature: 0.7, topK: 12, topP: 0.85 },
    { seed: 9, temperature: 1.3, topK: 5 },
  ];
  for (const sampler of samplers) {
    const { sequences } = await generate(model, prompts, {
      maxNewTokens: 10,
      sampler,
      eosTokenIds: [],
    });
    const batch = sequences.map((s) => ({ promptIds: s.promptIds, completionIds: s.tokens }));
    const out = noGrad(() => scoreCompletions(model, batch, { temperature: sampler.temperature }));
    const lp = await rows(out.logprobs);
    let worstScaled = 0;
    let worstFiltered = 0;
    let filteredSteps = 0;
    for (let b = 0; b < sequences.length; b++) {
      const s = sequences[b]!;
      // The learner's own logits (full forward of prompt ++ completion), for the filtered one.
      const logits = await fullLogits(model, batch[b]!);
      s.tokens.forEach((tok, i) => {
        worstScaled = Math.max(worstScaled, Math.abs(lp[b]![i]! - s.scaledLogprobs[i]!));
        // The sampler's `logprobs` are under the filtered, renormalised distribution: recompute
        // them from the learner's logits with samplingLogprobs (greedy: 0 at the argmax).
        const q = samplingLogprobs(logits[s.promptIds.length - 1 + i]!, sampler)[tok]!;
        worstFiltered = Math.max(worstFiltered, Math.abs(q - s.logprobs[i]!));
        if (sampler.temperature > 0 && s.logprobs[i]! - s.scaledLogprobs[i]! > 1e-3) {
          filteredSteps++;
        }
      });
    }
    console.log(
      `T=${sampler.temperature} topK=${sampler.topK ?? 0} topP=${sampler.topP ?? 1}: worst ` +
        `|learner - scaledLogprob| ${worstScaled.toExponential(2)}, worst |samplingLogprobs - ` +
        `logprob| ${worstFiltered.toExponential(2)}, ${filteredSteps} filtered steps`,
    );
    assert.ok(worstScaled <= 1e-5, `T=${sampler.temperature}: ${worstScaled}`);
    assert.ok(worstFiltered <= 1e-5, `T=${sampler.temperature}: ${worstFiltered}`);
    // With filters on, the processed log-prob really differs from the learner's scaled one.
    if (sampler.temperature > 0) assert.ok(filteredSteps > 0, "the filters never removed mass");
    for (const t of [out.logprobs, out.entropies!, out.mask]) t.dispose();
  }
  model.dispose();
});

/** Σ mask · (a · logprob + c · entropy) with fixed random weights a, c per position. */
function weightedLoss(lp: Tensor, ent: Tensor, weights: { a: number[][]; c: number[][] }): Tensor {
  return lp.mul(tensor(weights.a)).add(ent.mul(tensor(weights.c))).sum();
}

/** The same loss through `model.forward`'s full logits (the naive, memory-hungry path). */
function naiveLoss(
  model: CausalLM,
  batch: ScoreItem[],
  T: number,
  weights: { a: number[][]; c: number[][] },
): Tensor {
  let total: Tensor | null = null;
  batch.forEach((item, b) => {
    const p = item.promptIds.length;
    const c = item.completionIds.length;
    const logits = model.forward(
      tensor([[...item.promptIds, ...item.completionIds]], { dtype: "i32" }),
    );
    const z = logits.narrow(1, p - 1, c).div(T);
    const lp = logprobsOf(z, tensor([item.completionIds], { dtype: "i32" }));
    const ent = entropyFromLogits(z);
    const term = lp.mul(tensor([weights.a[b]!.slice(0, c)]))
      .add(ent.mul(tensor([weights.c[b]!.slice(0, c)]))).sum();
    total = total === null ? term : total.add(term);
  });
  return total!;
}

async function gradsOf(model: CausalLM, loss: () => Tensor): Promise<Map<string, Float32Array>> {
  for (const p of model.parameters()) {
    p.grad?.dispose();
    p.grad = null;
  }
  tidy(() => loss().backward());
  const out = new Map<string, Float32Array>();
  for (const [name, p] of model.namedParameters()) {
    if (p.grad !== null) out.set(name, (await p.grad.data()) as Float32Array);
    p.grad?.dispose();
    p.grad = null;
  }
  return out;
}

Deno.test("scoreCompletions: gradients equal autograd through the full logits (rtol 1e-4), LoRA too", async () => {
  for (const config of [QWEN2, LLAMA_TIED]) {
    for (const lora of [false, true]) {
      const model = randomModel(config, 6);
      // A fresh adapter has B = 0, which makes every LoRA-A gradient 0; load random A and B.
      if (lora) {
        const rng = new Rng(1);
        const weights = new Map<string, Tensor>();
        const rand = (shape: number[]) =>
          tensor(Array.from({ length: shape[0]! * shape[1]! }, () => rng.normal() * 0.3), {
            shape,
          });
        for (let l = 0; l < config.numLayers; l++) {
          const io: [string, number, number][] = [
            ["self_attn.q_proj", config.hiddenSize, config.numHeads * config.headDim],
            ["mlp.down_proj", config.intermediateSize, config.hiddenSize],
          ];
          for (const [mod, inF, outF] of io) {
            const base = `base_model.model.model.layers.${l}.${mod}`;
            weights.set(`${base}.lora_A.weight`, rand([2, inF]));
            weights.set(`${base}.lora_B.weight`, rand([outF, 2]));
          }
        }
        attachLora(model, { rank: 2, alpha: 4, targetModules: ["q_proj", "down_proj"], weights });
      }
      const batch = batchOf(config.vocabSize, 7);
      const rng = new Rng(8);
      const w = () => batch.map(() => Array.from({ length: 6 }, () => rng.normal()));
      const weights = { a: w(), c: w() };
      const T = 0.8;
      const fused = await gradsOf(model, () => {
        const { logprobs, entropies, mask } = scoreCompletions(model, batch, {
          temperature: T,
          chunkTokens: 4,
        });
        return weightedLoss(logprobs.mul(mask), entropies!.mul(mask), weights);
      });
      const naive = await gradsOf(model, () => naiveLoss(model, batch, T, weights));
      assert.deepEqual([...fused.keys()].sort(), [...naive.keys()].sort());
      assert.ok(fused.size > 0);
      if (lora) assert.ok([...fused.keys()].every((n) => n.includes("lora_")));
      let worst = 0;
      for (const [name, g] of naive) {
        const f = fused.get(name)!;
        let scale = 0;
        for (let i = 0; i < g.length; i++) scale = Math.max(scale, Math.abs(g[i]!));
        for (let i = 0; i < g.length; i++) {
          // Tolerance: |fused − naive| <= 1e-4 · max|naive| per tensor (f32 sums in another order).
          const d = Math.abs(f[i]! - g[i]!);
          worst = Math.max(worst, d / (scale || 1));
          assert.ok(d <= 1e-4 * scale + 1e-7, `${name}[${i}]: ${f[i]} vs ${g[i]}`);
        }
      }
      console.log(
        `${config.modelType}${lora ? "+lora" : ""}: worst relative gradient difference ${
          worst.toExponential(2)
        }`,
      );
      model.dispose();
    }
  }
});

function gradBytes(model: CausalLM): number {
  return model.parameters().reduce((n, p) => n + (p.grad === null ? 0 : p.grad.size * 4), 0);
}

Deno.test("scoreCompletions: with gradients no N×V logits are held until backward; nothing leaks", () => {
  // A wide vocabulary and a narrow model make the N × V logits dominate every other tensor.
  const config = modelConfig({
    vocabSize: 4096,
    hiddenSize: 16,
    intermediateSize: 32,
    numLayers: 1,
    numHeads: 2,
  });
  const backend = getBackend();
  const model = randomModel(config, 9);
  const batch = [0, 1, 2, 3].map((i) => ({
    promptIds: [1 + i, 2, 3],
    completionIds: Array.from({ length: 16 }, (_, j) => (97 * i + 31 * j) % 4096),
  }));
  const logitsBytes = 64 * 4096 * 4; // N = 64 completion tokens
  const before = backend.memory();

  // Every temporary lives in a tidy scope; only the losses (and what their graphs saved) stay.
  const fusedLoss = tidy(() => {
    const s = scoreCompletions(model, batch, { temperature: 0.6, chunkTokens: 16 });
    return s.logprobs.mul(s.mask).sum().add(s.entropies!.sum());
  });
  const heldFused = backend.memory().liveBytes - before.liveBytes;
  fusedLoss.backward();
  fusedLoss.dispose();

  const weights = { a: batch.map(() => Array(16).fill(1)), c: batch.map(() => Array(16).fill(1)) };
  const naive = tidy(() => naiveLoss(model, batch, 0.6, weights));
  const heldNaive = backend.memory().liveBytes - before.liveBytes - gradBytes(model);
  naive.backward();
  naive.dispose();

  console.log(
    `held between forward and backward: fused ${heldFused} B, naive ${heldNaive} B, ` +
      `N×V logits ${logitsBytes} B`,
  );
  // The fused path keeps hidden states and the graph, far below one copy of the logits; the
  // naive path keeps at least one (so this measurement can tell them apart).
  assert.ok(heldFused < logitsBytes / 4, `fused held ${heldFused} bytes`);
  assert.ok(heldNaive >= logitsBytes, `naive held only ${heldNaive} bytes`);
  for (const p of model.parameters()) {
    p.grad?.dispose();
    p.grad = null;
  }
  assert.deepEqual(backend.memory(), before);
  const ref = noGrad(() => scoreCompletions(model, batch, { entropy: false }));
  assert.equal(ref.entropies, null);
  ref.logprobs.dispose();
  ref.mask.dispose();
  assert.deepEqual(backend.memory(), before);
  model.dispose();
});

Deno.test("scoreCompletions: every product of the backward pass is marked as a gradient product, every forward one is not", () => {
  // Under `blas: "auto"` the marked products take the native BLAS and the others keep the
  // forward kernel whose bits the sampler shares; the LM head's recomputing node makes its own
  // products (the logits again, dz·W and dzᵀ·h), so it must mark them itself.
  for (const [config, temperature] of [[QWEN2, 1], [LLAMA_TIED, 0.7]] as const) {
    const backend = createCpuBackend({ blas: "wasm" });
    const model = randomModel(config, 3, backend);
    const seen: { gradient: boolean; shape: string }[] = [];
    const run = backend.run.bind(backend);
    backend.run = ((kernel, inputs, outputs, params) => {
      if (kernel === "matmul") {
        const p = params as KernelParams["matmul"];
        seen.push({ gradient: p.gradient === true, shape: `${p.m}x${p.n}x${p.k}` });
      }
      return run(kernel, inputs, outputs, params);
    }) as typeof backend.run;
    withBackend(backend, () => {
      const loss = tidy(() => {
        const s = scoreCompletions(model, batchOf(config.vocabSize, 4), { temperature });
        return s.logprobs.mul(s.mask).sum().add(s.entropies!.sum());
      });
      const forward = seen.splice(0);
      loss.backward();
      loss.dispose();
      const V = config.vocabSize;
      assert.ok(forward.length > 0 && forward.every((c) => !c.gradient), JSON.stringify(forward));
      assert.ok(seen.length > 0 && seen.every((c) => c.gradient), JSON.stringify(seen));
      // The LM head's three products, for the log-probs' node and the entropies' node.
      const head = seen.filter((c) => c.shape.split("x").includes(String(V)));
      assert.equal(head.length, 6, JSON.stringify(head));
    });
    model.dispose();
  }
});

Deno.test("scoreCompletions: temperature 0 scores at T = 1 (the sampler's greedy convention)", async () => {
  const model = randomModel(LLAMA_TIED, 10);
  const batch = batchOf(LLAMA_TIED.vocabSize, 11);
  const a = noGrad(() => scoreCompletions(model, batch, { temperature: 0 }));
  const b = noGrad(() => scoreCompletions(model, batch));
  assert.deepEqual(await a.logprobs.data(), await b.logprobs.data());
  for (const t of [a.logprobs, a.entropies!, a.mask, b.logprobs, b.entropies!, b.mask]) {
    t.dispose();
  }
  model.dispose();
});

Deno.test("scoreCompletions: bad inputs name the field, the value and the fix", () => {
  const model = randomModel(LLAMA_TIED, 12);
  const ok = { promptIds: [1], completionIds: [2] };
  assert.throws(() => scoreCompletions(model, []), /scoreCompletions: batch must be a non-empty/);
  assert.throws(
    () => scoreCompletions(model, [ok, { promptIds: [], completionIds: [2] }]),
    /scoreCompletions: batch\[1\]\.promptIds must be an array of at least one token id/,
  );
  assert.throws(
    () => scoreCompletions(model, [{ promptIds: [1], completionIds: [2, 40] }]),
    /batch\[0\]\.completionIds\[1\] must be an integer in \[0, 40\).*got 40/,
  );
  assert.throws(
    () => scoreCompletions(model, [{ promptIds: [1], completionIds: [] }]),
    /every completion in the batch is empty/,
  );
  assert.throws(
    () => scoreCompletions(model, [ok], { temperature: -1 }),
    /temperature must be a finite number >= 0.*got -1/,
  );
  assert.throws(
    () => scoreCompletions(model, [ok], { chunkTokens: 0 }),
    /scoreCompletions: chunkTokens must be an integer >= 1, got 0/,
  );
  model.dispose();
});

// ---------------------------------------------------------------------------------------------
// WebGPU (Mesa's software adapter here): scores and gradients agree with the CPU backend.

const suite = await webgpuSuite("scoreCompletions");

suite.test(
  "scoreCompletions matches the CPU backend (scores rtol 1e-4, gradients 1e-4 of the largest)",
  async (gpu) => {
    const batch = batchOf(QWEN2.vocabSize, 13);
    const run = async (backend: Backend) => {
      const model = randomModel(QWEN2, 14, backend);
      const r = await withBackend(backend, async () => {
        const out = scoreCompletions(model, batch, { temperature: 0.7, chunkTokens: 5 });
        const lp = await out.logprobs.data();
        const ent = await out.entropies!.data();
        tidy(() => out.logprobs.mul(out.mask).sum().add(out.entropies!.sum()).backward());
        const g = await model.params.get("lm_head.weight")!.grad!.data();
        const gq = await model.params.get("model.layers.0.self_attn.q_proj.weight")!.grad!.data();
        for (const t of [out.logprobs, out.entropies!, out.mask]) t.dispose();
        return { lp, ent, g, gq };
      });
      model.dispose();
      return r;
    };
    const before = gpu.memory().liveBuffers;
    const onGpu = await run(gpu);
    assert.equal(gpu.memory().liveBuffers, before, "WebGPU buffers leaked");
    const onCpu = await run(getBackend());
    // Tolerances: scores |gpu − cpu| <= 1e-5 + 1e-4·|cpu| per entry (as the model's logits);
    // gradients <= 1e-4 · max|cpu| per tensor (sums over many tokens in another order).
    const close = (
      a: ArrayLike<number>,
      b: ArrayLike<number>,
      what: string,
      perTensor: boolean,
    ) => {
      let scale = 0;
      for (let i = 0; i < b.length; i++) scale = Math.max(scale, Math.abs(b[i]!));
      for (let i = 0; i < b.length; i++) {
        const tol = perTensor ? 1e-4 * scale + 1e-7 : 1e-5 + 1e-4 * Math.abs(b[i]!);
        assert.ok(Math.abs(a[i]! - b[i]!) <= tol, `${what}[${i}]: ${a[i]} vs ${b[i]}`);
      }
    };
    close(onGpu.lp, onCpu.lp, "logprobs", false);
    close(onGpu.ent, onCpu.ent, "entropies", false);
    close(onGpu.g, onCpu.g, "lm_head grad", true);
    close(onGpu.gq, onCpu.gq, "q_proj grad", true);
  },
);
