/**
 * The playground's training worker (bundled as `run_worker.js`, started by `worker_run.ts`): the
 * backend and the {@link PlaygroundRun} live here, off the page's thread, so the page stays
 * responsive while a step computes, and the WebAssembly matmul may use several threads (its
 * helpers wait in `Atomics.wait`, which only a worker may call; the page is cross-origin
 * isolated). It answers the requests of `run_protocol.ts` one at a time, except `stop`, which
 * arrives while `run` is in progress: the run yields to this worker's event loop after every
 * step and evaluation, so a stop takes effect after the step in progress.
 *
 * @module
 */

import { modelFiles, zipFiles } from "./download.ts";
import { pickBackend, type PlaygroundBackend } from "./backend.ts";
import { PlaygroundRun } from "./playground_run.ts";
import type { RunProgress, RunReply, RunRequest } from "./run_protocol.ts";

/** The worker's global scope, typed here. */
interface WorkerScope {
  onmessage: ((e: MessageEvent<RunRequest>) => void) | null;
  postMessage(message: RunReply, transfer?: Transferable[]): void;
}
const scope = globalThis as unknown as WorkerScope;

let backend: PlaygroundBackend | null = null;
let run: PlaygroundRun | null = null;
/** The policy's files the run was created from (the download takes its tokenizer files). */
let files: Map<string, Uint8Array> = new Map();
/** How many of each record list the page has. */
const sent = { metrics: 0, evals: 0, evalSamples: 0 };

/** Where the run is, with the records the page has not seen yet. */
function progress(): RunProgress {
  const r = run!;
  const out: RunProgress = {
    completed: r.completed,
    status: r.status,
    elapsedMs: r.elapsedMs,
    metrics: r.sink.metrics.slice(sent.metrics),
    evals: r.sink.evals.slice(sent.evals),
    evalSamples: r.sink.evalSamples.slice(sent.evalSamples),
  };
  sent.metrics = r.sink.metrics.length;
  sent.evals = r.sink.evals.length;
  sent.evalSamples = r.sink.evalSamples.length;
  return out;
}

/** A task boundary, unthrottled: the `stop` message gets its turn here. */
function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

async function handle(m: RunRequest): Promise<void> {
  switch (m.type) {
    case "backend": {
      await run?.close();
      run = null;
      backend?.release();
      backend = await pickBackend(m.choice);
      const { device, choice, adapter, reason, line, overrides } = backend;
      scope.postMessage({
        id: m.id,
        type: "backend",
        info: { device, choice, adapter, reason, line, overrides },
      });
      return;
    }
    case "create": {
      await run?.close();
      files = new Map(m.files);
      run = await PlaygroundRun.create({
        config: m.config,
        files,
        name: m.name,
        backend: backend!.backend,
      });
      sent.metrics = sent.evals = sent.evalSamples = 0;
      scope.postMessage({ id: m.id, type: "created", steps: run.steps, progress: progress() });
      return;
    }
    case "run": {
      const r = run!;
      const post = () => scope.postMessage({ id: -1, type: "progress", progress: progress() });
      const onStep = () => {
        if (m.stopAfter !== undefined && r.completed >= m.stopAfter) r.stop();
        post();
      };
      try {
        await r.run({ onStep, onEval: post, pause: yieldToEvents });
        scope.postMessage({ id: m.id, type: "ended", progress: progress() });
      } catch (e) {
        scope.postMessage({
          id: m.id,
          type: "error",
          message: (e as Error).stack ?? String(e),
          progress: progress(),
        });
      }
      return;
    }
    case "stop": {
      run?.stop();
      scope.postMessage({ id: m.id, type: "stopping", progress: progress() });
      return;
    }
    case "zip": {
      const bytes = zipFiles(await modelFiles(run!.learner, files), m.folder);
      scope.postMessage({ id: m.id, type: "zip", bytes }, [bytes.buffer]);
      return;
    }
    case "close": {
      await run?.close();
      run = null;
      backend?.release();
      backend = null;
      scope.postMessage({ id: m.id, type: "closed" });
      return;
    }
  }
}

scope.onmessage = (e: MessageEvent<RunRequest>) => {
  const m = e.data;
  // `run` stays in progress while later requests (stop) are handled: no queue, no await here.
  handle(m).catch((err) => {
    scope.postMessage({ id: m.id, type: "error", message: (err as Error).stack ?? String(err) });
  });
};
