import assert from "node:assert/strict";
import { webgpuSuite } from "@rlvr/tensor/testing";
import { noGrad, Rng, tensor, withBackend } from "@rlvr/tensor";
import {
  attachLora,
  CausalLM,
  deviceDecodeProblem,
  DeviceDecoder,
  generate,
  type GenerateOptions,
  type GenerateStep,
  type GridThw,
  KVCache,
  type ModelConfig,
  modelConfig,
  visionConfig,
  visionLanguageConfig,
  VisionLanguageModel,
} from "@rlvr/policy";
import { randomPixels } from "../vision/_test_reference.ts";

// The three families' switches: Qwen2 (QKV biases, GQA, untied), Llama (tied, no biases),
// Qwen3 (per-head QK-norm, head dimension independent of the hidden size).
const CONFIGS: Record<string, ModelConfig> = {
  qwen2: modelConfig({
    modelType: "qwen2",
    vocabSize: 300,
    hiddenSize: 32,
    intermediateSize: 64,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
  }),
  llama: modelConfig({
    modelType: "llama",
    vocabSize: 260,
    hiddenSize: 16,
    intermediateSize: 32,
    numLayers: 2,
    numHeads: 2,
    tieWordEmbeddings: true,
  }),
  qwen3: modelConfig({
    modelType: "qwen3",
    vocabSize: 280,
    hiddenSize: 24,
    intermediateSize: 40,
    numLayers: 2,
    numHeads: 3,
    numKvHeads: 1,
    headDim: 16,
  }),
};

/** Ragged prompts (left-padded to 7 in the batch). */
const RAGGED = [[3, 9, 27, 4, 11], [7], [30, 2, 15], [1, 2, 3, 4, 5, 6, 8]];

const suite = await webgpuSuite("device decode");

suite.test("device decode loop: refuses what it cannot run, naming it", async (gpu) => {
  const cpuModel = CausalLM.random(CONFIGS.llama!, { seed: 1 });
  assert.match(deviceDecodeProblem(cpuModel)!, /cpu backend, not WebGPU/);
  await assert.rejects(
    generate(cpuModel, [[1]], {
      maxNewTokens: 2,
      sampler: { seed: 0, temperature: 0 },
      decodeLoop: "device",
    }),
    /decodeLoop "device" cannot run: the model's parameters are on the cpu backend/,
  );
  cpuModel.dispose();
  const model = withBackend(gpu, () => CausalLM.random(CONFIGS.llama!, { seed: 1 }));
  assert.equal(deviceDecodeProblem(model), null);
  const base: GenerateOptions = { maxNewTokens: 2, sampler: { seed: 0 }, decodeLoop: "device" };
  await assert.rejects(
    generate(model, [[1]], { ...base, returnLogits: true }),
    /returnLogits needs every logits row on the host/,
  );
  await assert.rejects(
    generate(model, [[1]], { ...base, deviceChunk: 0 }),
    /deviceChunk must be an integer >= 1, got 0/,
  );
  await assert.rejects(
    generate(model, [[1]], { ...base, decodeLoop: "gpu" as "host" }),
    /decodeLoop must be "host" or "device", got "gpu"/,
  );
  // A linear-layer extension the loop does not know how to fold in.
  const odd = {
    kind: "odd",
    freezesBase: false,
    namedParameters: () => new Map(),
    adaptLinear: (_m: string, _x: unknown, y: never) => y,
    dispose: () => {},
  };
  model.attach(odd);
  assert.match(deviceDecodeProblem(model)!, /a linear-layer extension other than LoRA \(odd\)/);
  model.detach(odd);
  model.dispose();
});

// Tolerance: the device loop computes the logits with its own kernels (other f32 summation
// orders than the tensor ops) and the draw's normaliser in f32, so log-probs agree to 2e-4
// (logits are O(3)); tokens must be the same ones, which holds unless a uniform lands within
// rounding of a boundary between two tokens (probability ~1e-6 per draw; these seeds are fixed).
for (const [family, config] of Object.entries(CONFIGS)) {
  suite.test(
    `device decode loop (${family}): the host loop's tokens and log-probs (atol 2e-4), ragged batch`,
    async (gpu) => {
      const before = gpu.memory().liveBuffers;
      const model = withBackend(gpu, () => CausalLM.random(config, { seed: 5, std: 0.5 }));
      for (
        const sampler of [{ seed: 3, temperature: 0 }, { seed: 3, temperature: 0.8 }, { seed: 4 }]
      ) {
        for (const deviceChunk of [1, 3, 16]) {
          const opts: GenerateOptions = {
            maxNewTokens: 9,
            sampler,
            step: 2,
            sequenceIds: [5, 6, 7, 8],
            positionOffsets: [0, 4, 0, 1],
            eosTokenIds: [],
          };
          const host = await generate(model, RAGGED, opts);
          const device = await generate(model, RAGGED, {
            ...opts,
            decodeLoop: "device",
            deviceChunk,
          });
          device.sequences.forEach((s, i) => {
            const h = host.sequences[i]!;
            const what = `T=${sampler.temperature ?? 1} chunk ${deviceChunk} row ${i}`;
            assert.deepEqual(s.tokens, h.tokens, what);
            assert.equal(s.finishReason, h.finishReason, what);
            s.scaledLogprobs.forEach((lp, j) => {
              assert.ok(Math.abs(lp - h.scaledLogprobs[j]!) <= 2e-4, `${what} scaled ${j}`);
              assert.ok(Math.abs(s.logprobs[j]! - h.logprobs[j]!) <= 2e-4, `${what} lp ${j}`);
            });
          });
          assert.equal(device.timing.generatedTokens, 36);
          assert.equal(device.timing.decodeSteps, 8);
        }
      }
      model.dispose();
      assert.equal(gpu.memory().liveBuffers, before, "WebGPU buffers leaked");
    },
  );
}

// Filters on the GPU: the host sampler's float64 sort and sums against f32 bisection and sums,
// so a token at a filter's boundary could differ within rounding (none on these fixed seeds);
// log-probs under the filtered distribution agree to 2e-4 as the unfiltered ones do.
suite.test(
  "device decode loop with top-k / top-p / min-p (both orders): the host loop's tokens and log-probs",
  async (gpu) => {
    const model = withBackend(gpu, () => CausalLM.random(CONFIGS.qwen2!, { seed: 5, std: 0.5 }));
    const filters = [
      { topK: 5 },
      { topK: 1 },
      { topP: 0.9 },
      { topP: 0.3 },
      { minP: 0.1 },
      { topK: 40, topP: 0.8, minP: 0.02 },
      { topK: 40, topP: 0.8, minP: 0.02, order: "vllm" as const },
      { topP: 0.7, minP: 0.3, order: "vllm" as const },
    ];
    let narrowed = 0;
    for (const f of filters) {
      for (const temperature of [0.7, 1, 1.6]) {
        const opts: GenerateOptions = {
          maxNewTokens: 9,
          sampler: { seed: 11, temperature, ...f },
          sequenceIds: [1, 2, 3, 4],
          eosTokenIds: [],
        };
        const host = await generate(model, RAGGED, opts);
        const device = await generate(model, RAGGED, { ...opts, decodeLoop: "device" });
        const what = `${JSON.stringify(f)} T=${temperature}`;
        device.sequences.forEach((s, i) => {
          const h = host.sequences[i]!;
          assert.deepEqual(s.tokens, h.tokens, `${what} row ${i}`);
          s.logprobs.forEach((lp, j) => {
            assert.ok(
              Math.abs(lp - h.logprobs[j]!) <= 2e-4,
              `${what} ${i} ${j}: ${lp} ${h.logprobs[j]}`,
            );
            assert.ok(
              Math.abs(s.scaledLogprobs[j]! - h.scaledLogprobs[j]!) <= 2e-4,
              `${what} scaled`,
            );
            if (h.logprobs[j]! > h.scaledLogprobs[j]! + 1e-3) narrowed++;
          });
        });
      }
    }
    // The filters did act: many draws have a sampling log-prob above the unfiltered one.
    assert.ok(narrowed > 100, `${narrowed} filtered draws`);
    model.dispose();
  },
);

suite.test(
  "device decode loop with filters at tied logits: top-k keeps every tie, top-p keeps ties in index order",
  async (gpu) => {
    // Tied embeddings with rows 2m and 2m+1 equal: every logit comes in an equal pair (the same
    // dot product, summed in the same order), so filter boundaries fall on ties.
    const model = withBackend(gpu, () => CausalLM.random(CONFIGS.llama!, { seed: 6, std: 0.5 }));
    const embed = model.params.get("model.embed_tokens.weight")!;
    const w = Float32Array.from(await embed.data() as Float32Array);
    const H = CONFIGS.llama!.hiddenSize;
    for (let r = 1; r < CONFIGS.llama!.vocabSize; r += 2) {
      w.copyWithin(r * H, (r - 1) * H, r * H);
    }
    embed.backend.write(embed.buffer, w);
    let ties = 0;
    for (
      const f of [
        { topK: 5 },
        { topK: 2 },
        { topP: 0.5 },
        { topP: 0.85 },
        { topK: 7, topP: 0.6 },
        { topP: 0.6, minP: 0.2, order: "vllm" as const },
      ]
    ) {
      const opts: GenerateOptions = {
        maxNewTokens: 8,
        sampler: { seed: 2, temperature: 1.3, ...f },
        sequenceIds: [1, 2, 3, 4],
        eosTokenIds: [],
      };
      const host = await generate(model, RAGGED, opts);
      const device = await generate(model, RAGGED, { ...opts, decodeLoop: "device" });
      device.sequences.forEach((s, i) => {
        const h = host.sequences[i]!;
        assert.deepEqual(s.tokens, h.tokens, `${JSON.stringify(f)} row ${i}`);
        s.logprobs.forEach((lp, j) => {
          assert.ok(Math.abs(lp - h.logprobs[j]!) <= 2e-4, `${JSON.stringify(f)} ${i} ${j}`);
        });
        ties += h.tokens.filter((t) => t % 2 === 1).length;
      });
    }
    assert.ok(ties > 20, `${ties} draws of the second token of a tied pair`);
    model.dispose();
  },
);

suite.test(
  "device decode loop with a vision-language model: images through the hook at the prefill, decode steps at the M-RoPE deltas give the host loop's tokens",
  async (gpu) => {
    const [IMAGE, START, END] = [29, 30, 31];
    const config = visionLanguageConfig({
      text: modelConfig({
        modelType: "qwen2",
        vocabSize: 32,
        hiddenSize: 16,
        intermediateSize: 24,
        numLayers: 2,
        numHeads: 2,
        numKvHeads: 1,
        tieWordEmbeddings: true,
      }),
      vision: visionConfig({ depth: 1, embedDim: 8, numHeads: 2, patchSize: 2, outHiddenSize: 16 }),
      imageTokenId: IMAGE,
      visionStartTokenId: START,
      visionEndTokenId: END,
      mropeSection: [1, 2, 1],
    });
    const model = withBackend(
      gpu,
      () => VisionLanguageModel.random(config, { seed: 11, std: 0.5 }),
    );
    const images = withBackend(gpu, () => [
      { pixelValues: tensor(randomPixels(new Rng(12), 8, 24)), gridThw: [[1, 2, 4]] as GridThw[] },
      undefined,
      { pixelValues: tensor(randomPixels(new Rng(13), 8, 24)), gridThw: [[1, 4, 2]] as GridThw[] },
    ]);
    // Ragged: an image first, a text-only row, an image after text (its delta differs).
    const prompts = [[START, IMAGE, IMAGE, END, 5], [3, 4], [6, START, IMAGE, IMAGE, END]];
    for (const sampler of [{ seed: 3, temperature: 1 }, { seed: 3, temperature: 0.8, topP: 0.9 }]) {
      const opts = { maxNewTokens: 10, sampler, eosTokenIds: [] };
      const host = await generate(model.lm, prompts, {
        ...opts,
        forwardHook: model.forwardHook((r) => images[r]),
      });
      const device = await generate(model.lm, prompts, {
        ...opts,
        forwardHook: model.forwardHook((r) => images[r]),
        decodeLoop: "device",
      });
      device.sequences.forEach((s, i) => {
        const h = host.sequences[i]!;
        assert.deepEqual(s.tokens, h.tokens, `row ${i}`);
        s.logprobs.forEach((lp, j) =>
          assert.ok(Math.abs(lp - h.logprobs[j]!) <= 2e-4, `${i} ${j}`)
        );
      });
      // A hook whose decodeShift ignores the deltas (position = cache column): the image rows
      // decode at other positions, and their log-probs move.
      const hook = model.forwardHook((r) => images[r]);
      const wrong = Object.assign((c: Parameters<typeof hook>[0]) => hook(c), {
        decodeShift: () => 0,
      });
      const shifted = await generate(model.lm, prompts, {
        ...opts,
        forwardHook: wrong,
        decodeLoop: "device",
      });
      assert.notDeepEqual(shifted.sequences[0]!.logprobs, host.sequences[0]!.logprobs);
    }
    for (const im of images) im?.pixelValues.dispose();
    model.lm.dispose();
  },
);

suite.test(
  "device decode loop with LoRA adapters (unmerged, and merged in place): the host loop's tokens and log-probs; the adapters change them",
  async (gpu) => {
    const before = gpu.memory().liveBuffers;
    const model = withBackend(gpu, () => CausalLM.random(CONFIGS.qwen2!, { seed: 5, std: 0.5 }));
    const opts: GenerateOptions = {
      maxNewTokens: 9,
      sampler: { seed: 3, temperature: 0.8 },
      sequenceIds: [5, 6, 7, 8],
      eosTokenIds: [],
    };
    const plain = await generate(model, RAGGED, opts);
    const lora = withBackend(gpu, () =>
      attachLora(model, {
        rank: 2,
        alpha: 8,
        targetModules: ["q_proj", "v_proj", "o_proj", "up_proj", "down_proj"],
        seed: 1,
      }));
    // B starts at zero (the adapters a no-op): give it values, as after some training.
    for (const [name, t] of lora.params) {
      if (name.includes("lora_B")) {
        t.backend.write(
          t.buffer,
          Float32Array.from({ length: t.size }, (_, i) => Math.sin(i) * 0.3),
        );
      }
    }
    assert.equal(deviceDecodeProblem(model), null);
    const check = async (what: string) => {
      const host = await generate(model, RAGGED, opts);
      const device = await generate(model, RAGGED, { ...opts, decodeLoop: "device" });
      device.sequences.forEach((s, i) => {
        assert.deepEqual(s.tokens, host.sequences[i]!.tokens, `${what} row ${i}`);
        s.logprobs.forEach((lp, j) => {
          assert.ok(Math.abs(lp - host.sequences[i]!.logprobs[j]!) <= 2e-4, `${what} ${i} ${j}`);
        });
      });
      return host;
    };
    const adapted = await check("unmerged");
    assert.notDeepEqual(
      adapted.sequences.map((s) => s.tokens),
      plain.sequences.map((s) => s.tokens),
      "the adapters change the tokens",
    );
    lora.merge();
    await check("merged");
    lora.unmerge();
    model.dispose();
    assert.equal(gpu.memory().liveBuffers, before, "WebGPU buffers leaked (the merged copies)");
  },
);

suite.test(
  "device decode loop: EOS ends rows in order, onTokens sees every token, interrupt stops",
  async (gpu) => {
    const model = withBackend(gpu, () => CausalLM.random(CONFIGS.qwen2!, { seed: 8, std: 0.5 }));
    const opts: GenerateOptions = { maxNewTokens: 12, sampler: { seed: 9 }, eosTokenIds: [] };
    const free = await generate(model, RAGGED, { ...opts, decodeLoop: "device" });
    // EOS: each row's 4th token (when it does not occur earlier in that row).
    const eos = [...new Set(free.sequences.map((s) => s.tokens[3]!))];
    const host = await generate(model, RAGGED, { ...opts, eosTokenIds: eos });
    const seen: number[][] = RAGGED.map(() => []);
    const device = await generate(model, RAGGED, {
      ...opts,
      eosTokenIds: eos,
      decodeLoop: "device",
      deviceChunk: 5,
      onTokens: (e: GenerateStep) => {
        e.tokens.forEach((t, i) => t !== null && seen[i]!.push(t));
        // The prefill's draw (step 0) is the host loop's, with its logits; later steps have none.
        assert.ok(e.step === 0 || e.logits.every((l) => l === null));
      },
    });
    assert.deepEqual(device.sequences.map((s) => s.tokens), host.sequences.map((s) => s.tokens));
    assert.deepEqual(
      device.sequences.map((s) => s.finishReason),
      host.sequences.map((s) => s.finishReason),
    );
    assert.ok(device.sequences.some((s) => s.finishReason === "eos"));
    assert.deepEqual(seen, device.sequences.map((s) => s.tokens));
    let calls = 0;
    const cut = await generate(model, RAGGED, {
      ...opts,
      decodeLoop: "device",
      deviceChunk: 4,
      interrupt: () => ++calls === 3,
    });
    for (const [i, s] of cut.sequences.entries()) {
      assert.equal(s.finishReason, "interrupted");
      assert.deepEqual(s.tokens, free.sequences[i]!.tokens.slice(0, 3));
    }
    model.dispose();
  },
);

suite.test(
  "device decode loop: 10 rows (two row blocks), head dimension 64, contexts past 128 keys",
  async (gpu) => {
    // 170-token prompts cross the attention kernel's 128-key blocks (online softmax rescaling);
    // the 20-token prompt's 150 padding columns start its keys inside the second block. Over
    // 170 keys and a 128-wide model the f32 rounding of the two paths grows: log-probs agree to
    // 2e-4 + 1e-4·|log-prob| here.
    const config = modelConfig({
      modelType: "qwen2",
      vocabSize: 520,
      hiddenSize: 128,
      intermediateSize: 96,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 1,
    });
    const model = withBackend(gpu, () => CausalLM.random(config, { seed: 2, std: 0.5 }));
    const prompts = Array.from(
      { length: 10 },
      (_, i) => Array.from({ length: i === 3 ? 20 : 170 - i }, (_, j) => (i * 31 + j * 7) % 520),
    );
    for (const sampler of [{ seed: 1, temperature: 0 }, { seed: 1, temperature: 0.7 }]) {
      const opts: GenerateOptions = { maxNewTokens: 6, sampler, eosTokenIds: [] };
      const host = await generate(model, prompts, opts);
      const device = await generate(model, prompts, { ...opts, decodeLoop: "device" });
      device.sequences.forEach((s, i) => {
        assert.deepEqual(s.tokens, host.sequences[i]!.tokens, `T=${sampler.temperature} row ${i}`);
        s.scaledLogprobs.forEach((lp, j) => {
          const hv = host.sequences[i]!.scaledLogprobs[j]!;
          assert.ok(
            Math.abs(lp - hv) <= 2e-4 + 1e-4 * Math.abs(hv),
            `row ${i} ${j}: ${lp} vs ${hv}`,
          );
        });
      });
    }
    model.dispose();
  },
);

suite.test("DeviceDecoder.profile: GPU time per kernel of one step, every dispatch counted", async (gpu) => {
  const config = CONFIGS.llama!;
  const model = withBackend(gpu, () => CausalLM.random(config, { seed: 1, std: 0.5 }));
  const cache = new KVCache(config, 1);
  noGrad(() =>
    model.forward(tensor([[1, 2, 3]], { dtype: "i32", backend: gpu }), { cache }).dispose()
  );
  const dec = new DeviceDecoder(model, { rows: 1, maxLen: 8, maxSteps: 4, temperature: 0 });
  try {
    await dec.checked();
    dec.start(cache, { pads: [0], tokens: [4], step: 1 }, new Float32Array(4));
    const profile = await dec.profile(1);
    const kernels = profile.map((p) => p.kernel);
    for (
      const k of [
        "decode.embed",
        "decode.rmsnorm",
        "decode.ropekv",
        "decode.attention",
        "decode.sampler",
        "decode.advance",
      ]
    ) {
      assert.ok(kernels.includes(k), `${k} in ${kernels}`);
    }
    assert.equal(profile.reduce((n, p) => n + p.dispatches, 0), dec.dispatchesPerStep);
    assert.ok(profile.every((p) => p.ms >= 0 && Number.isFinite(p.ms)));
    assert.ok(profile.every((p, i) => i === 0 || p.ms <= profile[i - 1]!.ms)); // largest first
    // The profiled step advanced the state like a run: the next steps decode from index 2.
    const next = await dec.run(2, 2);
    assert.equal(next.tokens.length, 2);
    assert.throws(() => dec.run(3, 2), /steps 3\.\.4 exceed maxSteps 4/);
  } finally {
    dec.dispose();
    cache.dispose();
    model.dispose();
  }
});
