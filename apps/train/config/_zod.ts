/**
 * Private zod helpers shared by the schemas of this package.
 *
 * Design decision: zod reports a non-number given to `z.int()` as "expected number", so an
 * integer field would tell the user to "use a number" and then reject 1.5. The integer schema
 * here carries the hint "use an integer", which `describeIssues` shows for any message that
 * starts with "use ".
 *
 * @module
 */

import { z } from "zod";

/** An integer schema whose type error says "use an integer". */
export function int(): z.ZodInt {
  return z.int({
    error: (issue) => issue.code === "invalid_type" ? "use an integer" : undefined,
  });
}
