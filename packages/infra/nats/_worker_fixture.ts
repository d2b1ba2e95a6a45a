/**
 * A minimal remote rollout worker, run as a real Deno subprocess by `integration_test.ts` (a test
 * fixture, not an export: the lead's `deno task worker --nats <url>` will replace it).
 *
 * It loads the latest weights from the object store (checksum verified), then loops: take a
 * job, "roll it out" with its tiny policy (`answer = w0·a + w1·b`), publish the trajectory
 * tagged with its weight version, acknowledge the job. When the publisher refuses because the
 * weights are stale, it syncs to the latest version and regenerates. Every step is printed as
 * one line on stdout (`ready 0`, `took p3 1`, `published p3 0`, ...) so the test can follow
 * it, and `mode` makes it hang at a chosen point so the test can SIGKILL it mid-job:
 * `hang-after-fetch` (job taken, nothing published) or `hang-after-publish` (trajectory published,
 * job not acknowledged).
 *
 * Usage: `deno run -A _worker_fixture.ts '<json WorkerConfig>'`
 *
 * @module
 */

import { type Tensor, tensor } from "@rlvr/tensor";
import { applySnapshot } from "../weights.ts";
import { connectNats } from "./_connect.ts";
import { StaleWeightsError, TrajectoryPublisher } from "./trajectories.ts";
import type { TrajectoryStreamOptions } from "./trajectories.ts";
import { WeightsStore } from "./weights_store.ts";
import { WorkQueue, type WorkQueueOptions } from "./work_queue.ts";

/** What the test passes to the worker (one JSON argument). */
export interface WorkerConfig {
  url: string;
  workerId: string;
  mode: "normal" | "hang-after-fetch" | "hang-after-publish";
  maxStaleness: number;
  queue: WorkQueueOptions;
  trajectories: TrajectoryStreamOptions;
}

/** The prompt of a job. */
export interface Prompt {
  a: number;
  b: number;
}

/** The trajectory payload. */
export interface Answer {
  answer: number;
}

function say(...parts: (string | number)[]): void {
  console.log(parts.join(" "));
}

async function main(config: WorkerConfig): Promise<void> {
  const nc = await connectNats(config.url, { name: config.workerId });
  const queue = await WorkQueue.open<Prompt>(nc, config.queue);
  const store = await WeightsStore.open(nc);
  const publisher = await TrajectoryPublisher.open<Answer>(nc, {
    ...config.trajectories,
    maxStaleness: config.maxStaleness,
    versions: store,
  });
  const params = new Map<string, Tensor>([["w", tensor([0, 0])]]);
  const sync = async (): Promise<number> => {
    const latest = await store.getLatest();
    if (latest === null) throw new Error("no weights published yet");
    return await applySnapshot(params, latest);
  };
  let version = await sync();
  say("ready", version);
  const hang = () => new Promise((r) => setTimeout(r, 3_600_000));
  for (;;) {
    const job = await queue.next({ expiresMs: 1000 });
    if (job === null) continue;
    say("took", job.id, job.deliveryCount);
    if (config.mode === "hang-after-fetch") {
      say("holding", job.id);
      await hang();
    }
    for (;;) {
      const [w0, w1] = await params.get("w")!.data();
      const trajectory = {
        id: `${job.id}/0`,
        jobId: job.id,
        policyVersion: version,
        workerId: config.workerId,
        payload: { answer: w0! * job.prompt.a + w1! * job.prompt.b },
      };
      try {
        await publisher.publish(trajectory);
        break;
      } catch (e) {
        if (!(e instanceof StaleWeightsError)) throw e;
        say("refused", job.id, e.workerVersion, e.latestVersion);
        version = await sync(); // then regenerate under the new weights
        say("synced", version);
      }
    }
    say("published", job.id, version);
    if (config.mode === "hang-after-publish") {
      say("holding", job.id);
      await hang();
    }
    await job.ack();
    say("acked", job.id);
  }
}

if (import.meta.main) {
  await main(JSON.parse(Deno.args[0]!) as WorkerConfig);
}
