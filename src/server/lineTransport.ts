/**
 * MCP over a stream of newline-delimited JSON-RPC (the owner's side of a `memcore mcp` relay's
 * connection). The SDK's stdio transport closes the session on a line over 10 MB without a word,
 * answers nothing to a message its schema refuses, and copies its whole buffer on every chunk (a
 * 64 MiB request took minutes); this one reads each chunk once, answers every request, and keeps
 * serving.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { oversized, readRequestLines, refusal, rpcError, RPC } from './requestGuard.js';

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private closed = false;

  /** Reads requests from `stream` and writes answers to `output` (the same stream by default: a socket). */
  constructor(
    private readonly stream: Readable,
    private readonly output: Writable = stream as Readable & Writable,
  ) {}

  async start(): Promise<void> {
    readRequestLines(
      this.stream,
      (line) => this.receive(line),
      (id, bytes) => void this.send(oversized(id, bytes) as JSONRPCMessage),
    );
    this.stream.once('close', () => void this.close());
  }

  private receive(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line) as unknown;
    } catch (e) {
      return void this.send(rpcError(null, RPC.parseError, `not JSON: ${(e as Error).message}`) as JSONRPCMessage);
    }
    const refused = refusal(value);
    if (refused) return void this.send(refused as JSONRPCMessage);
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = (value as { id?: unknown }).id;
      return void this.send(
        rpcError(
          typeof id === 'string' || typeof id === 'number' ? id : null,
          RPC.invalidRequest,
          'not a JSON-RPC 2.0 message',
        ) as JSONRPCMessage,
      );
    }
    this.onmessage?.(parsed.data);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.output.destroyed) return resolve();
      if (this.output.write(JSON.stringify(message) + '\n')) resolve();
      else this.output.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
