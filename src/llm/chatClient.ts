import OpenAI from 'openai';
import { describeEndpointFailure } from '../embed/endpointFailure.js';
import { invalidInput } from '../model/errors.js';
import { checkOptionNames, optionNames } from '../model/options.js';
import { DEFAULTS } from '../config/defaults.js';

export interface LlmOptions {
  /** OpenAI-compatible base URL, e.g. `http://127.0.0.1:11434/v1` (Ollama). Default OpenAI. */
  baseURL?: string;
  /** Bearer token; local servers accept any value. Default `OPENAI_API_KEY` or "none". */
  apiKey?: string;
  /** Chat model name as the server knows it. */
  model: string;
  /** Per request, in milliseconds. Default 8 000. */
  timeoutMs?: number;
  /** Retries on connection errors, 429 and 5xx. Default 1: the filter has a time budget. */
  maxRetries?: number;
}

export const LLM_OPTIONS = optionNames<LlmOptions>()(['baseURL', 'apiKey', 'model', 'timeoutMs', 'maxRetries']);

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** A chat completion that must answer with one JSON object. */
export interface JsonChat {
  readonly model: string;
  completeJson(messages: ChatMessage[], opts: { signal?: AbortSignal; timeoutMs?: number; model?: string }): Promise<string>;
}

/** Chat completions from any OpenAI-compatible endpoint, through the `openai` client, in JSON mode. */
export function openAIChat(options: LlmOptions): JsonChat {
  checkOptionNames('openAIChat', options, LLM_OPTIONS);
  if (!options.model) throw invalidInput('llm.model is required');
  const client = new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'none',
    timeout: options.timeoutMs ?? DEFAULTS.llm.timeoutMs,
    maxRetries: options.maxRetries ?? DEFAULTS.llm.maxRetries,
  });
  return {
    model: options.model,
    async completeJson(messages, opts) {
      const model = opts.model ?? options.model;
      try {
        const response = await client.chat.completions.create(
          { model, messages, temperature: 0, response_format: { type: 'json_object' } },
          { signal: opts.signal, ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}) },
        );
        return response.choices[0]?.message?.content ?? '';
      } catch (e) {
        if (e instanceof OpenAI.APIUserAbortError || opts.signal?.aborted) throw e;
        throw new Error(describeEndpointFailure('chat', client.baseURL, model, e), { cause: e });
      }
    },
  };
}
