/**
 * examples/agent-tools.ts against a real HTTP server speaking the OpenAI chat API, scripted to
 * call memcore's tools the way a model would; the stores and the tools behind them are real.
 */
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../examples/agent-tools.js';
import { memoryTools, openMemory, type MemoryEngine } from '../src/index.js';
import { startFakeOpenAI, type FakeOpenAI } from './openaiServer.js';
import { EXAMPLE_FILE, tempDirForFile, wordHashEmbedder } from './helpers.js';

let chat: FakeOpenAI;
let memory: MemoryEngine;
beforeAll(async () => {
  chat = await startFakeOpenAI(8);
  memory = await openMemory({ path: await tempDirForFile(), embedder: wordHashEmbedder(), env: {} });
  await memory.ingest(EXAMPLE_FILE);
});
afterAll(async () => {
  await memory.close();
  await chat.close();
});

function reply(res: ServerResponse, message: Record<string, unknown>): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'fake',
      choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    }),
  );
}
const toolCall = (id: string, name: string, args: unknown) => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

describe('an agent loop over the openai client with memcore tools', () => {
  it('offers the tools, runs the calls the model makes, and sends back what memory holds', async () => {
    const script = [
      { content: null, tool_calls: [toolCall('1', 'build_task_context', { task: 'add retries to the refresh endpoint', max_entries: 5 })] },
      {
        content: null,
        tool_calls: [
          toolCall('2', 'search_memory', { query: 'two tabs refresh', mode: 'keyword', limit: 2 }),
          toolCall('3', 'search_memory', { query: 7 }),
        ],
      },
      { content: 'Plan: keep rotation, allow the 10 s grace window, then add retries.' },
    ];
    chat.respond = (_body, n, res) => reply(res, script[n - 1]!);
    const run = await runAgent('add retries to the refresh endpoint', {
      memory,
      client: new OpenAI({ baseURL: chat.baseURL, apiKey: 'test', maxRetries: 0 }),
      model: 'fake',
    });

    expect(run.answer).toMatch(/grace window/);
    expect(run.calls.map((c) => c.name)).toEqual(['build_task_context', 'search_memory', 'search_memory']);
    const first = chat.requests[0]!.body as { tools: { function: { name: string; parameters: { required: string[] } } }[] };
    expect(first.tools.map((t) => t.function.name)).toEqual(['build_task_context', 'search_memory']);
    expect(first.tools[0]!.function.parameters.required).toEqual(['task']);
    const sent = (i: number) =>
      (chat.requests[i]!.body as { messages: { role: string; tool_call_id?: string; content: string }[] }).messages.filter(
        (m) => m.role === 'tool',
      );
    expect(sent(1)[0]!.content).toMatch(/^<memory bundle="b_[0-9a-f]{16}">[\s\S]*Rotate refresh tokens on every use/);
    const [search, bad] = sent(2).slice(1);
    expect(search!.content).toContain('Two tabs refreshing at once looked like token theft');
    // A bad call is an error the model can read; the loop goes on.
    expect(bad!.content).toBe('INVALID_INPUT: search_memory: query: must be string');
  });

  it('offers only the tools asked for, and refuses unknown ones', () => {
    expect(memoryTools(memory, { tools: ['remember', 'memory_status'] }).definitions.map((d) => d.function.name)).toEqual([
      'remember',
      'memory_status',
    ]);
    expect(() => memoryTools(memory, { tools: ['drop_everything' as never] })).toThrow(/unknown tool "drop_everything"/);
  });
});

describe('one vocabulary: remember takes the memory file names, and the published spellings', () => {
  it('stores core_id, entry_type and code file_path/codebase_id; core/type/file/codebase still work; both at once is refused', async () => {
    const tools = memoryTools(memory, { tools: ['remember'] });
    const wire = await tools.call('remember', {
      title: 'Webhook retries back off',
      content: 'Retry a failed webhook with exponential backoff, at most five times.',
      core_id: 'webhooks',
      entry_type: 'convention',
      code: [{ file_path: 'src/webhooks/retry.ts', codebase_id: 'api', start_line: 3, end_line: 9 }],
    });
    expect(wire).toMatch(/^Remembered /);
    const old = await tools.call('remember', {
      title: 'Webhooks are signed',
      content: 'Check the HMAC header first.',
      core: 'webhooks',
      type: 'decision',
    });
    expect(old).toMatch(/^Remembered /);
    const stored = await memory.listEntries({ cores: ['webhooks'] });
    expect(stored.map((e) => [e.title, e.entryType]).sort()).toEqual([
      ['Webhook retries back off', 'convention'],
      ['Webhooks are signed', 'decision'],
    ]);
    expect((await memory.findByCodeReference({ filePath: 'src/webhooks/retry.ts' })).map((h) => h.entry.title)).toEqual([
      'Webhook retries back off',
    ]);
    expect(await tools.call('remember', { title: 't', content: 'c', core: 'a', core_id: 'b' })).toMatch(/core: give core_id only/);
    expect(await tools.call('remember', { title: 't', content: 'c', code: [{ file: 'a.ts', file_path: 'a.ts' }] })).toMatch(
      /code\[0\]\.file: give code\[0\]\.file_path only/,
    );
    expect(await tools.call('remember', { title: 't', content: 'c', code: [{ symbol: 'f' }] })).toMatch(/^INVALID_INPUT/);
  });
});
