/** The offline HTML reports of eval and bench: escaped, self-contained, and holding what they claim. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { barChart, escapeHtml, htmlTable, lineChart } from '../src/report/htmlReport.js';
import { benchReportHtml, type BenchJson } from '../bench/benchReport.js';
import { capturedIo, tempDir } from './helpers.js';

const TINY = fileURLToPath(new URL('./fixtures/tiny-eval.yaml', import.meta.url));
const HOSTILE = '<script>alert(1)</script>"&\'';

/** Nothing in the file runs or is fetched: no script, no address of another place. */
function expectOffline(html: string): void {
  expect(html).not.toMatch(/<script/i);
  expect(html).not.toMatch(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
  expect(html).not.toMatch(/@import|url\(/i);
}

describe('report building blocks', () => {
  it('escape every text they are given', () => {
    expect(escapeHtml(HOSTILE)).toBe('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;');
    const chart = lineChart({ title: HOSTILE, xLabel: HOSTILE, yLabel: 'y', x: [1, 2], series: [{ name: HOSTILE, values: [0.5, null] }] });
    const bars = barChart(HOSTILE, 'ms', [{ label: HOSTILE, bars: [{ name: HOSTILE, value: 3 }] }]);
    const table = htmlTable([HOSTILE], [[HOSTILE]]);
    for (const html of [chart, bars, table]) {
      expect(html).not.toContain('<script>');
      expect(html).toContain('&lt;script&gt;');
    }
    // A gap in a series is left out of its line rather than drawn at zero.
    expect(chart.match(/<circle/g)).toHaveLength(1);
  });
});

describe('memcore eval --report', () => {
  it('writes one offline HTML file with the curves, every metric and each strategy misses', async () => {
    const dir = await tempDir();
    const file = join(dir, 'report.html');
    const { io, err } = capturedIo();
    expect(await main(['eval', TINY, '--strategies', 'keyword,hybrid', '--k', '1,3', '--report', file], io)).toBe(0);
    expect(err.join('\n')).toContain(`wrote ${file}`);
    const html = await readFile(file, 'utf8');
    expectOffline(html);
    expect(html).toContain('memcore eval: tiny');
    expect(html.match(/<svg/g)).toHaveLength(2);
    expect(html).toContain('Recall@k');
    expect(html).toContain('All-gold@k');
    for (const s of ['keyword', 'hybrid']) expect(html).toContain(`<td>${s}</td>`);
    // --misses was not given: the report lists misses at the k nearest 10 (3 here).
    expect(html).toContain('Misses: queries with a gold entry outside the top 3');
    expect(html).toMatch(/<summary>keyword: \d+ of 3 queries<\/summary>/);
  });

  it('refuses a report name that is not .html', async () => {
    const { io, err } = capturedIo();
    expect(await main(['eval', TINY, '--report', 'report.txt'], io)).toBe(2);
    expect(err.join('\n')).toContain('--report writes an HTML file');
  });
});

describe('the bench report', () => {
  const percentiles = (p50: number) => ({ p50, p95: p50 * 2, p99: p50 * 3 });
  const size = (n: number, ctx: number): BenchJson['results'][number] => ({
    size: n,
    ingest: { entriesPerSec: 20_000 },
    context: { cold: percentiles(ctx), warm: percentiles(0.01), stages: { candidates: ctx / 2, score: ctx / 4 } },
    naive: percentiles(ctx * 40),
    plainVector: percentiles(ctx * 30),
    peakRssMb: 900,
    speedupVsNaive: 40,
    methods: {
      buildTaskContext: { ...percentiles(ctx), kind: 'memcore', queries: 200, capped: false },
      'orama-hybrid': { ...percentiles(ctx * 300), kind: 'peer', queries: 20, capped: true },
    },
  });

  it('shows latency percentiles by store size and by stage, offline', () => {
    const html = benchReportHtml({
      date: '2026-11-25T10:00:00.000Z',
      node: 'v20',
      cpus: 2,
      queries: 200,
      results: [size(100_000, 5.7), size(10_000, 2.1)],
    });
    expectOffline(html);
    expect(html).toContain('buildTaskContext percentiles by store size');
    expect(html).toContain('buildTaskContext stages, median ms by store size');
    expect(html).toContain('buildTaskContext latency by store size');
    // Sizes in order, whatever order the results came in.
    expect(html.indexOf('<td>10,000</td>')).toBeLessThan(html.indexOf('<td>100,000</td>'));
    expect(html).toContain('<td>5.70</td>');
    expect(html).toContain('<td>orama-hybrid (peer)</td>');
    expect(html).toContain('20 (capped)');
  });
});
