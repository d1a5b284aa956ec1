/**
 * `memcore mcp`: the MCP stdio server that agent configs start. When no process holds the folder,
 * it becomes the owner and serves its stdio itself. Otherwise it relays to the folder's owner over
 * the control socket (`memcore serve`, an earlier `memcore mcp`); if that owner dies, even by
 * kill -9, the relay takes over or reaches whoever did, and carries on with the same client
 * (through its own socket from then on).
 */
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { FolderInUseError } from '../store/storeErrors.js';
import type { MemoryEngine } from '../engine/memoryEngine.js';
import { connectToOwner, PROTOCOL, readLines, type Hello } from './controlSocket.js';
import type { Owner } from './owner.js';
import { oversized, readRequestLines } from './requestGuard.js';
import { TOOLS } from './tools.js';

/** What a process that takes a folder over holds: its engine and what serves it. */
export interface Ownership {
  engine: MemoryEngine;
  owner: Owner;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Failures other than the folder's lock being held that reachOrBecomeOwner tries again. */
const OTHER_FAILURES_RETRIED = 3;

/**
 * Connects to the folder's owner, or becomes it when there is none. Kuzu's lock decides a race:
 * of processes that find no owner at once, one opens the folder, and the others wait for its
 * socket. An owner gets a connection to its own socket.
 */
export async function reachOrBecomeOwner(
  dir: string,
  hello: Hello,
  become: () => Promise<Ownership>,
  timeoutMs = 30_000,
): Promise<{ socket: Socket; ownership?: Ownership }> {
  const reached = await reachOrBecome(dir, hello, become, timeoutMs);
  if ('socket' in reached) return reached;
  // Owner now: a failure from here on is not one to become the owner again over.
  return { socket: await connectToSelf(dir, hello, reached.ownership), ownership: reached.ownership };
}

/** As reachOrBecomeOwner, but an owner is handed its ownership alone. */
async function reachOrBecome(
  dir: string,
  hello: Hello,
  become: () => Promise<Ownership>,
  timeoutMs: number,
): Promise<{ socket: Socket } | { ownership: Ownership }> {
  const deadline = Date.now() + timeoutMs;
  // Another error than a race for the lock (an owner that died moments ago, a machine too busy to
  // answer in time) gets a few more tries before it is reported.
  let otherFailures = 0;
  for (;;) {
    let ownership: Ownership;
    try {
      const reached = await connectToOwner(dir, hello);
      if (reached) return { socket: withRest(reached.socket, reached.rest) };
      ownership = await become();
    } catch (e) {
      if (Date.now() > deadline || (!(e instanceof FolderInUseError) && ++otherFailures > OTHER_FAILURES_RETRIED)) throw e;
      await sleep(e instanceof FolderInUseError ? 50 + Math.random() * 150 : 250 * otherFailures);
      continue;
    }
    return { ownership };
  }
}

/** This process's own socket, just opened by becoming the owner: a busy machine gets a few tries. */
async function connectToSelf(dir: string, hello: Hello, ownership: Ownership): Promise<Socket> {
  for (let attempt = 1; ; attempt++) {
    try {
      const self = await connectToOwner(dir, hello);
      if (self) return withRest(self.socket, self.rest);
      if (attempt > OTHER_FAILURES_RETRIED) throw new Error(`could not reach the socket this process opened at ${ownership.owner.socket}`);
    } catch (e) {
      if (attempt > OTHER_FAILURES_RETRIED) throw e;
    }
    await sleep(250 * attempt);
  }
}

function withRest(socket: Socket, rest: Buffer): Socket {
  if (rest.length) socket.unshift(rest);
  return socket;
}

/** Tools whose second run would do something again: not re-sent after an owner died mid-call. */
const NOT_REPEATABLE = new Set(TOOLS.filter((t) => !t.annotations.idempotentHint).map((t) => t.name));

type JsonRpc = { id?: string | number; method?: string; params?: { name?: string } };

function parse(line: string): JsonRpc | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === 'object' ? (v as JsonRpc) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The id of a response, read off the end of its line without parsing the rest: the SDK writes a
 * response as `{"result"|"error": …, "jsonrpc": "2.0", "id": …}`, and a bundle's result can be tens
 * of kilobytes that a full parse would spend ~0.2 ms on. Anything else is parsed.
 */
function responseId(line: string): string | number | undefined {
  const tail = /,"id":(-?\d+|"(?:[^"\\]|\\.)*")\}$/.exec(line.slice(-300));
  if (tail && (line.startsWith('{"result":') || line.startsWith('{"error":') || line.startsWith('{"jsonrpc":"2.0","id"')))
    return JSON.parse(tail[1]!) as string | number;
  const message = parse(line);
  return message?.id !== undefined && message.method === undefined ? message.id : undefined;
}

export async function runStdioRelay(
  dir: string,
  become: () => Promise<Ownership>,
  io: { stdin: Readable; stdout: Writable; log: (message: string) => void },
): Promise<void> {
  const hello: Hello = { memcore: PROTOCOL, kind: 'mcp' };
  /** Requests sent upstream and not yet answered, by id, in order. */
  const inflight = new Map<string | number, { line: string; tool?: string }>();
  const waiting: string[] = [];
  let upstream: Socket | undefined;
  let ownership: Ownership | undefined;
  let closing = false;
  const write = (line: string) => io.stdout.write(line + '\n');

  const attach = async (given?: { socket: Socket }): Promise<void> => {
    const reached: { socket: Socket; ownership?: Ownership } = given ?? (await reachOrBecomeOwner(dir, hello, become));
    if (reached.ownership) {
      ownership = reached.ownership;
      io.log(servingLine(dir, ownership));
    }
    const socket = reached.socket;
    readLines(socket, (line) => {
      const id = responseId(line);
      if (id !== undefined) inflight.delete(id);
      write(line);
    });
    socket.on('error', () => undefined);
    socket.once(
      'close',
      () =>
        void reattach().catch((e: Error) => {
          io.log(`memcore: could not take over ${dir}: ${e.message}`);
          process.exit(1);
        }),
    );
    socket.resume();
    upstream = socket;
    for (const line of waiting.splice(0)) socket.write(line + '\n');
  };

  const reattach = async (): Promise<void> => {
    upstream = undefined;
    if (closing) return;
    io.log('memcore: the server owning the folder went away; taking over');
    await attach();
    // Calls the old owner never answered: reads are asked again; a write may or may not have
    // happened, so the client is told rather than risking it twice.
    for (const [id, call] of inflight) {
      if (call.tool && NOT_REPEATABLE.has(call.tool)) {
        inflight.delete(id);
        write(
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            error: {
              code: -32001,
              message: `the memcore server stopped during ${call.tool}; it may or may not have been applied: check before calling it again`,
            },
          }),
        );
      } else upstream!.write(call.line + '\n');
    }
  };

  const first = await reachOrBecome(dir, hello, become, 30_000);
  if ('ownership' in first) return serveOwnStdio(dir, first.ownership, io);
  await attach(first);
  const stdinLines = stdinEnded(io.stdin);
  const forward = (line: string) => {
    // What is not JSON, or not a request the SDK would answer, the owner's transport answers.
    const message = parse(line);
    if (message?.id !== undefined && message.method !== undefined) {
      inflight.set(message.id, {
        line,
        ...(message.method === 'tools/call' && message.params?.name ? { tool: message.params.name } : {}),
      });
    }
    if (upstream) upstream.write(line + '\n');
    else waiting.push(line);
  };
  readRequestLines(io.stdin, forward, (id, bytes) => write(JSON.stringify(oversized(id, bytes))));
  await stdinLines;

  // The client is gone. Answers still due are dropped with it; an owner keeps serving the others
  // until they leave too.
  closing = true;
  const last = upstream;
  last?.end();
  // An owner that does not close its side within a few seconds (busy with a call whose answer
  // nobody will read) does not keep this process: the connection is cut.
  if (last) setTimeout(() => last.destroy(), 5_000).unref();
  if (ownership) await closeWhenAlone(ownership);
}

/**
 * This process became the owner before its client said anything: its stdio is an MCP session of
 * its own owner, with no hop through its control socket (one write and one read of every answer
 * fewer, and no line of it decoded to be written again). Other relays reach it over the socket.
 */
async function serveOwnStdio(
  dir: string,
  ownership: Ownership,
  io: { stdin: Readable; stdout: Writable; log: (message: string) => void },
): Promise<void> {
  io.log(servingLine(dir, ownership));
  const ended = stdinEnded(io.stdin);
  await ownership.owner.serveMcp(io.stdin, io.stdout);
  await ended;
  await closeWhenAlone(ownership);
}

/** What an owner logs when it starts serving. */
const servingLine = (dir: string, ownership: Ownership) => `memcore: serving ${dir} (pid ${process.pid}, socket ${ownership.owner.socket})`;

/** Resolves when the client's side of stdio ends or closes. */
const stdinEnded = (stdin: Readable) =>
  new Promise<void>((resolve) => {
    stdin.once('end', () => resolve());
    stdin.once('close', () => resolve());
  });

/** An owner whose own client is gone: it serves the other clients until they leave too, then closes. */
async function closeWhenAlone(ownership: Ownership): Promise<void> {
  while (ownership.owner.connections() > 0) await sleep(100);
  await ownership.owner.close();
  await ownership.engine.close();
}
