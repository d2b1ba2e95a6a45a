/**
 * Append-only JSON Lines files (`metrics.jsonl`, `eval.jsonl`, `samples.jsonl`): a writer that
 * hands each record to the OS as one complete line, a reader that tolerates a crash, and
 * truncation for resume. They are `@rlvr/common`'s JSONL module (the one the metrics sinks of
 * `@rlvr/infra` and the dataset reader of `@rlvr/sampling` use too), re-exported here so this
 * package's API stays as it was; see that module for the design.
 *
 * The run directory's choices: `JsonlWriter.open` refuses a file whose last line is partial
 * (`torn: "error"`, the default), because `RunDir.resume` truncates first and a fragment then
 * means a bug; non-finite numbers are never written (the records are checked first).
 *
 * @module
 */

export { type JsonlContent, parseJsonl } from "@rlvr/common";
export { JsonlWriter, type JsonlWriterOptions, readJsonl, truncateJsonl } from "@rlvr/common/fs";
