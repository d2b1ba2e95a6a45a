/**
 * Partial (interruptible) rollouts (`rollout.partial`, AReaL's design): a generation that is
 * running when the trainer publishes newer weights does not finish under the old ones. Between
 * two decoding steps the rollout worker looks for a newer snapshot; when there is one, the
 * running rows stop (`generate`'s `interrupt`), the worker loads the snapshot (checksum
 * verified), and the rows continue from prompt + tokens so far under the new weights, with a
 * fresh prefill (the old KV cache was computed by the old weights and is dropped).
 *
 * Design decisions:
 * - **Every token is tagged with the version that sampled it** (`versions`), and its log-probs
 *   are the ones that version computed, so the loss's behaviour log-prob of each token
 *   (`rolloutLogProbs`) is its own sampler's.
 * - **Draw keys do not see interruptions**: a continued row passes the number of tokens it has
 *   as `positionOffsets`, so token `i` of a completion is always drawn with key
 *   `(seed, step, sequence, i)`; under unchanged weights an interrupted generation is the
 *   uninterrupted one (the prefill reproduces the cached logits bit for bit on the CPU).
 * - **The rows of one call advance in lockstep**, so every row an interruption stops has the
 *   same number of tokens: the continuation is one `generate` call with one token budget.
 * - Stop strings are not supported: a continued call could not see a stop string that spans
 *   the interruption (the config check refuses `rollout.partial` with `task.env`).
 *
 * @module
 */

import {
  type CausalLM,
  type ForwardHook,
  generate,
  type GeneratedSequence,
  type GenerateOptions,
  type GenerateStep,
} from "@rlvr/policy";

/**
 * What a partial rollout needs from the worker running it: the version it holds, whether a
 * newer snapshot is waiting, and a way to load it.
 *
 * @example Usage
 * ```ts
 * import type { PartialRollouts } from "./partial.ts";
 * import assert from "node:assert/strict";
 * let version = 0;
 * let waiting: number | null = 1; // version 1 arrived
 * const hook: PartialRollouts = {
 *   version: () => version,
 *   pending: () => waiting !== null,
 *   apply: () => {
 *     version = waiting!;
 *     waiting = null;
 *     return Promise.resolve(version);
 *   },
 * };
 * assert.equal(await hook.apply(), 1);
 * assert.equal(hook.pending(), false);
 * ```
 */
export interface PartialRollouts {
  /** Version of the weights the model holds now. */
  version(): number;
  /** Whether newer weights are waiting (checked after every sampling step). */
  pending(): boolean;
  /** Loads the waiting weights into the model (checksum verified); returns their version. */
  apply(): Promise<number>;
  /**
   * Awaited after every sampling step, before `pending()`, with the index in the completion of
   * the token just drawn: a Web Worker yields to its event loop here, so that a weights message
   * can arrive in the middle of a generation. Default: nothing.
   */
  between?(position: number): void | Promise<void>;
}

/** A {@link generatePartial} sequence: a generated sequence with the version of every token. */
export interface VersionedSequence extends GeneratedSequence {
  /** Per token: the policy version whose weights sampled it. */
  versions: number[];
  /** How many times the sequence was interrupted and continued under newer weights. */
  interruptions: number;
}

/** The `generate` options {@link generatePartial} takes (it sets the rest itself). */
export type PartialGenerateOptions = Omit<
  GenerateOptions,
  "interrupt" | "positionOffsets" | "onTokens" | "stopStrings" | "returnLogits"
>;

/**
 * `generate`, interrupted whenever `partial.pending()` says newer weights wait, which are then
 * loaded before the running rows continue (see the module doc). Returns one sequence per prompt
 * with `versions`; without interruptions it is `generate`'s result, every token tagged with
 * `partial.version()`.
 *
 * @example Usage
 * ```ts
 * import { generatePartial } from "./partial.ts";
 * import { loadPolicy } from "./policy.ts";
 * import { generate } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const { model, tokenizer } = await loadPolicy("builtin:tiny");
 * const prompts = [tokenizer.encode("12+34="), tokenizer.encode("5+6=")];
 * const opts = { maxNewTokens: 4, sampler: { seed: 0, temperature: 1 }, eosTokenIds: [] };
 * // A "new version" (the same weights) waits from the start: every row is interrupted after
 * // its first token and continued; the draws and the weights are the same, so are the tokens.
 * let version = 0;
 * let waiting = true;
 * const seqs = await generatePartial(model, prompts, opts, {
 *   version: () => version,
 *   pending: () => waiting,
 *   apply: () => { waiting = false; return Promise.resolve(++version); },
 * });
 * const plain = await generate(model, prompts, opts);
 * assert.deepEqual(seqs.map((s) => s.tokens), plain.sequences.map((s) => s.tokens));
 * assert.deepEqual(seqs[0]!.versions, [0, 1, 1, 1]);
 * model.dispose();
 * ```
 */
export async function generatePartial(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  opts: PartialGenerateOptions,
  partial: PartialRollouts,
): Promise<VersionedSequence[]> {
  const sequenceIds = opts.sequenceIds ?? prompts.map((_, i) => i);
  const out: VersionedSequence[] = prompts.map((p, i) => ({
    sequenceId: sequenceIds[i]!,
    promptIds: [...p],
    tokens: [],
    logprobs: [],
    scaledLogprobs: [],
    finishReason: "length",
    versions: [],
    interruptions: 0,
  }));
  let open = prompts.map((_, i) => i);
  while (open.length > 0) {
    const done = out[open[0]!]!.tokens.length; // the same for every open row (lockstep)
    const version = partial.version();
    const between = partial.between;
    const hook = opts.forwardHook;
    const { sequences } = await generate(
      model,
      open.map((i) => [...prompts[i]!, ...out[i]!.tokens]),
      {
        ...opts,
        maxNewTokens: opts.maxNewTokens - done,
        sequenceIds: open.map((i) => sequenceIds[i]!),
        positionOffsets: open.map(() => done),
        interrupt: () => partial.pending(),
        // The hook's rows are the caller's prompts: a continuation call holds the open ones.
        ...(hook !== undefined ? { forwardHook: remapRows(hook, open) } : {}),
        ...(between !== undefined
          ? { onTokens: (e: GenerateStep) => between.call(partial, done + e.step) }
          : {}),
      },
    );
    const next: number[] = [];
    sequences.forEach((s, j) => {
      const o = out[open[j]!]!;
      o.tokens.push(...s.tokens);
      o.logprobs.push(...s.logprobs);
      o.scaledLogprobs.push(...s.scaledLogprobs);
      o.versions.push(...s.tokens.map(() => version));
      o.finishReason = s.finishReason;
      if (s.finishReason === "interrupted") {
        o.interruptions++;
        next.push(open[j]!);
      }
    });
    if (next.length > 0) await partial.apply();
    open = next;
  }
  const tokenizer = opts.tokenizer;
  if (tokenizer !== undefined) {
    const skipSpecialTokens = opts.skipSpecialTokens ?? true;
    for (const o of out) o.text = tokenizer.decode(o.tokens, { skipSpecialTokens });
  }
  return out;
}

/**
 * `hook` for a call whose row `r` is the caller's sequence `rows[r]` (a continuation holds the
 * open rows only), its `decodeShift` too.
 *
 * @example Usage
 * ```ts
 * import { remapRows } from "./partial.ts";
 * import type { ForwardHook } from "@rlvr/policy";
 * import assert from "node:assert/strict";
 * const seen: number[][] = [];
 * const hook: ForwardHook = Object.assign((c: { rows: readonly number[] }) => {
 *   seen.push([...c.rows]);
 *   return {};
 * }, { decodeShift: (r: number) => 10 * r });
 * const open = remapRows(hook, [0, 2]); // rows 0 and 2 of the job are still running
 * open({ ids: [[1], [2]], rows: [0, 1], cacheLength: 0, mask: null });
 * assert.deepEqual(seen, [[0, 2]]);
 * assert.equal(open.decodeShift!(1), 20);
 * ```
 */
export function remapRows(hook: ForwardHook, rows: readonly number[]): ForwardHook {
  const mapped: ForwardHook = (call) => hook({ ...call, rows: call.rows.map((r) => rows[r]!) });
  const shift = hook.decodeShift;
  if (shift !== undefined) mapped.decodeShift = (r) => shift(rows[r]!);
  return mapped;
}
