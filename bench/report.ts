/**
 * `npm run bench:report -- <results.json> <report.html>`: the HTML report of a bench or eval
 * results file written before (bench/results/*.json), for results that were not run with --report.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { evalReportHtml } from '../src/eval/evalReport.js';
import type { EvalReport } from '../src/eval/runEval.js';
import { benchReportHtml, type BenchJson } from './benchReport.js';

const [input, output] = process.argv.slice(2);
if (!input || !output?.endsWith('.html')) {
  console.error(
    'usage: npm run bench:report -- <results.json> <report.html>\n\nExit codes: 0 written, 1 unreadable results, 2 bad arguments.',
  );
  process.exit(2);
}
try {
  const json = JSON.parse(await readFile(input, 'utf8')) as BenchJson | EvalReport;
  await writeFile(output, 'strategies' in json ? evalReportHtml(json) : benchReportHtml(json));
  console.log(`wrote ${output}`);
} catch (e) {
  console.error(`bench:report: ${(e as Error).message}`);
  process.exit(1);
}
