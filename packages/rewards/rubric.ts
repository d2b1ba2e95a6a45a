/**
 * Rubric rewards: a weighted checklist of verifiable criteria (RaR, Rubric Anchors, RuscaRL),
 * rubrics stored per row, and a citation-aware rubric in the spirit of CaRR.
 *
 * Design: each criterion yields a satisfaction in [0, 1] (a regular expression or a substring
 * matched against the completion, a predicate returning a boolean or a number, or a reward whose
 * value is clamped into [0, 1]) and the rubric scores the weighted fraction satisfied,
 * `Σ w_k s_k / Σ w_k`. A criterion that returns `null` does not apply and leaves both sums; when
 * none applies the rubric is `null`. Weights are positive. Criteria are checked here, by rules;
 * an LLM-judged criterion is a criterion whose check is a `judgeReward`.
 *
 * The citation rubric (`citationRubric`) is a rule-based reading of CaRR's single-hop citation
 * rubrics: the row lists `claims` and the `sources` the model was given; a claim counts only
 * when a sentence of the completion states it **and** cites, in the same sentence, a source id
 * present in the row's sources (and, when the claim lists its supporting sources, one of
 * those). Citing an id that is not among the sources earns nothing and can be penalised.
 *
 * @module
 */

import { checkName, checkNumber, checkOptions, show } from "./_check.ts";
import { checkReward } from "./_evaluate.ts";
import { defineReward } from "./define.ts";
import type { Reward, RewardContext, RewardInput, RewardValue, Row } from "./types.ts";

/** What a criterion checks: a pattern, a substring (case-insensitive), a predicate or a reward. */
export type CriterionCheck<R extends Row = Row> =
  | RegExp
  | string
  | Reward<R>
  | ((
    input: RewardInput<R>,
    ctx: RewardContext,
  ) => boolean | number | null | Promise<boolean | number | null>);

/** One rubric item. */
export interface Criterion<R extends Row = Row> {
  /** The check. */
  check: CriterionCheck<R>;
  /** Weight (finite, > 0; default 1). */
  weight?: number;
  /** A label for error messages. */
  name?: string;
}

function matchText(check: RegExp | string, text: string): boolean {
  if (typeof check === "string") return text.toLowerCase().includes(check.toLowerCase());
  check.lastIndex = 0;
  const hit = check.test(text);
  check.lastIndex = 0;
  return hit;
}

async function satisfaction<R extends Row>(
  c: Criterion<R>,
  input: RewardInput<R>,
  ctx: RewardContext,
): Promise<number | null> {
  const check = c.check;
  if (typeof check === "string" || check instanceof RegExp) {
    return matchText(check, input.completion) ? 1 : 0;
  }
  let v: unknown;
  if (typeof check === "function") v = await check(input, ctx);
  else if (typeof check.score === "function") v = await check.score(input, ctx);
  else v = (await check.scoreBatch!([input], ctx))[0];
  if (v === null) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" && Number.isFinite(v)) return Math.min(1, Math.max(0, v));
  throw new TypeError(
    `criterion ${c.name ? `"${c.name}" ` : ""}returned ${
      show(v)
    }; a criterion must return a boolean, a finite number or null`,
  );
}

function checkCriteria<R extends Row>(
  owner: string,
  field: string,
  criteria: unknown,
): Criterion<R>[] {
  if (!Array.isArray(criteria) || criteria.length === 0) {
    throw new TypeError(
      `${owner}: ${field} must be a non-empty array of {check, weight?}, got ${show(criteria)}`,
    );
  }
  return criteria.map((c: unknown, k) => {
    const item = c as Criterion<R>;
    if (typeof c !== "object" || c === null || item.check === undefined) {
      throw new TypeError(
        `${owner}: ${field}[${k}] must be {check, weight?} (check: RegExp, string, predicate or reward), got ${
          show(c)
        }`,
      );
    }
    const check = item.check;
    if (
      !(typeof check === "string" || check instanceof RegExp || typeof check === "function")
    ) checkReward(owner, `${field}[${k}].check`, check);
    checkNumber(owner, `${field}[${k}].weight`, item.weight ?? 1, { min: 0, minExclusive: true });
    return item;
  });
}

async function weightedFraction<R extends Row>(
  criteria: readonly Criterion<R>[],
  input: RewardInput<R>,
  ctx: RewardContext,
): Promise<RewardValue> {
  const scores = await Promise.all(criteria.map((c) => satisfaction(c, input, ctx)));
  let num = 0, den = 0;
  scores.forEach((s, k) => {
    if (s === null) return;
    const w = criteria[k]!.weight ?? 1;
    num += w * s;
    den += w;
  });
  return den === 0 ? null : num / den;
}

/** Options of {@link rubricReward}. */
export interface RubricOptions {
  /** Metric key (default `"rubric"`). */
  name?: string;
}

/**
 * A rubric reward: the weighted fraction of criteria satisfied (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { rubricReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const rubric = rubricReward([
 *   { check: /\bphotosynthesis\b/i, weight: 2 },
 *   { check: "chlorophyll" },
 *   { check: ({ completion }) => completion.length < 200 },
 * ]);
 * const r = await scoreRewards([rubric], [
 *   { prompt: "", completion: "Photosynthesis needs light.", row: {} },
 * ]);
 * assert.equal(r.totals[0], 3 / 4); // (2 + 0 + 1) / (2 + 1 + 1)
 * ```
 */
export function rubricReward<R extends Row = Row>(
  criteria: readonly Criterion<R>[],
  options?: RubricOptions,
): Reward<R> {
  const owner = "rubricReward";
  const opts = checkOptions<RubricOptions>(owner, options, "{name?}");
  const list = checkCriteria<R>(owner, "criteria", criteria);
  const name = checkName(owner, "options.name", opts.name ?? "rubric");
  return defineReward<R>(name, (input, ctx) => weightedFraction(list, input, ctx));
}

/** A rubric item stored in a dataset row (JSON). */
export interface RowCriterion {
  /** A regular expression the completion must match. */
  pattern?: string;
  /** Flags of `pattern` (default `"i"`). */
  flags?: string;
  /** A substring the completion must contain (case-insensitive). */
  includes?: string;
  /** A substring the completion must not contain (case-insensitive). */
  excludes?: string;
  /** Weight (> 0; default 1). */
  weight?: number;
}

/** Options of {@link rowRubricReward}. */
export interface RowRubricOptions {
  /** Row field holding the criteria (default `"rubric"`). */
  field?: string;
  /** Metric key (default `"row_rubric"`). */
  name?: string;
}

/**
 * A rubric read from each row (`row.rubric`: an array of {@link RowCriterion}, one of
 * `pattern`, `includes`, `excludes` each), scored as the weighted fraction satisfied. A row
 * without the field gets `null` (not applicable); a malformed item is an error naming its index.
 *
 * @example Usage
 * ```ts
 * import { rowRubricReward, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = {
 *   rubric: [
 *     { includes: "Paris", weight: 3 },
 *     { pattern: "\\b1789\\b" },
 *     { excludes: "London" },
 *   ],
 * };
 * const r = await scoreRewards([rowRubricReward()], [
 *   { prompt: "", completion: "Paris, in 1789.", row },
 *   { prompt: "", completion: "London.", row },
 *   { prompt: "", completion: "Paris.", row: {} },
 * ]);
 * assert.deepEqual(r.totals, [1, 0, 0]);
 * assert.equal(r.outcomes.row_rubric![2]!.status, "null");
 * ```
 */
export function rowRubricReward<R extends Row = Row>(options?: RowRubricOptions): Reward<R> {
  const owner = "rowRubricReward";
  const opts = checkOptions<RowRubricOptions>(owner, options, "{field?, name?}");
  const field = checkName(owner, "options.field", opts.field ?? "rubric");
  const name = checkName(owner, "options.name", opts.name ?? "row_rubric");
  return defineReward<R>(name, (input, ctx) => {
    const items = input.row[field];
    if (items === undefined) return null;
    if (!Array.isArray(items)) {
      throw new TypeError(
        `${owner}: row.${field} must be an array of criteria, got ${show(items)}`,
      );
    }
    const criteria: Criterion<R>[] = items.map((it: RowCriterion, k) => {
      const where = `row.${field}[${k}]`;
      const kinds = ["pattern", "includes", "excludes"].filter((f) =>
        typeof (it as Record<string, unknown>)?.[f] === "string"
      );
      if (typeof it !== "object" || it === null || kinds.length !== 1) {
        throw new TypeError(
          `${owner}: ${where} must have exactly one of pattern, includes, excludes (strings), got ${
            show(it)
          }`,
        );
      }
      const weight = checkNumber(owner, `${where}.weight`, it.weight ?? 1, {
        min: 0,
        minExclusive: true,
      });
      if (it.pattern !== undefined) {
        let re: RegExp;
        try {
          re = new RegExp(it.pattern, (it.flags ?? "i").replace("g", ""));
        } catch (e) {
          throw new SyntaxError(
            `${owner}: ${where}.pattern ${show(it.pattern)} is not a valid regular expression (${
              (e as Error).message
            }); fix the pattern in the data`,
          );
        }
        return { check: re, weight };
      }
      if (it.includes !== undefined) return { check: it.includes, weight };
      const banned = it.excludes!;
      return { check: ({ completion }) => !matchText(banned, completion), weight };
    });
    return weightedFraction(criteria, input, ctx);
  });
}

/** A claim of a {@link citationRubric} row. */
export interface ClaimCriterion {
  /** Text the sentence must contain (case-insensitive), or use `pattern`. */
  claim?: string;
  /** A regular expression the sentence must match (flags `i`). */
  pattern?: string;
  /** Weight (> 0; default 1). */
  weight?: number;
  /** Source ids that support the claim; when given, the citation must be one of them. */
  sources?: string[];
}

/** Options of {@link citationRubric}. */
export interface CitationRubricOptions {
  /** Row field with the claims (default `"claims"`). */
  claimsField?: string;
  /** Row field with the sources: ids (strings or numbers), or objects with an `id` (default `"sources"`). */
  sourcesField?: string;
  /**
   * Citation marker; group 1 holds one or more ids separated by commas or semicolons
   * (default `/\[([^\[\]]+)\]/g`, i.e. `[S1]` or `[S1, S2]`).
   */
  citation?: RegExp;
  /** Subtracted per distinct cited id that is not among the sources (>= 0; default 0). */
  unknownCitationPenalty?: number;
  /** Metric key (default `"citation_rubric"`). */
  name?: string;
}

/** Splits text into sentences (on `.`, `!`, `?` followed by space, and on line breaks). */
function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).filter((s) => s.trim() !== "");
}

function citedIds(sentence: string, marker: RegExp): string[] {
  const re = new RegExp(
    marker.source,
    marker.flags.includes("g") ? marker.flags : marker.flags + "g",
  );
  const ids: string[] = [];
  for (const m of sentence.matchAll(re)) {
    for (const id of (m[1] ?? "").split(/[,;]/)) if (id.trim() !== "") ids.push(id.trim());
  }
  return ids;
}

/**
 * A citation-aware rubric (CaRR-style, see the module doc): the weighted fraction of the row's
 * claims that the completion both states and cites, in the same sentence, with a source id
 * present in the row's sources; minus `unknownCitationPenalty` per distinct cited id that is not
 * a source. `null` for rows without claims; a row with claims but no sources field is an error.
 *
 * @example Usage
 * ```ts
 * import { citationRubric, scoreRewards } from "@rlvr/rewards";
 * import assert from "node:assert/strict";
 * const row = {
 *   sources: [{ id: "S1" }, { id: "S2" }],
 *   claims: [{ claim: "born in 1879", sources: ["S1"] }, { claim: "Nobel Prize", weight: 2 }],
 * };
 * const rubric = citationRubric({ unknownCitationPenalty: 0.5 });
 * const r = await scoreRewards([rubric], [
 *   { prompt: "", completion: "Einstein was born in 1879 [S1]. He won the Nobel Prize [S2].", row },
 *   { prompt: "", completion: "Einstein was born in 1879. He won the Nobel Prize [S2].", row },
 *   { prompt: "", completion: "He won the Nobel Prize [S9].", row },
 * ]);
 * assert.deepEqual(r.totals, [1, 2 / 3, -0.5]);
 * ```
 */
export function citationRubric<R extends Row = Row>(options?: CitationRubricOptions): Reward<R> {
  const owner = "citationRubric";
  const opts = checkOptions<CitationRubricOptions>(
    owner,
    options,
    "{claimsField?, sourcesField?, citation?, unknownCitationPenalty?, name?}",
  );
  const claimsField = checkName(owner, "options.claimsField", opts.claimsField ?? "claims");
  const sourcesField = checkName(owner, "options.sourcesField", opts.sourcesField ?? "sources");
  const marker = opts.citation ?? /\[([^\[\]]+)\]/g;
  if (!(marker instanceof RegExp)) {
    throw new TypeError(
      `${owner}: options.citation must be a RegExp whose group 1 holds the ids, got ${
        show(marker)
      }`,
    );
  }
  const penalty = checkNumber(
    owner,
    "options.unknownCitationPenalty",
    opts.unknownCitationPenalty ?? 0,
    {
      min: 0,
    },
  );
  const name = checkName(owner, "options.name", opts.name ?? "citation_rubric");
  return defineReward<R>(name, ({ completion, row }) => {
    const claims = row[claimsField];
    if (claims === undefined || (Array.isArray(claims) && claims.length === 0)) return null;
    if (!Array.isArray(claims)) {
      throw new TypeError(
        `${owner}: row.${claimsField} must be an array of claims, got ${show(claims)}`,
      );
    }
    const rawSources = row[sourcesField];
    if (!Array.isArray(rawSources)) {
      throw new TypeError(
        `${owner}: row.${sourcesField} must be an array of source ids or {id} objects, got ${
          show(rawSources)
        }; add the sources the model was shown to the row`,
      );
    }
    const known = new Set(rawSources.map((s: unknown, k) => {
      const id = typeof s === "string" || typeof s === "number" ? s : (s as { id?: unknown })?.id;
      if (typeof id !== "string" && typeof id !== "number") {
        throw new TypeError(`${owner}: row.${sourcesField}[${k}] has no id, got ${show(s)}`);
      }
      return String(id);
    }));
    const parts = sentences(completion).map((s) => ({ text: s, ids: citedIds(s, marker) }));
    let num = 0, den = 0;
    claims.forEach((c: ClaimCriterion, k) => {
      const where = `row.${claimsField}[${k}]`;
      if (
        typeof c !== "object" || c === null ||
        (typeof c.claim !== "string" && typeof c.pattern !== "string")
      ) {
        throw new TypeError(
          `${owner}: ${where} must have a claim or a pattern (string), got ${show(c)}`,
        );
      }
      const w = checkNumber(owner, `${where}.weight`, c.weight ?? 1, {
        min: 0,
        minExclusive: true,
      });
      const test: RegExp | string = typeof c.pattern === "string"
        ? new RegExp(c.pattern, "i")
        : c.claim!;
      const allowed = Array.isArray(c.sources) ? new Set(c.sources.map(String)) : null;
      const ok = parts.some((p) =>
        matchText(test, p.text) &&
        p.ids.some((id) => known.has(id) && (allowed === null || allowed.has(id)))
      );
      den += w;
      if (ok) num += w;
    });
    const unknown = new Set(parts.flatMap((p) => p.ids).filter((id) => !known.has(id)));
    return num / den - penalty * unknown.size + 0;
  });
}
