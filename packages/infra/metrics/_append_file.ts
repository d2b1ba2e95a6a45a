/**
 * The append-only line file of the file sinks (internal): `@rlvr/common`'s `AppendFile`, the
 * workspace's one JSONL / append-only file module. The sinks open it with its default
 * `torn: "repair"`: a line torn by a crash is cut when the file is reopened, so readers never
 * see a half record.
 *
 * @module
 */

export { AppendFile } from "@rlvr/common/fs";
