/**
 * Prompt templates: plain `{{field}}` templates and chat templates.
 *
 * Design: a plain template substitutes `{{ path }}` (dotted paths, whitespace allowed) with the
 * row's value: strings as they are, numbers, booleans and bigints by `String`, anything else as
 * JSON. A missing field is a `FieldError` naming the field, the template and the available
 * keys: a prompt is never silently rendered with a hole. There is no escape for a literal `{{`. Chat templates are the Jinja strings
 * shipped in Hugging Face `tokenizer_config.json` (`chat_template`), rendered with
 * `@huggingface/jinja` with the variables `transformers`' `apply_chat_template` passes:
 * `messages`, `add_generation_prompt`, `bos_token`, `eos_token` and any extra ones (e.g. `tools`,
 * `enable_thinking`). {@link toMessages} turns a row into chat messages: a prompt that already is
 * a message list (veRL's parquet layout) is used as it is (after checking it), a string prompt
 * becomes one user message, optionally after a system message, and a `user` template can build
 * the user message from any fields.
 *
 * @module
 */

import { Template } from "@huggingface/jinja";
import { show } from "../_args.ts";
import { getPath } from "./fields.ts";

const FIELD = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/**
 * The field paths a plain template uses, in order of first use.
 *
 * @example Usage
 * ```ts
 * import { templateFields } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual(templateFields("{{ question }} ({{meta.level}}) {{question}}"), ["question", "meta.level"]);
 * ```
 */
export function templateFields(template: string): string[] {
  if (typeof template !== "string") {
    throw new TypeError(`templateFields: template must be a string, got ${show(template)}`);
  }
  return [...new Set([...template.matchAll(FIELD)].map((m) => m[1]!))];
}

function format(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  return JSON.stringify(value, (_k, v) => typeof v === "bigint" ? v.toString() : v);
}

/**
 * Renders a plain `{{field}}` template against a row; a missing field throws a `FieldError`.
 *
 * @example Usage
 * ```ts
 * import { renderTemplate } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const row = { question: "What is 6·7?", meta: { level: 1 } };
 * assert.equal(
 *   renderTemplate("Level {{meta.level}}: {{ question }} Put the answer in \\boxed{}.", row),
 *   "Level 1: What is 6·7? Put the answer in \\boxed{}.",
 * );
 * assert.throws(() => renderTemplate("{{problem}}", row), /"problem".*available: "question", "meta"/);
 * ```
 */
export function renderTemplate(template: string, row: unknown): string {
  templateFields(template); // validates the type
  const where = `renderTemplate(${show(template)})`;
  return template.replace(FIELD, (_m, path: string) => format(getPath(row, path, where)));
}

/** One chat message. */
export interface ChatMessage {
  /** `"system"`, `"user"`, `"assistant"` or `"tool"`. */
  role: string;
  /** The text. */
  content: string;
  /** Extra fields (e.g. `tool_calls`) are passed to the template as they are. */
  [key: string]: unknown;
}

/** Options of {@link toMessages}. */
export interface MessageOptions {
  /** A system message put first (unless the prompt already is a message list). */
  system?: string;
  /** A plain template for the user message (default: the prompt itself, which must be a string). */
  user?: string;
  /** Path of the prompt in the row (default `"prompt"`), when `user` is not given. */
  prompt?: string;
}

function checkMessages(owner: string, value: unknown): ChatMessage[] {
  if (!Array.isArray(value)) {
    throw new TypeError(`${owner}: messages must be an array, got ${show(value)}`);
  }
  return value.map((m, i) => {
    if (m === null || typeof m !== "object" || typeof m.role !== "string") {
      throw new TypeError(
        `${owner}: messages[${i}] must be an object with a string role, got ${show(m)}`,
      );
    }
    if (typeof m.content !== "string") {
      throw new TypeError(
        `${owner}: messages[${i}].content must be a string, got ${show(m.content)}`,
      );
    }
    return { ...m } as ChatMessage;
  });
}

/**
 * Chat messages for a row: the prompt field if it already is a message list, else an optional
 * system message and one user message (the `user` template rendered, or the prompt string).
 *
 * @example Usage
 * ```ts
 * import { toMessages } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * assert.deepEqual(toMessages({ question: "2+2?" }, { system: "Be brief.", user: "Q: {{question}}" }), [
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: "Q: 2+2?" },
 * ]);
 * const verl = { prompt: [{ role: "user", content: "hi" }] };
 * assert.deepEqual(toMessages(verl), [{ role: "user", content: "hi" }]);
 * ```
 */
export function toMessages(row: unknown, options: MessageOptions = {}): ChatMessage[] {
  const owner = "toMessages";
  if (options.user !== undefined) {
    const out: ChatMessage[] = [];
    if (options.system !== undefined) out.push({ role: "system", content: options.system });
    out.push({ role: "user", content: renderTemplate(options.user, row) });
    return out;
  }
  const prompt = getPath(row, options.prompt ?? "prompt", owner);
  if (Array.isArray(prompt)) return checkMessages(owner, prompt);
  if (typeof prompt !== "string") {
    throw new TypeError(
      `${owner}: the prompt must be a string or a message list, got ${
        show(prompt)
      }; pass options.user to build it from fields`,
    );
  }
  const out: ChatMessage[] = [];
  if (options.system !== undefined) out.push({ role: "system", content: options.system });
  out.push({ role: "user", content: prompt });
  return out;
}

/** Options of {@link ChatTemplate}. */
export interface ChatTemplateOptions {
  /** `bos_token` (default `""`). */
  bosToken?: string;
  /** `eos_token` (default `""`). */
  eosToken?: string;
}

/** Options of {@link ChatTemplate.render}. */
export interface ChatRenderOptions {
  /** Append the assistant turn's opening (default true, for generation). */
  addGenerationPrompt?: boolean;
  /** More template variables (e.g. `tools`, `enable_thinking`). */
  variables?: Record<string, unknown>;
}

/**
 * A Hugging Face chat template (Jinja), parsed once and rendered many times.
 *
 * @example Usage
 * ```ts
 * import { ChatTemplate } from "@rlvr/sampling";
 * import assert from "node:assert/strict";
 * const chatml = new ChatTemplate(
 *   "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}" +
 *     "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
 * );
 * assert.equal(
 *   chatml.render([{ role: "user", content: "2+2?" }]),
 *   "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n",
 * );
 * assert.equal(
 *   chatml.render([{ role: "user", content: "2+2?" }], { addGenerationPrompt: false }),
 *   "<|im_start|>user\n2+2?<|im_end|>\n",
 * );
 * ```
 */
export class ChatTemplate {
  /** The Jinja source. */
  readonly source: string;
  /** The `bos_token` variable. */
  readonly bosToken: string;
  /** The `eos_token` variable. */
  readonly eosToken: string;
  #template: Template;

  /** Parses `source`; a syntax error is thrown here, naming the template's start. */
  constructor(source: string, options: ChatTemplateOptions = {}) {
    if (typeof source !== "string" || source.trim() === "") {
      throw new TypeError(
        `ChatTemplate: source must be a non-empty Jinja string, got ${show(source)}`,
      );
    }
    try {
      this.#template = new Template(source);
    } catch (e) {
      throw new SyntaxError(
        `ChatTemplate: cannot parse the template ${show(source)}: ${(e as Error).message}`,
        { cause: e },
      );
    }
    this.source = source;
    this.bosToken = options.bosToken ?? "";
    this.eosToken = options.eosToken ?? "";
  }

  /** Renders messages as `apply_chat_template(..., tokenize=False)` would. */
  render(messages: readonly ChatMessage[], options: ChatRenderOptions = {}): string {
    const checked = checkMessages("ChatTemplate.render", messages);
    return this.#template.render({
      bos_token: this.bosToken,
      eos_token: this.eosToken,
      ...options.variables,
      messages: checked,
      add_generation_prompt: options.addGenerationPrompt ?? true,
    });
  }
}
