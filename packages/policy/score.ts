/**
 * Learner-side scoring of completions: the log-probability and the entropy of every completion
 * token under `softmax(logits / T)`, the distribution the sampler reports as `scaledLogprob`,
 * with gradients for the policy loss or under `noGrad` for reference / old-policy scores.
 *
 * Design decisions:
 * - **Right padding, positions `0..len-1`**: each row is `prompt ++ completion` padded at the
 *   end, so the default positions are the real ones and the causal mask alone keeps the padding
 *   out of every real token's view; no attention mask is needed.
 * - **Only completion positions reach the LM head**: the final hidden states of the positions
 *   that predict a completion token are gathered (`[N, hidden]`, `N` = completion tokens of the
 *   batch) and pushed through `lmHead` in chunks of `chunkTokens` rows, each followed at once by
 *   `logprobsOf` and `entropyFromLogits`. The `[B, T, vocab]` logits never exist; neither do the
 *   prompt positions' logits.
 * - **No logits kept for backward**: with gradients on, each chunk is one autograd node that
 *   saves only its `[chunk, hidden]` input and recomputes the chunk's logits in the backward
 *   pass (the "chunked / fused linear cross-entropy" of Liger-Kernel and Apple's Cut Cross
 *   Entropy), so a learner batch holds no `N × vocab` tensor between forward and backward. The
 *   cost is one extra `[chunk, hidden] × [hidden, vocab]` matmul per chunk in the backward pass.
 *   The backward assumes the LM head is `hidden · Wᵀ` with `lm_head.weight` (or the tied
 *   embedding), which is what `CausalLM.lmHead` computes; LoRA does not adapt the LM head.
 *
 * Peak memory (f32, 4 bytes per value; `V` vocab, `H` hidden, `F` intermediate size, `R` rows
 * per `model.hidden` call, `L` their longest sequence, `C` = `chunkTokens`):
 * - under `noGrad`: the model's per-layer temporaries for `R × L` tokens (≈ `R·L·(3F + 4H)`
 *   values), plus about three `C × V` tensors for one chunk (logits, the scaled logits, the
 *   kernels' output); default `C = ⌊2^24 / V⌋` caps one such tensor at 64 MiB.
 * - with gradients: what backprop through the transformer needs anyway (every layer's saved
 *   activations), plus the gathered `N × H` hidden states; no `N × V` term. The backward pass
 *   peaks at about five `C × V` temporaries for one chunk.
 *
 * @module
 */

import {
  arange,
  concat,
  entropyFromLogits,
  GradNode,
  isGradEnabled,
  keep,
  logprobsOf,
  noGrad,
  type Tensor,
  tensor,
  tidy,
  zeros,
} from "@rlvr/tensor";
import type { CausalLM, ForwardHook } from "./model.ts";

/**
 * One sequence to score: the prompt (context only) and the completion whose tokens are scored.
 *
 * @example Usage
 * ```ts
 * import type { ScoreItem } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const item: ScoreItem = { promptIds: [1, 5, 9], completionIds: [4, 2] };
 * assert.equal(item.completionIds.length, 2);
 * ```
 */
export interface ScoreItem {
  /** Prompt token ids, at least one (the first completion token is predicted from its end). */
  promptIds: readonly number[];
  /** Completion token ids (may be empty for some rows, not for all). */
  completionIds: readonly number[];
}

/**
 * Options of {@link scoreCompletions}.
 *
 * @example Usage
 * ```ts
 * import type { ScoreOptions } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const opts: ScoreOptions = { temperature: 0.7, entropy: false, chunkTokens: 256 };
 * assert.equal(opts.temperature, 0.7);
 * ```
 */
export interface ScoreOptions {
  /**
   * The sampling temperature `T`: scores are under `softmax(logits / T)`. Default 1. `0` (greedy
   * sampling) means 1, matching the sampler, whose `scaledLogprob` is unscaled for greedy.
   */
  temperature?: number;
  /** Also compute the entropies (default true); `entropies` is null otherwise. */
  entropy?: boolean;
  /** Completion positions per LM-head chunk; default `max(1, ⌊2^24 / vocabSize⌋)`. */
  chunkTokens?: number;
  /**
   * Sequences per `model.hidden` call; default `max(1, ⌊8192 / longest sequence⌋)`. Bounds the
   * transformer's temporaries under `noGrad`; with gradients the graph keeps every chunk's
   * activations anyway.
   */
  rowsPerChunk?: number;
  /** Id of the right-padding slots (any valid id; they are never seen). Default pad id or 0. */
  padTokenId?: number;
  /**
   * Adds input embeddings and RoPE tables to each decoder call (a vision-language model's
   * `forwardHook(imagesOf)`); `rows` are indices into `batch`.
   */
  forwardHook?: ForwardHook;
}

/**
 * What {@link scoreCompletions} returns: `[B, Tc]` tensors (`Tc` the longest completion), zero
 * where `mask` is 0. The caller owns (and disposes) the tensors.
 *
 * @example Usage
 * ```ts
 * import type { CompletionScores } from "@rlvr/policy";
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const s: CompletionScores = {
 *   logprobs: tensor([[-0.5, 0]]), entropies: null, mask: tensor([[1, 0]]),
 *   completionLengths: [1],
 * };
 * assert.deepEqual(s.completionLengths, [1]);
 * ```
 */
export interface CompletionScores {
  /** `log softmax(logits / T)[token]` per completion token, f32 `[B, Tc]`. */
  logprobs: Tensor;
  /** Entropy (nats) of `softmax(logits / T)` per completion position, f32 `[B, Tc]`, or null. */
  entropies: Tensor | null;
  /** 1 for a real completion token, 0 for padding, f32 `[B, Tc]`. */
  mask: Tensor;
  /** Completion length per row. */
  completionLengths: number[];
}

/** `Array.isArray` without its `any[]` type guard, which would erase readonly element types. */
function isArray(v: unknown): boolean {
  return Array.isArray(v);
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v)?.slice(0, 120) ?? String(v);
  } catch {
    return String(v);
  }
}

function checkIds(field: string, ids: unknown, vocab: number, min: number): readonly number[] {
  if (!Array.isArray(ids) || ids.length < min) {
    throw new RangeError(
      `scoreCompletions: ${field} must be an array of ${min > 0 ? "at least one" : ""} token ` +
        `id(s), got ${show(ids)}`,
    );
  }
  ids.forEach((id, i) => {
    if (!Number.isInteger(id) || id < 0 || id >= vocab) {
      throw new RangeError(
        `scoreCompletions: ${field}[${i}] must be an integer in [0, ${vocab}) (the model's ` +
          `vocabSize), got ${show(id)}`,
      );
    }
  });
  return ids as readonly number[];
}

function positiveInt(field: string, v: unknown): number {
  if (!Number.isInteger(v) || (v as number) < 1) {
    throw new RangeError(`scoreCompletions: ${field} must be an integer >= 1, got ${show(v)}`);
  }
  return v as number;
}

/** The LM head's weight `[V, H]`: `lm_head.weight`, or the embedding when tied. */
function headWeight(model: CausalLM): Tensor {
  const name = model.config.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight";
  const w = model.params.get(name);
  if (w === undefined) throw new Error(`scoreCompletions: the model has no ${name}`);
  return w;
}

/** `lmHead(h) / T` for a `[n, H]` chunk. */
function scaledLogits(model: CausalLM, h: Tensor, temperature: number): Tensor {
  const logits = model.lmHead(h);
  return temperature === 1 ? logits : logits.div(temperature);
}

/**
 * Makes `out` (computed without a graph from `h`) differentiable w.r.t. `h` and the LM head's
 * weight: the node saves `h` and `targets` only and recomputes the logits in `backward`, where
 * `dLogitsScaled` maps the output gradient and the recomputed scaled logits to `∂/∂(logits/T)`.
 */
function attachRecomputing(
  name: string,
  out: Tensor,
  model: CausalLM,
  h: Tensor,
  temperature: number,
  saved: readonly Tensor[],
  dLogitsScaled: (g: Tensor, z: Tensor, saved: readonly Tensor[]) => Tensor,
): void {
  const w = headWeight(model);
  const inputs = [h, w];
  if (!inputs.some((x) => x.requiresGrad)) return;
  const needH = h.requiresGrad;
  const views = keep([h, ...saved].map((t) => t.share()));
  out.requiresGrad = true;
  out.gradFn = new GradNode(name, inputs, views, (g, [hs, ...rest]) => {
    // The recomputed logits and both products only feed gradients (`gradient: true`: under
    // `blas: "auto"` they take the native BLAS, which matters at real vocabularies, where they
    // are a third of a training step's multiply-adds); logits = h · Wᵀ, as `lmHead` computes.
    const logits = hs!.matmul(w, { transB: true, gradient: true });
    const z = temperature === 1 ? logits : logits.div(temperature);
    // ∂(logits/T)/∂logits = 1/T.
    let dz = dLogitsScaled(g, z, rest);
    if (temperature !== 1) dz = dz.div(temperature);
    const dh = needH ? dz.matmul(w, { gradient: true }) : null;
    const dw = w.requiresGrad ? dz.matmul(hs!, { transA: true, gradient: true }) : null;
    return [dh, dw];
  });
}

/** Log-probs (and entropies) of one chunk: `h` `[n, H]`, `targets` i32 `[n]`. */
function scoreChunk(
  model: CausalLM,
  h: Tensor,
  targets: Tensor,
  temperature: number,
  wantEntropy: boolean,
): { lp: Tensor; ent: Tensor | null } {
  const grad = isGradEnabled();
  const out = noGrad(() =>
    tidy(() => {
      const z = scaledLogits(model, h, temperature);
      return { lp: logprobsOf(z, targets), ent: wantEntropy ? entropyFromLogits(z) : null };
    })
  );
  if (!grad) return out;
  const V = model.config.vocabSize;
  const n = h.shape[0]!;
  attachRecomputing("scoreCompletions.logprobs", out.lp, model, h, temperature, [targets], (
    g,
    z,
    [t],
  ) => {
    // ∂ log softmax(z)[y] / ∂z = onehot(y) − softmax(z)
    const onehot = t!.reshape(n, 1).eq(arange(0, V, 1, { dtype: "i32", backend: z.backend }))
      .cast("f32");
    return onehot.sub(z.softmax(-1)).mul(g.reshape(n, 1));
  });
  if (out.ent !== null) {
    attachRecomputing("scoreCompletions.entropies", out.ent, model, h, temperature, [], (g, z) => {
      // H = −Σ p log p; ∂H/∂z_j = −p_j (log p_j + H)
      const logp = z.logSoftmax(-1);
      const p = logp.exp();
      const entropy = p.mul(logp).sum(-1, true).neg();
      return p.mul(logp.add(entropy)).neg().mul(g.reshape(n, 1));
    });
  }
  return out;
}

/**
 * Scores completions with the learner's forward pass: for every completion token, its
 * log-probability `log softmax(logits / T)[token]` and the entropy of `softmax(logits / T)` at
 * its position, as `[B, Tc]` tensors with a mask. Rows are `prompt ++ completion`, right-padded,
 * at positions `0..len-1`. Under grad the results carry gradients to the trainable parameters
 * (the policy loss); under `noGrad` they are plain values (reference or old-policy log-probs).
 * The `B × T × vocab` logits are never materialised, and with gradients no logits are kept for
 * the backward pass (see the module documentation for the peak memory).
 *
 * With the sampling temperature as `temperature`, `logprobs` equals what `generate` reports as
 * `scaledLogprobs` (the temperature-scaled, unfiltered distribution, the TRL / veRL
 * convention). With top-k / top-p / min-p on, the sampler's `logprobs` are under the filtered,
 * renormalised distribution instead; recompute those from logits with `@rlvr/sampling`'s
 * `samplingLogprobs` when a method needs them.
 *
 * @param model The policy.
 * @param batch Prompt and completion ids per sequence (ragged).
 * @param opts Temperature, entropy switch and chunk sizes.
 * @returns Log-probs, entropies, mask `[B, Tc]` and completion lengths.
 *
 * @example Usage
 * ```ts
 * import { CausalLM, modelConfig, scoreCompletions } from "@rlvr/policy";
 * import { noGrad } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const model = CausalLM.random(modelConfig({
 *   vocabSize: 16, hiddenSize: 8, intermediateSize: 16, numLayers: 1, numHeads: 2,
 * }), { seed: 0 });
 * const batch = [
 *   { promptIds: [1, 2], completionIds: [3, 4, 5] },
 *   { promptIds: [6], completionIds: [7] },
 * ];
 * // Reference scores: no graph.
 * const ref = noGrad(() => scoreCompletions(model, batch, { temperature: 0.7 }));
 * assert.deepEqual(ref.logprobs.shape, [2, 3]);
 * assert.deepEqual(await ref.mask.toArray(), [[1, 1, 1], [1, 0, 0]]);
 * // Learner scores: gradients reach the parameters.
 * const { logprobs, entropies, mask } = scoreCompletions(model, batch, { temperature: 0.7 });
 * logprobs.mul(mask).sum().backward();
 * assert.ok(model.params.get("model.embed_tokens.weight")!.grad !== null);
 * for (const t of [ref.logprobs, ref.entropies!, ref.mask, logprobs, entropies!, mask]) {
 *   t.dispose();
 * }
 * model.dispose();
 * ```
 */
export function scoreCompletions(
  model: CausalLM,
  batch: readonly ScoreItem[],
  opts: ScoreOptions = {},
): CompletionScores {
  const cfg = model.config;
  const V = cfg.vocabSize;
  if (!isArray(batch) || batch.length === 0) {
    throw new RangeError(
      `scoreCompletions: batch must be a non-empty array of {promptIds, completionIds}, got ${
        show(batch)
      }`,
    );
  }
  batch.forEach((item, i) => {
    if (typeof item !== "object" || item === null) {
      throw new TypeError(
        `scoreCompletions: batch[${i}] must be {promptIds, completionIds}, got ${show(item)}`,
      );
    }
    checkIds(`batch[${i}].promptIds`, item.promptIds, V, 1);
    checkIds(`batch[${i}].completionIds`, item.completionIds, V, 0);
  });
  const rawT = opts.temperature ?? 1;
  if (typeof rawT !== "number" || !Number.isFinite(rawT) || rawT < 0) {
    throw new RangeError(
      `scoreCompletions: temperature must be a finite number >= 0 (0 = greedy, scored at 1), ` +
        `got ${show(rawT)}`,
    );
  }
  const temperature = rawT === 0 ? 1 : rawT;
  const wantEntropy = opts.entropy ?? true;
  const lengths = batch.map((b) => b.completionIds.length);
  const N = lengths.reduce((a, b) => a + b, 0);
  if (N === 0) {
    throw new RangeError(
      `scoreCompletions: every completion in the batch is empty; there is nothing to score`,
    );
  }
  const longest = batch.reduce(
    (m, b) => Math.max(m, b.promptIds.length + b.completionIds.length),
    -Infinity,
  );
  const chunkTokens = positiveInt(
    "chunkTokens",
    opts.chunkTokens ?? Math.max(1, Math.floor(2 ** 24 / V)),
  );
  const rowsPerChunk = positiveInt(
    "rowsPerChunk",
    opts.rowsPerChunk ?? Math.max(1, Math.floor(8192 / longest)),
  );
  const padId = opts.padTokenId ?? cfg.padTokenId ?? 0;
  checkIds("padTokenId", [padId], V, 1);
  const backend = headWeight(model).backend;
  const Tc = lengths.reduce((m, n) => Math.max(m, n), -Infinity);
  const B = batch.length;

  return tidy(() => {
    const lpParts: Tensor[] = [];
    const entParts: Tensor[] = [];
    for (let r0 = 0; r0 < B; r0 += rowsPerChunk) {
      const rows = batch.slice(r0, r0 + rowsPerChunk);
      const nTok = rows.reduce((n, b) => n + b.completionIds.length, 0);
      if (nTok === 0) continue;
      const L = rows.reduce(
        (m, b) => Math.max(m, b.promptIds.length + b.completionIds.length),
        -Infinity,
      );
      const ids = rows.map((b) => {
        const row = [...b.promptIds, ...b.completionIds];
        while (row.length < L) row.push(padId);
        return row;
      });
      // Row b's completion token i sits at p_b + i and is predicted by the hidden state at
      // p_b + i − 1.
      const where: number[] = [];
      const targets: number[] = [];
      rows.forEach((b, i) => {
        const p = b.promptIds.length;
        b.completionIds.forEach((tok, j) => {
          where.push(i * L + p - 1 + j);
          targets.push(tok);
        });
      });
      const gathered = tidy(() => {
        const extra = opts.forwardHook?.({
          ids,
          rows: rows.map((_, i) => r0 + i),
          cacheLength: 0,
          mask: null,
        }) ?? {};
        const hidden = model.hidden(tensor(ids, { dtype: "i32", backend }), extra);
        return hidden.reshape(rows.length * L, cfg.hiddenSize).indexSelect(
          0,
          tensor(where, { dtype: "i32", backend }),
        );
      });
      const tgt = tensor(targets, { dtype: "i32", backend });
      for (let s = 0; s < nTok; s += chunkTokens) {
        const n = Math.min(chunkTokens, nTok - s);
        const { lp, ent } = tidy(() => {
          const h = n === nTok ? gathered : gathered.narrow(0, s, n);
          const t = n === nTok ? tgt : tgt.narrow(0, s, n);
          return scoreChunk(model, h, t, temperature, wantEntropy);
        });
        lpParts.push(lp);
        if (ent !== null) entParts.push(ent);
      }
      // The chunks' nodes hold their own views; the batch-level handles can go now.
      gathered.dispose();
      tgt.dispose();
    }
    // Packed [N] → padded [B, Tc]: every padding slot reads an appended zero (index N).
    const slot = new Int32Array(B * Tc).fill(N);
    const mask = new Float32Array(B * Tc);
    let k = 0;
    lengths.forEach((len, b) => {
      for (let i = 0; i < len; i++) {
        slot[b * Tc + i] = k++;
        mask[b * Tc + i] = 1;
      }
    });
    const index = tensor(slot, { shape: [B * Tc], dtype: "i32", backend });
    const pad = (parts: Tensor[]): Tensor =>
      concat([...parts, zeros([1], { backend })], 0).indexSelect(0, index).reshape(B, Tc);
    return {
      logprobs: pad(lpParts),
      entropies: wantEntropy ? pad(entParts) : null,
      mask: tensor(mask, { shape: [B, Tc], backend }),
      completionLengths: lengths,
    };
  });
}
