import assert from "node:assert/strict";
import fc from "fast-check";
import { StalenessGate, type WeightSnapshot } from "@rlvr/infra";
import type { TaskRow } from "@rlvr/rewards";
import type { Rollout } from "./rollout.ts";
import type { RolloutExecutor, RolloutJob } from "./rollout_job.ts";
import { RolloutScheduler } from "./scheduler.ts";

const snap = (version: number): WeightSnapshot => ({
  version,
  bytes: new Uint8Array(),
  checksum: "",
});

const EMPTY: Rollout = {
  items: [],
  fracZeroStdGroups: 0,
  rounds: 1,
  generatedTokens: 0,
  seconds: 0,
};

/** A stand-in executor: a job takes `delay(job)` ms; it records what it ran under which version. */
class FakeExecutor implements RolloutExecutor {
  version = -1;
  runs: { job: number; version: number }[] = [];
  busy = false;
  constructor(
    readonly name: string,
    readonly delay: (job: RolloutJob) => number,
    readonly fail: (job: RolloutJob) => boolean = () => false,
  ) {}
  async sync(s: WeightSnapshot): Promise<void> {
    assert.equal(this.busy, false, "sync while running a job");
    await new Promise((r) => setTimeout(r, 0));
    this.version = s.version;
  }
  async run(job: RolloutJob): Promise<{ rollout: Rollout; policyVersion: number }> {
    assert.equal(this.busy, false, "two jobs at once on one executor");
    this.busy = true;
    const version = this.version;
    await new Promise((r) => setTimeout(r, this.delay(job)));
    this.busy = false;
    if (this.fail(job)) throw new Error(`job ${job.id} failed`);
    this.runs.push({ job: job.id, version });
    return { rollout: EMPTY, policyVersion: version };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

let row = 0;
const takeRows = (): TaskRow[] => [{
  id: `r${row}`,
  task: "t",
  prompt: `p${row}`,
  answer: String(row++),
  difficulty: 0,
}];

/** The trainer's loop over `steps` steps, each update lasting `trainMs(step)` ms. */
async function train(
  s: RolloutScheduler,
  steps: number,
  trainMs: (step: number) => number,
  start = 0,
): Promise<{ versions: number[]; staleness: number[]; jobs: number[] }> {
  const out = { versions: [] as number[], staleness: [] as number[], jobs: [] as number[] };
  s.publish(snap(start));
  for (let step = start + 1; step <= steps; step++) {
    const b = await s.next(step - 1, steps - step + 1);
    out.versions.push(b.batch.policyVersion);
    out.staleness.push(b.staleness);
    out.jobs.push(b.batch.job.id);
    await new Promise((r) => setTimeout(r, trainMs(step)));
    s.publish(snap(step));
  }
  return out;
}

Deno.test("RolloutScheduler one_step_off: step s trains on job s generated under version s - 2", async () => {
  const ex = new FakeExecutor("w0", (j) => (j.id % 3) * 3);
  const s = new RolloutScheduler({
    mode: "one_step_off",
    executors: [ex],
    gate: new StalenessGate({ maxStaleness: 1 }),
    takeRows,
  });
  const r = await train(s, 6, (step) => (step % 2) * 4);
  assert.deepEqual(r.jobs, [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(r.versions, [0, 0, 1, 2, 3, 4]);
  assert.deepEqual(r.staleness, [0, 1, 1, 1, 1, 1]);
  assert.deepEqual(ex.runs.map((x) => x.job), [1, 2, 3, 4, 5, 6]); // nothing wasted
  assert.deepEqual(s.gate.counts, { used: 6, dropped: 0, regenerated: 0 });
  await s.close();
});

Deno.test("RolloutScheduler async with η = 0 and one worker is synchronous training", async () => {
  const ex = new FakeExecutor("w0", () => 1);
  const s = new RolloutScheduler({
    mode: "async",
    executors: [ex],
    gate: new StalenessGate({ maxStaleness: 0 }),
    takeRows,
  });
  const r = await train(s, 5, () => 2);
  assert.deepEqual(r.versions, [0, 1, 2, 3, 4]);
  assert.deepEqual(r.staleness, [0, 0, 0, 0, 0]);
  await s.close();
});

Deno.test("RolloutScheduler async: never returns a batch older than η, and accounts for every batch (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        eta: fc.integer({ min: 0, max: 3 }),
        workers: fc.integer({ min: 1, max: 3 }),
        policy: fc.constantFrom("drop" as const, "regenerate" as const),
        jobMs: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 8 }),
        trainMs: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 5 }),
        steps: fc.integer({ min: 1, max: 10 }),
      }),
      async ({ eta, workers, policy, jobMs, trainMs, steps }) => {
        const executors = Array.from(
          { length: workers },
          (_, w) => new FakeExecutor(`w${w}`, (j) => jobMs[(j.id + w) % jobMs.length]!),
        );
        const gate = new StalenessGate({ maxStaleness: eta, policy });
        const s = new RolloutScheduler({ mode: "async", executors, gate, takeRows });
        const r = await train(s, steps, (step) => trainMs[step % trainMs.length]!);
        await s.checkpoint(() => Promise.resolve()); // let the jobs in flight finish
        const state = s.state();
        await s.close();
        assert.ok(r.staleness.every((x) => x >= 0 && x <= eta), `staleness ${r.staleness}`);
        r.versions.forEach((v, i) => assert.ok(v <= i, `step ${i + 1} used version ${v}`));
        const c = gate.counts;
        assert.equal(c.used, steps);
        const ran = executors.flatMap((e) => e.runs);
        // every finished job was used, dropped, sent back, or is still waiting
        assert.equal(ran.length, c.used + c.dropped + c.regenerated + state.ready.length);
        // a job is used at most once, and regenerated jobs are the only ones run twice
        assert.equal(new Set(r.jobs).size, r.jobs.length);
        assert.equal(ran.length - new Set(ran.map((x) => x.job)).size <= c.regenerated, true);
        // admission: never more than η + 1 batches ahead of the trainer
        assert.ok(state.ready.length <= eta + 1);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("RolloutScheduler async: a batch that finishes late is dropped (or regenerated) by the gate, never used", async () => {
  for (const policy of ["drop", "regenerate"] as const) {
    // Worker w0 gets job 1 and is slow; w1 runs jobs 2, 3 fast, so job 1 arrives 2 versions late.
    const slow = new FakeExecutor("w0", (j) => (j.id === 1 ? 60 : 1));
    const fast = new FakeExecutor("w1", () => 1);
    const gate = new StalenessGate({ maxStaleness: 1, policy });
    const s = new RolloutScheduler({ mode: "async", executors: [slow, fast], gate, takeRows });
    const r = await train(s, 4, () => 5);
    await s.close();
    assert.ok(r.staleness.every((x) => x <= 1), `${policy}: ${r.staleness}`);
    assert.ok(!r.jobs.includes(1) || policy === "regenerate", `${policy}: used ${r.jobs}`);
    const c = gate.counts;
    assert.equal(
      policy === "drop" ? c.dropped : c.regenerated,
      1,
      `${policy}: ${JSON.stringify(c)}`,
    );
    if (policy === "regenerate") {
      // job 1's rows came back: it ran twice, the second time under newer weights
      const runs = [...slow.runs, ...fast.runs].filter((x) => x.job === 1);
      assert.equal(runs.length, 2);
      assert.ok(runs[1]!.version > runs[0]!.version);
    }
  }
});

Deno.test("RolloutScheduler: checkpoint waits for the job in flight and a restored scheduler continues with it", async () => {
  const ex = new FakeExecutor("w0", () => 10);
  const s = new RolloutScheduler({
    mode: "one_step_off",
    executors: [ex],
    gate: new StalenessGate({ maxStaleness: 1 }),
    takeRows,
  });
  s.publish(snap(0));
  await s.next(0, 4); // step 1; job 2 now runs under version 0
  s.publish(snap(1));
  const state = await s.checkpoint((st) => Promise.resolve(st));
  await s.close();
  assert.equal(state.ready.length, 1);
  assert.deepEqual([state.ready[0]!.job.id, state.ready[0]!.policyVersion], [2, 0]);
  assert.equal(state.nextKey, 3);
  const saved = JSON.parse(JSON.stringify(state));

  const ex2 = new FakeExecutor("w0", () => 1);
  const t = new RolloutScheduler({
    mode: "one_step_off",
    executors: [ex2],
    gate: StalenessGate.fromJSON(saved.gate),
    takeRows,
    restore: saved,
  });
  t.publish(snap(1));
  const b = await t.next(1, 3); // step 2 uses the saved batch, and job 3 starts under version 1
  assert.deepEqual([b.batch.job.id, b.batch.policyVersion, b.staleness], [2, 0, 1]);
  t.publish(snap(2));
  const c = await t.next(2, 2);
  assert.deepEqual([c.batch.job.id, c.batch.policyVersion], [3, 1]);
  assert.deepEqual(
    ex2.runs,
    [{ job: 3, version: 1 }, { job: 4, version: 2 }].slice(0, ex2.runs.length),
  );
  assert.equal(t.gate.counts.used, 3);
  await t.close();
});

Deno.test("RolloutScheduler: a failing job fails next() with its error; no weights is a clear error", async () => {
  const ex = new FakeExecutor("w0", () => 1, (j) => j.id === 2);
  const s = new RolloutScheduler({
    mode: "async",
    executors: [ex],
    gate: new StalenessGate({ maxStaleness: 1 }),
    takeRows,
  });
  await assert.rejects(s.next(0, 3), /no weights published/);
  s.publish(snap(0));
  await assert.rejects(train(s, 3, () => 1), /job 2 failed/);
  await s.close();
  assert.throws(
    () =>
      new RolloutScheduler({
        mode: "one_step_off",
        executors: [ex, ex],
        gate: new StalenessGate({ maxStaleness: 1 }),
        takeRows,
      }),
    /one_step_off runs one executor, got 2/,
  );
});

/**
 * A partial-rollout stand-in: a job runs until weights newer than its own are offered (an offer
 * may come before the job starts, as to a Web Worker), then finishes under them.
 */
class OfferedExecutor implements RolloutExecutor {
  version = -1;
  offers: number[] = [];
  #offered = -1;
  #wake: (() => void) | null = null;
  constructor(readonly name: string) {}
  sync(s: WeightSnapshot): Promise<void> {
    this.version = s.version;
    return Promise.resolve();
  }
  async run(): Promise<{ rollout: Rollout; policyVersion: number; newestVersion: number }> {
    const start = this.version;
    if (this.#offered <= start) await new Promise<void>((resolve) => this.#wake = resolve);
    this.version = this.#offered;
    return { rollout: EMPTY, policyVersion: start, newestVersion: this.version };
  }
  offer(s: WeightSnapshot): void {
    this.offers.push(s.version);
    this.#offered = Math.max(this.#offered, s.version);
    this.#wake?.();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

Deno.test("RolloutScheduler partial: a publish reaches the executors running a job, not idle ones; the batch is as old as its oldest token", async () => {
  const busy = new OfferedExecutor("w0");
  const idle = new OfferedExecutor("w1");
  const s = new RolloutScheduler({
    mode: "async",
    executors: [busy, idle],
    gate: new StalenessGate({ maxStaleness: 2 }),
    takeRows,
    partial: true,
  });
  s.publish(snap(0)); // one job wanted (see next's `remaining`): dispatched on w0 only
  const next = s.next(0, 1);
  s.publish(snap(1)); // the running job switches to version 1 and finishes
  const b = await next;
  assert.deepEqual([b.batch.policyVersion, b.batch.newestVersion, b.staleness], [0, 1, 0]);
  assert.deepEqual(busy.offers, [1]);
  assert.deepEqual(idle.offers, []);
  await s.close();
});

Deno.test("RolloutScheduler partial: executors that cannot take weights mid-job are refused with the fix", () => {
  assert.throws(
    () =>
      new RolloutScheduler({
        mode: "async",
        executors: [new FakeExecutor("nats0", () => 0)],
        gate: new StalenessGate({ maxStaleness: 2 }),
        takeRows,
        partial: true,
      }),
    /partial rollouts need executors .*nats0 cannot.*set rollout\.partial to false/,
  );
});
