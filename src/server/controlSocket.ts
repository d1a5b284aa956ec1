/**
 * Where the process that owns a database folder listens, and how others reach it. Kuzu lets one
 * process open a folder; that process (the owner: `memcore serve`, or the first `memcore mcp`)
 * serves everyone else over a Unix domain socket in the folder. A connection opens with one line
 * of JSON saying what it wants (`hello`), answered by one line (`welcome`); what follows depends
 * on the kind: MCP messages as newline-delimited JSON-RPC, or a CLI call's output.
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROTOCOL = 1;

export type Hello =
  | { memcore: typeof PROTOCOL; kind: 'mcp' }
  | { memcore: typeof PROTOCOL; kind: 'cli'; argv: string[]; cwd: string; isTTY: boolean }
  | { memcore: typeof PROTOCOL; kind: 'status' }
  /** Asks for an address of the memory page that signs a browser in (`memcore ui`); answered with a `PageLogin` line. */
  | { memcore: typeof PROTOCOL; kind: 'page-login' };

/** The answer to a `page-login` hello: the sign-in address, or why there is none. */
export type PageLogin = { url: string; /** The MCP endpoint of the same server. */ mcp?: string } | { error: string };

export interface Welcome {
  memcore: typeof PROTOCOL;
  pid: number;
  startedAt: string;
  /** The streamable HTTP address, when `memcore serve` runs one. */
  http?: string;
}

/** A line of a CLI call's output, or its end. */
export type CliMessage = { out: string } | { err: string } | { exit: number };

/**
 * The socket of a folder: `server.sock` in it, or (where that path would pass the ~104 bytes a
 * Unix socket address holds) a file in the temp folder named by a hash of the folder's path.
 */
export function socketPath(dir: string): string {
  const inFolder = join(dir, 'server.sock');
  if (Buffer.byteLength(inFolder) <= 100) return inFolder;
  return join(tmpdir(), `memcore-${createHash('sha256').update(dir).digest('hex').slice(0, 20)}.sock`);
}

/** Splits a stream into lines; `onLine` hears each without its newline. Returns a function that stops listening and hands back what was read past the last line. */
export function readLines(socket: Socket, onLine: (line: string) => void, maxLine = 64 * 1024 * 1024): () => Buffer {
  let pending: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (let nl = pending.indexOf(10); nl >= 0; nl = pending.indexOf(10)) {
      const line = pending.subarray(0, nl).toString('utf8');
      pending = pending.subarray(nl + 1);
      onLine(line);
      if (stopped) return;
    }
    if (pending.length > maxLine) socket.destroy(new Error(`a line of more than ${maxLine} bytes`));
  };
  let stopped = false;
  socket.on('data', onData);
  return () => {
    stopped = true;
    socket.off('data', onData);
    return pending;
  };
}

/**
 * Connects to the folder's owner and says hello. Resolves null when no process owns the folder
 * (no socket, or one left behind by a process that died: nothing listens on it).
 */
export function connectToOwner(
  dir: string,
  hello: Hello,
  timeoutMs = 10_000,
): Promise<{ socket: Socket; welcome: Welcome; rest: Buffer } | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath(dir));
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`the memcore server of ${dir} did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTSOCK') resolve(null);
      else reject(e);
    };
    socket.once('error', fail);
    socket.once('close', () => fail(Object.assign(new Error('closed'), { code: 'ECONNREFUSED' })));
    socket.once('connect', () => socket.write(JSON.stringify(hello) + '\n'));
    const stop = readLines(socket, (line) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const rest = stop();
      socket.removeAllListeners('error');
      socket.removeAllListeners('close');
      socket.pause();
      try {
        resolve({ socket, welcome: JSON.parse(line) as Welcome, rest });
      } catch {
        socket.destroy();
        reject(new Error(`the process on ${socketPath(dir)} does not speak memcore's protocol`));
      }
    });
  });
}
