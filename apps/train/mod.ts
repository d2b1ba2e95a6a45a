/**
 * @module
 *
 * `@rlvr/train`: the `deno task train` application: YAML recipes, progress display, evaluation and a training report with plots.
 *
 * Nothing is exported yet: this package is planned in issue #8 and gets its first export
 * when that issue lands. It exists now so the workspace, its checks and its imports are fixed.
 */
