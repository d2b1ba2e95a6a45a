/**
 * @module
 *
 * `@rlvr/rewards`: verifiable rewards: math and code verifiers (code runs in a permission-less Deno subprocess), format and length shaping, procedural task generators, rubric and unsupervised rewards, and reward composition. Needs no tensor library.
 *
 * Nothing is exported yet: this package is planned in issue #4 and gets its first export
 * when that issue lands. It exists now so the workspace, its checks and its imports are fixed.
 */
