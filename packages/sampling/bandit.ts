/**
 * Bandit schedulers over prompt domains or difficulty buckets (SEC, "Self-Evolving Curriculum",
 * arXiv 2505.14970, uses a non-stationary bandit over categories).
 *
 * Design: an arm is a bucket name; rewards are in [0, 1]. {@link Ucb1Bandit} is UCB1 (Auer et
 * al. 2002): pull every arm once (in order), then `argmax mean_i + c·sqrt(ln N / n_i)` with
 * `c = √2` by default, ties to the first arm. {@link ThompsonBandit} keeps a Beta(α, β) posterior
 * per arm, draws one sample from each and picks the largest; a reward `r ∈ [0, 1]` adds `r` to α
 * and `1 − r` to β (the fractional Bernoulli update). Both take `discount` γ ∈ (0, 1] for
 * non-stationary rewards (learning progress changes as the policy learns): before each update
 * every arm's statistics decay towards the prior by γ (discounted UCB, Garivier & Moulines 2011;
 * discounted Thompson sampling).
 *
 * What the reward is, is the scheduler's choice ({@link BanditScheduler}): `"learning_progress"`
 * is the absolute change `|p_t − p_{t−1}|` of an arm's batch pass rate between its consecutive
 * observations (the first observation of an arm only sets its baseline and gives no reward), so
 * buckets where the policy is currently improving or forgetting are favoured; `"in_band"` is 1
 * when the batch pass rate is in `[low, high]` and 0 otherwise, favouring buckets of the right
 * difficulty (the PRIME/DAPO informative-band criterion). All state is plain JSON and restoring
 * it continues identically.
 *
 * @module
 */

import { checkChoice, checkNumber, checkUnit, show } from "./_args.ts";
import { checkSeed, Prng } from "./_prng.ts";

/** The common interface of the bandits. */
export interface Bandit {
  /** Arm names, in order. */
  readonly arms: readonly string[];
  /** The arm to pull next. */
  select(): string;
  /** Records reward `r ∈ [0, 1]` for `arm`. */
  update(arm: string, reward: number): void;
  /** Current estimated mean reward per arm (posterior mean for Thompson sampling). */
  means(): Map<string, number>;
  /** The state as plain JSON-compatible data. */
  state(): BanditState;
}

/** The serialisable state of a {@link Ucb1Bandit}. */
export interface Ucb1State {
  /** Format version (1). */
  version: 1;
  /** Always `"ucb1"`. */
  kind: "ucb1";
  /** Arm names. */
  arms: string[];
  /** Exploration constant `c`. */
  c: number;
  /** Discount γ. */
  discount: number;
  /** (Discounted) pull counts. */
  pulls: number[];
  /** (Discounted) reward sums. */
  sums: number[];
}

/** The serialisable state of a {@link ThompsonBandit}. */
export interface ThompsonState {
  /** Format version (1). */
  version: 1;
  /** Always `"thompson"`. */
  kind: "thompson";
  /** Arm names. */
  arms: string[];
  /** Prior α and β. */
  prior: { alpha: number; beta: number };
  /** Discount γ. */
  discount: number;
  /** Posterior α per arm. */
  alpha: number[];
  /** Posterior β per arm. */
  beta: number[];
  /** Seed it was built with. */
  seed: number;
  /** The generator's words. */
  rng: [number, number, number, number];
}

/** Either bandit's state. */
export type BanditState = Ucb1State | ThompsonState;

function checkArms(owner: string, arms: readonly string[]): string[] {
  if (!Array.isArray(arms) || arms.length === 0) {
    throw new RangeError(`${owner}: arms must be a non-empty array of names, got ${show(arms)}`);
  }
  const seen = new Set<string>();
  arms.forEach((a, i) => {
    if (typeof a !== "string" || a === "") {
      throw new TypeError(`${owner}: arms[${i}] must be a non-empty string, got ${show(a)}`);
    }
    if (seen.has(a)) throw new RangeError(`${owner}: arm ${show(a)} appears twice`);
    seen.add(a);
  });
  return [...arms];
}

function armIndex(owner: string, arms: readonly string[], arm: string): number {
  const i = arms.indexOf(arm);
  if (i < 0) {
    throw new RangeError(
      `${owner}: unknown arm ${show(arm)}; arms are ${
        arms.map((a) => JSON.stringify(a)).join(", ")
      }`,
    );
  }
  return i;
}

function checkNumbers(owner: string, field: string, v: unknown, n: number): number[] {
  if (!Array.isArray(v) || v.length !== n) {
    throw new TypeError(`${owner}: ${field} must be an array of ${n} numbers, got ${show(v)}`);
  }
  v.forEach((x, i) => checkNumber(owner, `${field}[${i}]`, x, { min: 0 }));
  return [...v];
}

/** Options of {@link Ucb1Bandit}. */
export interface Ucb1Options {
  /** Exploration constant `c` (default √2, UCB1). */
  c?: number;
  /** Discount γ in (0, 1] (default 1: stationary). */
  discount?: number;
}

/**
 * UCB1 over named arms, optionally discounted.
 *
 * @example Usage
 * ```ts
 * import { Ucb1Bandit } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const b = new Ucb1Bandit(["easy", "hard"]);
 * assert.equal(b.select(), "easy"); // unpulled arms first, in order
 * b.update("easy", 0.2);
 * assert.equal(b.select(), "hard");
 * b.update("hard", 0.9);
 * assert.equal(b.select(), "hard"); // higher mean, same bonus
 * ```
 */
export class Ucb1Bandit implements Bandit {
  readonly arms: readonly string[];
  /** Exploration constant `c`. */
  readonly c: number;
  /** Discount γ (1: stationary). */
  readonly discount: number;
  #pulls: number[];
  #sums: number[];

  /** A bandit with no observations. */
  constructor(arms: readonly string[], options: Ucb1Options = {}) {
    const owner = "Ucb1Bandit";
    this.arms = checkArms(owner, arms);
    this.c = checkNumber(owner, "c", options.c ?? Math.SQRT2, { min: 0 });
    this.discount = checkNumber(owner, "discount", options.discount ?? 1, {
      min: 0,
      max: 1,
      minExclusive: true,
    });
    this.#pulls = this.arms.map(() => 0);
    this.#sums = this.arms.map(() => 0);
  }

  /** The arm with the largest upper confidence bound (an unpulled arm first). */
  select(): string {
    const n = this.#pulls;
    const unpulled = n.findIndex((x) => x === 0);
    if (unpulled >= 0) return this.arms[unpulled]!;
    const total = n.reduce((a, b) => a + b, 0);
    let best = 0;
    let bestValue = -Infinity;
    n.forEach((ni, i) => {
      const v = this.#sums[i]! / ni + this.c * Math.sqrt(Math.log(Math.max(total, 1)) / ni);
      if (v > bestValue) {
        bestValue = v;
        best = i;
      }
    });
    return this.arms[best]!;
  }

  /** Records a reward in [0, 1]. */
  update(arm: string, reward: number): void {
    const owner = "Ucb1Bandit.update";
    const i = armIndex(owner, this.arms, arm);
    checkUnit(owner, "reward", reward);
    if (this.discount < 1) {
      for (let j = 0; j < this.#pulls.length; j++) {
        this.#pulls[j]! *= this.discount;
        this.#sums[j]! *= this.discount;
      }
    }
    this.#pulls[i]! += 1;
    this.#sums[i]! += reward;
  }

  /** Mean reward per arm (0 for an unpulled arm). */
  means(): Map<string, number> {
    return new Map(
      this.arms.map((a, i) => [a, this.#pulls[i]! === 0 ? 0 : this.#sums[i]! / this.#pulls[i]!]),
    );
  }

  /** (Discounted) pull count per arm. */
  pulls(): Map<string, number> {
    return new Map(this.arms.map((a, i) => [a, this.#pulls[i]!]));
  }

  /** The state as plain JSON-compatible data. */
  state(): Ucb1State {
    return {
      version: 1,
      kind: "ucb1",
      arms: [...this.arms],
      c: this.c,
      discount: this.discount,
      pulls: [...this.#pulls],
      sums: [...this.#sums],
    };
  }

  /** A bandit restored from {@link state}. */
  static fromState(state: Ucb1State): Ucb1Bandit {
    const owner = "Ucb1Bandit.fromState";
    if (state?.version !== 1 || state.kind !== "ucb1") {
      throw new TypeError(
        `${owner}: expected a version-1 "ucb1" state, got ${
          show({ version: state?.version, kind: state?.kind })
        }`,
      );
    }
    const b = new Ucb1Bandit(state.arms, { c: state.c, discount: state.discount });
    b.#pulls = checkNumbers(owner, "pulls", state.pulls, b.arms.length);
    b.#sums = checkNumbers(owner, "sums", state.sums, b.arms.length);
    return b;
  }
}

/** Options of {@link ThompsonBandit}. */
export interface ThompsonOptions {
  /** Seed, an integer in [0, 2^53). */
  seed: number;
  /** Beta prior (default α = β = 1, uniform). */
  prior?: { alpha: number; beta: number };
  /** Discount γ in (0, 1] (default 1: stationary). */
  discount?: number;
}

/**
 * Thompson sampling with Beta posteriors over named arms, optionally discounted.
 *
 * @example Usage
 * ```ts
 * import { ThompsonBandit } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const b = new ThompsonBandit(["a", "b"], { seed: 3 });
 * for (let i = 0; i < 20; i++) {
 *   b.update("a", 0);
 *   b.update("b", 1);
 * }
 * assert.equal(b.select(), "b");
 * assert.ok(b.means().get("b")! > 0.9); // Beta(21, 1) mean 21/22
 * ```
 */
export class ThompsonBandit implements Bandit {
  readonly arms: readonly string[];
  /** The Beta prior. */
  readonly prior: { alpha: number; beta: number };
  /** Discount γ (1: stationary). */
  readonly discount: number;
  /** The seed it was built with. */
  readonly seed: number;
  #alpha: number[];
  #beta: number[];
  #rng: Prng;

  /** A bandit at its prior. */
  constructor(arms: readonly string[], options: ThompsonOptions) {
    const owner = "ThompsonBandit";
    this.arms = checkArms(owner, arms);
    this.seed = checkSeed(owner, options?.seed);
    const prior = options.prior ?? { alpha: 1, beta: 1 };
    this.prior = {
      alpha: checkNumber(owner, "prior.alpha", prior.alpha, { min: 0, minExclusive: true }),
      beta: checkNumber(owner, "prior.beta", prior.beta, { min: 0, minExclusive: true }),
    };
    this.discount = checkNumber(owner, "discount", options.discount ?? 1, {
      min: 0,
      max: 1,
      minExclusive: true,
    });
    this.#alpha = this.arms.map(() => this.prior.alpha);
    this.#beta = this.arms.map(() => this.prior.beta);
    this.#rng = Prng.fromSeed(this.seed);
  }

  /** Draws θ_i ~ Beta(α_i, β_i) for every arm and returns the arm of the largest. */
  select(): string {
    let best = 0;
    let bestValue = -Infinity;
    for (let i = 0; i < this.arms.length; i++) {
      const v = this.#rng.beta(this.#alpha[i]!, this.#beta[i]!);
      if (v > bestValue) {
        bestValue = v;
        best = i;
      }
    }
    return this.arms[best]!;
  }

  /** Records a reward in [0, 1]: α += r, β += 1 − r (after discounting every arm). */
  update(arm: string, reward: number): void {
    const owner = "ThompsonBandit.update";
    const i = armIndex(owner, this.arms, arm);
    checkUnit(owner, "reward", reward);
    if (this.discount < 1) {
      const g = this.discount;
      for (let j = 0; j < this.arms.length; j++) {
        this.#alpha[j] = this.prior.alpha + g * (this.#alpha[j]! - this.prior.alpha);
        this.#beta[j] = this.prior.beta + g * (this.#beta[j]! - this.prior.beta);
      }
    }
    this.#alpha[i]! += reward;
    this.#beta[i]! += 1 - reward;
  }

  /** Posterior mean α / (α + β) per arm. */
  means(): Map<string, number> {
    return new Map(
      this.arms.map((a, i) => [a, this.#alpha[i]! / (this.#alpha[i]! + this.#beta[i]!)]),
    );
  }

  /** The state as plain JSON-compatible data. */
  state(): ThompsonState {
    return {
      version: 1,
      kind: "thompson",
      arms: [...this.arms],
      prior: { ...this.prior },
      discount: this.discount,
      alpha: [...this.#alpha],
      beta: [...this.#beta],
      seed: this.seed,
      rng: this.#rng.state(),
    };
  }

  /** A bandit restored from {@link state}, continuing the same random stream. */
  static fromState(state: ThompsonState): ThompsonBandit {
    const owner = "ThompsonBandit.fromState";
    if (state?.version !== 1 || state.kind !== "thompson") {
      throw new TypeError(
        `${owner}: expected a version-1 "thompson" state, got ${
          show({ version: state?.version, kind: state?.kind })
        }`,
      );
    }
    const b = new ThompsonBandit(state.arms, {
      seed: state.seed,
      prior: state.prior,
      discount: state.discount,
    });
    b.#alpha = checkNumbers(owner, "alpha", state.alpha, b.arms.length);
    b.#beta = checkNumbers(owner, "beta", state.beta, b.arms.length);
    b.#rng = Prng.fromState(state.rng, owner);
    return b;
  }
}

/**
 * Restores either bandit from its state.
 *
 * @example Usage
 * ```ts
 * import { banditFromState, Ucb1Bandit } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const b = new Ucb1Bandit(["x", "y"]);
 * b.update("x", 1);
 * const copy = banditFromState(JSON.parse(JSON.stringify(b.state())));
 * assert.equal(copy.select(), b.select());
 * ```
 */
export function banditFromState(state: BanditState): Bandit {
  const kind = checkChoice("banditFromState", "state.kind", state?.kind, ["ucb1", "thompson"]);
  return kind === "ucb1"
    ? Ucb1Bandit.fromState(state as Ucb1State)
    : ThompsonBandit.fromState(state as ThompsonState);
}

/** The reward a {@link BanditScheduler} gives an arm for an observed batch pass rate. */
export type SchedulerReward =
  | { kind: "learning_progress" }
  | { kind: "in_band"; low: number; high: number };

/** The serialisable state of a {@link BanditScheduler}. */
export interface SchedulerState {
  /** Format version (1). */
  version: 1;
  /** The bandit's state. */
  bandit: BanditState;
  /** The reward definition. */
  reward: SchedulerReward;
  /** Last observed pass rate per arm (the learning-progress baseline). */
  last: Record<string, number>;
}

/**
 * Learning progress `|current − previous|` of a pass rate, in [0, 1].
 *
 * @example Usage
 * ```ts
 * import { learningProgress } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.equal(learningProgress(0.25, 0.75), 0.5);
 * assert.equal(learningProgress(0.75, 0.25), 0.5); // forgetting counts too
 * ```
 */
export function learningProgress(previous: number, current: number): number {
  checkUnit("learningProgress", "previous", previous);
  checkUnit("learningProgress", "current", current);
  return Math.abs(current - previous);
}

/**
 * Drives a {@link Bandit} over buckets from observed batch pass rates.
 *
 * @example Usage
 * ```ts
 * import { BanditScheduler, Ucb1Bandit } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const s = new BanditScheduler(new Ucb1Bandit(["easy", "medium", "hard"]), {
 *   kind: "in_band",
 *   low: 0.2,
 *   high: 0.8,
 * });
 * const arm = s.next();
 * assert.equal(arm, "easy");
 * assert.equal(s.observe(arm, 0.95), 0); // too easy: reward 0
 * assert.equal(s.observe("medium", 0.5), 1);
 * // "hard" was never pulled, so UCB1 sends the whole next batch there:
 * assert.deepEqual(s.allocate(4), { easy: 0, medium: 0, hard: 4 });
 * ```
 */
export class BanditScheduler {
  /** The bandit it drives. */
  readonly bandit: Bandit;
  /** The reward definition. */
  readonly reward: SchedulerReward;
  #last = new Map<string, number>();

  /** A scheduler over `bandit`'s arms with the given reward definition. */
  constructor(bandit: Bandit, reward: SchedulerReward) {
    const owner = "BanditScheduler";
    const kind = checkChoice(owner, "reward.kind", reward?.kind, ["learning_progress", "in_band"]);
    if (kind === "in_band") {
      const r = reward as Extract<SchedulerReward, { kind: "in_band" }>;
      checkUnit(owner, "reward.low", r.low);
      checkUnit(owner, "reward.high", r.high);
      if (r.low > r.high) {
        throw new RangeError(`${owner}: reward.low (${r.low}) must be <= reward.high (${r.high})`);
      }
    }
    this.bandit = bandit;
    this.reward = { ...reward };
  }

  /** The bucket to draw the next prompt from. */
  next(): string {
    return this.bandit.select();
  }

  /**
   * Bucket counts for `k` prompts: `k` successive selections without updates in between
   * (UCB1 then gives all `k` to one arm; Thompson sampling spreads them by posterior draws).
   */
  allocate(k: number): Record<string, number> {
    checkNumber("BanditScheduler.allocate", "k", k, { integer: true, min: 0 });
    const out: Record<string, number> = {};
    for (const a of this.bandit.arms) out[a] = 0;
    for (let i = 0; i < k; i++) out[this.bandit.select()]! += 1;
    return out;
  }

  /**
   * Records the pass rate of a batch drawn from `arm` and updates the bandit. Returns the reward
   * given, or `undefined` for the first learning-progress observation of an arm (baseline only).
   */
  observe(arm: string, batchPassRate: number): number | undefined {
    const owner = "BanditScheduler.observe";
    armIndex(owner, this.bandit.arms, arm);
    const p = checkUnit(owner, "batchPassRate", batchPassRate);
    let reward: number | undefined;
    if (this.reward.kind === "in_band") {
      reward = p >= this.reward.low && p <= this.reward.high ? 1 : 0;
    } else {
      const prev = this.#last.get(arm);
      reward = prev === undefined ? undefined : learningProgress(prev, p);
    }
    this.#last.set(arm, p);
    if (reward !== undefined) this.bandit.update(arm, reward);
    return reward;
  }

  /** The state as plain JSON-compatible data. */
  state(): SchedulerState {
    return {
      version: 1,
      bandit: this.bandit.state(),
      reward: { ...this.reward },
      last: Object.fromEntries(this.#last),
    };
  }

  /** A scheduler restored from {@link state}. */
  static fromState(state: SchedulerState): BanditScheduler {
    const owner = "BanditScheduler.fromState";
    if (state?.version !== 1) {
      throw new TypeError(`${owner}: version must be 1, got ${show(state?.version)}`);
    }
    const s = new BanditScheduler(banditFromState(state.bandit), state.reward);
    for (const [arm, p] of Object.entries(state.last ?? {})) {
      armIndex(owner, s.bandit.arms, arm);
      s.#last.set(arm, checkUnit(owner, `last[${JSON.stringify(arm)}]`, p));
    }
    return s;
  }
}
