import assert from "node:assert/strict";
import fc from "fast-check";
import { StalenessGate, type StalePolicy } from "./staleness.ts";

interface Sample {
  promptId: number;
  policyVersion: number;
}

type Cmd =
  | { kind: "produce"; worker: number }
  | { kind: "sync"; worker: number }
  | { kind: "consume"; n: number }
  | { kind: "bump" };

const WORKERS = 3;
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ kind: fc.constant("produce" as const), worker: fc.nat({ max: WORKERS - 1 }) }),
  fc.record({ kind: fc.constant("sync" as const), worker: fc.nat({ max: WORKERS - 1 }) }),
  fc.record({ kind: fc.constant("consume" as const), n: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant("bump" as const) }),
);

/**
 * A tiny simulated system: rollout workers that sync weights only when told, produce samples
 * tagged with their version into a FIFO buffer, and a trainer that takes batches through the
 * gate and bumps its version. "regenerate" sends the prompt back to be produced again.
 */
function simulate(eta: number, policy: StalePolicy, cmds: readonly Cmd[]) {
  const gate = new StalenessGate({ maxStaleness: eta, policy });
  let version = 0;
  const workers = new Array<number>(WORKERS).fill(0);
  const pending: Sample[] = [];
  const regenQueue: number[] = [];
  const used: Sample[] = [];
  const dropped: Sample[] = [];
  let produced = 0;
  let nextPrompt = 0;
  for (const c of cmds) {
    if (c.kind === "produce") {
      const promptId = regenQueue.shift() ?? nextPrompt++;
      pending.push({ promptId, policyVersion: workers[c.worker]! });
      produced++;
    } else if (c.kind === "sync") {
      workers[c.worker] = version;
    } else if (c.kind === "bump") {
      version++;
    } else {
      const batch = pending.splice(0, c.n);
      const out = gate.partition(batch, version);
      for (const s of out.use) {
        // THE property: nothing handed to the trainer is staler than η
        assert.ok(
          version - s.policyVersion <= eta,
          `used a sample of version ${s.policyVersion} at trainer version ${version} (η=${eta})`,
        );
        used.push(s);
      }
      dropped.push(...out.drop);
      regenQueue.push(...out.regenerate.map((s) => s.promptId));
    }
  }
  return { gate, pending, regenQueue, used, dropped, produced, nextPrompt };
}

for (
  const [mode, etaArb] of [
    ["sync (η = 0)", fc.constant(0)],
    ["one-step-off (η = 1)", fc.constant(1)],
    ["async (η = k)", fc.integer({ min: 2, max: 6 })],
  ] as const
) {
  Deno.test(`staleness property, ${mode}: never used beyond η, nothing lost silently`, () => {
    fc.assert(
      fc.property(
        etaArb,
        fc.constantFrom<StalePolicy>("drop", "regenerate"),
        fc.array(cmd, { maxLength: 200 }),
        (eta, policy, cmds) => {
          const r = simulate(eta, policy, cmds);
          const c = r.gate.counts;
          // every produced sample is accounted for exactly once
          assert.equal(c.used + c.dropped + c.regenerated + r.pending.length, r.produced);
          assert.equal(c.used, r.used.length);
          assert.equal(c.dropped, r.dropped.length);
          if (policy === "drop") assert.equal(c.regenerated, 0);
          else assert.equal(c.dropped, 0);
          // every decision is in the histogram
          assert.equal(r.gate.histogram.count, c.used + c.dropped + c.regenerated);
          // prompt level: each issued prompt is used, dropped (counted), still pending, or
          // waiting to be regenerated: never lost, never used twice
          const where = [
            ...r.used.map((s) => s.promptId),
            ...r.dropped.map((s) => s.promptId),
            ...r.pending.map((s) => s.promptId),
            ...r.regenQueue,
          ].sort((a, b) => a - b);
          assert.deepEqual(where, Array.from({ length: r.nextPrompt }, (_, i) => i));
        },
      ),
      { numRuns: 300 },
    );
  });
}

Deno.test("modes: sync uses only the current version; one-step-off allows one step", () => {
  // synchronous on-policy: generate at v, train at v, bump
  const sync = StalenessGate.forMode("sync");
  for (let v = 0; v < 5; v++) {
    const out = sync.partition([{ policyVersion: v }, { policyVersion: v }], v);
    assert.equal(out.use.length, 2);
  }
  assert.equal(sync.decide({ policyVersion: 4 }, 5), "drop");
  assert.deepEqual(sync.counts, { used: 10, dropped: 1, regenerated: 0 });

  // one-step-off: batch k+1 is generated with version k while the trainer goes k -> k+1
  const off = StalenessGate.forMode("one-step-off", { policy: "regenerate" });
  for (let v = 1; v < 5; v++) {
    assert.equal(off.decide({ policyVersion: v - 1 }, v), "use");
  }
  assert.equal(off.decide({ policyVersion: 2 }, 4), "regenerate");
  assert.equal(off.toRecord()["staleness/1"], 4);
  assert.equal(off.toRecord()["staleness/2"], 1);

  const k = StalenessGate.forMode("async", { maxStaleness: 3 });
  assert.deepEqual(
    [0, 1, 2, 3].map((pv) => k.decide({ policyVersion: pv }, 4)),
    ["drop", "use", "use", "use"],
  );
});

Deno.test("StalenessGate: errors name the field, the value and the fix", () => {
  const gate = new StalenessGate({ maxStaleness: 1 });
  assert.throws(() => gate.decide({ policyVersion: 5 }, 4), /policyVersion 5 is newer than .* 4/);
  assert.throws(() => gate.decide({ policyVersion: -1 }, 4), /sample.policyVersion must be/);
  assert.throws(
    () => gate.decide({} as { policyVersion: number }, 4),
    /sample.policyVersion must be a non-negative integer .* got undefined/,
  );
  assert.throws(() => gate.decide({ policyVersion: 0 }, 1.5), /trainerVersion must be/);
  assert.throws(
    () => new StalenessGate({ maxStaleness: -1 }),
    /maxStaleness must be an integer >= 0/,
  );
  assert.throws(
    () => new StalenessGate({ maxStaleness: 1, policy: "keep" as "drop" }),
    /policy must be "drop" or "regenerate", got "keep"/,
  );
  assert.throws(() => StalenessGate.forMode("sync", { maxStaleness: 2 }), /use mode "async"/);
  assert.throws(() => StalenessGate.forMode("fast" as "sync"), /got "fast"/);
  // a failed check records nothing
  assert.equal(gate.histogram.count, 0);
});

Deno.test("StalenessGate: checkpoint round trip keeps counts and histogram", () => {
  const gate = new StalenessGate({ maxStaleness: 2, policy: "regenerate", histogramMax: 5 });
  for (const pv of [0, 3, 5, 5]) gate.decide({ policyVersion: pv }, 5);
  const back = StalenessGate.fromJSON(JSON.parse(JSON.stringify(gate)));
  assert.deepEqual(back.toRecord(), gate.toRecord());
  assert.equal(back.policy, "regenerate");
  back.decide({ policyVersion: 5 }, 5);
  assert.equal(back.counts.used, gate.counts.used + 1);
});
