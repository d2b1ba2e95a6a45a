import assert from "node:assert/strict";
import fc from "fast-check";
import {
  configFromHf,
  configToHf,
  modelConfig,
  type ModelConfigInit,
  parameterCount,
  parameterShapes,
} from "./config.ts";

const base = {
  vocabSize: 32,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 4,
};

Deno.test("config: family defaults follow transformers (Qwen2 QKV bias, Qwen3 QK-norm, theta)", () => {
  const llama = modelConfig({ ...base, modelType: "llama" });
  assert.deepEqual([llama.qkvBias, llama.oBias, llama.qkNorm, llama.ropeTheta], [
    false,
    false,
    false,
    1e4,
  ]);
  const qwen2 = modelConfig({ ...base, modelType: "qwen2" });
  assert.deepEqual([qwen2.qkvBias, qwen2.oBias, qwen2.qkNorm, qwen2.ropeTheta], [
    true,
    false,
    false,
    1e6,
  ]);
  const qwen3 = modelConfig({ ...base, modelType: "qwen3", headDim: 8 });
  assert.deepEqual([qwen3.qkvBias, qwen3.qkNorm, qwen3.headDim], [false, true, 8]);
  assert.ok(parameterShapes(qwen3).has("model.layers.1.self_attn.k_norm.weight"));
  assert.deepEqual(parameterShapes(qwen3).get("model.layers.0.self_attn.q_proj.weight"), [32, 16]);
});

Deno.test("config: HF round trip is the identity for any valid config", () => {
  const arb = fc.record({
    modelType: fc.constantFrom("llama" as const, "qwen2" as const, "qwen3" as const),
    numKvHeads: fc.constantFrom(1, 2, 4),
    headDim: fc.constantFrom(undefined, 2, 6, 8),
    tie: fc.boolean(),
    bias: fc.boolean(),
    eos: fc.array(fc.nat(31), { maxLength: 3 }),
    scaling: fc.boolean(),
  });
  fc.assert(fc.property(arb, (a) => {
    const init: Record<string, unknown> = {
      ...base,
      modelType: a.modelType,
      numKvHeads: a.numKvHeads,
      tieWordEmbeddings: a.tie,
      eosTokenIds: a.eos,
    };
    if (a.headDim !== undefined) init.headDim = a.headDim;
    if (a.modelType !== "qwen2") {
      init.qkvBias = a.bias;
      init.oBias = a.bias;
    }
    if (a.scaling) {
      init.ropeScaling = {
        type: "llama3",
        factor: 8,
        lowFreqFactor: 1,
        highFreqFactor: 4,
        originalMaxPositions: 64,
      };
    }
    const c = modelConfig(init as unknown as ModelConfigInit);
    const hf = JSON.parse(JSON.stringify(configToHf(c)));
    const back = configFromHf(hf);
    // a single eos id is written as a number, a list as a list: both read back as a list
    assert.deepEqual(back, c);
  }));
});

Deno.test("config: bad fields name the field, the value and the fix", () => {
  assert.throws(
    () => modelConfig({ ...base, numKvHeads: 3 }),
    /numKvHeads must be a divisor of numHeads \(4\), got 3/,
  );
  assert.throws(
    () => modelConfig({ ...base, hiddenSize: 0 }),
    /hiddenSize must be an integer >= 1, got 0/,
  );
  assert.throws(
    () => modelConfig({ ...base, hiddenSize: 18 }),
    /headDim must be given when hiddenSize \(18\)/,
  );
  assert.throws(() => modelConfig({ ...base, headDim: 5 }), /headDim must be even/);
  assert.throws(
    () => configFromHf({ model_type: "gpt2", vocab_size: 2 }, "m/config.json"),
    /m\/config.json: model_type must be one of "llama", "qwen2", "qwen3", got "gpt2"/,
  );
  assert.throws(
    () => configFromHf({ model_type: "llama", hidden_size: 8 }),
    /config.json: vocab_size must be present, got undefined/,
  );
  assert.throws(
    () =>
      configFromHf({
        model_type: "llama",
        vocab_size: 8,
        hidden_size: 8,
        intermediate_size: 8,
        num_hidden_layers: 1,
        num_attention_heads: 2,
        rope_scaling: { rope_type: "yarn", factor: 4 },
      }),
    /rope_scaling.rope_type must be "llama3" or "default".*got "yarn"/,
  );
  assert.throws(
    () => configFromHf({ ...configToHf(modelConfig(base)), rms_norm_eps: -1 }),
    /rmsNormEps must be a finite number > 0, got -1/,
  );
});

Deno.test("config: a Qwen2.5-0.5B config.json reads with the published sizes", () => {
  // keys and values as published for Qwen/Qwen2.5-0.5B-Instruct
  const c = configFromHf({
    architectures: ["Qwen2ForCausalLM"],
    attention_dropout: 0.0,
    bos_token_id: 151643,
    eos_token_id: 151645,
    hidden_act: "silu",
    hidden_size: 896,
    initializer_range: 0.02,
    intermediate_size: 4864,
    max_position_embeddings: 32768,
    max_window_layers: 21,
    model_type: "qwen2",
    num_attention_heads: 14,
    num_hidden_layers: 24,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-06,
    rope_theta: 1000000.0,
    sliding_window: 32768,
    tie_word_embeddings: true,
    torch_dtype: "bfloat16",
    transformers_version: "4.43.1",
    use_cache: true,
    use_sliding_window: false,
    vocab_size: 151936,
  });
  assert.equal(c.headDim, 64);
  assert.deepEqual(c.eosTokenIds, [151645]);
  // 494M parameters as the model card states (0.49B)
  assert.equal(Math.round(parameterCount(c) / 1e6), 494);
});
