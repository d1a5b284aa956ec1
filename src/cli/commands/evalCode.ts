/**
 * `memcore eval code-localization --git-dir <name>=<clone> …`: the code channel measured on real
 * repositories' history (src/eval/codeLocalization.ts). main.ts's `eval` hands this target here.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

export interface EvalCodeIo {
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
}

/** Thrown for a bad command line (exit 2); main.ts maps it. */
export type UsageErrorOf = (message: string) => Error;

/** `--git-dir hono=/path` values as a map; a value without `=` is a usage error. */
export function gitDirsOf(values: unknown, usage: UsageErrorOf): Record<string, string> {
  const list = values === undefined ? [] : Array.isArray(values) ? values : [values];
  const out: Record<string, string> = {};
  for (const v of list) {
    const at = typeof v === 'string' ? v.indexOf('=') : -1;
    if (at <= 0 || at === (v as string).length - 1)
      throw usage(`--git-dir takes <name>=<path of a clone>, e.g. hono=/tmp/hono; got "${String(v)}"`);
    out[(v as string).slice(0, at)] = (v as string).slice(at + 1);
  }
  if (list.length === 0)
    throw usage('eval code-localization needs --git-dir <name>=<clone> for each repository to measure (hono, click, cobra)');
  return out;
}

export async function evalCodeLocalization(
  cwd: string,
  v: Record<string, unknown>,
  io: EvalCodeIo,
  parsed: { ks?: number[]; limit?: number; misses?: number; usage: UsageErrorOf },
): Promise<number> {
  const { formatLocalization, runCodeLocalization } = await import('../../eval/codeLocalization.js');
  const gitDirs = Object.fromEntries(Object.entries(gitDirsOf(v['git-dir'], parsed.usage)).map(([k, p]) => [k, resolve(cwd, p)]));
  const report = await runCodeLocalization({
    gitDirs,
    ...(typeof v.data === 'string' ? { data: resolve(cwd, v.data) } : {}),
    ...(parsed.ks ? { ks: parsed.ks } : {}),
    ...(parsed.limit !== undefined ? { limit: parsed.limit } : {}),
    ...(parsed.misses !== undefined ? { misses: parsed.misses } : {}),
    ...(v['no-docs'] === true ? { docs: false } : {}),
    onProgress: (m) => io.isTTY && !v.json && io.err(m),
  });
  if (typeof v.out === 'string') await writeFile(resolve(cwd, v.out), JSON.stringify(report, null, 2));
  io.out(v.json === true ? JSON.stringify(report, null, 2) : formatLocalization(report));
  return 0;
}
