import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli/main.js';
import { codeSymbols } from '../src/import/codeSymbols.js';
import { openMemory } from '../src/index.js';
import { capturedIo, tempDir, wordHashEmbedder } from './helpers.js';

const JWKS = `import { createHash } from 'node:crypto';

/** Serves the public keys. */
export async function jwksHandler(req: Request): Promise<Response> {
  return new Response(JSON.stringify(keys()));
}

function parse(a: string): string;
function parse(a: number): number;
function parse(a: string | number) {
  return a;
}

export class TokenStore {
  constructor(private readonly ttl: number) {}
  rotateKeys(): void {
    createHash('sha256');
  }
  get size(): number {
    return 0;
  }
  private onExpire = () => undefined;
}

export interface TokenClaims { sub: string }
export type KeyId = string;
export enum Alg { ES256 = 'ES256' }
export const MAX_AGE = 3600;
const keys = () => [];
namespace Legacy {
  export function oldHandler() {}
}
`;

async function repo(): Promise<string> {
  const dir = join(await tempDir(), 'repo');
  await mkdir(join(dir, 'src', 'auth'), { recursive: true });
  await mkdir(join(dir, 'dist'), { recursive: true });
  await writeFile(join(dir, '.gitignore'), 'dist/\n');
  await writeFile(join(dir, 'src', 'auth', 'jwks.ts'), JWKS);
  await writeFile(join(dir, 'src', 'util.js'), 'function plainJs() {\n  return 1;\n}\nmodule.exports = { plainJs };\n');
  await writeFile(join(dir, 'src', 'types.d.ts'), 'export declare function declared(): void;\n');
  await writeFile(join(dir, 'dist', 'bundle.js'), 'function bundled() {}\n');
  return dir;
}

describe('import-code: symbols as code locations', () => {
  it('finds functions, classes, methods, interfaces, types, enums, namespaces and exported variables with their lines', () => {
    const symbols = codeSymbols('src/auth/jwks.ts', JWKS).map((s) => `${s.symbol ?? '(file)'} ${s.kind} ${s.startLine}-${s.endLine}`);
    expect(symbols).toEqual([
      '(file) file 1-32',
      'jwksHandler function 4-6',
      'parse function 10-12',
      'TokenStore class 14-23',
      'TokenStore.constructor method 15-15',
      'TokenStore.rotateKeys method 16-18',
      'TokenStore.size method 19-21',
      'TokenStore.onExpire method 22-22',
      'TokenClaims interface 25-25',
      'KeyId type 26-26',
      'Alg enum 27-27',
      'MAX_AGE variable 28-28',
      'keys function 29-29',
      'Legacy namespace 30-32',
      'Legacy.oldHandler function 31-31',
    ]);
    // whitespace does not change a fingerprint; an edit does
    const [, a] = codeSymbols('a.ts', 'export function f() { return 1; }');
    const [, b] = codeSymbols('a.ts', '\n\nexport function f() {\n  return 1;\n}');
    const [, c] = codeSymbols('a.ts', 'export function f() { return 2; }');
    expect(a!.fingerprint).toBe(b!.fingerprint);
    expect(c!.fingerprint).not.toBe(a!.fingerprint);
  });

  it('links entries that name a symbol or path, follows moves and edits by hash, and removes gone files', async () => {
    const dir = await repo();
    const m = await openMemory({ path: join(dir, '.memcore'), embedder: wordHashEmbedder(), env: {} });
    try {
      await m.ingestDocument({
        core_id: 'api',
        entries: [
          { id: 'keys', title: 'Rotate signing keys', content: 'jwksHandler in src/auth/jwks.ts serves the keys; parse them as JSON.' },
          { id: 'old', title: 'Legacy handler', content: 'Legacy.oldHandler stays until v3.' },
        ],
      });
      const first = await m.importCode(dir, { codebase: 'api' });
      expect(first.files).toEqual({ read: 2, unchanged: 0, removed: 0 });
      expect(first.codeLocations).toBe(17); // 15 in jwks.ts, 2 in util.js; not types.d.ts nor the ignored dist/
      const refs = async (id: string) => (await m.entryDetails(id))!.code.map((r) => r.code.id).sort();
      // the path links the file's own location, a distinctive symbol its location, a plain word ("parse") nothing
      expect(await refs('keys')).toEqual(['api:src/auth/jwks.ts', 'api:src/auth/jwks.ts#jwksHandler']);
      expect(await refs('old')).toEqual(['api:src/auth/jwks.ts#Legacy.oldHandler']);
      const before = (await m.findByCodeReference({ symbol: 'jwksHandler' }))[0]!.code;
      expect(before).toMatchObject({ filePath: 'src/auth/jwks.ts', startLine: 4, endLine: 6, kind: 'function', language: 'typescript' });

      // golden-path steps name symbols by id
      await m.ingestDocument({
        golden_paths: [
          { id: 'gp', name: 'Key serving', steps: [{ code: 'api:src/auth/jwks.ts#jwksHandler' }, { code: 'api:src/util.js#plainJs' }] },
        ],
      });

      expect((await m.importCode(dir, { codebase: 'api' })).files).toEqual({ read: 0, unchanged: 2, removed: 0 });

      // a move: new lines, same fingerprint, same id and links
      const jwks = join(dir, 'src', 'auth', 'jwks.ts');
      await writeFile(jwks, `// moved down\n\n${await readFile(jwks, 'utf8')}`);
      await rm(join(dir, 'src', 'util.js'));
      const moved = await m.importCode(dir, { codebase: 'api' });
      expect(moved.files).toEqual({ read: 1, unchanged: 0, removed: 1 });
      // plainJs is a golden path's step: kept; util.js's file location goes
      expect(moved.sync?.keptInUse).toEqual(['api:src/util.js#plainJs']);
      expect(moved.sync?.removed.codeLocations).toBe(1);
      const after = (await m.findByCodeReference({ symbol: 'jwksHandler' }))[0]!.code;
      expect(after).toMatchObject({ id: before.id, startLine: 6, endLine: 8, fingerprint: before.fingerprint });
      expect(await refs('keys')).toEqual(['api:src/auth/jwks.ts', 'api:src/auth/jwks.ts#jwksHandler']);
      expect((await m.getGoldenPath('gp'))!.steps.map((s) => s.code.startLine)).toEqual([6, 1]);

      // an edit: a new fingerprint
      await writeFile(jwks, (await readFile(jwks, 'utf8')).replace('keys()', 'keys().concat([])'));
      await m.importCode(dir, { codebase: 'api' });
      expect((await m.findByCodeReference({ symbol: 'jwksHandler' }))[0]!.code.fingerprint).not.toBe(before.fingerprint);
    } finally {
      await m.close();
    }
  });

  it('a re-run reads no file whose size and mtime match the last import; a new mtime or size is read again', async () => {
    const dir = await repo();
    const db = join(dir, '.memcore');
    const util = join(dir, 'src', 'util.js');
    const jwks = join(dir, 'src', 'auth', 'jwks.ts');
    const hourAgo = Math.floor(Date.now() / 1000) - 3600; // older than the racy window: the stamps keep the mtime
    for (const f of [util, jwks]) await utimes(f, hourAgo, hourAgo);
    const m = await openMemory({ path: db, embedder: wordHashEmbedder(), env: {} });
    const mtimes = async () => {
      const sources = (await readdir(join(db, 'sources'))).map((n) => join(db, 'sources', n));
      return Promise.all(
        [join(db, 'code-stamps.json'), join(db, 'code-search.json'), ...sources].map(async (f) => (await stat(f)).mtimeMs),
      );
    };
    // whether the code search knows the symbol: what the last read of util.js left
    const found = async (symbol: string) => (await m.findCode(symbol)).some((h) => h.code.symbol === symbol || h.symbols.includes(symbol));
    try {
      expect((await m.importCode(dir, { codebase: 'api' })).files).toEqual({ read: 2, unchanged: 0, removed: 0 });
      const written = await mtimes();

      // nothing changed: no file read, and the stamps, the code search index and the manifests are not rewritten
      const again = await m.importCode(dir, { codebase: 'api' });
      expect(again.files).toEqual({ read: 0, unchanged: 2, removed: 0 });
      expect(again.languages).toEqual({});
      expect(await mtimes()).toEqual(written);

      // the documented assumption, shown: same size and same mtime pass for unchanged without a read
      const util1 = await readFile(util, 'utf8');
      await writeFile(util, util1.replaceAll('plainJs', 'plainJx'));
      await utimes(util, hourAgo, hourAgo);
      expect((await m.importCode(dir, { codebase: 'api' })).files).toEqual({ read: 0, unchanged: 2, removed: 0 });
      expect(await found('plainJx')).toBe(false);

      // same size, new mtime: read again
      await utimes(util, hourAgo + 60, hourAgo + 60);
      const edited = await m.importCode(dir, { codebase: 'api' });
      expect(edited.files).toEqual({ read: 1, unchanged: 1, removed: 0 });
      expect(edited.languages).toEqual({ javascript: 1 });
      expect(await found('plainJx')).toBe(true);
      expect(await found('plainJs')).toBe(false);

      // a new size with the old mtime: read again (mtime alone never declares a file unchanged)
      await writeFile(util, `${util1}function another() {}\n`);
      await utimes(util, hourAgo + 60, hourAgo + 60);
      expect((await m.importCode(dir, { codebase: 'api' })).files).toEqual({ read: 1, unchanged: 1, removed: 0 });
      expect(await found('another')).toBe(true);

      // a file changed just now keeps no mtime in its stamp, so the next run hashes it (same-tick rewrites)
      await writeFile(jwks, `// touched\n${await readFile(jwks, 'utf8')}`);
      expect((await m.importCode(dir, { codebase: 'api' })).files).toEqual({ read: 1, unchanged: 1, removed: 0 });
      const stamps = JSON.parse(await readFile(join(db, 'code-stamps.json'), 'utf8')) as {
        codebases: Record<string, Record<string, { mtimeMs: number | null }>>;
      };
      expect(stamps.codebases.api!['src/auth/jwks.ts']!.mtimeMs).toBeNull();
      expect(stamps.codebases.api!['src/util.js']!.mtimeMs).toBe((hourAgo + 60) * 1000);
      expect((await m.importCode(dir, { codebase: 'api' })).files).toEqual({ read: 0, unchanged: 2, removed: 0 });

      // the code search index deleted: the stamps no longer stand for it, and the files are read for it
      await rm(join(db, 'code-search.json'));
      expect((await m.importCode(dir, { codebase: 'api' })).files).toEqual({ read: 0, unchanged: 2, removed: 0 });
      expect(await found('another')).toBe(true);
    } finally {
      await m.close();
    }
  });

  it('memcore import-code: needs --codebase and a folder; --json reports the files', async () => {
    const dir = await repo();
    const db = join(dir, '.memcore');
    const { io, out, err } = capturedIo();
    expect(await main(['import-code', dir, '--db', db], io)).toBe(EXIT.usage);
    expect(err.join('\n')).toMatch(/needs --codebase/);
    expect(await main(['import-code', join(dir, 'src', 'util.js'), '--codebase', 'api', '--db', db], io)).toBe(EXIT.invalid);
    expect(await main(['import-code', dir, '--codebase', '', '--db', db], io)).toBe(EXIT.invalid);
    out.length = 0;
    expect(await main(['import-code', dir, '--codebase', 'api', '--db', db, '--json'], io)).toBe(EXIT.ok);
    expect(JSON.parse(out.join('\n'))).toMatchObject({ codeLocations: 17, files: { read: 2, unchanged: 0, removed: 0 }, skipped: [] });
  });
});
