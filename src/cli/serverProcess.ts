/**
 * The CLI's side of a served folder: relaying a command line to the process that owns the folder,
 * starting a server in the background, and loading the engine and the server only when used.
 */
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryEngine, OpenMemoryOptions } from '../engine/memoryEngine.js';
import { MemcoreError } from '../model/errors.js';
import { connectToOwner, PROTOCOL, readLines, type CliMessage, type PageLogin } from '../server/controlSocket.js';
import type { OwnerOptions } from '../server/owner.js';

import { type Io } from './command.js';

// The engine, the eval harness and the MCP server load native stores, models and schemas (~0.9 s);
// a CLI call that a running server answers needs none of them, so they are imported when used.
export const openMemory = async (options: OpenMemoryOptions) => (await import('../engine/memoryEngine.js')).openMemory(options);
export const startOwner = async (engine: MemoryEngine, options: OwnerOptions) =>
  (await import('../server/owner.js')).startOwner(engine, options);

export const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Asks the folder's server for a sign-in address of the memory page; undefined when no server owns the folder. */
export async function askPageLogin(dir: string): Promise<PageLogin | undefined> {
  const reached = await connectToOwner(dir, { memcore: PROTOCOL, kind: 'page-login' });
  if (!reached) return undefined;
  const { socket, rest } = reached;
  return new Promise((resolveLogin, reject) => {
    let answer: PageLogin | undefined;
    readLines(socket, (line) => (answer = JSON.parse(line) as PageLogin));
    socket.once('close', () =>
      answer ? resolveLogin(answer) : reject(new Error(`the memcore server of ${dir} closed without an address`)),
    );
    socket.on('error', () => undefined);
    if (rest.length) socket.unshift(rest);
    socket.resume();
  });
}

/** `memcore serve` for the folder as a process of its own that outlives this one; returns its pid. */
export function startServerInBackground(dir: string, cwd: string, port: number): number {
  // The CLI's entry file beside this one (main.ts from a checkout, main.js once built).
  const cli = fileURLToPath(new URL(`./main${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url));
  // From a checkout the CLI is TypeScript, run through tsx as this process is.
  const loader = cli.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
  const log = openSync(join(dir, 'server.log'), 'a');
  const child = spawn(process.execPath, [...loader, cli, 'serve', '--db', dir, '--port', String(port)], {
    cwd,
    detached: true,
    stdio: ['ignore', log, log],
  });
  child.unref();
  return child.pid!;
}

export async function waitForPageLogin(dir: string, pid: number): Promise<PageLogin> {
  for (let waited = 0; waited < 300_000; waited += 200) {
    const login = await askPageLogin(dir);
    if (login) return login;
    try {
      process.kill(pid, 0);
    } catch {
      const tail = readFileSync(join(dir, 'server.log'), 'utf8').trim().split('\n').slice(-3).join(' / ');
      throw new MemcoreError(`the server for ${dir} stopped while starting: ${tail}`, 'STORE');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new MemcoreError(`the server for ${dir} (pid ${pid}) did not start within 5 minutes; see ${join(dir, 'server.log')}`, 'STORE');
}

/** Whether server.json names a live process whose socket is not up yet (or was just taken over). */
export function ownerStarting(dir: string): boolean {
  try {
    const { pid } = JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')) as { pid: number };
    process.kill(pid, 0);
    return pid !== process.pid;
  } catch {
    return false;
  }
}

/**
 * Sends the command line to the process that owns the folder, if one does, and relays its output;
 * undefined when none does. A folder held by a process still starting up is waited for a moment.
 */
export async function runThroughOwner(dir: string, argv: string[], cwd: string, io: Io): Promise<number | undefined> {
  const hello = { memcore: PROTOCOL, kind: 'cli', argv, cwd, isTTY: io.isTTY } as const;
  let reached = await connectToOwner(dir, hello);
  if (!reached && ownerStarting(dir)) {
    for (let i = 0; i < 20 && !reached; i++) {
      await new Promise((r) => setTimeout(r, 100));
      reached = await connectToOwner(dir, hello);
    }
  }
  if (!reached) return undefined;
  const { socket, rest } = reached;
  return new Promise((resolveExit, reject) => {
    let code: number | undefined;
    readLines(socket, (line) => {
      const m = JSON.parse(line) as CliMessage;
      if ('out' in m) io.out(m.out);
      else if ('err' in m) io.err(m.err);
      else code = m.exit;
    });
    socket.once('close', () =>
      code === undefined ? reject(new Error(`the memcore server of ${dir} stopped before the command finished`)) : resolveExit(code),
    );
    socket.on('error', () => undefined);
    if (rest.length) socket.unshift(rest);
    socket.resume();
  });
}
