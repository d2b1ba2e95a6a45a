/**
 * Reverse-mode autograd: a tape of closures, as in micrograd, at tensor granularity.
 *
 * Each op that sees an input with `requiresGrad` calls {@link record}, which hangs a
 * {@link GradNode} on its output: the op's inputs, the tensors its backward needs (saved as
 * shared views, so the caller may dispose its handles) and a closure mapping the output
 * gradient to input gradients. `backward()` sorts the nodes topologically and runs the closures
 * in reverse, accumulating into `.grad` of leaves; each node's saved tensors are freed as soon as
 * it has run (PyTorch's `retain_graph=False`). Nodes are reference counted by the tensors and
 * nodes that point at them, so a graph that is never back-propagated is freed when its outputs
 * are disposed. No higher-order derivatives: backward closures run under `noGrad`.
 *
 * @module
 */

import { isGradEnabled, noGrad, tidy, untracked } from "./runtime.ts";
import { fmtShape, sameShape } from "./shape.ts";
import type { Tensor } from "./tensor.ts";
import { fullLike } from "./creation.ts";

/** Maps the gradient of an op's output to the gradients of its inputs (`null`: none). */
export type BackwardFn = (grad: Tensor, saved: readonly Tensor[]) => readonly (Tensor | null)[];

/** One recorded op of the autograd graph.  *
 * @example Usage
 * ```ts
 * import { tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const x = tensor([1, 2], { requiresGrad: true });
 * const y = x.exp();
 * assert.equal(y.gradFn?.name, "exp");
 * assert.equal(y.gradFn?.inputs[0], x);
 * ```
 */
export class GradNode {
  /** The op that produced the output, for error messages and debugging. */
  readonly name: string;
  /** The op's inputs, in the order the backward closure returns their gradients. */
  readonly inputs: readonly Tensor[];
  /** The nodes that produced the inputs (null for leaves), fixed when recorded. */
  readonly parents: readonly (GradNode | null)[];
  #saved: Tensor[] | null;
  #fn: BackwardFn;
  #refs = 1;

  /** Records `name`; `saved` must already be views owned by the node. */
  constructor(name: string, inputs: readonly Tensor[], saved: Tensor[], fn: BackwardFn) {
    this.name = name;
    this.inputs = inputs;
    this.#saved = saved;
    this.#fn = fn;
    // Snapshot the parents: a caller may dispose an intermediate input, which drops its
    // gradFn, while this node still needs to back-propagate through it.
    this.parents = inputs.map((x) => x.gradFn);
    for (const p of this.parents) p?.retain();
  }

  /** Adds a reference (a tensor or a child node points here). */
  retain(): void {
    this.#refs++;
  }

  /** Drops a reference; the last one frees the saved tensors and releases the parents. */
  release(): void {
    if (--this.#refs > 0) return;
    this.#freeSaved();
    for (const p of this.parents) p?.release();
  }

  /** Runs the backward closure once; the saved tensors are freed afterwards. */
  apply(grad: Tensor): readonly (Tensor | null)[] {
    if (this.#saved === null) {
      throw new Error(
        `backward: the graph through ${this.name} was already freed by an earlier backward(); compute the forward pass again`,
      );
    }
    const grads = this.#fn(grad, this.#saved);
    this.#freeSaved();
    return grads;
  }

  #freeSaved(): void {
    for (const t of this.#saved ?? []) t.dispose();
    this.#saved = null;
  }
}

/**
 * Attaches a backward closure to `out` when grad mode is on and an input requires grad;
 * otherwise does nothing. Returns `out`. Called by every differentiable op.
 */
export function record(
  name: string,
  out: Tensor,
  inputs: readonly Tensor[],
  saved: readonly Tensor[],
  fn: BackwardFn,
): Tensor {
  if (!isGradEnabled() || !inputs.some((x) => x.requiresGrad)) return out;
  const views = untracked(() => saved.map((t) => t.share()));
  out.requiresGrad = true;
  out.gradFn = new GradNode(name, inputs, views, fn);
  return out;
}

function topoOrder(root: GradNode): GradNode[] {
  const order: GradNode[] = [];
  const seen = new Set<GradNode>();
  const stack: [GradNode, number][] = [[root, 0]];
  seen.add(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const [node, i] = top;
    if (i < node.parents.length) {
      top[1]++;
      const parent = node.parents[i]!;
      if (parent !== null && !seen.has(parent)) {
        seen.add(parent);
        stack.push([parent, 0]);
      }
    } else {
      order.push(node);
      stack.pop();
    }
  }
  return order.reverse();
}

/**
 * `into + g`, disposing both. When `into` is an f32 gradient nothing else views, `g` is added into
 * its buffer in place (the `accumulate` kernel: the same f32 sums as `add`), so the step does not
 * allocate a third buffer: for a tied embedding that is the size of the whole vocabulary table,
 * whose fresh pages cost more than the additions.
 */
function accumulate(into: Tensor | undefined | null, g: Tensor): Tensor {
  if (into === undefined || into === null) return g;
  if (
    into.dtype === "f32" && g.dtype === "f32" && !into.isShared && into.backend === g.backend &&
    into.buffer !== g.buffer
  ) {
    into.backend.run("accumulate", [g.buffer], [into.buffer], { n: into.size });
    g.dispose();
    return into;
  }
  const sum = into.add(g);
  into.dispose();
  g.dispose();
  return sum;
}

/** Back-propagates from `root` (see `Tensor.backward`). */
export function backward(root: Tensor, gradient?: Tensor): void {
  if (!root.requiresGrad) {
    throw new Error(
      `backward: ${root} does not require grad; set requiresGrad on the leaves before computing it, outside noGrad()`,
    );
  }
  if (gradient === undefined && root.size !== 1) {
    throw new RangeError(
      `backward: a gradient is needed for a non-scalar output of shape ${
        fmtShape(root.shape)
      }; pass one of the same shape`,
    );
  }
  if (gradient !== undefined && !sameShape(gradient.shape, root.shape)) {
    throw new RangeError(
      `backward: gradient of shape ${fmtShape(gradient.shape)} does not match output ${
        fmtShape(root.shape)
      }`,
    );
  }
  untracked(() =>
    noGrad(() => {
      const seed = gradient !== undefined ? gradient.share() : fullLike(root, 1);
      if (root.gradFn === null) {
        root.grad = accumulate(root.grad, seed);
        return;
      }
      const grads = new Map<GradNode, Tensor>([[root.gradFn, seed]]);
      for (const node of topoOrder(root.gradFn)) {
        const g = grads.get(node);
        if (g === undefined) continue;
        grads.delete(node);
        const inputGrads = tidy(() => node.apply(g));
        g.dispose();
        node.inputs.forEach((x, i) => {
          const gi = inputGrads[i] ?? null;
          if (gi === null) return;
          const parent = node.parents[i]!;
          if (!x.requiresGrad || (parent === null && x.isDisposed)) {
            gi.dispose();
            return;
          }
          if (!sameShape(gi.shape, x.shape)) {
            throw new Error(
              `backward: ${node.name} produced a gradient of shape ${
                fmtShape(gi.shape)
              } for an input of shape ${fmtShape(x.shape)}`,
            );
          }
          if (parent !== null) grads.set(parent, accumulate(grads.get(parent), gi));
          else x.grad = accumulate(x.grad, gi);
        });
      }
    })
  );
}
