/**
 * One MCP session over a shared engine: the tools, the core-memory and entry resources, and the
 * start_task prompt. Every client of a served folder gets its own session object and the same
 * engine, so all of them share one write queue, one cache and one set of resident structures.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { formatContext } from '../format/formatContext.js';
import { MemcoreError } from '../model/errors.js';
import { idProblem } from '../model/ids.js';
import type { MemoryEngine } from '../engine/memoryEngine.js';
import { checkToolInput, statusTool, TOOLS, type MemoryTool, type ServerStatus } from './tools.js';

export const SERVER_NAME = 'memcore';
const CORE_MEMORY = 'memcore://core-memory/';
const ENTRY = 'memcore://entry/';

/** Runs a tool; a bad input or a failed call is a tool error the model can read, and the server keeps serving. */
export async function callTool(tools: Map<string, MemoryTool>, engine: MemoryEngine, name: string, args: unknown): Promise<CallToolResult> {
  const tool = tools.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"; the tools are ${[...tools.keys()].join(', ')}`);
  try {
    const answer = await tool.run(engine, checkToolInput(tool, args));
    return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
  } catch (e) {
    const code = e instanceof MemcoreError ? e.code : 'FAILURE';
    const message = e instanceof Error ? e.message : String(e);
    return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: { error: { code, message } } };
  }
}

function resourceId(uri: string, prefix: string): string {
  let id: string;
  try {
    id = decodeURIComponent(uri.slice(prefix.length));
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${uri}: not a well-formed resource address`);
  }
  const problem = idProblem(id);
  if (problem) throw new McpError(ErrorCode.InvalidParams, `${uri}: ${problem}`);
  return id;
}

export function createMcpServer(engine: MemoryEngine, status: ServerStatus, version: string): Server {
  const server = new Server(
    { name: SERVER_NAME, version },
    {
      capabilities: { tools: {}, resources: {}, prompts: {} },
      instructions:
        "memcore holds this project's memory: lessons, decisions, conventions and patterns, linked to each other and to code. " +
        'Call build_task_context at the start of a task; call remember when you learn something a later task should know.',
    },
  );
  const tools = new Map([...TOOLS, statusTool(status)].map((t) => [t.name, t]));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map(({ name, title, description, inputSchema, annotations }) => ({
      name,
      title,
      description,
      inputSchema,
      annotations: { title, ...annotations },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => callTool(tools, engine, request.params.name, request.params.arguments));

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const cores = Object.keys((await engine.stats()).cores).sort();
    return {
      resources: cores.map((core) => ({
        uri: CORE_MEMORY + encodeURIComponent(core),
        name: `core-memory-${core}`,
        title: `Core memory: ${core}`,
        description: `The most important entries of core ${core}, within a token budget, for a system prompt.`,
        mimeType: 'text/plain',
      })),
    };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: `${CORE_MEMORY}{core}`,
        name: 'core-memory',
        title: 'Core memory',
        description: 'The static layer of a memory core, for a system prompt.',
        mimeType: 'text/plain',
      },
      {
        uriTemplate: `${ENTRY}{id}`,
        name: 'entry',
        title: 'Memory entry',
        description: 'One entry with its links, code and what supersedes it.',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    if (uri.startsWith(CORE_MEMORY)) {
      const memory = await engine.coreMemory(resourceId(uri, CORE_MEMORY));
      if (memory.entries.length === 0)
        throw new McpError(ErrorCode.InvalidParams, `${uri}: core "${memory.core}" holds no entries in effect`);
      return { contents: [{ uri, mimeType: 'text/plain', text: memory.text }] };
    }
    if (uri.startsWith(ENTRY)) {
      const details = await engine.entryDetails(resourceId(uri, ENTRY));
      if (!details) throw new McpError(ErrorCode.InvalidParams, `${uri}: no such entry`);
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(details, null, 2) }] };
    }
    throw new McpError(ErrorCode.InvalidParams, `${uri}: memcore serves ${CORE_MEMORY}{core} and ${ENTRY}{id}`);
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [
      {
        name: 'start_task',
        title: 'Start a task with project memory',
        description: 'The task, preceded by what the project memory holds for it.',
        arguments: [{ name: 'task', description: 'What is to be done', required: true }],
      },
    ],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    if (request.params.name !== 'start_task')
      throw new McpError(ErrorCode.InvalidParams, `unknown prompt "${request.params.name}"; memcore has start_task`);
    const task = request.params.arguments?.task;
    if (typeof task !== 'string' || task.trim() === '') throw new McpError(ErrorCode.InvalidParams, 'start_task: task is required');
    const memory = formatContext(await engine.buildTaskContext(task), { style: 'prompt' });
    const text = memory === '' ? `The project memory holds nothing relevant to this task.\n\nTask: ${task}` : `${memory}\n\nTask: ${task}`;
    return { description: 'The task with its project memory', messages: [{ role: 'user', content: { type: 'text', text } }] };
  });
  return server;
}
