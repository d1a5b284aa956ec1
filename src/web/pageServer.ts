/**
 * The memory page on `memcore serve`'s HTTP server: who may see it, and what each address answers.
 *
 * Sign-in works as Jupyter's does: `memcore ui` prints an address with a login code. The code
 * works once, for ten minutes; opening it sets an HttpOnly, SameSite=Strict cookie and sends the
 * browser on to the same address without the code, so the code leaves the address bar and the
 * history. Scripts use the server's bearer token instead. Anything else gets 401.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MemoryEngine } from '../engine/memoryEngine.js';
import type { ServerStatus } from '../server/tools.js';
import { answerApi } from './api.js';
import { CONTENT_SECURITY_POLICY, PAGE_SHELL, pageAssets } from './pageAssets.js';

const LOGIN_TTL_MS = 10 * 60_000;
/** Page routes: each answers with the shell, and the script draws the page the address names. */
const PAGE_ROUTE = /^\/(?:|entry\/[^/]+|graph|paths\/[^/]+|context|status)$/;

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
} as const;

export interface PageServerOptions {
  engine: MemoryEngine;
  status: ServerStatus;
  /** The server's bearer token, which scripts send as `Authorization: Bearer …`. */
  token: string;
  /** Where the token is, for the 401 answer (e.g. "the token in /repo/.memcore/server.token"). */
  tokenWhere?: string;
  log: (message: string) => void;
}

export interface PageServer {
  /** A new one-time login code for the page. */
  issueLogin(): string;
  /** Answers a request for anything but `/mcp`; the port names the cookie, since cookies do not tell ports apart. */
  handle(req: IncomingMessage, res: ServerResponse, port: number): Promise<void>;
}

/** Whether `given` is the secret, compared in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store', ...headers }).end(body);
}

const sendJson = (res: ServerResponse, status: number, body: unknown) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));

const DENIED_PAGE = (message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memcore: sign in</title></head><body><h1>Sign in to memcore</h1><p>${message}</p><p>Run <code>memcore ui</code> in the project for an address that signs you in.</p></body></html>`;

/** What a request without the token is told: that a bearer token is needed, and where it is. */
export const unauthorizedMessage = (where = 'the token in server.token in the database folder'): string =>
  `memcore needs a bearer token: send the header "Authorization: Bearer <token>" with ${where} (the memory page: open the address memcore ui prints)`;

/** Whether the request carries `Authorization: Bearer <token>` (MCP over HTTP, scripts). */
export function bearerMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') && sameSecret(header.slice(7), token);
}

export function createPageServer(options: PageServerOptions): PageServer {
  const { engine, status, token, log } = options;
  const logins = new Map<string, number>();
  const sessions = new Set<string>();

  function takeLogin(code: string): boolean {
    const now = Date.now();
    for (const [c, expires] of logins) if (expires < now) logins.delete(c);
    for (const c of logins.keys()) {
      if (sameSecret(code, c)) {
        logins.delete(c);
        return true;
      }
    }
    return false;
  }

  function signedIn(req: IncomingMessage, cookieName: string): boolean {
    if (bearerMatches(req, token)) return true;
    const session = cookieValue(req, cookieName);
    return session !== undefined && [...sessions].some((s) => sameSecret(session, s));
  }

  async function handle(req: IncomingMessage, res: ServerResponse, port: number): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://page');
    const cookieName = `memcore_${port}`;
    const isApi = url.pathname.startsWith('/api/');
    const login = url.searchParams.get('login');
    if (login !== null) {
      if (!takeLogin(login))
        return send(res, 401, 'text/html; charset=utf-8', DENIED_PAGE('This sign-in address was used already or has expired.'));
      const session = randomBytes(32).toString('base64url');
      sessions.add(session);
      url.searchParams.delete('login');
      log('page: signed in a browser');
      return send(res, 303, 'text/plain; charset=utf-8', 'signed in', {
        'set-cookie': `${cookieName}=${session}; HttpOnly; SameSite=Strict; Path=/`,
        location: url.pathname + url.search,
      });
    }
    if (!signedIn(req, cookieName)) {
      return isApi
        ? sendJson(res, 401, {
            error: { code: 'UNAUTHORIZED', message: unauthorizedMessage(options.tokenWhere) },
          })
        : send(res, 401, 'text/html; charset=utf-8', DENIED_PAGE('This page needs a sign-in.'), { 'www-authenticate': 'Bearer' });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(res, 405, 'text/plain; charset=utf-8', 'the memory page is read-only', { allow: 'GET, HEAD' });
    if (isApi) {
      const answer = await answerApi(engine, status, url.pathname.slice('/api'.length), url.searchParams);
      return sendJson(res, answer.status, answer.body);
    }
    if (url.pathname === '/assets/app.js' || url.pathname === '/assets/style.css') {
      const asset = (await pageAssets())[url.pathname.slice('/assets/'.length) as 'app.js' | 'style.css'];
      return send(res, 200, asset.type, asset.body, { 'cache-control': 'private, max-age=60' });
    }
    if (url.pathname === '/favicon.ico') return void res.writeHead(204, SECURITY_HEADERS).end();
    if (PAGE_ROUTE.test(url.pathname)) return send(res, 200, 'text/html; charset=utf-8', PAGE_SHELL);
    return send(res, 404, 'text/plain; charset=utf-8', 'no such page');
  }

  return {
    issueLogin() {
      const code = randomBytes(24).toString('base64url');
      logins.set(code, Date.now() + LOGIN_TTL_MS);
      return code;
    },
    handle,
  };
}
