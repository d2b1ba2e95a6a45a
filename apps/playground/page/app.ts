/**
 * Browser entry of the playground page (`index.html`): loads the recipes (`recipes.json`) and
 * the tiny policy's files (`model/`), presets the form from the URL (`?recipe=grpo&steps=30&
 * seed=1&backend=wasm&autostart=1`), and runs a `PlaygroundRun` on the backend chosen, in a
 * dedicated worker (`run_worker.ts`, driven through `worker_run.ts`), so the page stays
 * responsive and the WebAssembly matmul may use several threads:
 * Start begins a new run with the knobs, Stop ends it after the step in progress, Resume
 * continues the same session. After every step the plots, the progress line and the
 * before/after table are redrawn and `window.__playground` (see `state.ts`) is updated; the
 * trained model (a zip in Hugging Face layout) and the records (JSONL) can be downloaded while
 * the run is stopped or done (`window.__playgroundApi` gives the same bytes to tests).
 *
 * Anything that fails is shown on the page, kept in `__playground.errors` and logged with
 * `console.error`, so a test watching the console sees it. Knob values the form refuses are
 * shown next to it and are not errors.
 *
 * @module
 */

import { fetchPolicyFiles } from "../../train/loop/fetch_policy_files.ts";
import {
  checkCatalog,
  PLAYGROUND_CHECKPOINT,
  type PlaygroundRecipe,
  type RecipeCatalog,
} from "./catalog.ts";
import {
  applyOverrides,
  knobDefaults,
  knobOverrides,
  type Knobs,
  NUMERIC_KNOBS,
  readKnobs,
  setFlags,
} from "./knobs.ts";
import type { BackendInfo } from "./run_protocol.ts";
import { beforeAfter } from "./samples.ts";
import { initialState, type PlaygroundState } from "./state.ts";
import { formatDuration, jsonl, plotPanels, progressText, samplesHtml } from "./view.ts";
import { WorkerRun } from "./worker_run.ts";

/** What tests call in the page: the downloads' bytes. */
interface PlaygroundApi {
  /** The trained model's zip, base64. */
  modelZipBase64(): Promise<string>;
  /** The step records as JSONL. */
  metricsJsonl(): string;
  /** The evaluation records as JSONL. */
  evalJsonl(): string;
}

declare global {
  /** The page's state (see `state.ts`). */
  var __playground: PlaygroundState;
  /** The page's download functions, for tests. */
  var __playgroundApi: PlaygroundApi;
}

const state = initialState();
globalThis.__playground = state;

let catalog: RecipeCatalog | null = null;
let files: Map<string, Uint8Array> | null = null;
let run: WorkerRun | null = null;
let backend: BackendInfo | null = null;
let recipeName = "";
let driving: Promise<void> | null = null;
/** `run_worker.js` as a blob URL, fetched with the page: a run can start offline. */
let workerUrl: URL | null = null;

function el<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`playground: index.html has no element #${id}`);
  return found as T;
}

function report(e: unknown): void {
  const message = e instanceof Error ? (e.stack ?? e.message) : String(e);
  state.errors.push(message);
  state.status = "failed";
  console.error(`playground: ${message}`);
  render();
}

function recipeOf(name: string): PlaygroundRecipe {
  const r = catalog!.recipes.find((x) => x.name === name);
  if (r === undefined) {
    throw new Error(
      `recipe ${JSON.stringify(name)} is not one this page runs; use one of ${
        catalog!.recipes.map((x) => x.name).join(", ")
      }`,
    );
  }
  return r;
}

function setForm(recipe: PlaygroundRecipe, knobs: Knobs): void {
  el<HTMLSelectElement>("recipe").value = recipe.name;
  el("summary").textContent = `${recipe.title} ${recipe.summary}`.trim();
  const group = el<HTMLSelectElement>("groupSize");
  group.replaceChildren(
    ...recipe.groupSizes.map((g) => new Option(String(g), String(g))),
  );
  for (const name of Object.keys(NUMERIC_KNOBS)) {
    el<HTMLInputElement | HTMLSelectElement>(name).value = String(
      (knobs as unknown as Record<string, number>)[name],
    );
  }
  el<HTMLSelectElement>("backend").value = knobs.backend;
}

function formFields(): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const name of [...Object.keys(NUMERIC_KNOBS), "backend"]) {
    fields[name] = el<HTMLInputElement | HTMLSelectElement>(name).value;
  }
  return fields;
}

function render(): void {
  const r = run;
  if (r !== null) {
    state.step = r.completed;
    state.steps = r.steps;
    state.elapsedMs = r.elapsedMs;
    if (state.status !== "failed") state.status = r.status;
    state.done = r.status === "done";
  }
  el("problems").textContent = state.problems.join("\n") +
    (state.errors.length > 0
      ? `${state.problems.length > 0 ? "\n" : ""}error: ${state.errors.at(-1)}`
      : "");
  el("backend-line").textContent = state.status === "loading"
    ? "loading the policy and the recipes…"
    : backend === null
    ? "ready: choose a recipe and the knobs, then Start"
    : `${backend.line}`;
  el("progress-line").textContent = r === null ? "" : progressText({
    completed: state.step,
    steps: state.steps,
    elapsedMs: state.elapsedMs,
    status: state.status,
  });
  const bar = el<HTMLProgressElement>("progress");
  bar.max = Math.max(1, state.steps);
  bar.value = state.step;
  const busy = state.status === "running" || state.status === "stopping" ||
    state.status === "loading";
  el<HTMLButtonElement>("start").disabled = busy || catalog === null;
  el<HTMLButtonElement>("stop").disabled = state.status !== "running";
  el<HTMLButtonElement>("resume").disabled = state.status !== "stopped";
  const downloadable = r !== null && (state.status === "stopped" || state.status === "done");
  for (const id of ["download-model", "download-metrics", "download-eval"]) {
    el<HTMLButtonElement>(id).disabled = !downloadable;
  }
  if (r !== null) {
    for (const p of plotPanels(state.records, state.evals, state.steps)) el(p.id).innerHTML = p.svg;
    const rows = beforeAfter(state.evalSamples);
    el("samples").innerHTML = samplesHtml(rows);
    const before = rows[0]?.before.step;
    const after = rows[0]?.after.step;
    el("before-head").textContent = before === undefined ? "before" : `before (step ${before})`;
    el("after-head").textContent = after === undefined ? "after" : `latest (step ${after})`;
  }
}

function saveBytes(name: string, bytes: Uint8Array | string, type: string): void {
  const blob = new Blob([bytes as BlobPart], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

async function modelZip(): Promise<{ name: string; bytes: Uint8Array }> {
  const r = run;
  if (r === null || !(r.status === "stopped" || r.status === "done")) {
    throw new Error(
      "download: stop the run (or let it finish) first; the weights change every step",
    );
  }
  const folder = `tiny-${recipeName}-step${r.completed}`;
  return { name: `${folder}.zip`, bytes: await r.modelZip(folder) };
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

globalThis.__playgroundApi = {
  modelZipBase64: async () => base64((await modelZip()).bytes),
  metricsJsonl: () => jsonl(run?.metrics ?? []),
  evalJsonl: () => jsonl(run?.evals ?? []),
};

/** Runs (or resumes) the current run until it is done or stopped. */
function drive(): void {
  const r = run!;
  const ticker = setInterval(() => {
    state.elapsedMs = r.elapsedMs;
    el("progress-line").textContent = progressText({
      completed: r.completed,
      steps: r.steps,
      elapsedMs: r.elapsedMs,
      status: r.status,
    });
  }, 500);
  driving = r.run(render)
    .then(() => {
      if (r.status === "done") {
        console.log(
          `playground: ${recipeName} done: ${r.completed} steps in ${
            formatDuration(r.elapsedMs)
          } on ${backend?.device}`,
        );
      }
    })
    .catch(report)
    .finally(() => {
      clearInterval(ticker);
      driving = null;
      render();
    });
  render();
}

async function start(): Promise<void> {
  if (driving !== null || catalog === null || files === null || workerUrl === null) return;
  const recipe = recipeOf(el<HTMLSelectElement>("recipe").value);
  const { knobs, problems } = readKnobs(formFields(), knobDefaults(recipe), recipe.groupSizes);
  state.problems = problems;
  if (problems.length > 0) return render();
  await run?.close();
  run = null;
  backend = null;
  state.status = "loading";
  state.errors = [];
  state.done = false;
  render();
  // The run lives in a worker (run_worker.ts): the page stays responsive during a step.
  const r = WorkerRun.start(workerUrl!);
  try {
    backend = await r.backend(knobs.backend);
    const overrides = [...knobOverrides(knobs, recipe.config), ...backend.overrides];
    const config = applyOverrides(recipe.config, overrides);
    recipeName = recipe.name;
    state.knobs = knobs;
    state.backend = {
      device: backend.device,
      choice: backend.choice,
      adapter: backend.adapter,
      reason: backend.reason,
      line: backend.line,
    };
    state.trainArgs = [
      "--config",
      recipe.name,
      ...setFlags(overrides).flatMap((f) => ["--set", f]),
    ];
    console.log(`playground: ${backend.line}`);
    await r.create(config, files, PLAYGROUND_CHECKPOINT);
  } catch (e) {
    await r.close();
    throw e;
  }
  run = r;
  state.records = r.metrics;
  state.evals = r.evals;
  state.evalSamples = r.evalSamples;
  drive();
}

function wire(): void {
  el("knobs").addEventListener("submit", (e) => {
    e.preventDefault();
    start().catch(report);
  });
  el("stop").addEventListener("click", () => {
    run?.stop();
    render();
  });
  el("resume").addEventListener("click", () => {
    if (run !== null && run.status === "stopped" && driving === null) drive();
  });
  el("recipe").addEventListener("change", () => {
    const recipe = recipeOf(el<HTMLSelectElement>("recipe").value);
    setForm(recipe, { ...knobDefaults(recipe), backend: formFields().backend as Knobs["backend"] });
  });
  el("download-model").addEventListener("click", () => {
    modelZip().then(({ name, bytes }) => saveBytes(name, bytes, "application/zip")).catch(report);
  });
  el("download-metrics").addEventListener("click", () => {
    saveBytes("metrics.jsonl", globalThis.__playgroundApi.metricsJsonl(), "application/jsonl");
  });
  el("download-eval").addEventListener("click", () => {
    saveBytes("eval.jsonl", globalThis.__playgroundApi.evalJsonl(), "application/jsonl");
  });
}

/** The files of `model/`, from its manifest (`files.json`, written by the build). */
async function modelFileNames(): Promise<string[]> {
  const res = await fetch("model/files.json");
  const manifest = res.ok ? await res.json() as { files?: unknown } : null;
  const names = manifest?.files;
  if (!Array.isArray(names) || !names.every((n) => typeof n === "string")) {
    throw new Error(
      `model/files.json: ${
        res.ok ? "no list of file names" : `HTTP ${res.status}`
      }; rebuild the page (deno task playground)`,
    );
  }
  return names;
}

async function load(): Promise<void> {
  wire();
  const res = await fetch("recipes.json");
  if (!res.ok) {
    throw new Error(`recipes.json: HTTP ${res.status}; rebuild the page (deno task playground)`);
  }
  catalog = checkCatalog(await res.json());
  el<HTMLSelectElement>("recipe").replaceChildren(
    ...catalog.recipes.map((r) => new Option(r.name, r.name)),
  );
  files = await fetchPolicyFiles("model/", { names: await modelFileNames() });
  const worker = await fetch("run_worker.js");
  if (!worker.ok) {
    throw new Error(
      `run_worker.js: HTTP ${worker.status}; rebuild the page (deno task playground)`,
    );
  }
  workerUrl = new URL(URL.createObjectURL(await worker.blob()));
  const params = Object.fromEntries(new URL(location.href).searchParams);
  let recipe = recipeOf(catalog.default);
  if (params.recipe !== undefined) {
    try {
      recipe = recipeOf(params.recipe);
    } catch (e) {
      state.problems.push(`recipe: ${(e as Error).message}`);
    }
  }
  const { knobs, problems } = readKnobs(params, knobDefaults(recipe), recipe.groupSizes);
  state.problems.push(...problems);
  setForm(recipe, knobs);
  state.status = "ready";
  render();
  if (params.autostart === "1" && state.problems.length === 0) await start();
}

load().catch(report);
