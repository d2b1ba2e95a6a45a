/**
 * A deliberately naive reference of the sampling distribution for the tests: full sorts,
 * normalised probabilities and one stage at a time, written from the documented semantics and
 * sharing no code with `logits.ts`.
 *
 * @module
 */

/** Reference params (all fields explicit). */
export interface RefParams {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  vocabSize?: number;
  order: "hf" | "vllm";
}

function softmax(z: number[]): number[] {
  const m = Math.max(...z);
  const e = z.map((v) => (v === -Infinity ? 0 : Math.exp(v - m)));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

function topK(z: number[], k: number): number[] {
  const finite = z.filter((v) => v !== -Infinity).sort((a, b) => b - a);
  if (k <= 0 || k >= finite.length) return z;
  const thr = finite[k - 1]!;
  return z.map((v) => (v >= thr ? v : -Infinity));
}

function topP(z: number[], p: number): number[] {
  if (p >= 1) return z;
  const probs = softmax(z);
  const order = z.map((_, i) => i).filter((i) => z[i] !== -Infinity).sort((a, b) =>
    z[b]! - z[a]! || a - b
  );
  const keep = new Set<number>();
  let cum = 0;
  for (const i of order) {
    if (cum >= p) break;
    keep.add(i);
    cum += probs[i]!;
  }
  return z.map((v, i) => (keep.has(i) ? v : -Infinity));
}

function minP(z: number[], mp: number): number[] {
  if (mp <= 0) return z;
  const probs = softmax(z);
  const pmax = Math.max(...probs);
  return z.map((v, i) => (probs[i]! < mp * pmax ? -Infinity : v));
}

/** The target probabilities over the whole row (padding and removed tokens 0). */
export function referenceProbs(logits: ArrayLike<number>, p: RefParams): number[] {
  const V = p.vocabSize ?? logits.length;
  const raw = Array.from({ length: V }, (_, i) => logits[i]!);
  let out: number[];
  if (p.temperature === 0) {
    const best = raw.indexOf(Math.max(...raw));
    out = raw.map((_, i) => (i === best ? 1 : 0));
  } else {
    let z = raw.map((v) => v / p.temperature);
    const stages = p.order === "hf"
      ? [
        (x: number[]) => topK(x, p.topK),
        (x: number[]) => topP(x, p.topP),
        (x: number[]) => minP(x, p.minP),
      ]
      : [
        (x: number[]) => minP(x, p.minP),
        (x: number[]) => topK(x, p.topK),
        (x: number[]) => topP(x, p.topP),
      ];
    for (const s of stages) z = s(z);
    out = softmax(z);
  }
  return [...out, ...new Array(logits.length - V).fill(0)];
}

/** `log softmax(logits / T)` over the first V entries, naively. */
export function referenceLogSoftmax(
  logits: ArrayLike<number>,
  T: number,
  V = logits.length,
): number[] {
  const z = Array.from({ length: V }, (_, i) => logits[i]! / T);
  const m = Math.max(...z);
  const s = z.reduce((a, v) => a + Math.exp(v - m), 0);
  return z.map((v) => v - m - Math.log(s));
}
