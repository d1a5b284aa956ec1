import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI embeddings API, for tests of the
 * `openai` client path. Each test scripts it with `respond`; `requests` records what arrived.
 */
export interface FakeOpenAI {
  baseURL: string;
  requests: { path: string; body: Record<string, unknown>; auth: string | undefined }[];
  /** Decides the reply to each request; default: deterministic vectors of `dimensions`. */
  respond: (body: Record<string, unknown>, n: number, res: ServerResponse, path: string) => void;
  /** Most requests in flight at once so far. */
  maxInFlight: number;
  close(): Promise<void>;
}

/** A deterministic unit-ish vector for a text (so tests can predict ranking). */
export function vectorFor(text: string, dimensions: number): number[] {
  const v = Array.from(
    { length: dimensions },
    (_, i) => Math.sin((text.length + 1) * (i + 1)) + (text.charCodeAt(i % text.length) % 7) / 7,
  );
  return v;
}

export function embeddingsReply(res: ServerResponse, inputs: string[], dimensions: number, opts: { shuffle?: boolean } = {}): void {
  const data = inputs.map((t, index) => ({ object: 'embedding', index, embedding: vectorFor(t, dimensions) }));
  if (opts.shuffle) data.reverse();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: 'fake', usage: { prompt_tokens: 1, total_tokens: 1 } }));
}

/** A chat-completions reply whose message content is `content`. */
export function chatReply(res: ServerResponse, content: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 0,
      model: 'fake-chat',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }),
  );
}

export async function startFakeOpenAI(dimensions: number): Promise<FakeOpenAI> {
  const fake: FakeOpenAI = {
    baseURL: '',
    requests: [],
    maxInFlight: 0,
    respond: (body, _n, res) => embeddingsReply(res, body.input as string[], dimensions),
    close: async () => undefined,
  };
  let inFlight = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    fake.maxInFlight = Math.max(fake.maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      fake.requests.push({ path: req.url ?? '', body, auth: req.headers.authorization });
      fake.respond(body, fake.requests.length, res, req.url ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
