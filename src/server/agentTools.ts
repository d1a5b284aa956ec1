/**
 * The MCP tools for an agent loop of your own: the same names, JSON Schemas, checks and answers,
 * shaped for a chat API's function calling (OpenAI's `tools`, which most servers accept).
 */
import type { MemoryEngine } from '../engine/memoryEngine.js';
import { checkOptionNames } from '../model/options.js';
import { invalidInput } from '../model/errors.js';
import { callTool } from './mcpServer.js';
import { statusTool, TOOLS, type MemoryTool } from './tools.js';

export type MemoryToolName = (typeof TOOLS)[number]['name'] | 'memory_status';

/** A function tool as the OpenAI chat completions API takes it. */
export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface MemoryTools {
  /** Pass as `tools` to a chat completion. */
  definitions: FunctionTool[];
  /**
   * Runs one tool call of the model's: `args` as the model wrote them (a JSON string) or parsed.
   * Answers with the text to send back as the tool message; bad arguments or a failed call answer
   * with an error text the model can act on, never a throw.
   */
  call(name: string, args: string | Record<string, unknown>): Promise<string>;
}

export interface MemoryToolsOptions {
  /** Which tools to offer. Default: `build_task_context` and `search_memory` (read-only). */
  tools?: MemoryToolName[];
}

export function memoryTools(engine: MemoryEngine, options: MemoryToolsOptions = {}): MemoryTools {
  checkOptionNames('memoryTools', options, ['tools']);
  const all = new Map<string, MemoryTool>(
    [...TOOLS, statusTool({ pid: process.pid, startedAt: new Date(), endpoints: {} })].map((t) => [t.name, t]),
  );
  const names = options.tools ?? ['build_task_context', 'search_memory'];
  for (const name of names)
    if (!all.has(name))
      throw invalidInput(`memoryTools: unknown tool ${JSON.stringify(name)}; the tools are ${[...all.keys()].join(', ')}`);
  const offered = new Map(names.map((n) => [n, all.get(n)!]));
  return {
    definitions: [...offered.values()].map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    })),
    async call(name, args) {
      if (!offered.has(name)) return `error: no tool "${name}"; the tools are ${[...offered.keys()].join(', ')}`;
      let parsed: unknown = args;
      if (typeof args === 'string') {
        try {
          parsed = args.trim() === '' ? {} : JSON.parse(args);
        } catch {
          return `error: the arguments of ${name} are not JSON`;
        }
      }
      const result = await callTool(offered, engine, name, parsed);
      return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    },
  };
}
