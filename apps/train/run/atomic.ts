/**
 * Atomic file replacement (temporary file beside the target, fsync, rename): `@rlvr/common`'s
 * `writeFileAtomic`, re-exported here so this package's API stays as it was; see that module
 * for the design.
 *
 * @module
 */

export { writeFileAtomic } from "@rlvr/common/fs";
