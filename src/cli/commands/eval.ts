import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { EvalFile } from '../../eval/evalFile.js';
import type { Strategy } from '../../eval/runEval.js';
import { SCORE_COMBINATIONS, type ScoreCombination } from '../../retrieve/score.js';

import { EXIT, int, print, UsageError, type Command } from '../command.js';

const evalCommand: Command = {
  options: {
    strategies: { type: 'string' },
    k: { type: 'string' },
    data: { type: 'string' },
    split: { type: 'string' },
    'auto-link': { type: 'boolean' },
    'no-auto-link': { type: 'boolean' },
    'limit-queries': { type: 'string' },
    out: { type: 'string' },
    'save-eval-file': { type: 'string' },
    'keep-db': { type: 'string' },
    misses: { type: 'string' },
    'simulate-feedback': { type: 'boolean', default: false },
    peers: { type: 'boolean', default: false },
    'score-combination': { type: 'string' },
    report: { type: 'string' },
    'git-dir': { type: 'string', multiple: true },
    'no-docs': { type: 'boolean', default: false },
  },
  args: [1, 1],
  uses: 'nothing',
  async run({ cwd }, [target], v, io) {
    if (target === 'code-localization' && !existsSync(target))
      return (await import('./evalCode.js')).evalCodeLocalization(cwd, v, io, {
        ks: typeof v.k === 'string' ? v.k.split(',').map((k) => int('k', k.trim())!) : undefined,
        limit: int('limit-queries', v['limit-queries'] as string | undefined),
        misses: int('misses', v.misses as string | undefined),
        usage: (m) => new UsageError(m),
      });
    const [{ ADAPTERS }, { loadEvalFile }, { formatReport, runEval, STRATEGIES }] = await Promise.all([
      import('../../eval/adapters/index.js'),
      import('../../eval/evalFile.js'),
      import('../../eval/runEval.js'),
    ]);
    const adapter = ADAPTERS[target!];
    const list = (name: string) =>
      typeof v[name] === 'string'
        ? (v[name] as string)
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : undefined;
    const strategies = list('strategies');
    for (const s of strategies ?? [])
      if (!STRATEGIES.includes(s as Strategy)) throw new UsageError(`--strategies takes ${STRATEGIES.join(', ')}; got "${s}"`);
    const ks = list('k')?.map((k) => int('k', k)!);
    let file: EvalFile;
    if (adapter && !existsSync(target!)) {
      if (io.isTTY && !v.json) io.err(`building the ${target} eval file …`);
      file = await adapter.build({
        ...(typeof v.data === 'string' ? { data: v.data } : {}),
        ...(typeof v.split === 'string' ? { split: v.split } : {}),
      });
    } else {
      file = await loadEvalFile(target!);
    }
    const limit = v['limit-queries'] !== undefined ? int('limit-queries', v['limit-queries'] as string) : undefined;
    if (typeof v.report === 'string' && !v.report.endsWith('.html'))
      throw new UsageError(`--report writes an HTML file; give a name ending in .html, got "${v.report}"`);
    const ksAsked = ks ?? adapter?.ks ?? [2, 5, 8, 10, 25, 50];
    // A report lists each strategy's misses: at the k nearest 10 unless --misses says where.
    const misses =
      int('misses', v.misses as string | undefined) ??
      (typeof v.report === 'string' ? [...ksAsked].sort((a, b) => Math.abs(a - 10) - Math.abs(b - 10))[0] : undefined);
    if (misses !== undefined && misses < 1) throw new UsageError(`--misses takes a cut-off of 1 or more, got ${misses}`);
    if (limit !== undefined) file = { ...file, queries: file.queries.slice(0, limit) };
    if (typeof v['save-eval-file'] === 'string') await writeFile(v['save-eval-file'], JSON.stringify(file));
    const autoLink = v['no-auto-link'] ? false : v['auto-link'] ? true : (adapter?.autoLink ?? false);
    const combination = v['score-combination'] as ScoreCombination | undefined;
    if (combination !== undefined && !SCORE_COMBINATIONS.includes(combination))
      throw new UsageError(`--score-combination must be ${SCORE_COMBINATIONS.join(' or ')}, got "${combination}"`);
    const report = await runEval(file, {
      ...(strategies ? { strategies: strategies as Strategy[] } : {}),
      ks: ksAsked,
      autoLink,
      ...(typeof v['keep-db'] === 'string' ? { keepDb: v['keep-db'] } : {}),
      ...(misses !== undefined ? { misses } : {}),
      ...(v['simulate-feedback'] ? { simulateFeedback: true } : {}),
      ...(v.peers ? { peers: true } : {}),
      ...(combination !== undefined ? { context: { scoreCombination: combination } } : {}),
      onProgress: (m) => io.isTTY && !v.json && io.err(m),
    });
    if (typeof v.out === 'string') await writeFile(v.out, JSON.stringify(report, null, 2));
    if (typeof v.report === 'string') {
      await writeFile(resolve(cwd, v.report), (await import('../../eval/evalReport.js')).evalReportHtml(report));
      io.err(`wrote ${v.report}`);
    }
    print(io, v.json === true, report, () => formatReport(report, adapter && !existsSync(target!) ? adapter.reference : []));
    return EXIT.ok;
  },
};

export default evalCommand;
