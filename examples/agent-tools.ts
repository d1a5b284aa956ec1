/**
 * An agent loop of your own that reads project memory through tool calls: the model is offered
 * memcore's `build_task_context` and `search_memory` (the MCP server's tools, with the same JSON
 * Schemas) and decides when to call them.
 *
 *   MEMCORE_LLM_BASE_URL=http://127.0.0.1:11434/v1 MEMCORE_LLM_MODEL=qwen2.5:7b \
 *     npx tsx examples/agent-tools.ts "add retries to the refresh endpoint"
 *
 * Any OpenAI-compatible server with tool calling works (Ollama, vLLM, OpenAI). The memory is the
 * example file, ingested into a temporary folder, unless MEMCORE_DB names one of yours.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { memoryTools, openMemory, type MemoryEngine } from '../src/index.js';

export interface AgentRun {
  answer: string;
  /** The tool calls the model made, in order. */
  calls: { name: string; args: string }[];
}

/** Runs the model until it answers without asking for a tool (at most `maxTurns` rounds). */
export async function runAgent(
  task: string,
  options: { memory: MemoryEngine; client: OpenAI; model: string; maxTurns?: number },
): Promise<AgentRun> {
  const tools = memoryTools(options.memory);
  const messages: ChatCompletionMessageParam[] = [
    {
      role: 'system',
      content:
        'You are a coding agent. Before you plan, read the project memory with build_task_context; search it for anything more you need.',
    },
    { role: 'user', content: task },
  ];
  const calls: AgentRun['calls'] = [];
  for (let turn = 0; turn < (options.maxTurns ?? 6); turn++) {
    const response = await options.client.chat.completions.create({ model: options.model, messages, tools: tools.definitions });
    const message = response.choices[0]!.message;
    const toolCalls = (message.tool_calls ?? []).filter((c) => c.type === 'function');
    if (toolCalls.length === 0) return { answer: message.content ?? '', calls };
    messages.push({ role: 'assistant', content: message.content ?? null, tool_calls: toolCalls });
    for (const call of toolCalls) {
      calls.push({ name: call.function.name, args: call.function.arguments });
      messages.push({ role: 'tool', tool_call_id: call.id, content: await tools.call(call.function.name, call.function.arguments) });
    }
  }
  throw new Error(`the model was still calling tools after ${options.maxTurns ?? 6} turns`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const task = process.argv[2] ?? 'add automatic retries to the refresh-token endpoint';
  const model = process.env.MEMCORE_LLM_MODEL;
  if (!model) {
    console.error(
      'set MEMCORE_LLM_MODEL (and MEMCORE_LLM_BASE_URL for a local server), e.g. MEMCORE_LLM_BASE_URL=http://127.0.0.1:11434/v1 MEMCORE_LLM_MODEL=qwen2.5:7b',
    );
    process.exit(2);
  }
  const temp = process.env.MEMCORE_DB ? undefined : await mkdtemp(join(tmpdir(), 'memcore-agent-'));
  const memory = await openMemory({ path: process.env.MEMCORE_DB ?? temp! });
  try {
    if (temp) await memory.ingest(fileURLToPath(new URL('memory/orders-api.yaml', import.meta.url)));
    const client = new OpenAI({
      baseURL: process.env.MEMCORE_LLM_BASE_URL,
      apiKey: process.env.MEMCORE_LLM_API_KEY ?? process.env.OPENAI_API_KEY ?? 'none',
    });
    const run = await runAgent(task, { memory, client, model });
    for (const call of run.calls) console.error(`tool: ${call.name} ${call.args}`);
    console.log(run.answer);
  } finally {
    await memory.close();
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}
