/**
 * The owner of a database folder: one engine, kept warm, serving every client. Other `memcore mcp`
 * processes and CLI calls reach it over the control socket; `memcore serve` adds MCP over
 * streamable HTTP. Writes from every client go through the engine's one write queue, reads run
 * concurrently, and the context cache is keyed by the store's generation, which a write moves
 * before it answers: no client is served a bundle from before a write it has been told is done.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createSocketServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { MemoryEngine } from '../engine/memoryEngine.js';
import { invalidInput } from '../model/errors.js';
import { createMcpServer } from './mcpServer.js';
import { LineTransport } from './lineTransport.js';
import { idOfOversized, MAX_MCP_REQUEST_BYTES, oversized, refusal, rpcError, RPC } from './requestGuard.js';
import { PROTOCOL, readLines, socketPath, type CliMessage, type Hello, type PageLogin, type Welcome } from './controlSocket.js';
import type { ServerStatus } from './tools.js';
import { bearerMatches, createPageServer, unauthorizedMessage, type PageServer } from '../web/pageServer.js';
import { DEFAULTS } from '../config/defaults.js';

/** Runs one CLI command line against the owner's engine (the CLI's `main`, handed in to keep the layers apart). */
export type CliRunner = (
  argv: string[],
  io: { out: (t: string) => void; err: (t: string) => void; isTTY: boolean },
  context: { engine: MemoryEngine; cwd: string },
) => Promise<number>;

export interface HttpOptions {
  /** Default 127.0.0.1. Any other address needs `token` or the generated one, and is refused without `allowRemote`. */
  host?: string;
  /** Default 7077; 0 picks a free port. */
  port?: number;
  /** Bearer token. Default: read from (or generated into) `<db>/server.token`, mode 0600. */
  token?: string;
  /** Binding to an address other than the loopback must be asked for. */
  allowRemote?: boolean;
}

export interface OwnerOptions {
  /** Serve MCP over streamable HTTP too. */
  http?: HttpOptions;
  runCli: CliRunner;
  version: string;
  /** Hears connections and failures (the serve command prints them on stderr). */
  log?: (message: string) => void;
}

export interface Owner {
  readonly socket: string;
  /** `http://host:port/mcp`, when serving HTTP. */
  readonly url?: string;
  readonly token?: string;
  /** An address of the memory page with a one-time login code in it, when serving HTTP. */
  pageLogin?(): string;
  /** Control-socket connections open now (relaying MCP clients and running CLI calls). */
  connections(): number;
  /**
   * Serves one MCP session in this process over newline-delimited JSON-RPC: requests read from
   * `input`, answers written to `output` (a `memcore mcp` that owns the folder: its own stdio, with
   * no hop through its control socket). The session ends when `input` closes.
   */
  serveMcp(input: Readable, output: Writable): Promise<void>;
  /** Stops listening, ends every connection, removes the socket and server.json. The engine stays open. */
  close(): Promise<void>;
}

export const TOKEN_FILE = 'server.token';
export const SERVER_FILE = 'server.json';

async function tokenFor(dir: string, given: string | undefined): Promise<string> {
  if (given !== undefined) {
    if (given.length < 16) throw invalidInput('the HTTP token must be at least 16 characters');
    return given;
  }
  const file = join(dir, TOKEN_FILE);
  const existing = await readFile(file, 'utf8').then(
    (t) => t.trim(),
    () => '',
  );
  if (existing.length >= 16) return existing;
  const token = randomBytes(32).toString('base64url');
  await writeFile(file, token + '\n', { mode: 0o600 });
  await chmod(file, 0o600);
  return token;
}

export async function startOwner(engine: MemoryEngine, options: OwnerOptions): Promise<Owner> {
  const dir = engine.path;
  const startedAt = new Date();
  const log = options.log ?? (() => undefined);
  const path = socketPath(dir);
  const endpoints: Record<string, string> = { socket: path };
  const status: ServerStatus = { pid: process.pid, startedAt, endpoints };
  const sockets = new Set<Socket>();
  const host = options.http?.host ?? '127.0.0.1';
  const loopback = host === '127.0.0.1' || host === '::1' || host === 'localhost';
  if (options.http && !loopback && !options.http.allowRemote)
    throw invalidInput(`binding to ${host} exposes the memory beyond this machine; pass --host explicitly with --allow-remote`);
  let http: HttpServer | undefined;
  let url: string | undefined;
  let token: string | undefined;
  let pageLogin: (() => string) | undefined;

  // The caller holds the folder (Kuzu's lock), so a socket file here is one a dead owner left.
  await rm(path, { force: true });
  const control = createSocketServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const stop = readLines(socket, (line) => {
      const rest = stop();
      let hello: Hello;
      try {
        hello = JSON.parse(line) as Hello;
        if (hello.memcore !== PROTOCOL) throw new Error('protocol');
      } catch {
        socket.end(JSON.stringify({ error: `expected a memcore hello (protocol ${PROTOCOL})` }) + '\n');
        return;
      }
      const welcome: Welcome = { memcore: PROTOCOL, pid: process.pid, startedAt: startedAt.toISOString(), ...(url ? { http: url } : {}) };
      socket.write(JSON.stringify(welcome) + '\n');
      void serveConnection(socket, hello, rest).catch((e: Error) => {
        log(`connection failed: ${e.message}`);
        socket.destroy();
      });
    });
  });

  async function serveConnection(socket: Socket, hello: Hello, rest: Buffer): Promise<void> {
    if (hello.kind === 'status') {
      socket.end();
    } else if (hello.kind === 'page-login') {
      // The control socket listens before HTTP is up: a `memcore ui` asking meanwhile waits for it.
      await httpSetUp;
      const answer: PageLogin = pageLogin
        ? { url: pageLogin(), ...(url ? { mcp: url } : {}) }
        : { error: 'this server does not serve HTTP (it was started with --no-http, or is a memcore mcp)' };
      socket.end(JSON.stringify(answer) + '\n');
    } else if (hello.kind === 'cli') {
      const send = (m: CliMessage) => socket.write(JSON.stringify(m) + '\n');
      const code = await options.runCli(
        hello.argv,
        { out: (out) => send({ out }), err: (err) => send({ err }), isTTY: hello.isTTY },
        { engine, cwd: hello.cwd },
      );
      socket.end(JSON.stringify({ exit: code } satisfies CliMessage) + '\n');
    } else if (hello.kind === 'mcp') {
      if (rest.length) socket.unshift(rest);
      socket.on('end', () => socket.end());
      await serveMcp(socket, socket);
      log(`MCP client connected over ${path}`);
    } else {
      socket.end();
    }
  }

  async function serveMcp(input: Readable, output: Writable): Promise<void> {
    const server = createMcpServer(engine, status, options.version);
    input.once('close', () => void server.close());
    await server.connect(new LineTransport(input, output));
  }

  let httpSettled!: () => void;
  const httpSetUp = new Promise<void>((resolve) => (httpSettled = resolve));
  if (!options.http) httpSettled();
  await new Promise<void>((resolve, reject) => {
    control.once('error', reject);
    control.listen(path, () => resolve());
  });
  await chmod(path, 0o600);

  if (options.http) {
    try {
      token = await tokenFor(dir, options.http.token);
      const tokenWhere = options.http.token ? 'the token this server was started with' : `the token in ${join(dir, TOKEN_FILE)}`;
      const pages = createPageServer({ engine, status, token, tokenWhere, log });
      const httpPort = options.http.port ?? DEFAULTS.httpPort;
      http = await serveHttp(engine, status, options.version, host, httpPort, { token, where: tokenWhere }, pages, log);
      const bound = http.address();
      const origin = `http://${host.includes(':') ? `[${host}]` : host}:${typeof bound === 'object' && bound ? bound.port : options.http.port}`;
      pageLogin = () => `${origin}/?login=${pages.issueLogin()}`;
      url = `${origin}/mcp`;
      endpoints.page = `${origin}/`;
    } catch (e) {
      httpSettled();
      control.close();
      await rm(path, { force: true });
      throw e;
    }
    endpoints.http = url;
    httpSettled();
  }

  await writeFile(
    join(dir, SERVER_FILE),
    JSON.stringify({ pid: process.pid, startedAt, socket: path, ...(url ? { http: url } : {}) }, null, 2) + '\n',
  );

  // A server stays up: what queries hold, and the model, are loaded now, not by its first calls (MemoryEngine.warm);
  // a failure here is met again, and reported, by the query that needs the part.
  void engine.warm().catch(() => undefined);

  return {
    socket: path,
    ...(url ? { url } : {}),
    ...(token ? { token } : {}),
    ...(pageLogin ? { pageLogin } : {}),
    connections: () => sockets.size,
    serveMcp,
    async close() {
      await new Promise<void>((resolve) => {
        control.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      if (http) await new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve())));
      await rm(path, { force: true });
      await rm(join(dir, SERVER_FILE), { force: true });
    },
  };
}

/**
 * MCP over streamable HTTP at /mcp (one transport and session object per client session, one
 * engine behind them), and the memory page on every other address.
 */
async function serveHttp(
  engine: MemoryEngine,
  status: ServerStatus,
  version: string,
  host: string,
  port: number,
  auth: { token: string; where: string },
  pages: PageServer,
  log: (m: string) => void,
): Promise<HttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (code: number, message: string): void =>
      void res
        .writeHead(code, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      const address = server.address();
      return pages.handle(req, res, typeof address === 'object' && address ? address.port : port);
    }
    // A JSON-RPC error body, so that an MCP client shows why rather than only the status.
    if (!bearerMatches(req, auth.token))
      return void res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: unauthorizedMessage(auth.where) }, id: null }));
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (req.method !== 'POST') return known ? known.handleRequest(req, res) : reply(400, 'no such session');
    // The body is read here, not by the SDK (whose limit is 4 MB): the same limit as over stdio.
    const read = await readBody(req);
    const answer = (code: number, message: object): void =>
      void res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(message));
    if ('tooLarge' in read) return answer(413, oversized(idOfOversized(read.head, read.tail), read.tooLarge));
    let body: unknown;
    try {
      body = JSON.parse(read.text) as unknown;
    } catch (e) {
      return answer(400, rpcError(null, RPC.parseError, `not JSON: ${(e as Error).message}`));
    }
    const refused = refusal(body);
    if (refused) return answer(200, refused);
    if (known) return known.handleRequest(req, res, body);
    if (!isInitializeRequest(body)) return reply(400, 'start a session with an initialize request');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // A reply as one JSON body rather than an event stream: the tools answer once, and send nothing before.
      enableJsonResponse: true,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await createMcpServer(engine, status, version).connect(transport);
    log('MCP client connected over HTTP');
    await transport.handleRequest(req, res, body);
  }

  const server = createHttpServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      log(`HTTP request failed: ${e.message}`);
      if (!res.headersSent)
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: e.message }, id: null }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/**
 * A request's body as text, or (over `max` bytes) its size and first and last bytes: the rest is
 * read and dropped, so the client hears the answer rather than a reset connection.
 */
async function readBody(
  req: IncomingMessage,
  max = MAX_MCP_REQUEST_BYTES,
): Promise<{ text: string } | { tooLarge: number; head: string; tail: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let head = '';
  let tail = Buffer.alloc(0);
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= max) {
      chunks.push(chunk);
      continue;
    }
    const held = Buffer.concat([...chunks.splice(0), tail, chunk]);
    if (size - chunk.length <= max) head = held.subarray(0, 300).toString('utf8');
    tail = held.subarray(-300);
  }
  if (size > max) return { tooLarge: size, head, tail: tail.toString('utf8') };
  return { text: Buffer.concat(chunks).toString('utf8') };
}
