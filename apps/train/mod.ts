/**
 * @module
 *
 * `@rlvr/train`: the `deno task train` application (YAML recipes, progress display, evaluation and
 * a training report with plots). Planned in issue #8; until then `main.ts` prints its usage and
 * states that training is not available yet. Nothing is exported yet.
 */
