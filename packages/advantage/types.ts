/**
 * The data layout every estimator shares, fixed so that `@rlvr/objectives` can consume it.
 *
 * Design decisions:
 *
 * - **Token-level arrays are dense row-major `[batch, length]`** ({@link TokenMatrix}): entry
 *   `(i, t)` lives at `data[i * length + t]`. This mirrors veRL's `(bs, response_length)`
 *   tensors (`token_level_rewards`, `values`, `response_mask`) and is what a tensor's flat
 *   buffer already is, so no copies are needed at the package boundary. Inputs accept any
 *   `ArrayLike<number>` (`number[]`, `Float32Array`, `Float64Array`); outputs are always
 *   `Float64Array`, and all arithmetic is float64.
 * - **A response mask is a TokenMatrix of 0s and 1s** (veRL's `response_mask`). Positions under a
 *   0 (padding after EOS, tool/observation tokens) are never read, so they may hold anything,
 *   NaN included, and every estimator writes 0 there in both outputs.
 * - **Sequence-level rewards** are `ArrayLike<number>` of length `batch`.
 * - **Groups** are given by `index`, one id per response (veRL's `uid`), compared with `Map`
 *   semantics (so `1` and `"1"` are different groups). Groups may be ragged and need not be
 *   contiguous.
 * - **Every estimator returns {@link AdvantageOutput}**: `advantages` and `returns`, each
 *   `batch·length` long. Outcome estimators broadcast one scalar per response over its valid
 *   tokens, as veRL does (`scores.unsqueeze(-1) * response_mask`).
 *
 * @module
 */

/**
 * A dense row-major `[batch, length]` matrix: entry `(i, t)` is `data[i * length + t]`, and
 * `data.length` must equal `batch * length`.
 */
export interface TokenMatrix {
  /** The entries, row-major; `batch * length` of them. */
  readonly data: ArrayLike<number>;
  /** Number of rows (responses). */
  readonly batch: number;
  /** Number of columns (response token positions, padded to the longest). */
  readonly length: number;
}

/** Group ids, one per response (veRL's `uid`); responses with equal ids form a group. */
export type GroupIndex = readonly (string | number)[];

/**
 * What every estimator returns: `advantages` (what the policy loss multiplies) and `returns`
 * (value targets for a critic, or the raw signal before normalisation), both dense row-major
 * `[batch, length]` with 0 wherever the response mask is 0.
 */
export interface AdvantageOutput {
  /** Per-token advantages, `batch·length`, 0 at masked positions. */
  advantages: Float64Array;
  /** Per-token returns, `batch·length`, 0 at masked positions. */
  returns: Float64Array;
}
