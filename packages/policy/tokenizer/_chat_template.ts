/**
 * Chat templates of a tokenizer: the `chat_template` field of `tokenizer_config.json` (a string,
 * or a list of `{name, template}`), selected and rendered as `transformers`'
 * `apply_chat_template(..., tokenize=False)` does (not exported from the package).
 *
 * Design: rendering uses `@huggingface/jinja`, which already applies the `trim_blocks` and
 * `lstrip_blocks` settings `transformers` uses and provides `raise_exception`, `strftime_now` and
 * a `tojson` with Python's separators, so a template renders to the same text as in Python. The
 * variables are the ones `transformers` passes: the special token strings (`bos_token`,
 * `eos_token`, `pad_token`, `unk_token`, `additional_special_tokens`), the caller's extras, then
 * `messages`, `tools` and `documents` (null when not given, as Python passes `None`) and
 * `add_generation_prompt`. Each template is parsed once, on first use, so a tokenizer whose
 * template is never rendered pays nothing and a broken template fails where it is used, naming
 * its source.
 *
 * @module
 */

import { Template } from "@huggingface/jinja";
import { isObject, show } from "./_files.ts";
import type { ApplyChatTemplateOptions, ChatMessage } from "./tokenizer.ts";

const RESERVED = ["messages", "tools", "documents", "add_generation_prompt"] as const;

/** The named chat templates of one tokenizer, parsed lazily. */
export class ChatTemplateSet {
  /** Template sources by name (`"default"` for a plain string). */
  readonly sources: ReadonlyMap<string, string>;
  /** Where the templates came from, for error messages (e.g. a config path). */
  readonly where: string;
  readonly #parsed = new Map<string, Template>();

  /**
   * Reads a `chat_template` value: a string, a list of `{name, template}` or an object of
   * name to template; undefined/null gives an empty set.
   */
  constructor(value: unknown, where: string) {
    this.where = where;
    const sources = new Map<string, string>();
    if (typeof value === "string") {
      sources.set("default", value);
    } else if (Array.isArray(value)) {
      value.forEach((entry, i) => {
        if (
          !isObject(entry) || typeof entry.name !== "string" || typeof entry.template !== "string"
        ) {
          throw new TypeError(
            `${where}: chat_template[${i}] must be {"name": string, "template": string}, got ${
              show(entry)
            }`,
          );
        }
        sources.set(entry.name, entry.template);
      });
    } else if (isObject(value)) {
      for (const [name, template] of Object.entries(value)) {
        if (typeof template !== "string") {
          throw new TypeError(
            `${where}: chat_template.${name} must be a template string, got ${show(template)}`,
          );
        }
        sources.set(name, template);
      }
    } else if (value !== undefined && value !== null) {
      throw new TypeError(
        `${where}: chat_template must be a string or a list of {"name", "template"}, got ${
          show(value)
        }`,
      );
    }
    this.sources = sources;
  }

  /** The value to write back as `chat_template` (a string when there is only `"default"`). */
  toConfigValue(): string | { name: string; template: string }[] | undefined {
    if (this.sources.size === 0) return undefined;
    const only = this.sources.get("default");
    if (this.sources.size === 1 && only !== undefined) return only;
    return [...this.sources].map(([name, template]) => ({ name, template }));
  }

  /** Picks the template as `transformers` does: by name, else `tool_use` with tools, else `default`. */
  select(owner: string, name: string | undefined, hasTools: boolean): [string, string] {
    if (this.sources.size === 0) {
      throw new Error(
        `${owner}: ${this.where} has no chat_template; add one to tokenizer_config.json (or a ` +
          `chat_template.jinja file) or render the prompt yourself`,
      );
    }
    const names = [...this.sources.keys()].map((n) => JSON.stringify(n)).join(", ");
    if (name !== undefined) {
      const source = this.sources.get(name);
      if (source === undefined) {
        throw new Error(
          `${owner}: templateName ${show(name)} is not a chat template of ${this.where}; ` +
            `it has ${names}`,
        );
      }
      return [name, source];
    }
    const picked = hasTools && this.sources.has("tool_use") ? "tool_use" : "default";
    const source = this.sources.get(picked);
    if (source === undefined) {
      throw new Error(
        `${owner}: ${this.where} has no "default" chat template; pass templateName, one of ${names}`,
      );
    }
    return [picked, source];
  }

  /** Renders `messages` with the selected template and the tokenizer's special tokens. */
  render(
    owner: string,
    messages: readonly ChatMessage[],
    options: ApplyChatTemplateOptions,
    specialTokens: Readonly<Record<string, unknown>>,
  ): string {
    checkMessages(owner, messages);
    const { tools, extra = {} } = options;
    if (tools !== undefined && (!Array.isArray(tools) || tools.some((t) => !isObject(t)))) {
      throw new TypeError(
        `${owner}: options.tools must be a list of tool description objects, got ${show(tools)}`,
      );
    }
    if (!isObject(extra)) {
      throw new TypeError(`${owner}: options.extra must be an object, got ${show(extra)}`);
    }
    for (const key of RESERVED) {
      if (key in extra) {
        throw new Error(
          `${owner}: options.extra.${key} is set by applyChatTemplate itself; pass ` +
            `${key === "add_generation_prompt" ? "addGenerationPrompt" : key} instead`,
        );
      }
    }
    const [name, source] = this.select(owner, options.templateName, (tools?.length ?? 0) > 0);
    let template = this.#parsed.get(name);
    if (template === undefined) {
      try {
        template = new Template(source);
      } catch (e) {
        throw new SyntaxError(
          `${owner}: chat template ${show(name)} of ${this.where} does not parse: ${
            (e as Error).message
          }`,
          { cause: e },
        );
      }
      this.#parsed.set(name, template);
    }
    try {
      return template.render({
        ...specialTokens,
        ...extra,
        messages,
        tools: tools ?? null,
        documents: null,
        add_generation_prompt: options.addGenerationPrompt ?? false,
      });
    } catch (e) {
      throw new Error(
        `${owner}: chat template ${show(name)} of ${this.where} failed: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }
}

function checkMessages(owner: string, messages: readonly ChatMessage[]): void {
  if (!Array.isArray(messages)) {
    throw new TypeError(`${owner}: messages must be an array, got ${show(messages)}`);
  }
  messages.forEach((m, i) => {
    if (!isObject(m) || typeof m.role !== "string") {
      throw new TypeError(
        `${owner}: messages[${i}] must be an object with a string role, got ${show(m)}`,
      );
    }
    if (typeof m.content === "string") return;
    if (!Array.isArray(m.content)) {
      throw new TypeError(
        `${owner}: messages[${i}].content must be a string or a list of parts, got ${
          show(m.content)
        }`,
      );
    }
    (m.content as unknown[]).forEach((part, j) => {
      const p = part as Record<string, unknown>;
      const ok = isObject(part) && (
        (p.type === "text" && typeof p.text === "string") ||
        (p.type === "image" && (p.image === undefined || typeof p.image === "string")) ||
        (p.type === "image_url" && isObject(p.image_url) &&
          typeof (p.image_url as Record<string, unknown>).url === "string")
      );
      if (!ok) {
        throw new TypeError(
          `${owner}: messages[${i}].content[${j}] must be {type: "text", text}, {type: "image"} ` +
            `or {type: "image_url", image_url: {url}}, got ${show(part)}`,
        );
      }
    });
  });
}
