/**
 * Which training problems a step draws and what is mixed into its batch: the `sampling` section
 * of a config, built from `@rlvr/sampling`'s parts.
 *
 * - **Selection** (`selection`): `stream` (the task's problems in order, each once, as before
 *   this section existed), `uniform` draws from a pool, or `priority` draws with
 *   `p ∝ max(1 − s, ε)` (Kimi k1.5), `s` the problem's tracked pass rate (`PassRateTracker`).
 * - **Mastery removal** (`mastery`, POLARIS): a problem whose last `consecutive` groups passed at
 *   `threshold` or more leaves the pool.
 * - **GRESO** (`greso`): before sampling, a problem on a streak of all-correct or all-wrong
 *   groups is skipped with probability `1 − max(p^streak, 0.01)` (`GresoFilter`).
 * - **Curriculum** (`curriculum`): only problems whose difficulty rank (the task's `difficulty`
 *   field on the pool's empirical CDF) is within the step's competence are drawn
 *   (`CurriculumSampler`, Platanios et al.), so difficulty rises with the steps.
 * - **Replay** (`replay`, RLEP): responses of earlier steps are kept per problem (verified
 *   successes, or any response with a non-zero group advantage, by priority) and added to the
 *   problem's group when it is drawn again, each tagged with the step that sampled it.
 * - **Budgets** (`budget`, DARS): the samples per problem are split between `min` and `max` by
 *   pass rate (`allocateBudget`), the batch's total unchanged.
 *
 * Design decisions:
 * - **A finite pool** (`pool`: the first N distinct training problems, held-out ones excluded)
 *   backs every strategy but `stream`: a problem must come back for its history to matter.
 * - **Draws are keyed, not streamed**: the draw of the k-th `take` uses
 *   `seededRng(seed, k, …)`, so the only state is the take count, the pass-rate tracker, GRESO's
 *   traces and the replay store, all plain JSON in the checkpoint (`sampling.json`); a resumed run
 *   draws what an uninterrupted one draws.
 * - **What the trainer saw counts**: the tracker, GRESO and the replay store are updated with a
 *   step's fresh groups (the verifier's 0/1, not shaped rewards) when the trainer takes the batch;
 *   replayed responses are never counted as fresh.
 * - With `stream` and no strategy it is the plain `TrainStream`, so a run without the section
 *   computes what it computed before.
 *
 * @module
 */

import {
  allocateBudget,
  CurriculumSampler,
  GresoFilter,
  type GresoState,
  type PassRateState,
  PassRateTracker,
  priorityWeights,
} from "@rlvr/sampling";
import { seededRng, type Task, type TaskRow } from "@rlvr/rewards";
import type { SamplingSection } from "../config/types.ts";
import type { TrainStream } from "./problems.ts";
import type { RolloutItem } from "./rollout.ts";

/** Something rows are taken from (the training stream or a {@link PromptSource}). */
export interface RowStream<R extends TaskRow = TaskRow> {
  /** The next `count` problems. */
  take(count: number): R[];
  /** The data iterator's state, saved with a checkpoint. */
  readonly position: number;
}

/** A stored response and the step that sampled it. */
export interface ReplayRecord {
  /** The response (its `group` is rewritten when replayed). */
  item: RolloutItem;
  /** The step that sampled it. */
  step: number;
  /** Its priority (`prioritized`: |reward − group mean|; 1 in `success` mode). */
  priority: number;
}

/** A {@link RolloutItem} replayed from an earlier step. */
export interface ReplayedItem extends RolloutItem {
  /** The step that sampled it. */
  replayedFrom: number;
}

/** What a checkpoint keeps of a {@link PromptSource}. */
export interface PromptSourceState {
  /** Format version (1). */
  version: 1;
  /** Takes so far (pool) or the stream's position. */
  position: number;
  /** The pass-rate tracker, when a strategy reads it. */
  tracker: PassRateState | null;
  /** GRESO's traces and adapted probabilities. */
  greso: GresoState | null;
  /** Stored responses by problem key. */
  replay: Record<string, ReplayRecord[]>;
}

// Domains of the keyed draws, so they never coincide with another seededRng stream.
const DRAW_DOMAIN = 0x70726f6d;
const REPLAY_DOMAIN = 0x7265706c;

/** Whether a sampling section asks for anything beyond the plain stream. */
export function usesStrategies(s: SamplingSection | undefined): s is SamplingSection {
  return s !== undefined &&
    (s.selection !== "stream" || s.pool !== null || s.mastery !== null || s.greso !== null ||
      s.curriculum !== null || s.replay !== null || s.budget !== null);
}

/**
 * The training problems of a run under its `sampling` settings (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { defaultConfig } from "@rlvr/train";
 * import { heldOutProblems, TrainStream } from "./problems.ts";
 * import { PromptSource } from "./prompt_source.ts";
 * import { arithmeticTask } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const task = arithmeticTask({ digits: [1, 3], chainLength: 1 });
 * const stream = new TrainStream(task, 0, heldOutProblems(task, 8));
 * const settings = { ...defaultConfig().sampling!, pool: 64, selection: "uniform" as const,
 *   curriculum: { schedule: "linear" as const, steps: 100, initial: 0.2, power: 2 } };
 * const source = new PromptSource(task, stream, settings, 0);
 * source.setStep(0);
 * const early = source.take(8).map((r) => r.difficulty);
 * source.setStep(100);
 * const late = source.take(64).map((r) => r.difficulty);
 * assert.ok(Math.max(...early) <= Math.max(...late));
 * ```
 */
export class PromptSource<R extends TaskRow = TaskRow> implements RowStream<R> {
  readonly #task: Task<R>;
  readonly #stream: TrainStream<R>;
  readonly #settings: SamplingSection | undefined;
  readonly #seed: number;
  readonly #pool: R[] | null;
  readonly #keys: string[] = [];
  readonly #tracker: PassRateTracker | null;
  readonly #greso: GresoFilter | null;
  readonly #curriculum: CurriculumSampler<R> | null;
  readonly #replay = new Map<string, ReplayRecord[]>();
  #position: number;
  #step = 0;
  #drawn: R[] = [];
  #replayed: ReplayedItem[] = [];
  #sizes: number[] = [];

  /**
   * A source over `stream` (the training stream of the run) with `settings` (the config's
   * `sampling`, or undefined for the plain stream), continuing from `state` when resuming.
   */
  constructor(
    task: Task<R>,
    stream: TrainStream<R>,
    settings: SamplingSection | undefined,
    seed: number,
    state: PromptSourceState | null = null,
  ) {
    this.#task = task;
    this.#stream = stream;
    this.#seed = seed;
    const s = usesStrategies(settings) ? settings : undefined;
    this.#settings = s;
    this.#position = state?.position ?? stream.position;
    if (s === undefined || s.pool === null) {
      this.#pool = null;
      this.#tracker = null;
      this.#greso = null;
      this.#curriculum = null;
      return;
    }
    this.#pool = stream.distinct(s.pool);
    for (const row of this.#pool) this.#keys.push(task.key(row));
    this.#tracker = state?.tracker != null
      ? PassRateTracker.fromState(state.tracker)
      : new PassRateTracker({ decay: s.passRateDecay });
    this.#greso = s.greso === null
      ? null
      : state?.greso != null
      ? GresoFilter.fromState(state.greso)
      : new GresoFilter(s.greso);
    this.#curriculum = s.curriculum === null ? null : new CurriculumSampler(this.#pool, {
      schedule: s.curriculum.schedule === "linear"
        ? { kind: "linear", steps: s.curriculum.steps, initial: s.curriculum.initial }
        : {
          kind: "root",
          steps: s.curriculum.steps,
          initial: s.curriculum.initial,
          power: s.curriculum.power,
        },
      seed,
      difficulty: (row) => row.difficulty,
    });
    for (const [key, records] of Object.entries(state?.replay ?? {})) {
      this.#replay.set(key, records);
    }
  }

  /** The data position to save (see the module doc). */
  get position(): number {
    return this.#pool === null ? this.#stream.position : this.#position;
  }

  /** The problems of the pool (null with the plain stream). */
  get pool(): readonly R[] | null {
    return this.#pool;
  }

  /** The training step the next draws are for (the curriculum's competence reads it). */
  setStep(step: number): void {
    this.#step = step;
  }

  /** Pool indices that may be drawn now: within the competence, minus mastered problems. */
  eligible(): number[] {
    const pool = this.#pool!;
    const all = this.#curriculum?.eligibleIndices(this.#step) ??
      Array.from({ length: pool.length }, (_, i) => i);
    const m = this.#settings!.mastery;
    if (m === null) return all;
    const open = all.filter((i) =>
      !this.#tracker!.isMastered(this.#keys[i]!, m.consecutive, m.threshold)
    );
    // Everything mastered: keep drawing (from what the curriculum allows) rather than stop.
    return open.length > 0 ? open : all;
  }

  /** The next `count` problems (see the module doc). */
  take(count: number): R[] {
    if (this.#pool === null) {
      const rows = this.#stream.take(count);
      this.#drawn.push(...rows);
      return rows;
    }
    const s = this.#settings!;
    const rng = seededRng(this.#seed, this.#position++, DRAW_DOMAIN);
    const eligible = this.eligible();
    const weights = s.selection === "priority"
      ? priorityWeights(eligible.map((i) => this.#tracker!.rate(this.#keys[i]!)), s.priority)
      : null;
    // A weighted order without replacement (Efraimidis–Spirakis keys log(u)/w); uniform when
    // no weights. Ties broken by pool index for determinism.
    const order = eligible.map((i, j) => ({
      i,
      key: Math.log(1 - rng.next()) / (weights === null ? 1 : weights[j]!),
    })).sort((a, b) => b.key - a.key || a.i - b.i).map((e) => e.i);
    const out: number[] = [];
    const skipped: number[] = [];
    for (const i of order) {
      if (out.length === count) break;
      if (this.#greso?.skip(this.#keys[i]!, rng.next())) skipped.push(i);
      else out.push(i);
    }
    // Fewer open problems than asked for: the skipped ones, then further passes over the order.
    for (const i of skipped) if (out.length < count) out.push(i);
    for (let k = 0; out.length < count; k++) out.push(order[k % order.length]!);
    const rows = out.map((i) => this.#pool![i]!);
    this.#drawn.push(...rows);
    return rows;
  }

  /**
   * Samples per problem for `rows` under `budget` (DARS), `groupSize` each without it; the sum
   * is always `rows.length × groupSize`.
   */
  groupSizes(rows: readonly R[], groupSize: number): number[] {
    const b = this.#settings?.budget ?? null;
    if (b === null || this.#tracker === null) return rows.map(() => groupSize);
    const sizes = allocateBudget(
      rows.map((r) => this.#tracker!.rate(this.#task.key(r))),
      rows.length * groupSize,
      { min: b.min, max: b.max, shape: b.shape },
    );
    this.#sizes.push(...sizes);
    return sizes;
  }

  /**
   * Records a step's fresh groups: pass rates, GRESO's traces (and its `p` adaptation), and the
   * replay store. Replayed items in `items` are ignored.
   */
  observe(items: readonly RolloutItem[], step: number): void {
    if (this.#pool === null) return;
    const groups = new Map<number, RolloutItem[]>();
    for (const it of items) {
      if ((it as Partial<ReplayedItem>).replayedFrom !== undefined) continue;
      const g = groups.get(it.group) ?? [];
      g.push(it);
      groups.set(it.group, g);
    }
    let easy = 0;
    let hard = 0;
    for (const group of groups.values()) {
      const key = this.#task.key(group[0]!.row as R);
      const correct = group.map((it) => it.correct);
      this.#tracker!.update(key, correct);
      this.#greso?.observe(key, correct);
      if (correct.every((c) => c >= 0.98)) easy++;
      if (correct.every((c) => c <= 0.11)) hard++;
      this.#store(key, group, step);
    }
    if (this.#greso !== null && groups.size > 0) {
      this.#greso.adapt({ easy: easy / groups.size, hard: hard / groups.size });
    }
  }

  #store(key: string, group: readonly RolloutItem[], step: number): void {
    const r = this.#settings!.replay;
    if (r === null) return;
    const mean = group.reduce((s, it) => s + it.reward, 0) / group.length;
    const kept = group.flatMap((item): ReplayRecord[] => {
      if (r.mode === "success") return item.correct === 1 ? [{ item, step, priority: 1 }] : [];
      const priority = Math.abs(item.reward - mean);
      return priority > 0 ? [{ item, step, priority }] : [];
    });
    if (kept.length === 0) return;
    const records = [...(this.#replay.get(key) ?? []), ...kept];
    this.#replay.set(key, records.slice(-r.capacity));
  }

  /**
   * `items` with up to `replay.perGroup` stored responses added after each group whose problem
   * has some (younger than `replay.maxAge` steps), each tagged `replayedFrom`; the items
   * themselves are unchanged when replay is off.
   */
  mixReplay(items: readonly RolloutItem[], step: number): RolloutItem[] {
    const r = this.#settings?.replay ?? null;
    if (r === null) return [...items];
    const out: RolloutItem[] = [];
    const rng = seededRng(this.#seed, step, REPLAY_DOMAIN);
    for (let i = 0; i < items.length;) {
      let j = i;
      while (j < items.length && items[j]!.group === items[i]!.group) out.push(items[j++]!);
      const group = items[i]!.group;
      const key = this.#task.key(items[i]!.row as R);
      // Too old records are evicted; this step's own responses are already in the group.
      const kept = (this.#replay.get(key) ?? []).filter((x) => step - x.step <= r.maxAge);
      this.#replay.set(key, kept);
      const earlier = kept.filter((x) => x.step < step);
      for (const rec of this.#pick(earlier, r.perGroup, r.mode, rng)) {
        const item: ReplayedItem = { ...rec.item, group, replayedFrom: rec.step };
        out.push(item);
        this.#replayed.push(item);
      }
      i = j;
    }
    return out;
  }

  #pick(
    records: readonly ReplayRecord[],
    n: number,
    mode: "success" | "prioritized",
    rng: { next(): number },
  ): ReplayRecord[] {
    // Without replacement: uniform (success) or by priority (prioritized).
    return records.map((rec, i) => ({
      rec,
      i,
      key: Math.log(1 - rng.next()) / (mode === "prioritized" ? rec.priority : 1),
    })).sort((a, b) => b.key - a.key || a.i - b.i).slice(0, n).map((e) => e.rec);
  }

  /** This step's sampling metrics (and resets the per-step counts). */
  metrics(): Record<string, number> {
    const out: Record<string, number> = {};
    if (this.#pool === null) {
      this.#drawn = [];
      return out;
    }
    const s = this.#settings!;
    const drawn = this.#drawn;
    if (drawn.length > 0) {
      out["sampling/difficulty_mean"] = drawn.reduce((a, r) => a + r.difficulty, 0) /
        drawn.length;
    }
    if (this.#curriculum !== null) out["sampling/eligible"] = this.eligible().length;
    if (s.mastery !== null) {
      const m = s.mastery;
      out["sampling/mastered"] = this.#keys.filter((k) =>
        this.#tracker!.isMastered(k, m.consecutive, m.threshold)
      ).length;
    }
    if (this.#greso !== null) {
      const skipped = this.#greso.skipped;
      out["greso/skipped_easy"] = skipped.easy;
      out["greso/skipped_hard"] = skipped.hard;
      out["greso/p_easy"] = this.#greso.pEasy;
      out["greso/p_hard"] = this.#greso.pHard;
    }
    if (s.budget !== null && this.#sizes.length > 0) {
      out["budget/group_min"] = Math.min(...this.#sizes);
      out["budget/group_max"] = Math.max(...this.#sizes);
    }
    if (s.replay !== null) {
      out["replay/items"] = this.#replayed.length;
      out["replay/age_mean"] = this.#replayed.length === 0
        ? 0
        : this.#replayed.reduce((a, it) => a + (this.#step - it.replayedFrom), 0) /
          this.#replayed.length;
      let stored = 0;
      for (const records of this.#replay.values()) stored += records.length;
      out["replay/stored"] = stored;
    }
    this.#drawn = [];
    this.#replayed = [];
    this.#sizes = [];
    return out;
  }

  /** The state to save with a checkpoint. */
  state(): PromptSourceState {
    return {
      version: 1,
      position: this.position,
      tracker: this.#tracker?.state() ?? null,
      greso: this.#greso?.state() ?? null,
      replay: Object.fromEntries(this.#replay),
    };
  }
}
