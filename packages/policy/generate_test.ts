import assert from "node:assert/strict";
import { webgpuSuite } from "@rlvr/tensor/testing";
import fc from "fast-check";
import { type Backend, getBackend, noGrad, tensor, tidy, withBackend } from "@rlvr/tensor";
import {
  CausalLM,
  CharTokenizer,
  generate,
  type GenerateOptions,
  type ModelConfig,
  modelConfig,
} from "@rlvr/policy";

// Small models with peaked next-token distributions (embedding std 0.5 gives logits of std ≈ 3),
// so that top-k / top-p really filter and greedy and sampled runs differ.
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

function randomModel(config: ModelConfig, seed: number): CausalLM {
  return CausalLM.random(config, { seed, std: 0.5 });
}

/** Ragged prompts: lengths 5, 1, 3, 7 (the batch is left-padded to 7). */
const RAGGED = [[3, 9, 27, 4, 11], [7], [30, 2, 15], [1, 2, 3, 4, 5, 6, 8]];

const SAMPLED = { seed: 11, temperature: 0.8, topK: 20, topP: 0.9 };
const GREEDY = { seed: 0, temperature: 0 };

/**
 * For every generated sequence, the logits of each step recomputed from scratch: one forward
 * pass of `prompt ++ tokens` alone (batch 1, no padding, no cache). Row `p − 1 + i` predicts
 * token `i`.
 */
async function recomputed(
  model: CausalLM,
  backend: Backend,
  promptIds: number[],
  tokens: number[],
): Promise<Float32Array[]> {
  const ids = [...promptIds, ...tokens.slice(0, -1)];
  const logits = noGrad(() => tidy(() => model.forward(tensor([ids], { dtype: "i32", backend }))));
  const all = (await logits.data()) as Float32Array;
  logits.dispose();
  const V = model.config.vocabSize;
  return tokens.map((_, i) => {
    const row = promptIds.length - 1 + i;
    return all.slice(row * V, (row + 1) * V);
  });
}

Deno.test("generate: KV-cached logits equal a full recomputation at every step (CPU, bit for bit)", async () => {
  for (const config of [QWEN2, LLAMA_TIED]) {
    const model = randomModel(config, 1);
    for (const sampler of [GREEDY, SAMPLED]) {
      const { sequences } = await generate(model, RAGGED, {
        maxNewTokens: 9,
        sampler,
        eosTokenIds: [],
        returnLogits: true,
      });
      let steps = 0;
      for (const s of sequences) {
        const full = await recomputed(model, getBackend(), s.promptIds, s.tokens);
        assert.equal(s.logits!.length, s.tokens.length);
        s.logits!.forEach((row, i) => {
          // Exact: the CPU kernels compute each row in the same order whatever the batch, the
          // padding or the cache (see model.ts); a difference of one ulp would be a bug.
          assert.deepEqual(row, full[i], `${config.modelType} T=${sampler.temperature} step ${i}`);
          steps++;
        });
      }
      assert.equal(steps, 4 * 9);
    }
    model.dispose();
  }
});

Deno.test("generate: the reported log-probs are the sampler's for the returned logits", async () => {
  const model = randomModel(QWEN2, 2);
  const { sequences } = await generate(model, RAGGED, {
    maxNewTokens: 6,
    sampler: SAMPLED,
    eosTokenIds: [],
    returnLogits: true,
  });
  const { tokenLogprobs } = await import("@rlvr/sampling");
  let filtered = 0;
  for (const s of sequences) {
    s.tokens.forEach((tok, i) => {
      const want = tokenLogprobs(s.logits![i]!, tok, SAMPLED);
      assert.equal(s.logprobs[i], want.logprob);
      assert.equal(s.scaledLogprobs[i], want.scaledLogprob);
      if (want.logprob > want.scaledLogprob) filtered++;
    });
  }
  // top-k / top-p removed mass at some steps, so the two log-probs really differ there.
  assert.ok(filtered > 0, "no step was filtered: the test model is too flat");
  model.dispose();
});

Deno.test("generate: a row's tokens do not depend on the batch it is in (same seed and keys)", async () => {
  const model = randomModel(QWEN2, 3);
  const opts = (ids: number[]): GenerateOptions => ({
    maxNewTokens: 6,
    sampler: SAMPLED,
    step: 5,
    sequenceIds: ids,
    eosTokenIds: [],
  });
  const prompt = fc.array(fc.integer({ min: 0, max: QWEN2.vocabSize - 1 }), {
    minLength: 1,
    maxLength: 6,
  });
  await fc.assert(
    fc.asyncProperty(
      fc.array(prompt, { minLength: 2, maxLength: 4 }),
      fc.nat(),
      async (prompts, pick) => {
        const ids = prompts.map((_, i) => 100 + 7 * i);
        const batch = await generate(model, prompts, opts(ids));
        const r = pick % prompts.length;
        const alone = await generate(model, [prompts[r]!], opts([ids[r]!]));
        assert.deepEqual(alone.sequences[0]!.tokens, batch.sequences[r]!.tokens);
        assert.deepEqual(alone.sequences[0]!.logprobs, batch.sequences[r]!.logprobs);
        // Reversed batch order: every row still draws the same tokens.
        const reversed = await generate(model, [...prompts].reverse(), opts([...ids].reverse()));
        assert.deepEqual(
          reversed.sequences.map((s) => s.tokens).reverse(),
          batch.sequences.map((s) => s.tokens),
        );
      },
    ),
    { numRuns: 8, seed: 42 },
  );
  // A different step or sequence id changes the draws (else the keys would be ignored).
  const a = await generate(model, [[1, 2, 3]], opts([0]));
  const b = await generate(model, [[1, 2, 3]], { ...opts([0]), step: 6 });
  const c = await generate(model, [[1, 2, 3]], opts([1]));
  assert.notDeepEqual(a.sequences[0]!.tokens, b.sequences[0]!.tokens);
  assert.notDeepEqual(a.sequences[0]!.tokens, c.sequences[0]!.tokens);
  model.dispose();
});

Deno.test("generate: a row interrupted at any step and continued with positionOffsets equals the uninterrupted row (same weights)", async () => {
  const model = randomModel(QWEN2, 4);
  const max = 7;
  const base = (prompts: number[][]): GenerateOptions => ({
    maxNewTokens: max,
    sampler: SAMPLED,
    step: 3,
    sequenceIds: prompts.map((_, i) => 50 + 3 * i),
    eosTokenIds: [5, 9], // some rows end early, so interrupted and finished rows mix
  });
  const prompt = fc.array(fc.integer({ min: 0, max: QWEN2.vocabSize - 1 }), {
    minLength: 1,
    maxLength: 6,
  });
  let continued = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(prompt, { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 0, max: max - 2 }),
      async (prompts, at) => {
        const full = await generate(model, prompts, base(prompts));
        let checks = 0;
        const first = await generate(model, prompts, {
          ...base(prompts),
          interrupt: () => checks++ === at,
        });
        const open = first.sequences.flatMap((s, i) => s.finishReason === "interrupted" ? [i] : []);
        for (const i of open) assert.equal(first.sequences[i]!.tokens.length, at + 1);
        continued += open.length;
        const rest = open.length === 0 ? [] : (await generate(
          model,
          open.map((i) => [...prompts[i]!, ...first.sequences[i]!.tokens]),
          {
            ...base(prompts),
            maxNewTokens: max - (at + 1),
            sequenceIds: open.map((i) => base(prompts).sequenceIds![i]!),
            positionOffsets: open.map(() => at + 1),
          },
        )).sequences;
        const joined = first.sequences.map((s, i) => {
          const r = rest[open.indexOf(i)];
          if (r === undefined) return s;
          return {
            tokens: [...s.tokens, ...r.tokens],
            logprobs: [...s.logprobs, ...r.logprobs],
            scaledLogprobs: [...s.scaledLogprobs, ...r.scaledLogprobs],
            finishReason: r.finishReason,
          };
        });
        joined.forEach((s, i) => {
          const f = full.sequences[i]!;
          assert.deepEqual(s.tokens, f.tokens, `row ${i} interrupted after token ${at}`);
          assert.deepEqual(s.logprobs, f.logprobs);
          assert.deepEqual(s.scaledLogprobs, f.scaledLogprobs);
          assert.equal(s.finishReason, f.finishReason);
        });
      },
    ),
    { numRuns: 12, seed: 17 },
  );
  assert.ok(continued > 0, "no row was ever interrupted: the test checks nothing");
  model.dispose();
});

Deno.test("generate: interrupt ends only the running rows; never interrupting changes nothing", async () => {
  const model = randomModel(LLAMA_TIED, 6);
  const opts: GenerateOptions = { maxNewTokens: 5, sampler: SAMPLED, eosTokenIds: [] };
  const plain = await generate(model, RAGGED, opts);
  const never = await generate(model, RAGGED, { ...opts, interrupt: () => false });
  assert.deepEqual(never.sequences, plain.sequences);
  const zero = await generate(model, RAGGED, { ...opts, positionOffsets: RAGGED.map(() => 0) });
  assert.deepEqual(zero.sequences, plain.sequences);
  const cut = await generate(model, RAGGED, { ...opts, interrupt: () => true });
  for (const s of cut.sequences) {
    assert.equal(s.finishReason, "interrupted");
    assert.equal(s.tokens.length, 1);
  }
  // an interrupt after the last step has nothing left to interrupt
  const late = await generate(model, RAGGED, { ...opts, maxNewTokens: 1, interrupt: () => true });
  assert.ok(late.sequences.every((s) => s.finishReason === "length"));
  model.dispose();
});

Deno.test("generate: EOS ends a row with finishReason eos and its row leaves the cache", async () => {
  const model = randomModel(QWEN2, 4);
  const base = { maxNewTokens: 12, sampler: SAMPLED } as const;
  const free = await generate(model, RAGGED, { ...base, eosTokenIds: [] });
  // Pick as EOS the token row 0 produced third; every row then ends at its first occurrence.
  const eos = free.sequences[0]!.tokens[2]!;
  const { sequences, timing } = await generate(model, RAGGED, { ...base, eosTokenIds: [eos] });
  sequences.forEach((s, i) => {
    const full = free.sequences[i]!.tokens;
    const at = full.indexOf(eos);
    if (at >= 0) {
      assert.equal(s.finishReason, "eos", `row ${i}`);
      assert.deepEqual(s.tokens, full.slice(0, at + 1), `row ${i} keeps tokens up to the EOS`);
    } else {
      assert.equal(s.finishReason, "length", `row ${i}`);
      assert.deepEqual(s.tokens, full);
    }
  });
  assert.equal(sequences[0]!.tokens.length, free.sequences[0]!.tokens.indexOf(eos) + 1);
  // rowsPerStep: the prefill runs every row; decode step t runs the rows with more than t
  // tokens. A finished row that stayed in the cache would keep these counts at 4.
  const want = [4];
  for (let t = 1; t < 12; t++) {
    const n = sequences.filter((s) => s.tokens.length > t).length;
    if (n > 0) want.push(n);
  }
  assert.deepEqual(timing.rowsPerStep, want);
  assert.ok(want[want.length - 1]! < 4, "no row finished early: pick another EOS");
  assert.equal(timing.decodeSteps, want.length - 1);
  assert.equal(timing.generatedTokens, sequences.reduce((n, s) => n + s.tokens.length, 0));
  model.dispose();
});

Deno.test("generate: a stop string ends a row; tokens kept through the stopping token, text cut before it", async () => {
  const tok = CharTokenizer.fromCorpus(["abcdefghijklmnopqrstuvwxyz .,!?0123456789"]);
  const config = modelConfig({ ...QWEN2, vocabSize: tok.vocabSize });
  const model = randomModel(config, 5);
  const prompts = [tok.encode("hello"), tok.encode("a"), tok.encode("xyz 12")];
  const base = { maxNewTokens: 16, sampler: { seed: 3, temperature: 1.2 }, tokenizer: tok };
  const free = await generate(model, prompts, { ...base, eosTokenIds: [] });
  // Stop string: two characters that row 1 produced at its 5th and 6th decoded characters.
  const text1 = free.sequences[1]!.text!;
  assert.equal(text1, tok.decode(free.sequences[1]!.tokens, { skipSpecialTokens: true }));
  const stop = text1.slice(4, 6);
  assert.equal(stop.length, 2, `row 1 decoded too little text: ${JSON.stringify(text1)}`);
  const { sequences } = await generate(model, prompts, {
    ...base,
    eosTokenIds: [],
    stopStrings: ["@@never@@", stop],
  });
  sequences.forEach((s, i) => {
    const full = free.sequences[i]!.tokens;
    // The first prefix whose decoded text contains the stop string.
    let k = -1;
    for (let n = 1; n <= full.length && k < 0; n++) {
      if (tok.decode(full.slice(0, n), { skipSpecialTokens: true }).includes(stop)) k = n;
    }
    if (k < 0) {
      assert.equal(s.finishReason, "length", `row ${i}`);
      assert.deepEqual(s.tokens, full);
    } else {
      assert.equal(s.finishReason, "stop", `row ${i}`);
      assert.deepEqual(s.tokens, full.slice(0, k), `row ${i}: tokens through the stopping one`);
      const decoded = tok.decode(s.tokens, { skipSpecialTokens: true });
      assert.equal(s.text, decoded.slice(0, decoded.indexOf(stop)), `row ${i}: text cut`);
      assert.ok(!s.text!.includes(stop));
    }
  });
  assert.equal(sequences[1]!.finishReason, "stop");
  model.dispose();
});

Deno.test("generate: maxNewTokens ends rows with finishReason length; EOS defaults to the tokenizer's", async () => {
  const tok = CharTokenizer.fromCorpus(["abcdef"]);
  const config = modelConfig({ ...LLAMA_TIED, vocabSize: tok.vocabSize });
  const model = randomModel(config, 6);
  for (const n of [1, 2, 5]) {
    const { sequences, timing } = await generate(model, [[1, 7], [1, 8, 9]], {
      maxNewTokens: n,
      sampler: GREEDY,
      eosTokenIds: [],
    });
    for (const s of sequences) {
      assert.equal(s.finishReason, "length");
      assert.equal(s.tokens.length, n);
      assert.deepEqual(s.logprobs, Array(n).fill(0)); // greedy: point mass
    }
    assert.equal(timing.decodeSteps, n - 1); // the last token needs no forward pass
    assert.ok(timing.tokensPerS > 0 && timing.prefillS > 0 && timing.totalS >= timing.prefillS);
  }
  // With a tokenizer and no eosTokenIds, the tokenizer's <eos> (id 2) ends rows.
  const free = await generate(model, [[1, 7], [1, 8, 9], [1, 10]], {
    maxNewTokens: 20,
    sampler: { seed: 1, temperature: 1.5 },
    eosTokenIds: [],
  });
  const withTok = await generate(model, [[1, 7], [1, 8, 9], [1, 10]], {
    maxNewTokens: 20,
    sampler: { seed: 1, temperature: 1.5 },
    tokenizer: tok,
  });
  withTok.sequences.forEach((s, i) => {
    const at = free.sequences[i]!.tokens.indexOf(tok.eosTokenIds[0]!);
    assert.equal(s.finishReason, at >= 0 ? "eos" : "length");
    if (at >= 0) assert.ok(!s.text!.includes("<eos>"), "skipSpecialTokens drops the EOS text");
  });
  assert.ok(
    withTok.sequences.some((s) => s.finishReason === "eos"),
    "no row sampled <eos> in 20 tokens: change the seed",
  );
  model.dispose();
});

Deno.test("generate: onTokens streams every token, log-prob and logits row in order; its result is unchanged", async () => {
  const model = randomModel(QWEN2, 9);
  const base = { maxNewTokens: 8, sampler: SAMPLED, returnLogits: true } as const;
  const free = await generate(model, RAGGED, { ...base, eosTokenIds: [] });
  // EOS: the token row 0 drew third, so rows finish at different steps.
  const eos = free.sequences[0]!.tokens[2]!;
  const plain = await generate(model, RAGGED, { ...base, eosTokenIds: [eos] });
  const seen = RAGGED.map(() => ({
    tokens: [] as number[],
    logprobs: [] as number[],
    scaled: [] as number[],
    logits: [] as Float32Array[],
    finish: [] as string[],
  }));
  const steps: number[] = [];
  const streamed = await generate(model, RAGGED, {
    ...base,
    eosTokenIds: [eos],
    onTokens: async (e) => {
      steps.push(e.step);
      assert.equal(e.tokens.length, RAGGED.length);
      e.tokens.forEach((t, i) => {
        const row = seen[i]!;
        if (t === null) {
          assert.equal(e.logits[i], null);
          assert.equal(e.finishReasons[i], null);
          return;
        }
        assert.equal(row.tokens.length, e.step, `row ${i}: one token per step, no gaps`);
        row.tokens.push(t);
        row.logprobs.push(e.logprobs[i]!);
        row.scaled.push(e.scaledLogprobs[i]!);
        row.logits.push(e.logits[i]!.slice());
        if (e.finishReasons[i] !== null) row.finish.push(e.finishReasons[i]!);
      });
      await Promise.resolve(); // an async callback is awaited
    },
  });
  assert.deepEqual(steps, Array.from({ length: steps.length }, (_, i) => i));
  assert.deepEqual(streamed.sequences, plain.sequences, "the callback changes nothing");
  plain.sequences.forEach((s, i) => {
    const row = seen[i]!;
    assert.deepEqual(row.tokens, s.tokens, `row ${i}`);
    assert.deepEqual(row.logprobs, s.logprobs);
    assert.deepEqual(row.scaled, s.scaledLogprobs);
    assert.deepEqual(row.logits, s.logits);
    assert.deepEqual(row.finish, [s.finishReason], `row ${i}: one finish reason, at its end`);
  });
  assert.ok(plain.sequences.some((s) => s.finishReason === "eos"));
  assert.ok(plain.sequences.some((s) => s.tokens.length < 8), "no row ended early");
  // A throwing callback stops generation with its error and frees the cache.
  const backend = getBackend();
  const before = backend.memory();
  await assert.rejects(
    generate(model, RAGGED, {
      ...base,
      eosTokenIds: [],
      onTokens: (e) => {
        if (e.step === 2) throw new Error("client went away");
      },
    }),
    /client went away/,
  );
  assert.deepEqual(backend.memory(), before);
  model.dispose();
});

Deno.test("generate: leaks no backend memory, also when it fails half-way", async () => {
  const backend = getBackend();
  const model = randomModel(QWEN2, 7);
  const before = backend.memory();
  await generate(model, RAGGED, { maxNewTokens: 5, sampler: SAMPLED, eosTokenIds: [3] });
  assert.deepEqual(backend.memory(), before);
  // A tokenizer smaller than the model's vocabulary: decoding a sampled id >= its vocabSize
  // throws in the middle of the decode loop; the cache must still be freed.
  const small = CharTokenizer.fromCorpus(["ab"]);
  await assert.rejects(
    generate(model, RAGGED, {
      maxNewTokens: 30,
      sampler: { seed: 1, temperature: 2 },
      eosTokenIds: [],
      tokenizer: small,
      stopStrings: ["zz"],
    }),
    /CharTokenizer\.decode/,
  );
  assert.deepEqual(backend.memory(), before);
  model.dispose();
});

Deno.test("generate: a batch of 150k prompts (more arguments than the call stack holds) generates", async () => {
  // 150k rows: a spread of one argument per row (`Math.max(...lengths)`) throws "Maximum call
  // stack size exceeded" from about 1.2e5 on (V8's default stack holds ~1e6 bytes of arguments);
  // a server request of 1000 prompts × n = 128 did. A model this small keeps it to ~2 s.
  const model = CausalLM.random(
    modelConfig({ vocabSize: 8, hiddenSize: 4, intermediateSize: 8, numLayers: 1, numHeads: 1 }),
    { seed: 3, std: 0.5 },
  );
  const B = 150_000;
  // Ragged, so the longest prompt matters (left padding) and EOS drops rows from the cache.
  const prompts = Array.from({ length: B }, (_, i) => (i % 3 === 0 ? [1, 2, 3] : [4]));
  const opts = { maxNewTokens: 2, sampler: { seed: 5, temperature: 1 }, eosTokenIds: [0] };
  const { sequences, timing } = await generate(model, prompts, opts);
  assert.equal(sequences.length, B);
  assert.equal(timing.rowsPerStep[0], B);
  assert.ok(sequences.every((s) => s.tokens.length >= 1 && s.tokens.length <= 2));
  assert.ok(sequences.some((s) => s.finishReason === "eos"), "no row hit EOS");
  assert.ok(timing.rowsPerStep[1]! < B, "finished rows left the cache");
  // Keyed draws: the rows generated alone are the same rows.
  const alone = await generate(model, [prompts[0]!, prompts[B - 1]!], {
    ...opts,
    sequenceIds: [0, B - 1],
  });
  assert.deepEqual(alone.sequences[0]!.tokens, sequences[0]!.tokens);
  assert.deepEqual(alone.sequences[1]!.tokens, sequences[B - 1]!.tokens);
  model.dispose();
});

Deno.test("generate: bad options name the field, the value and the fix", async () => {
  const model = randomModel(LLAMA_TIED, 8);
  const sampler = GREEDY;
  await assert.rejects(
    generate(model, [[1]], { maxNewTokens: 0, sampler }),
    /generate: maxNewTokens must be an integer >= 1, got 0/,
  );
  await assert.rejects(
    generate(model, [[1], []], { maxNewTokens: 1, sampler }),
    /generate: prompts\[1\] must be an array of at least one token id/,
  );
  await assert.rejects(
    generate(model, [[1, 40]], { maxNewTokens: 1, sampler }),
    /generate: prompts\[0\]\[1\] must be a token id, an integer in \[0, 40\).*got 40/,
  );
  await assert.rejects(
    generate(model, [[1], [2]], { maxNewTokens: 1, sampler, sequenceIds: [4, 4] }),
    /generate: sequenceIds must be distinct, got 4 twice/,
  );
  await assert.rejects(
    generate(model, [[1], [2]], { maxNewTokens: 1, sampler, sequenceIds: [0, -1] }),
    /generate: sequenceIds\[1\] must be an integer in \[0, 2\^32\) \(a draw key\), got -1/,
  );
  await assert.rejects(
    generate(model, [[1]], { maxNewTokens: 1, sampler, step: 0.5 }),
    /generate: step must be an integer in \[0, 2\^32\)/,
  );
  await assert.rejects(
    generate(model, [[1]], { maxNewTokens: 1, sampler, stopStrings: ["\n"] }),
    /generate: stopStrings \["\\n"\] need a tokenizer.*pass opts.tokenizer/,
  );
  await assert.rejects(
    generate(model, [[1], [2]], { maxNewTokens: 1, sampler, positionOffsets: [3] }),
    /generate: positionOffsets must list one offset per prompt \(2\), got \[3\]/,
  );
  await assert.rejects(
    generate(model, [[1]], { maxNewTokens: 1, sampler, positionOffsets: [1.5] }),
    /generate: positionOffsets\[0\] must be an integer in \[0, 2\^32\)/,
  );
  await assert.rejects(
    generate(model, [[1]], { maxNewTokens: 1, sampler: { seed: 0, topP: 2 } }),
    /TokenSampler: topP must be/,
  );
  model.dispose();
});

// ---------------------------------------------------------------------------------------------
// WebGPU (Mesa's software adapter here): the same cache-vs-recompute check on the GPU backend.

const suite = await webgpuSuite("generate");

suite.test(
  "generate: KV-cached logits match a full recomputation (rtol 1e-4, atol 1e-5)",
  async (gpu) => {
    // Tolerance: |cached − recomputed| <= 1e-5 + 1e-4·|recomputed| per logit (logits are O(3)).
    // The WebGPU matmul picks kernel variants by shape (a 1-row decode step and a full-sequence
    // forward use different ones), so the two paths agree to f32 rounding, not bit for bit.
    const before = gpu.memory().liveBuffers;
    const model = withBackend(gpu, () => randomModel(QWEN2, 9));
    let worst = 0;
    for (const sampler of [GREEDY, SAMPLED]) {
      const { sequences } = await generate(model, RAGGED, {
        maxNewTokens: 5,
        sampler,
        eosTokenIds: [],
        returnLogits: true,
      });
      for (const s of sequences) {
        const full = await recomputed(model, gpu, s.promptIds, s.tokens);
        s.logits!.forEach((row, i) => {
          for (let j = 0; j < row.length; j++) {
            const d = Math.abs(row[j]! - full[i]![j]!);
            worst = Math.max(worst, d);
            assert.ok(
              d <= 1e-5 + 1e-4 * Math.abs(full[i]![j]!),
              `T=${sampler.temperature} step ${i} logit ${j}: ${row[j]} vs ${full[i]![j]}`,
            );
          }
        });
      }
    }
    console.log(`generate on ${gpu.name}: worst |cached - recomputed| ${worst.toExponential(2)}`);
    model.dispose();
    assert.equal(gpu.memory().liveBuffers, before, "WebGPU buffers leaked");
  },
);
