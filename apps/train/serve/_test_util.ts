// Helpers of the server's tests (not exported from the package).

import assert from "node:assert/strict";

/**
 * Checks one response of a fuzzed request: a 400 must be an OpenAI-shaped
 * `invalid_request_error`, anything else a 200 without a server error inside (a stream's error
 * event included); counts the status in `statuses`.
 */
export async function checkFuzzResponse(
  res: Response,
  statuses: Map<number, number>,
): Promise<void> {
  const text = await res.text();
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  if (res.status === 400) {
    const e = JSON.parse(text).error;
    assert.equal(typeof e.message, "string");
    assert.equal(e.type, "invalid_request_error");
  } else {
    assert.equal(res.status, 200, text);
    assert.ok(!text.includes(`"server_error"`), text);
  }
}
