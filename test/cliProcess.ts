/**
 * The CLI as real processes, as users run it: one `node` process per command, running the source
 * tree as compiled for this test run (test/testBuild.ts, built by test/globalSetup.ts), or with
 * MEMCORE_TEST_TSX=1 the TypeScript itself through `node --import tsx` (tsx's own CLI would start
 * the program in a child of its own, out of reach of kill -9).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from './openaiServer.js';
import { FIXTURES_DIR, TEST_BUILD } from './testBuild.js';

const FROM_SOURCE = process.env.MEMCORE_TEST_TSX === '1';
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** The build this test file spawns from, the one current when it loaded (dist-test is a link that a later run may move). */
const BUILD = (() => {
  if (FROM_SOURCE) return '';
  try {
    return realpathSync(TEST_BUILD);
  } catch {
    throw new Error(`${TEST_BUILD} is missing: run the tests with vitest, whose globalSetup (test/globalSetup.ts) builds it`);
  }
})();

/** The file a process runs for a module of src/ or test/fixtures/: its compiled copy, or itself under MEMCORE_TEST_TSX=1. */
export function runnable(source: string): string {
  if (FROM_SOURCE) return source;
  const [from, to] = source.startsWith(SRC) ? [SRC, BUILD] : source.startsWith(FIXTURES) ? [FIXTURES, join(BUILD, FIXTURES_DIR)] : [];
  if (from === undefined || !source.endsWith('.ts')) throw new Error(`${source}: not a module of src/ or test/fixtures/`);
  return `${to}/${relative(from, source).replace(/\.ts$/, '.js')}`;
}

/** node's options that let a process load what `runnable` names: tsx under MEMCORE_TEST_TSX=1, none otherwise. */
export const loaderArgs: string[] = FROM_SOURCE ? ['--import', import.meta.resolve('tsx')] : [];

/** node's arguments that run `source` (a .ts file of src/ or test/fixtures/) with `args`. */
export const scriptArgs = (source: string, args: string[]): string[] => [...loaderArgs, runnable(source), ...args];

/** The CLI's entry point as a process runs it (the compiled src/cli/main.ts). */
export const CLI = runnable(fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)));
export const nodeArgs = (args: string[]): string[] => [...loaderArgs, CLI, ...args];

export interface ServeReady {
  pid: number;
  socket: string;
  url?: string;
  tokenFile?: string;
  /** The memory page's sign-in address. */
  page?: string;
}

export interface CliProcesses {
  /** Runs a CLI command as its own process. */
  memcore(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** `memcore serve --json` as a child process; resolves with what it printed when ready. */
  serve(db: string, extra?: string[]): Promise<{ child: ChildProcess; ready: ServeReady }>;
  /** Kills (SIGKILL) every child still running. */
  killAll(): void;
  children: ChildProcess[];
}

export function cliProcesses(env: () => Record<string, string>): CliProcesses {
  const children: ChildProcess[] = [];
  return {
    children,
    memcore(args) {
      return new Promise((resolve) => {
        execFile(process.execPath, nodeArgs(args), { env: env(), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
        });
      });
    },
    async serve(db, extra = []) {
      const child = spawn(process.execPath, nodeArgs(['serve', '--db', db, '--json', ...extra]), {
        env: env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const ready = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.trimEnd().endsWith('}')) resolve(out);
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
      });
      return { child, ready: JSON.parse(ready) as ServeReady };
    },
    killAll() {
      for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** The environment of a CLI process whose embedder is the test's OpenAI-compatible server (test/openaiServer.ts). */
export function fakeEmbedderEnv(baseURL: string, dimensions = 8): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    MEMCORE_EMBEDDER: 'openai',
    MEMCORE_EMBED_BASE_URL: baseURL,
    MEMCORE_EMBED_MODEL: 'fake',
    MEMCORE_EMBED_DIMENSIONS: String(dimensions),
  };
}

/**
 * CLI processes whose embedder is a fake OpenAI server (8-d) started for the calling test file:
 * registers the file's hooks (start and stop the server, kill what is left after each test).
 */
export function cliWithFakeEmbedder(): CliProcesses & { env: () => Record<string, string> } {
  let embeddings: FakeOpenAI | undefined;
  let env: Record<string, string> = {};
  const processes = cliProcesses(() => env);
  beforeAll(async () => {
    embeddings = await startFakeOpenAI(8);
    env = fakeEmbedderEnv(embeddings.baseURL);
  });
  afterAll(async () => embeddings?.close());
  afterEach(() => processes.killAll());
  return { ...processes, env: () => env };
}

/**
 * The CLI in this process (`main`) with a fake OpenAI server (8-d) as its embedder: registers the
 * calling describe's hooks (start the server and point process.env at it; then put process.env
 * back and stop the server). Returns the server, once started.
 */
export function inProcessFakeEmbedder(): () => FakeOpenAI {
  let embeddings: FakeOpenAI | undefined;
  const saved = { ...process.env };
  beforeAll(async () => {
    embeddings = await startFakeOpenAI(8);
    Object.assign(process.env, fakeEmbedderEnv(embeddings.baseURL));
  });
  afterAll(async () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    await embeddings?.close();
  });
  return () => embeddings!;
}
