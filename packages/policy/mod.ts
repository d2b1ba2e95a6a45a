/**
 * @module
 *
 * `@rlvr/policy`: decoder-only transformer (Llama/Qwen2 family), Hugging Face checkpoint and tokenizer loading, KV-cache generation and token log-probs, built on `@rlvr/tensor`.
 *
 * Nothing is exported yet: this package is planned in issue #7 and gets its first export
 * when that issue lands. It exists now so the workspace, its checks and its imports are fixed.
 */
