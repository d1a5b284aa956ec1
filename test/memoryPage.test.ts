/**
 * The memory page in a real browser: Debian's chromium driven by playwright-core, against a real
 * `memcore serve` on a temp folder holding the example memory plus hostile and secret entries.
 * Screenshots of each page go to test/artifacts/page/.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli/main.js';
import { cliProcesses, fakeEmbedderEnv, type ServeReady } from './cliProcess.js';
import { startFakeOpenAI, type FakeOpenAI } from './openaiServer.js';
import { EXAMPLE_FILE, tempDirForFile } from './helpers.js';

const CHROMIUM = process.env.MEMCORE_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('./artifacts/page/', import.meta.url));
const SECRET_TITLE = 'Vault root key rotation zq9';
const SECRET_CONTENT = 'The vault root key is kept in hsm-slot-zq9';
const PAYLOAD_FLAG = '__memcorePwned';

/** Entries whose text would run script if any page pasted it in as HTML, and a secret linked from public ones. */
const HOSTILE_FILE = `version: 1
entries:
  - id: hostile-entry
    core_id: auth-jwt
    title: "<script>window.${PAYLOAD_FLAG}=1</script><img src=x onerror=\\"window.${PAYLOAD_FLAG}=2\\"> refresh token xss"
    content: |
      Refresh token notes <svg onload="window.${PAYLOAD_FLAG}=3"></svg>
      <img src=x onerror="window.${PAYLOAD_FLAG}=4;alert(1)">
      <script>window.${PAYLOAD_FLAG}=5</script>
      [click me](javascript:window.${PAYLOAD_FLAG}=6)
      **bold text** stays bold.
    entry_type: lesson
  - id: secret-entry
    core_id: auth-jwt
    title: ${SECRET_TITLE}
    content: ${SECRET_CONTENT}
    entry_type: fact
    sensitivity: secret
relations:
  - { type: RELATED, from: hostile-entry, to: auth-refresh-rotation }
  - { type: RELATED, from: auth-refresh-rotation, to: secret-entry }
  - { type: DEPENDS_ON, from: secret-entry, to: auth-access-ttl }
`;

let embeddings: FakeOpenAI;
let env: Record<string, string>;
const cli = cliProcesses(() => env);
let db: string;
let ready: ServeReady;
let origin: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every response body the browser received, to look for the secret in. */
const bodies: string[] = [];
const dialogs: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: apt-get install chromium (or set MEMCORE_CHROMIUM)`);
  embeddings = await startFakeOpenAI(8);
  env = fakeEmbedderEnv(embeddings.baseURL);
  const dir = await tempDirForFile();
  db = join(dir, 'store');
  const hostile = join(dir, 'hostile.yaml');
  await writeFile(hostile, HOSTILE_FILE);
  for (const file of [EXAMPLE_FILE, hostile]) {
    const ingest = await cli.memcore(['ingest', file, '--db', db]);
    expect(ingest.code, ingest.stderr).toBe(EXIT.ok);
  }
  ready = (await cli.serve(db, ['--port', '0'])).ready;
  origin = new URL(ready.page!).origin;
  await mkdir(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on(
    'response',
    (r) =>
      void r.body().then(
        (b) => bodies.push(b.toString('utf8')),
        () => undefined,
      ),
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
  cli.killAll();
  await embeddings?.close();
});

async function open(path: string, outcome: 'true' | 'error' = 'true'): Promise<void> {
  await page.goto(origin + path);
  await page.waitForSelector('#app[data-ready]');
  expect(await page.getAttribute('#app', 'data-ready'), await page.innerText('#app')).toBe(outcome);
}

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

async function payloadRan(): Promise<unknown> {
  return page.evaluate((flag) => (globalThis as unknown as Record<string, unknown>)[flag], PAYLOAD_FLAG);
}

describe('the memory page', () => {
  it('signs a browser in once from the printed address, with an HttpOnly, SameSite=Strict cookie', async () => {
    const login = new URL(ready.page!);
    expect(login.searchParams.get('login')).toBeTruthy();
    await page.goto(ready.page!);
    // The code leaves the address bar.
    expect(page.url()).toBe(`${origin}/`);
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    // The same address does not sign in a second browser.
    const again = await fetch(ready.page!, { redirect: 'manual' });
    expect(again.status).toBe(401);
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  it('searches as you type and opens an entry, then follows an edge', async () => {
    await open('/');
    await page.fill('#q', 'rotate refresh tokens');
    const hit = page.locator('.hit').filter({ hasText: 'Rotate refresh tokens on every use' }).first();
    await hit.waitFor();
    const first = hit.locator('.title');
    expect(await hit.locator('.meta').innerText()).toMatch(/decision[\s\S]*auth-jwt[\s\S]*score \d\.\d{3}/);
    expect(await hit.locator('.why').innerText()).toMatch(/vector #\d+|keyword #\d+/);
    // The query is kept in the address, so the page can be bookmarked.
    expect(new URL(page.url()).searchParams.get('q')).toBe('rotate refresh tokens');
    await shot('search');

    await first.click();
    await page.waitForURL(`${origin}/entry/auth-refresh-rotation`);
    await page.waitForSelector('#app[data-ready]');
    expect(await page.innerText('#entry-title')).toBe('Rotate refresh tokens on every use');
    const links = await page.innerText('.links');
    expect(links).toContain('→ SUPERSEDES');
    expect(links).toContain('Refresh tokens are long-lived and reusable');
    expect(links).toContain('← DEPENDS_ON');
    expect(await page.innerText('#entry-code')).toContain('src/auth/tokenService.ts:40-112 (rotateRefreshToken)');
    expect(await page.innerText('main')).toContain('Refresh-token rotation, request to response');
    await shot('entry');

    // From the box with the keyboard: ↓ marks the first hit, ↓ the second, Enter opens it.
    await open('/?q=rotate+refresh+tokens');
    await page.locator('.hit').first().waitFor();
    const second = await page.locator('.hit .title').nth(1).innerText();
    await page.focus('#q');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('.hit[aria-selected="true"] .title').innerText()).toBe(second);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/entry\//);
    await page.waitForSelector('#app[data-ready]');
    expect(await page.innerText('#entry-title')).toBe(second);
    await page.goto(`${origin}/entry/auth-refresh-rotation`);
    await page.waitForSelector('#app[data-ready]');

    await page.click('.links a:has-text("Refresh tokens are long-lived and reusable")');
    await page.waitForURL(`${origin}/entry/auth-refresh-long-lived`);
    await page.waitForSelector('#app[data-ready]');
    expect(await page.innerText('#entry-title')).toBe('Refresh tokens are long-lived and reusable');
    expect(await page.innerText('.notice')).toContain('Superseded by Rotate refresh tokens on every use');
    await shot('entry-superseded');
  });

  it('draws the graph around an entry, with a legend, and opens the entry whose node is clicked', async () => {
    await open('/graph?focus=auth-refresh-rotation&depth=1');
    await page.waitForSelector('#graph[data-rendered="true"]');
    expect(await page.innerText('#graph-note')).toMatch(/^\d+ entries, \d+ links\./);
    const legend = await page.innerText('#graph-legend');
    for (const name of ['decision', 'lesson', 'RELATED', 'DEPENDS_ON', 'SUPERSEDES']) expect(legend).toContain(name);
    await shot('graph-focus');
    const drawn = await page.evaluate(() => {
      const cy = (
        globalThis as unknown as {
          memcoreGraph: {
            nodes(): { map<T>(f: (n: { id(): string }) => T): T[] };
            $id(id: string): { renderedPosition(): { x: number; y: number } };
          };
        }
      ).memcoreGraph;
      return { ids: cy.nodes().map((n) => n.id()), at: cy.$id('auth-access-ttl').renderedPosition() };
    });
    expect(drawn.ids).toContain('auth-access-ttl');
    expect(drawn.ids).not.toContain('secret-entry');
    const box = (await page.locator('#graph').boundingBox())!;
    await page.mouse.click(box.x + drawn.at.x, box.y + drawn.at.y);
    await page.waitForURL(`${origin}/entry/auth-access-ttl`);
    await page.waitForSelector('#app[data-ready]');
    expect(await page.innerText('#entry-title')).toBe('Access tokens expire after 15 minutes');

    await open('/graph?core=auth-jwt');
    await page.waitForSelector('#graph[data-rendered="true"]');
    await shot('graph-core');
    // Past the limit, the page says it draws a sample and offers other limits.
    await open('/graph?core=auth-jwt&max=5');
    await page.waitForSelector('#graph[data-rendered="true"]');
    expect(await page.innerText('#graph-note')).toMatch(/Showing the 5 most linked of 12 entries \(a sample\)/);
    expect(await page.locator('#graph-note a', { hasText: '2,000' }).getAttribute('href')).toBe('/graph?core=auth-jwt&max=2000');
  });

  it('shows a golden path as ordered steps with code locations and its concept', async () => {
    await open('/paths/gp-refresh-flow');
    expect(await page.innerText('h1')).toBe('Refresh-token rotation, request to response');
    expect(await page.innerText('.concept')).toContain('refresh token rotation');
    const steps = await page.locator('#path-steps > li').allInnerTexts();
    expect(steps).toHaveLength(4);
    expect(steps[0]).toContain('src/auth/refresh.route.ts:12-58 (refreshHandler)');
    expect(steps[1]).toContain('src/auth/tokenService.ts:40-112 (rotateRefreshToken)');
    await shot('golden-path');
  });

  it('previews the context: the same block as memcore context --format prompt, with score, reason and tokens', async () => {
    const task = 'Fix the refresh token reuse race between two tabs';
    await open(`/context?task=${encodeURIComponent(task)}&max_entries=6`);
    const block = await page.locator('#context-block').evaluate((el) => el.textContent);
    const fromCli = await cli.memcore(['context', task, '--format', 'prompt', '--max-entries', '6', '--db', db]);
    expect(fromCli.code, fromCli.stderr).toBe(EXIT.ok);
    expect(block).toBe(fromCli.stdout.replace(/\n$/, ''));
    expect(block).toContain('<memory>');
    const rows = await page.locator('#context-items tbody tr').allInnerTexts();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThanOrEqual(6);
    for (const row of rows) expect(row).toMatch(/\d\.\d{3}\s+\d+\s+\S/);
    const tokens = await page.locator('#context-items tbody tr td:nth-child(4)').allInnerTexts();
    const total = tokens.reduce((sum, t) => sum + Number(t), 0);
    expect(Number(await page.innerText('#context-total'))).toBe(total);
    // The block's count and the table's total agree: the line says what the difference is.
    const said = /^~([\d,]+) tokens in the block: ([\d,]+) of entry titles and text .*, ~([\d,]+) of framing/.exec(
      await page.innerText('#context-block-tokens'),
    );
    expect(said).not.toBeNull();
    const [inBlock, inTable, rest] = said!.slice(1).map((n) => Number(n.replace(/,/g, '')));
    expect(inTable).toBe(total);
    expect(inBlock).toBe(inTable! + rest!);
    expect(inBlock).toBeGreaterThan(total);
    await shot('context');
  });

  it('shows counts by core, type and relation, the embedder, the generation and the server', async () => {
    await open('/status');
    // The secret entry is counted, and named nowhere.
    expect(await page.innerText('#entry-count')).toBe('46');
    const text = await page.innerText('main');
    for (const expected of ['auth-jwt', 'api-versioning', 'decision', 'SUPERSEDES', 'fake (8 dimensions)', `pid ${ready.pid}`])
      expect(text).toContain(expected);
    await shot('status');
  });

  it('runs no script from the data on any page', async () => {
    await open('/?q=xss');
    await page.locator('.hit .title', { hasText: 'refresh token xss' }).waitFor();
    expect(await page.locator('.hit .title', { hasText: '<script>' }).count()).toBe(1);
    await open('/entry/hostile-entry');
    expect(await page.innerText('#entry-title')).toContain(`<script>window.${PAYLOAD_FLAG}=1</script>`);
    expect(await page.locator('#entry-content strong').innerText()).toBe('bold text');
    expect(
      await page
        .locator('#entry-content script, #entry-content img, #entry-content svg, #entry-content [onerror], #entry-content [onload]')
        .count(),
    ).toBe(0);
    expect(await page.locator('#entry-content a[href^="javascript:"]').count()).toBe(0);
    await page
      .locator('#entry-content a', { hasText: 'click me' })
      .click()
      .catch(() => undefined);
    await shot('hostile-entry');
    await open('/graph?focus=hostile-entry&depth=1');
    await page.waitForSelector('#graph[data-rendered="true"]');
    await page.locator('.node-list summary').click();
    await open(`/context?task=${encodeURIComponent('refresh token xss notes')}`);
    await open('/status');
    expect(await payloadRan()).toBeUndefined();
    expect(dialogs).toEqual([]);
  });

  it('never sends the title or content of a secret entry, in any HTML or JSON response', async () => {
    await open('/entry/auth-refresh-rotation');
    await open('/graph?focus=auth-refresh-rotation&depth=3');
    await open('/graph?core=auth-jwt');
    await open(`/?q=${encodeURIComponent('vault root key hsm')}`);
    await page.waitForSelector('#summary:has-text("hit")');
    await open(`/context?task=${encodeURIComponent('rotate the vault root key in the hsm slot')}`);
    await open('/entry/secret-entry', 'error');
    expect(await page.innerText('.error')).toContain('no entry with id "secret-entry"');
    const direct = await page.evaluate(async () => (await fetch('/api/entry/secret-entry')).status);
    expect(direct).toBe(404);
    await page.waitForTimeout(200);
    expect(bodies.length).toBeGreaterThan(20);
    for (const body of bodies) {
      expect(body).not.toContain(SECRET_TITLE);
      expect(body).not.toContain(SECRET_CONTENT);
    }
  });

  it('answers 401 without the cookie or the token, and serves scripts with the bearer token', async () => {
    for (const path of ['/', '/entry/auth-refresh-rotation', '/graph', '/status', '/assets/app.js', '/api/status', '/api/search?q=jwt']) {
      expect((await fetch(origin + path)).status, path).toBe(401);
      expect((await fetch(origin + path, { headers: { cookie: 'memcore_1=forged' } })).status, path).toBe(401);
    }
    const token = (await readFile(ready.tokenFile!, 'utf8')).trim();
    const withToken = await fetch(`${origin}/api/search?q=jwt`, { headers: { authorization: `Bearer ${token}` } });
    expect(withToken.status).toBe(200);
    expect(((await withToken.json()) as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
    const csp = (await fetch(`${origin}/`, { headers: { authorization: `Bearer ${token}` } })).headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
  });
});

describe('the JSON API and memcore ui', () => {
  const bearer = async () => ({ authorization: `Bearer ${(await readFile(ready.tokenFile!, 'utf8')).trim()}` });
  const get = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(origin + path, {
      ...init,
      headers: { ...(await bearer()), ...(init.headers as Record<string, string> | undefined) },
    });
    return {
      status: res.status,
      body: (await res.json().catch(() => null)) as { error?: { code: string; message: string } } & Record<string, unknown>,
    };
  };

  it('checks every parameter and says what was wrong', async () => {
    const cases: [string, number, RegExp][] = [
      ['/api/search?q=jwt&bogus=1', 400, /bogus: is not a known parameter/],
      ['/api/search?q=jwt&mode=fuzzy', 400, /mode: must be one of "hybrid", "semantic", "matryoshka", "keyword"/],
      ['/api/search?q=jwt&limit=ten', 400, /limit: must be a whole number/],
      ['/api/search?q=jwt&limit=0', 400, /limit/],
      ['/api/graph', 400, /give either focus \(an entry id\) or core/],
      ['/api/graph?core=auth-jwt&depth=2', 400, /depth goes with focus/],
      ['/api/graph?focus=auth-jwt-nope', 404, /no entry with id "auth-jwt-nope"/],
      ['/api/graph?focus=auth-refresh-rotation&depth=9', 400, /depth must be an integer from 1 to 3/],
      ['/api/graph?core=auth-jwt&max=0', 400, /maxNodes must be an integer from 1 to 10000/],
      ['/api/entry/%E0%A4%A', 400, /percent-encoding/],
      ['/api/paths/nope', 404, /no golden path with id "nope"/],
      ['/api/context?task=', 400, /task/],
      ['/api/context?task=x&include_code=maybe', 400, /include_code: must be true or false/],
      ['/api/status?x=1', 400, /x: is not a known parameter/],
      ['/api/nothing-here', 404, /no API route/],
    ];
    for (const [path, status, message] of cases) {
      const answer = await get(path);
      expect(answer.status, path).toBe(status);
      expect(answer.body.error!.message, path).toMatch(message);
    }
    expect((await fetch(`${origin}/api/search?q=jwt`, { method: 'POST', headers: await bearer() })).status).toBe(405);
    // A core larger than the drawing: the most linked entries, and the answer says it is a sample.
    const sample = await get('/api/graph?core=auth-jwt&max=3');
    expect(sample.body).toMatchObject({ total: 12, sampled: true });
    expect((sample.body.nodes as { id: string }[]).map((n) => n.id)).toContain('auth-refresh-rotation');
    // Around an entry, the entry itself is kept whatever its links.
    const around = await get('/api/graph?focus=auth-clock-skew&depth=3&max=2');
    expect((around.body.nodes as { id: string }[]).map((n) => n.id)).toContain('auth-clock-skew');
    expect(around.body).toMatchObject({ sampled: true, focus: 'auth-clock-skew' });
  });

  it('memcore ui prints a sign-in address of the running server', async () => {
    const answer = await cli.memcore(['ui', '--db', db, '--json']);
    expect(answer.code, answer.stderr).toBe(EXIT.ok);
    const { url, startedServer } = JSON.parse(answer.stdout) as { url: string; startedServer: number | null };
    expect(startedServer).toBeNull();
    expect(new URL(url).origin).toBe(origin);
    const signIn = await fetch(url, { redirect: 'manual' });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/');
    const cookie = signIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict; Path=\//);
    expect((await fetch(`${origin}/api/status`, { headers: { cookie: cookie.split(';')[0]! } })).status).toBe(200);
  });

  it('memcore ui starts a server in the background when none owns the folder', async () => {
    const other = join(await tempDirForFile(), 'other');
    expect((await cli.memcore(['ingest', EXAMPLE_FILE, '--db', other])).code).toBe(EXIT.ok);
    const answer = await cli.memcore(['ui', '--db', other, '--json']);
    expect(answer.code, answer.stderr).toBe(EXIT.ok);
    const { url, startedServer } = JSON.parse(answer.stdout) as { url: string; startedServer: number };
    try {
      expect(startedServer).toBeGreaterThan(0);
      const signIn = await fetch(url, { redirect: 'manual' });
      expect(signIn.status).toBe(303);
      const status = await fetch(new URL('/api/status', url), { headers: { cookie: signIn.headers.get('set-cookie')!.split(';')[0]! } });
      expect(((await status.json()) as { stats: { entries: number; server: { pid: number } } }).stats).toMatchObject({
        entries: 44,
        server: { pid: startedServer },
      });
      // A folder without memory is refused rather than served empty.
      const empty = await cli.memcore(['ui', '--db', join(other, 'nothing')]);
      expect(empty.code).toBe(EXIT.notFound);
    } finally {
      process.kill(startedServer, 'SIGTERM');
    }
  });
});
