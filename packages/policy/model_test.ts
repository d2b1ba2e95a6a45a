import assert from "node:assert/strict";
import fc from "fast-check";
import {
  AdamW,
  type Backend,
  createCpuBackend,
  getBackend,
  logprobsOf,
  noGrad,
  Rng,
  type Tensor,
  tensor,
  tidy,
  withBackend,
} from "@rlvr/tensor";
import { assertClose, gradcheck, webgpuSuite } from "@rlvr/tensor/testing";
import { CausalLM, KVCache, type ModelConfig, modelConfig, parameterShapes } from "@rlvr/policy";
import { type HostParams, hostParams, type RefInputs, refLogits } from "./_test_reference.ts";

// ---------------------------------------------------------------------------------------------
// Models with random parameters (`hostParams`, f32-rounded host copies that feed the float64
// reference `refLogits` of _test_reference.ts), loaded with fromParams.

function modelOf(config: ModelConfig, host: HostParams, backend: Backend = getBackend()): CausalLM {
  const shapes = parameterShapes(config);
  const params = new Map<string, Tensor>();
  for (const [name, v] of host) params.set(name, tensor(v, { shape: shapes.get(name)!, backend }));
  return CausalLM.fromParams(config, params);
}

// ---------------------------------------------------------------------------------------------
// Left-padded batches: Hugging Face's layout (pads first, attention_mask 0 there, positions
// counting real tokens only, pads at position 1 as `masked_fill(mask == 0, 1)`).

function leftPad(prompts: number[][], pad = 0): RefInputs {
  const width = Math.max(...prompts.map((p) => p.length));
  const ids = prompts.map((p) => [...new Array(width - p.length).fill(pad), ...p]);
  const mask = prompts.map((p) => [...new Array(width - p.length).fill(0), ...p.map(() => 1)]);
  return { ids, mask, positions: mask.map(positionsOf) };
}

function positionsOf(maskRow: number[]): number[] {
  let n = 0;
  return maskRow.map((m) => (m === 1 ? n++ : 1));
}

function i32(rows: number[][], backend: Backend): Tensor {
  return tensor(rows, { dtype: "i32", backend });
}

const QWEN2 = modelConfig({
  modelType: "qwen2",
  vocabSize: 23,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  tieWordEmbeddings: true,
});

const QWEN3 = modelConfig({
  modelType: "qwen3",
  vocabSize: 19,
  hiddenSize: 16,
  intermediateSize: 20,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 12,
});

const LLAMA = modelConfig({
  modelType: "llama",
  vocabSize: 17,
  hiddenSize: 16,
  intermediateSize: 32,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  qkvBias: true,
  oBias: true,
  ropeTheta: 10000,
  // A short original context, so that an 8-wide head has kept, blended and slowed frequencies.
  ropeScaling: {
    type: "llama3",
    factor: 8,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositions: 64,
  },
});

// Tolerance against the float64 reference: rtol 1e-4, atol 1e-5. The model stores f32 and rounds
// each op's output (and the RoPE angles, as Hugging Face does in f32), so logits of size ~1-10
// carry ~1e-6 relative error; the margin covers two layers of accumulation.
const REF_TOL = { rtol: 1e-4, atol: 1e-5 };

async function checkAgainstReference(config: ModelConfig, seed: number, inp: RefInputs) {
  const host = hostParams(config, seed);
  const model = modelOf(config, host);
  const ids = i32(inp.ids, getBackend());
  const mask = inp.mask === null ? undefined : i32(inp.mask, getBackend());
  const logits = noGrad(() =>
    model.forward(ids, {
      positions: inp.positions,
      ...(mask === undefined ? {} : { attentionMask: mask }),
    })
  );
  const got = await logits.toArray() as number[][][];
  const want = refLogits(config, host, inp);
  let compared = 0;
  want.forEach((row, b) =>
    row.forEach((v, t) => {
      // Padded positions attend to nothing; their logits are unspecified (as in transformers).
      if (inp.mask !== null && inp.mask[b]![t] === 0) return;
      assertClose(got[b]![t]!, v, { ...REF_TOL, msg: `${config.modelType} row ${b} token ${t}` });
      compared++;
    })
  );
  assert.ok(compared > 0);
  for (const t of [ids, logits, ...(mask === undefined ? [] : [mask])]) t.dispose();
  model.dispose();
}

Deno.test("CausalLM: a Qwen2-shaped model (GQA, QKV bias, tied embeddings) matches the float64 reference, left padding included", async () => {
  await checkAgainstReference(QWEN2, 1, leftPad([[3, 1, 4, 1, 5], [9, 2], [6, 5, 3, 5]]));
  // Positions need not start at 0 (a continued sequence).
  await checkAgainstReference(QWEN2, 2, {
    ids: [[7, 8, 9]],
    positions: [[40, 41, 42]],
    mask: null,
  });
});

Deno.test("CausalLM: a Qwen3-shaped model (QK-norm, headDim 12 != 16/2, untied) matches the float64 reference", async () => {
  assert.notEqual(QWEN3.headDim, QWEN3.hiddenSize / QWEN3.numHeads);
  await checkAgainstReference(QWEN3, 3, leftPad([[1, 2, 3, 4, 5, 6], [18, 0, 7]]));
});

Deno.test("CausalLM: a Llama model with Llama 3 rope scaling and q/k/v/o bias matches the float64 reference", async () => {
  const long = Array.from({ length: 7 }, (_, i) => (5 * i) % 17);
  await checkAgainstReference(LLAMA, 4, {
    ids: [long],
    positions: [[0, 1, 2, 30, 100, 250, 600]],
    mask: null,
  });
  // The scaling changes the logits at long positions (so the reference comparison is not vacuous).
  const plain = modelConfig({ ...LLAMA, ropeScaling: null });
  const host = hostParams(LLAMA, 4);
  const a = modelOf(LLAMA, host);
  const b = modelOf(plain, host);
  const ids = i32([long], getBackend());
  const positions = [[0, 1, 2, 30, 100, 250, 600]];
  const la = await noGrad(() => a.forward(ids, { positions })).data();
  const lb = await noGrad(() => b.forward(ids, { positions })).data();
  assert.ok(la.some((v, i) => Math.abs(v - lb[i]!) > 1e-3));
  a.dispose();
  b.dispose();
  ids.dispose();
});

// ---------------------------------------------------------------------------------------------
// KV cache versus recomputation.

interface DecodeScenario {
  prompts: number[][];
  /** Sizes of the chunks fed after the prompt (1 = one token per step). */
  chunks: number[];
  /** Rows to keep (in terms of the current batch) after chunk i, when set. */
  select?: Map<number, number[]>;
  seed: number;
}

interface StepResult {
  cached: Float32Array | Float64Array;
  full: Float32Array | Float64Array;
  label: string;
}

/**
 * Runs a scenario with a KV cache and, at every step, the full recomputation of the same rows;
 * returns both logits of the step's new tokens.
 */
async function decodeBothWays(
  model: CausalLM,
  backend: Backend,
  sc: DecodeScenario,
): Promise<StepResult[]> {
  const rng = new Rng(sc.seed);
  const vocab = model.config.vocabSize;
  const start = leftPad(sc.prompts);
  // One entry per cache row: its whole sequence so far and its attention mask.
  let ids = start.ids.map((r) => [...r]);
  let mask = start.mask!.map((r) => [...r]);
  let origin = sc.prompts.map((_, i) => i);
  const cache = new KVCache(model.config, sc.prompts.length);
  const results: StepResult[] = [];
  let from = 0;
  const lens = [ids[0]!.length, ...sc.chunks];
  for (let step = 0; step < lens.length; step++) {
    if (step > 0) {
      ids.forEach((row, r) => {
        for (let j = 0; j < lens[step]!; j++) {
          row.push(rng.int(vocab));
          mask[r]!.push(1);
        }
      });
    }
    const to = ids[0]!.length;
    const positions = mask.map(positionsOf);
    const newIds = i32(ids.map((r) => r.slice(from, to)), backend);
    const fullIds = i32(ids, backend);
    const maskT = i32(mask, backend);
    const cachedT = noGrad(() =>
      model.forward(newIds, {
        cache,
        positions: positions.map((p) => p.slice(from, to)),
        attentionMask: maskT,
      })
    );
    const fullT = noGrad(() =>
      tidy(() =>
        model.forward(fullIds, { positions, attentionMask: maskT }).narrow(1, from, to - from)
      )
    );
    results.push({
      cached: await cachedT.data() as Float32Array,
      full: await fullT.data() as Float32Array,
      label: `step ${step} (tokens ${from}..${to}, prompts ${origin.join(",")})`,
    });
    for (const t of [newIds, fullIds, maskT, cachedT, fullT]) t.dispose();
    assert.equal(cache.length, to);
    from = to;
    const keepRows = sc.select?.get(step);
    if (keepRows !== undefined) {
      cache.selectRows(keepRows);
      ids = keepRows.map((i) => [...ids[i]!]);
      mask = keepRows.map((i) => [...mask[i]!]);
      origin = keepRows.map((i) => origin[i]!);
      assert.equal(cache.batch, keepRows.length);
    }
  }
  cache.dispose();
  return results;
}

function assertBitEqual(a: ArrayLike<number>, b: ArrayLike<number>, msg: string): void {
  assert.equal(a.length, b.length, `${msg}: lengths differ`);
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i])) {
      assert.fail(`${msg}: element ${i} differs: cached ${a[i]} vs recomputed ${b[i]}`);
    }
  }
}

const LEFT_PADDED: DecodeScenario = {
  prompts: [[3, 1, 4], [1, 5, 9, 2, 6], [5, 3]],
  chunks: [1, 1, 2, 1, 1],
  // Row 1 finishes after the second step; later the first remaining row fans out into two.
  select: new Map([[2, [0, 2]], [4, [0, 0, 1]]]),
  seed: 11,
};

Deno.test("KVCache decoding equals full recomputation bit for bit on the CPU (left padding, chunks, selectRows)", async () => {
  // Tolerance: none. Every per-token computation is row-independent on the CPU backend, so the
  // cached path must reproduce the recomputed logits exactly (Object.is on every element).
  for (const config of [QWEN2, QWEN3, LLAMA]) {
    const model = modelOf(config, hostParams(config, 5));
    const steps = await decodeBothWays(model, getBackend(), LEFT_PADDED);
    for (const s of steps) assertBitEqual(s.cached, s.full, `${config.modelType} ${s.label}`);
    model.dispose();
  }
});

Deno.test("KVCache decoding equals recomputation bit for bit for random configs, prompts, chunks and row selections", async () => {
  const scenario = fc.record({
    kv: fc.constantFrom(1, 2),
    group: fc.constantFrom(1, 2),
    headDim: fc.constantFrom(2, 4, 6),
    qkNorm: fc.boolean(),
    tied: fc.boolean(),
    prompts: fc.array(fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 5 }), {
      minLength: 1,
      maxLength: 3,
    }),
    chunks: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
    selectAt: fc.integer({ min: -1, max: 2 }),
    pick: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
    seed: fc.nat(),
  });
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      const config = modelConfig({
        modelType: s.qkNorm ? "qwen3" : "qwen2",
        vocabSize: 13,
        hiddenSize: 8,
        intermediateSize: 12,
        numLayers: 2,
        numHeads: s.kv * s.group,
        numKvHeads: s.kv,
        headDim: s.headDim,
        tieWordEmbeddings: s.tied,
      });
      const select = new Map<number, number[]>();
      if (s.selectAt >= 0 && s.selectAt < s.chunks.length) {
        select.set(s.selectAt, s.pick.map((p) => p % s.prompts.length));
      }
      const model = modelOf(config, hostParams(config, s.seed));
      const steps = await decodeBothWays(model, getBackend(), {
        prompts: s.prompts,
        chunks: s.chunks,
        select,
        seed: s.seed,
      });
      for (const st of steps) assertBitEqual(st.cached, st.full, st.label);
      model.dispose();
    }),
    { numRuns: 25 },
  );
});

Deno.test("KVCache: without positions, a cached step continues at cache.length", async () => {
  const model = modelOf(QWEN2, hostParams(QWEN2, 6));
  const seq = [[4, 8, 15, 16, 22, 19]];
  const be = getBackend();
  const full = noGrad(() => model.forward(i32(seq, be)));
  const cache = new KVCache(QWEN2, 1);
  const a = noGrad(() => model.forward(i32([seq[0]!.slice(0, 4)], be), { cache }));
  const b = noGrad(() => model.forward(i32([seq[0]!.slice(4)], be), { cache }));
  const all = await full.data();
  const v = QWEN2.vocabSize;
  assertBitEqual(await a.data(), all.slice(0, 4 * v), "prefill");
  assertBitEqual(await b.data(), all.slice(4 * v), "continuation");
  cache.dispose();
  model.dispose();
});

// ---------------------------------------------------------------------------------------------
// WebGPU (Mesa's software adapter here): same scenarios on the GPU backend.

const gpuTest = (await webgpuSuite("CausalLM")).test;

gpuTest(
  "KV-cached decoding matches recomputation (rel 1e-4) and the CPU logits (rel 1e-4)",
  async (gpu) => {
    // Tolerance: rtol 1e-4, atol 1e-5 (logits are O(1)). The WebGPU matmul picks kernel variants
    // by shape, so the two paths agree to f32 rounding rather than bit for bit.
    const tol = { rtol: 1e-4, atol: 1e-5 };
    for (const config of [QWEN2, QWEN3, LLAMA]) {
      const host = hostParams(config, 7);
      const before = gpu.memory().liveBuffers;
      const model = withBackend(gpu, () => modelOf(config, host));
      const onGpu = await decodeBothWays(model, gpu, LEFT_PADDED);
      model.dispose();
      assert.equal(gpu.memory().liveBuffers, before, `${config.modelType}: WebGPU buffers leaked`);
      const cpuModel = modelOf(config, host, getBackend());
      const onCpu = await decodeBothWays(cpuModel, getBackend(), LEFT_PADDED);
      cpuModel.dispose();
      let worstSelf = 0;
      let worstCpu = 0;
      onGpu.forEach((s, i) => {
        for (let j = 0; j < s.cached.length; j++) {
          worstSelf = Math.max(worstSelf, Math.abs(s.cached[j]! - s.full[j]!));
          worstCpu = Math.max(worstCpu, Math.abs(s.cached[j]! - onCpu[i]!.cached[j]!));
        }
      });
      console.log(
        `${config.modelType} on ${gpu.name}: worst |cached - recomputed| ${
          worstSelf.toExponential(2)
        }, ` +
          `worst |webgpu - cpu| ${worstCpu.toExponential(2)}`,
      );
      onGpu.forEach((s, i) => {
        assertClose(s.cached, s.full, {
          ...tol,
          msg: `${config.modelType} cached vs full ${s.label}`,
        });
        assertClose(s.cached, onCpu[i]!.cached, {
          ...tol,
          msg: `${config.modelType} gpu vs cpu ${s.label}`,
        });
      });
    }
  },
);

// ---------------------------------------------------------------------------------------------
// fromParams validation.

Deno.test("CausalLM.fromParams: one error lists every missing, unexpected and mis-shaped name", () => {
  const host = hostParams(QWEN2, 8);
  const shapes = parameterShapes(QWEN2);
  const params = new Map<string, Tensor>();
  for (const [name, v] of host) {
    if (name === "model.layers.1.mlp.up_proj.weight" || name === "model.norm.weight") continue;
    params.set(name, tensor(v, { shape: shapes.get(name)! }));
  }
  params.set("lm_head.weight", tensor(new Float32Array(23 * 16), { shape: [23, 16] }));
  params.set("model.layers.0.self_attn.o_proj.bias", tensor(new Float32Array(16)));
  params.get("model.layers.0.self_attn.q_proj.bias")!.dispose();
  params.set("model.layers.0.self_attn.q_proj.bias", tensor(new Float32Array(8)));
  params.get("model.embed_tokens.weight")!.dispose();
  params.set(
    "model.embed_tokens.weight",
    tensor(new Int32Array(23 * 16), { shape: [23, 16], dtype: "i32" }),
  );
  let message = "";
  try {
    CausalLM.fromParams(QWEN2, params);
  } catch (e) {
    message = (e as Error).message;
  }
  assert.match(message, /^CausalLM\.fromParams: .*\(2 missing, 2 unexpected, 2 mis-shaped\)/);
  assert.match(message, /missing: model\.layers\.1\.mlp\.up_proj\.weight, model\.norm\.weight/);
  assert.match(message, /unexpected: lm_head\.weight, model\.layers\.0\.self_attn\.o_proj\.bias/);
  assert.match(message, /model\.layers\.0\.self_attn\.q_proj\.bias is \[8\], want \[16\]/);
  assert.match(message, /model\.embed_tokens\.weight is i32, want f32/);
  assert.match(message, /the config ties embeddings, so drop lm_head\.weight/);
  for (const t of params.values()) t.dispose();
});

Deno.test("CausalLM.forward: bad inputs name the option, the value and the fix", () => {
  const model = modelOf(QWEN2, hostParams(QWEN2, 9));
  const be = getBackend();
  const ids = i32([[1, 2, 3]], be);
  assert.throws(
    () => model.forward(tensor([[1, 2]])),
    /ids must be i32 \[batch, t\], got f32 \[1,2\]/,
  );
  assert.throws(
    () => model.forward(ids, { positions: [[0, 1]] }),
    /positions must be 1 rows of 3 integers >= 0/,
  );
  assert.throws(
    () => model.forward(ids, { attentionMask: i32([[1, 1]], be) }),
    /attentionMask must be bool or i32 \[batch, cacheLength \+ t\] = \[1,3\], got i32 \[1,2\]/,
  );
  const cache = new KVCache(QWEN2, 2);
  assert.throws(() => model.forward(ids, { cache }), /cache holds 2 rows but ids have 1/);
  const other = new KVCache(QWEN3, 1);
  assert.throws(
    () => model.forward(ids, { cache: other }),
    /cache was built for 2 layers × 1 kv heads × 12/,
  );
  assert.throws(
    () => model.lmHead(tensor([1, 2])),
    /lmHead: hidden must be \[\.\.\., hiddenSize=16\], got \[2\]/,
  );
  assert.throws(
    () => CausalLM.random(QWEN2, { std: -1 }),
    /CausalLM\.random: std must be a finite number >= 0, got -1/,
  );
  ids.dispose();
  model.dispose();
});

// ---------------------------------------------------------------------------------------------
// Gradients and memory.

function nextTokenLoss(model: CausalLM, ids: Tensor): Tensor {
  return tidy(() => {
    const t = ids.shape[1]!;
    const lp = logprobsOf(model.forward(ids).narrow(1, 0, t - 1), ids.narrow(1, 1, t - 1));
    return lp.mean().neg();
  });
}

Deno.test("CausalLM: backward through forward + logprobsOf gives a finite, non-zero gradient to every parameter", async () => {
  for (const config of [QWEN2, QWEN3, LLAMA]) {
    const model = modelOf(config, hostParams(config, 10));
    const ids = i32([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], getBackend());
    const loss = nextTokenLoss(model, ids);
    loss.backward();
    const named = model.namedParameters();
    assert.equal(named.size, parameterShapes(config).size);
    for (const [name, p] of named) {
      assert.ok(p.grad !== null, `${config.modelType}: ${name} has no gradient`);
      const g = await p.grad.data();
      assert.ok(g.every(Number.isFinite), `${config.modelType}: ${name} has a non-finite gradient`);
      assert.ok(g.some((v) => v !== 0), `${config.modelType}: ${name} has an all-zero gradient`);
    }
    loss.dispose();
    ids.dispose();
    model.dispose();
  }
});

Deno.test("CausalLM: parameter gradients match central differences on a tiny f64 model", async () => {
  // f64 CPU backend, step 1e-6: rtol 1e-5, atol 1e-7 (gradcheck's finite differences).
  const f64 = createCpuBackend({ precision: "f64" });
  const config = modelConfig({
    modelType: "qwen3",
    vocabSize: 7,
    hiddenSize: 4,
    intermediateSize: 6,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 1,
    headDim: 4,
    qkvBias: true,
    oBias: true,
  });
  const host = hostParams(config, 12, 0.5);
  const model = modelOf(config, host, f64);
  const ids = i32([[1, 2, 3, 6], [0, 5, 4, 2]], f64);
  const mask = i32([[1, 1, 1, 1], [0, 1, 1, 1]], f64);
  const positions = [[0, 1, 2, 3], [1, 0, 1, 2]];
  for (
    const name of [
      "model.layers.0.self_attn.q_proj.weight",
      "model.layers.0.self_attn.k_norm.weight",
      "model.layers.1.self_attn.v_proj.bias",
      "model.layers.1.mlp.gate_proj.weight",
    ]
  ) {
    const original = model.params.get(name)!;
    await withBackend(f64, () =>
      gradcheck(
        (w) => {
          model.params.set(name, w);
          try {
            return tidy(() =>
              logprobsOf(
                model.forward(ids, { positions, attentionMask: mask }).narrow(1, 0, 3),
                ids.narrow(1, 1, 3),
              )
            );
          } finally {
            model.params.set(name, original);
          }
        },
        [original],
        { rtol: 1e-5, atol: 1e-7, msg: name },
      ));
  }
  for (const t of [ids, mask]) t.dispose();
  model.dispose();
});

Deno.test("CausalLM: 20 AdamW training steps and a cached decode loop leak no buffers", () => {
  const be = getBackend();
  const start = be.memory().liveBuffers;
  const model = modelOf(QWEN3, hostParams(QWEN3, 13));
  const ids = i32([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]], be);
  const opt = new AdamW(model.parameters(), { lr: 1e-3 });
  const counts: number[] = [];
  for (let step = 0; step < 20; step++) {
    const loss = nextTokenLoss(model, ids);
    loss.backward();
    opt.step();
    opt.zeroGrad();
    loss.dispose();
    counts.push(be.memory().liveBuffers);
  }
  // Step 0 allocates the AdamW moments; from then on every step ends with the same buffers.
  assert.deepEqual(counts.slice(1), new Array(19).fill(counts[1]));
  const cache = new KVCache(QWEN3, 2);
  const decode: number[] = [];
  noGrad(() => {
    model.forward(ids, { cache }).dispose();
    for (let step = 0; step < 5; step++) {
      const next = i32([[step], [step + 1]], be);
      model.forward(next, { cache }).dispose();
      next.dispose();
      decode.push(be.memory().liveBuffers);
    }
  });
  // The cache holds one key and one value tensor per layer, whatever its length.
  assert.deepEqual(decode, new Array(5).fill(decode[0]));
  cache.dispose();
  opt.dispose();
  ids.dispose();
  model.dispose();
  assert.equal(be.memory().liveBuffers, start);
});
