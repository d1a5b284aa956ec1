#!/usr/bin/env node
/**
 * memcore command line. Exit codes (stable, for scripts):
 *   0 success · 1 unexpected failure · 2 bad command line · 3 invalid input (file, option or
 *   value) · 4 not found · 5 database mismatch (other embedding model) · 6 store failure (a store
 *   damaged, missing, or not writable: a full or read-only disk)
 */
import { existsSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { resolveConfig } from '../config/config.js';
import type { MemoryEngine } from '../engine/memoryEngine.js';
import { MemcoreError } from '../model/errors.js';
import { holdsStores } from '../store/meta.js';
import { closest } from '../model/options.js';

import { COMMON, EXIT, exitCodeOf, isUsageError, UsageError, type Io } from './command.js';
import { COMMANDS } from './commandTable.js';
import { openMemory, runThroughOwner } from './serverProcess.js';
import { commandHelp, USAGE } from './usage.js';

export { EXIT, syncLine } from './command.js';
export { commandHelp, USAGE } from './usage.js';

/**
 * The one check of option names for every command: an option the command does not take is refused
 * naming it and the nearest one it does take ("unknown option --max-entrys; did you mean
 * --max-entries?"), rather than with the argument parser's own words.
 */
function refuseUnknownOptions(command: string, args: string[], options: NonNullable<ParseArgsConfig['options']>): void {
  const { tokens } = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  const known = Object.keys(options);
  // The argument after a string option given without `=` is its value, whatever it looks like.
  const values = new Set(
    tokens.flatMap((t) => (t.kind === 'option' && options[t.name]?.type === 'string' && t.inlineValue !== true ? [t.index + 1] : [])),
  );
  for (const token of tokens) {
    if (token.kind !== 'option' || known.includes(token.name) || values.has(token.index)) continue;
    const near = token.rawName.startsWith('--') ? closest(token.name, known) : undefined;
    throw new UsageError(
      `unknown option ${token.rawName}; ${near ? `did you mean --${near}?` : `memcore ${command} --help lists the options`}`,
    );
  }
}

/**
 * Runs one command line; returns the exit code. Exported for tests and for the owner of a folder,
 * which runs the CLI calls it is sent against its own engine (`context.engine`).
 */
export async function main(argv: string[], io: Io, context: { engine?: MemoryEngine; cwd?: string } = {}): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  let json = rest.includes('--json');
  let memory: MemoryEngine | undefined;
  const cwd = context.cwd ?? process.cwd();
  try {
    if (!command) {
      const near = closest(name, Object.keys(COMMANDS));
      throw new UsageError(`unknown command "${name}"${near ? `; did you mean ${near}?` : ''}; see memcore --help`);
    }
    const options = { ...COMMON, ...command.options };
    const { values, positionals } = (() => {
      try {
        return parseArgs({ args: rest, options, allowPositionals: true, strict: true });
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') refuseUnknownOptions(name, rest, options);
        throw e;
      }
    })();
    json = values.json === true;
    if (values.help) {
      io.out(commandHelp(name));
      return EXIT.ok;
    }
    const [min, max] = command.args;
    if (positionals.length < min || positionals.length > max) {
      throw new UsageError(
        `${name} takes ${min === max ? min : `${min} or more`} argument${max === 1 ? '' : 's'}, got ${positionals.length}; see memcore --help`,
      );
    }
    const dir = resolve(cwd, resolveConfig({ options: typeof values.db === 'string' ? { db: values.db } : {}, cwd }).values.db as string);
    if (command.uses !== 'nothing' && !context.engine) {
      const served = await runThroughOwner(dir, argv, cwd, io);
      if (served !== undefined) return served;
    }
    // Asked for once the command line is checked, so that a bad option is reported first.
    const engine = async () => {
      if (context.engine) return context.engine;
      if (command.uses === 'reads' && !memory && !existsSync(join(dir, 'meta.json')) && !holdsStores(dir)) {
        throw new MemcoreError(`no memory at ${dir}; create it with \`memcore ingest <file>\` (or pass --db)`, 'NOT_FOUND');
      }
      return (memory ??= await openMemory({ path: dir, cwd }));
    };
    return await command.run({ engine, cwd, dir, served: context.engine !== undefined, runCli: main }, positionals, values, io);
  } catch (e) {
    const message = (e as Error).message.split('\n')[0] ?? String(e);
    io.err(`memcore: ${message}`);
    if (json)
      io.out(JSON.stringify({ error: { code: e instanceof MemcoreError ? e.code : isUsageError(e) ? 'USAGE' : 'FAILURE', message } }));
    return exitCodeOf(e);
  } finally {
    await memory?.close();
  }
}

// Run when executed (also through the npm bin symlink), not when imported by tests.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const code = await main(process.argv.slice(2), {
    out: (t) => process.stdout.write(t + '\n'),
    err: (t) => process.stderr.write(t + '\n'),
    isTTY: process.stderr.isTTY === true,
  });
  process.exitCode = code;
}
