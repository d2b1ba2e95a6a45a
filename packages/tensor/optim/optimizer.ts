/**
 * The optimizer base class shared by {@link AdamW} and {@link SGD}: parameter groups, the step
 * loop, `zeroGrad`, learning-rate access and checkpointable state.
 *
 * Design: parameters are updated **in place** (same `Tensor` object, same backend buffer), as
 * `torch.optim` does, so the references a model holds stay valid and no parameter is ever
 * re-allocated. Per-parameter state (AdamW's moments, SGD's momentum buffer) is a set of tensors
 * owned by the optimizer, allocated lazily on a parameter's first update outside any `tidy`
 * scope and released by {@link Optimizer.dispose}. As in PyTorch, a parameter whose `grad` is
 * `null` is skipped by `step()` (its state and its own step counter do not advance), and
 * `state()`/`loadState()` address parameters by their position in the flattened groups, so a
 * checkpoint loads into an optimizer built over the same parameter list in the same order.
 *
 * @module
 */

import { Tensor } from "../tensor.ts";
import { noGrad, untracked } from "../runtime.ts";
import { tensor, zeros } from "../creation.ts";
import { fmtShape, sameShape } from "../shape.ts";
import { checkNumber, show } from "./_check.ts";

/** Hyperparameters every parameter group has. */
export interface BaseHyperparams {
  /** Learning rate (finite, >= 0). Schedulers rewrite it between steps. */
  lr: number;
  /** Weight-decay coefficient (finite, >= 0); its meaning depends on the optimizer. */
  weightDecay: number;
}

/**
 * A parameter group as the optimizer holds it: the parameters plus the group's hyperparameters,
 * which may be changed between steps (e.g. `opt.paramGroups[1].lr = 1e-4`), as with
 * `optimizer.param_groups` in PyTorch. They are validated again at every `step()`.
 */
export type ParamGroup<H extends BaseHyperparams> = H & {
  /** The parameters of the group (f32 leaf tensors). */
  readonly params: readonly Tensor[];
};

/** A parameter group as passed to a constructor: hyperparameters left out take the defaults. */
export type ParamGroupSpec<H extends BaseHyperparams> = Partial<H> & {
  /** The parameters of the group (f32 leaf tensors). */
  readonly params: readonly Tensor[];
};

/** What an optimizer constructor accepts: a flat parameter list (one group) or groups. */
export type OptimizerParams<H extends BaseHyperparams> =
  | readonly Tensor[]
  | readonly ParamGroupSpec<H>[];

/** Live per-parameter state: the parameter's own step count and the optimizer's buffers. */
export interface ParamState {
  /** Number of updates this parameter received (`t` in Adam's bias corrections). */
  step: number;
  /** Tensors owned by the optimizer, by name (`m`/`v` for AdamW, `momentumBuffer` for SGD). */
  readonly buffers: Map<string, Tensor>;
}

/** Values of one state buffer in a checkpoint; plain arrays are accepted when loading. */
export type StateArray = Float32Array | Float64Array | readonly number[];

/** The checkpoint form of one parameter's {@link ParamState}. */
export interface SerializedParamState {
  /** The parameter's own step count. */
  step: number;
  /** Buffer values, flat in row-major order, by buffer name. */
  buffers: Record<string, StateArray>;
}

/**
 * A serialisable optimizer checkpoint (the analogue of torch's `optimizer.state_dict()`):
 * numbers, arrays and typed arrays only. Typed arrays do not survive `JSON.stringify`; convert
 * them with `Array.from` for JSON, or store them as binary.
 */
export interface OptimizerState<H extends BaseHyperparams = BaseHyperparams> {
  /** Optimizer class that wrote it, e.g. `"AdamW"`; loading into another class fails. */
  kind: string;
  /** Number of `step()` calls. */
  stepCount: number;
  /** Hyperparameters per group, with the flat indices of the group's parameters. */
  groups: (H & { params: number[] })[];
  /** Per parameter, in flat group order: its state, or `null` when it was never updated. */
  params: (SerializedParamState | null)[];
}

/** What a subclass tells {@link Optimizer}'s constructor about itself. */
export interface OptimizerConfig<H extends BaseHyperparams> {
  /** Class name, used in error messages and in {@link OptimizerState.kind}. */
  kind: string;
  /** Full set of hyperparameters: defaults for groups that leave some out. */
  defaults: H;
  /** Throws if a group's hyperparameters are invalid; `prefix` goes before field names. */
  validate(hyper: H, prefix: string): void;
  /** Names of the per-parameter buffers the subclass allocates. */
  bufferNames: readonly string[];
}

function cloneHyper<T>(value: T): T {
  return (Array.isArray(value) ? [...value] : value) as T;
}

/**
 * Base class of the optimizers: holds parameter groups and per-parameter state, runs the step
 * loop (skipping parameters whose `grad` is `null`) and implements `zeroGrad`, `lr`,
 * `state()`/`loadState()` and `dispose()`. Subclasses implement {@link Optimizer.update}.
 *
 * @example Usage
 * ```ts
 * import { type Optimizer, SGD, tensor } from "@rlvr/tensor";
 * import assert from "node:assert/strict";
 * const w = tensor([1, 2], { requiresGrad: true });
 * const opt: Optimizer = new SGD([w], { lr: 0.5 });
 * w.grad = tensor([1, 1]);
 * opt.step();
 * opt.zeroGrad();
 * assert.equal(w.grad, null);
 * assert.equal(opt.stepCount, 1);
 * assert.deepEqual(await w.toArray(), [0.5, 1.5]);
 * ```
 */
export abstract class Optimizer<H extends BaseHyperparams = BaseHyperparams> {
  /** The parameter groups; hyperparameters may be edited between steps. */
  readonly paramGroups: ParamGroup<H>[];
  readonly #config: OptimizerConfig<H>;
  readonly #grouped: boolean;
  readonly #state = new Map<Tensor, ParamState>();
  #stepCount = 0;
  #disposed = false;

  /** Validates `params` against `config` and builds the groups. */
  protected constructor(params: OptimizerParams<H>, config: OptimizerConfig<H>) {
    const { kind, defaults } = config;
    this.#config = config;
    if (!Array.isArray(params)) {
      throw new TypeError(
        `${kind}: params must be an array of tensors or of parameter groups {params, ...}, got ${
          show(params)
        }`,
      );
    }
    const list = params as readonly (Tensor | ParamGroupSpec<H>)[];
    this.#grouped = list.length > 0 && !(list[0] instanceof Tensor);
    const specs = this.#grouped
      ? list as readonly ParamGroupSpec<H>[]
      : [{ params: list } as ParamGroupSpec<H>];
    const known = Object.keys(defaults);
    const seen = new Set<Tensor>();
    this.paramGroups = specs.map((spec, gi) => {
      const at = this.#grouped ? `paramGroups[${gi}]` : "params";
      if (
        spec instanceof Tensor || typeof spec !== "object" || spec === null ||
        !Array.isArray(spec.params)
      ) {
        throw new TypeError(
          `${kind}: ${at} must be ${
            this.#grouped ? "a group {params: Tensor[], ...}" : "a Tensor"
          }` +
            `; do not mix tensors and groups in one list`,
        );
      }
      const group = {} as Record<string, unknown>;
      for (const key of Object.keys(spec)) {
        if (key !== "params" && !known.includes(key)) {
          throw new TypeError(
            `${kind}: ${at} has an unknown option ${JSON.stringify(key)}; known options: ${
              known.join(", ")
            }`,
          );
        }
      }
      for (const key of known) {
        const given = (spec as Record<string, unknown>)[key];
        group[key] = cloneHyper(
          given !== undefined ? given : (defaults as Record<string, unknown>)[key],
        );
      }
      spec.params.forEach((p, pi) => {
        const where = this.#grouped ? `${at}.params[${pi}]` : `params[${pi}]`;
        if (!(p instanceof Tensor)) {
          throw new TypeError(`${kind}: ${where} must be a Tensor, got ${show(p)}`);
        }
        if (p.isDisposed) {
          throw new Error(`${kind}: ${where} ${p} was disposed; pass live parameters`);
        }
        if (p.dtype !== "f32") {
          throw new TypeError(
            `${kind}: ${where} has dtype ${p.dtype}; only f32 tensors can be optimized`,
          );
        }
        if (p.gradFn !== null) {
          throw new TypeError(
            `${kind}: ${where} is not a leaf (it was computed by ${p.gradFn.name}); optimize the leaf parameters themselves`,
          );
        }
        if (seen.has(p)) {
          throw new Error(
            `${kind}: ${where} appears more than once; list each parameter in one group only`,
          );
        }
        seen.add(p);
      });
      group.params = Object.freeze([...spec.params]);
      const g = group as unknown as ParamGroup<H>;
      config.validate(g, this.#prefix(gi));
      return g;
    });
    if (seen.size === 0) {
      throw new RangeError(`${kind}: got an empty parameter list; pass the model's parameters`);
    }
  }

  /**
   * Applies one update to `param` from `grad` (same shape, non-null) with the group's
   * hyperparameters. `state.step` was already incremented (it is 1 on the first update). Runs
   * under `noGrad`; must write `param` in place.
   */
  protected abstract update(
    param: Tensor,
    grad: Tensor,
    group: ParamGroup<H>,
    state: ParamState,
  ): void;

  /**
   * The state buffer `name` of a parameter, allocated on first use as zeros of the parameter's
   * shape on its backend, outside any `tidy` scope (the optimizer owns it).
   */
  protected buffer(state: ParamState, name: string, param: Tensor): Tensor {
    let t = state.buffers.get(name);
    if (t === undefined) {
      t = untracked(() => zeros(param.shape, { backend: param.backend }));
      state.buffers.set(name, t);
    }
    return t;
  }

  /** Number of completed `step()` calls. */
  get stepCount(): number {
    return this.#stepCount;
  }

  /** All parameters, flattened in group order (the order `state()` uses). */
  get params(): Tensor[] {
    return this.paramGroups.flatMap((g) => [...g.params]);
  }

  /**
   * The learning rate of the first group; assigning sets it on every group. Use
   * `paramGroups[i].lr` for one group.
   */
  get lr(): number {
    return this.paramGroups[0]!.lr;
  }

  set lr(value: number) {
    checkNumber(this.#config.kind, "lr", value, { min: 0 });
    for (const g of this.paramGroups) g.lr = value;
  }

  /**
   * Updates every parameter that has a gradient, in place. Parameters with `grad === null` are
   * skipped (torch semantics). Hyperparameters are validated first, so a bad `lr` set between
   * steps fails before anything changes.
   */
  step(): void {
    this.#assertLive("step");
    const kind = this.#config.kind;
    this.paramGroups.forEach((g, gi) => this.#config.validate(g, this.#prefix(gi)));
    noGrad(() => {
      this.paramGroups.forEach((group, gi) => {
        group.params.forEach((p, pi) => {
          const grad = p.grad;
          if (grad === null) return;
          if (grad.isDisposed || !sameShape(grad.shape, p.shape) || grad.backend !== p.backend) {
            throw new Error(
              `${kind}: paramGroups[${gi}].params[${pi}] ${p} has an unusable grad ${grad} ` +
                `(disposed, another shape or another backend); gradients must match their parameter`,
            );
          }
          let st = this.#state.get(p);
          if (st === undefined) {
            st = { step: 0, buffers: new Map() };
            this.#state.set(p, st);
          }
          st.step++;
          this.update(p, grad, group, st);
        });
      });
    });
    this.#stepCount++;
  }

  /** Disposes every parameter's gradient and sets it to `null` (torch's `set_to_none=True`). */
  zeroGrad(): void {
    for (const g of this.paramGroups) {
      for (const p of g.params) {
        p.grad?.dispose();
        p.grad = null;
      }
    }
  }

  /**
   * Reads the optimizer's state back to the host as a checkpoint (await it before the next
   * `step()`): step counts, each group's hyperparameters and every state buffer.
   */
  async state(): Promise<OptimizerState<H>> {
    this.#assertLive("state");
    let index = 0;
    const groups = this.paramGroups.map((g) => {
      const out = {} as Record<string, unknown>;
      for (const key of Object.keys(this.#config.defaults)) {
        out[key] = cloneHyper((g as unknown as Record<string, unknown>)[key]);
      }
      out.params = g.params.map(() => index++);
      return out as unknown as H & { params: number[] };
    });
    const params = await Promise.all(this.params.map(async (p) => {
      const st = this.#state.get(p);
      if (st === undefined) return null;
      const entries = await Promise.all(
        [...st.buffers].map(async ([name, t]) =>
          [name, await t.data() as Float32Array | Float64Array] as const
        ),
      );
      return { step: st.step, buffers: Object.fromEntries(entries) } as SerializedParamState;
    }));
    return { kind: this.#config.kind, stepCount: this.#stepCount, groups, params };
  }

  /**
   * Restores a checkpoint written by {@link Optimizer.state} of an optimizer of the same class
   * built over the same parameters in the same order: step counts, hyperparameters (including
   * the learning rates) and state buffers. Everything is validated before anything changes.
   */
  loadState(state: OptimizerState<H>): void {
    this.#assertLive("loadState");
    const { kind, defaults, bufferNames } = this.#config;
    const who = `${kind}.loadState`;
    if (typeof state !== "object" || state === null) {
      throw new TypeError(`${who}: state must be an object from state(), got ${show(state)}`);
    }
    if (state.kind !== kind) {
      throw new TypeError(
        `${who}: state.kind is ${
          show(state.kind)
        }, expected "${kind}"; load a checkpoint into the optimizer class that wrote it`,
      );
    }
    checkNumber(who, "state.stepCount", state.stepCount, { min: 0, integer: true });
    if (!Array.isArray(state.groups) || state.groups.length !== this.paramGroups.length) {
      throw new RangeError(
        `${who}: state.groups has ${
          Array.isArray(state.groups) ? state.groups.length : show(state.groups)
        } groups ` +
          `but this optimizer has ${this.paramGroups.length}; build it with the same parameter groups`,
      );
    }
    const hypers = state.groups.map((sg, gi) => {
      const have = this.paramGroups[gi]!.params.length;
      if (!Array.isArray(sg?.params) || sg.params.length !== have) {
        throw new RangeError(
          `${who}: state.groups[${gi}].params has ${
            Array.isArray(sg?.params) ? sg.params.length : show(sg?.params)
          } ` +
            `entries but paramGroups[${gi}] has ${have} parameters; build the optimizer over the same parameters`,
        );
      }
      const h = {} as Record<string, unknown>;
      for (const key of Object.keys(defaults)) {
        h[key] = cloneHyper((sg as unknown as Record<string, unknown>)[key]);
      }
      this.#config.validate(h as H, `state.groups[${gi}].`);
      return h;
    });
    const params = this.params;
    if (!Array.isArray(state.params) || state.params.length !== params.length) {
      throw new RangeError(
        `${who}: state.params has ${
          Array.isArray(state.params) ? state.params.length : show(state.params)
        } entries ` +
          `but this optimizer has ${params.length} parameters`,
      );
    }
    state.params.forEach((sp, i) => {
      if (sp === null) return;
      checkNumber(who, `state.params[${i}].step`, sp?.step, { min: 1, integer: true });
      if (typeof sp.buffers !== "object" || sp.buffers === null) {
        throw new TypeError(
          `${who}: state.params[${i}].buffers must be an object, got ${show(sp.buffers)}`,
        );
      }
      const p = params[i]!;
      for (const [name, values] of Object.entries(sp.buffers)) {
        if (!bufferNames.includes(name)) {
          throw new TypeError(
            `${who}: state.params[${i}].buffers has an unknown buffer ${
              JSON.stringify(name)
            }; ${kind} uses ${bufferNames.join(", ")}`,
          );
        }
        const n = (values as ArrayLike<number> | null)?.length;
        if (n !== p.size) {
          throw new RangeError(
            `${who}: state.params[${i}].buffers.${name} has ${show(n)} values but parameter ${i} ` +
              `has ${p.size} elements (shape ${
                fmtShape(p.shape)
              }); the checkpoint is for other parameters`,
          );
        }
      }
    });
    // Validated: commit.
    this.#freeState();
    state.params.forEach((sp, i) => {
      if (sp === null) return;
      const p = params[i]!;
      const buffers = new Map<string, Tensor>();
      for (const [name, values] of Object.entries(sp.buffers)) {
        buffers.set(
          name,
          untracked(() =>
            tensor(values as ArrayLike<number>, { shape: p.shape, backend: p.backend })
          ),
        );
      }
      this.#state.set(p, { step: sp.step, buffers });
    });
    hypers.forEach((h, gi) => Object.assign(this.paramGroups[gi]!, h));
    this.#stepCount = state.stepCount;
  }

  /** Frees the optimizer's state buffers; the optimizer cannot be used afterwards. */
  dispose(): void {
    this.#freeState();
    this.#disposed = true;
  }

  /** `using opt = new AdamW(...)` disposes the state at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  #freeState(): void {
    for (const st of this.#state.values()) for (const t of st.buffers.values()) t.dispose();
    this.#state.clear();
  }

  #prefix(gi: number): string {
    return this.#grouped ? `paramGroups[${gi}].` : "";
  }

  #assertLive(what: string): void {
    if (this.#disposed) {
      throw new Error(`${this.#config.kind}: ${what}() after dispose(); create a new optimizer`);
    }
  }
}
