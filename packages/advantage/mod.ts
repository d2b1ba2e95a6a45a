/**
 * @module
 *
 * `@rlvr/advantage`: advantage estimators (GAE, GRPO, Dr.GRPO, RLOO, REINFORCE++, ReMax, OPO, pass@k ...) over plain typed arrays and masks, registered by name. Needs no tensor library.
 *
 * Nothing is exported yet: this package is planned in issue #3 and gets its first export
 * when that issue lands. It exists now so the workspace, its checks and its imports are fixed.
 */
