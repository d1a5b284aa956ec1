import type { Readable } from 'node:stream';

/**
 * What every MCP request passes before the SDK sees it, over stdio and HTTP alike: one size limit,
 * and an answer (never silence) for a message the SDK would drop without a reply.
 */

/**
 * The largest MCP request memcore reads, in bytes (a stdio line without its newline, or an HTTP
 * body). The same number on both transports, documented in docs/memory-file.md and docs/agents.md.
 */
export const MAX_MCP_REQUEST_BYTES = 64 * 2 ** 20;

export type JsonRpcId = string | number | null;

/** JSON-RPC error codes memcore answers with. */
export const RPC = { parseError: -32700, invalidRequest: -32600, invalidParams: -32602 } as const;

export function rpcError(
  id: JsonRpcId,
  code: number,
  message: string,
): { jsonrpc: '2.0'; id: JsonRpcId; error: { code: number; message: string } } {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

const ID_AT_END = /"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")\s*\}\s*$/;
const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")/;

/**
 * The id of a request too large to parse, read from its first and last bytes (clients write the id
 * first or last); null when it is in neither.
 */
export function idOfOversized(head: string, tail: string): JsonRpcId {
  const found = ID_AT_START.exec(head)?.[1] ?? ID_AT_END.exec(tail)?.[1];
  if (found === undefined) return null;
  try {
    return JSON.parse(found) as string | number;
  } catch {
    return null;
  }
}

/** The answer to a request of `bytes` bytes (more than the limit). */
export function oversized(id: JsonRpcId, bytes: number | string) {
  return rpcError(
    id,
    RPC.invalidRequest,
    `the request is ${bytes} bytes, over memcore's limit of ${MAX_MCP_REQUEST_BYTES} bytes (64 MiB) for one MCP request; it was not read`,
  );
}

/** The path of the first own `__proto__` key in a parsed JSON value, or undefined. */
function protoKeyPath(value: unknown, path: string[] = []): string[] | undefined {
  if (!value || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = protoKeyPath(v, [...path, String(i)]);
      if (found) return found;
    }
    return undefined;
  }
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return [...path, '__proto__'];
  for (const [k, v] of Object.entries(value)) {
    const found = protoKeyPath(v, [...path, k]);
    if (found) return found;
  }
  return undefined;
}

/**
 * The answer to a parsed message that must not reach the SDK, or undefined to hand it on. The SDK
 * answers nothing to a request whose `params` is not an object, and its schemas drop an own
 * `__proto__` key (JSON.parse keeps one): the first gets invalid-params, the second the tool error
 * any unknown field gets.
 */
export function refusal(message: unknown): object | undefined {
  if (!message || typeof message !== 'object' || Array.isArray(message))
    return rpcError(null, RPC.invalidRequest, 'a JSON-RPC message is one JSON object (memcore takes no batches)');
  const m = message as { id?: unknown; method?: unknown; params?: unknown };
  const isRequest = typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number');
  if (!isRequest) return undefined;
  const id = m.id as string | number;
  if (m.params !== undefined && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params)))
    return rpcError(id, RPC.invalidParams, `${m.method}: params must be an object, not ${m.params === null ? 'null' : typeof m.params}`);
  if (m.method !== 'tools/call') return undefined;
  const params = m.params as { name?: unknown; arguments?: unknown };
  const proto = protoKeyPath(params.arguments);
  if (!proto) return undefined;
  const message_ = `${typeof params.name === 'string' ? params.name : 'tools/call'}: ${proto.join('.')}: is not a known field`;
  return {
    jsonrpc: '2.0',
    id,
    result: {
      isError: true,
      content: [{ type: 'text', text: `INVALID_INPUT: ${message_}` }],
      structuredContent: { error: { code: 'INVALID_INPUT', message: message_ } },
    },
  };
}

/**
 * Splits the client's stream into lines of at most MAX_MCP_REQUEST_BYTES. A longer line is not
 * kept: only its first and last bytes are, to find its id, and `onOversized` hears of it when its
 * newline comes; the lines after it are read as usual. Each chunk is searched once, so a 64 MiB
 * line costs one pass.
 */
export function readRequestLines(
  stream: Readable,
  onLine: (line: string) => void,
  onOversized: (id: JsonRpcId, bytes: number) => void,
  max = MAX_MCP_REQUEST_BYTES,
): void {
  let parts: Buffer[] = [];
  let size = 0;
  /** Set while a line over the limit is being skipped. */
  let skipping: { head: string; tail: Buffer } | undefined;
  const take = (piece: Buffer) => {
    size += piece.length;
    if (skipping) skipping.tail = Buffer.concat([skipping.tail, piece]).subarray(-300);
    else if (size <= max) parts.push(piece);
    else {
      const all = Buffer.concat([...parts, piece]);
      skipping = { head: all.subarray(0, 300).toString('utf8'), tail: all.subarray(-300) };
      parts = [];
    }
  };
  stream.on('data', (chunk: Buffer | string) => {
    let rest = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (let nl = rest.indexOf(10); nl >= 0; nl = rest.indexOf(10)) {
      take(rest.subarray(0, nl));
      if (skipping) onOversized(idOfOversized(skipping.head, skipping.tail.toString('utf8')), size);
      else {
        const line = Buffer.concat(parts).toString('utf8').replace(/\r$/, '');
        if (line.trim() !== '') onLine(line);
      }
      parts = [];
      size = 0;
      skipping = undefined;
      rest = rest.subarray(nl + 1);
    }
    if (rest.length) take(rest);
  });
}
