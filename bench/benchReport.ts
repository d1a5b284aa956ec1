/**
 * The bench's results as one offline HTML file (`npm run bench -- --report <file.html>`, or
 * `npm run bench:report -- <results.json> <file.html>` for a results file written before):
 * latency percentiles by store size, every search method by size, and the stages of
 * buildTaskContext. Also the chart the bench writes beside its JSON (.svg).
 */
import { barChart, escapeHtml, htmlDocument, htmlTable, lineChart, type Series } from '../src/report/htmlReport.js';

interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

/** What the report reads of a bench result; older results files lack the later fields. */
export interface BenchSizeResult {
  size: number;
  ingest: { entriesPerSec: number };
  context: { cold: Percentiles; warm: Percentiles; stages: Record<string, number> };
  naive: Percentiles;
  plainVector: Percentiles;
  methods?: Record<string, Percentiles & { kind: 'memcore' | 'peer'; queries: number; capped: boolean }>;
  freshProcess?: { firstQueryMs: number; rssMb: number };
  peakRssMb: number;
  speedupVsNaive: number;
}

export interface BenchJson {
  date: string;
  node: string;
  cpus: number;
  queries: number;
  results: BenchSizeResult[];
}

const sizesOf = (results: BenchSizeResult[]) => [...results].sort((a, b) => a.size - b.size);

/** buildTaskContext's percentiles and the baselines, by store size. */
export function latencyBySizeChart(results: BenchSizeResult[]): string {
  const rs = sizesOf(results);
  const line = (name: string, f: (r: BenchSizeResult) => number | undefined, dashed = false): Series => ({
    name,
    values: rs.map((r) => f(r) ?? null),
    dashed,
  });
  return lineChart({
    title: 'buildTaskContext latency by store size (ms, log scale)',
    xLabel: 'entries',
    yLabel: 'ms',
    x: rs.map((r) => r.size),
    xTicks: rs.map((r) => r.size.toLocaleString('en')),
    xLog: true,
    yLog: true,
    series: [
      line('p50 (cold cache)', (r) => r.context.cold.p50),
      line('p95', (r) => r.context.cold.p95),
      line('p99', (r) => r.context.cold.p99),
      line('cache hit p50', (r) => r.context.warm.p50),
      line('naive pipeline p50', (r) => r.naive.p50, true),
      line('plain LanceDB vector p50', (r) => r.plainVector.p50, true),
    ],
  });
}

/** Every search method's p50 by store size (peers marked). */
function methodsChart(results: BenchSizeResult[]): string {
  const rs = results.filter((r) => r.methods);
  if (rs.length === 0) return '';
  return barChart(
    'Every search method, p50 ms by store size (k = 10)',
    'ms',
    rs.map((r) => ({
      label: `${r.size.toLocaleString('en')} entries`,
      bars: Object.entries(r.methods!).map(([name, t]) => ({ name: t.kind === 'peer' ? `${name} (peer)` : name, value: t.p50 })),
    })),
  );
}

export function benchReportHtml(json: BenchJson): string {
  const rs = sizesOf(json.results);
  const f = (x: number | undefined, d = 2) => (x === undefined ? '–' : x.toFixed(d));
  const main = htmlTable(
    [
      'entries',
      'ingest/s',
      'ctx p50',
      'ctx p95',
      'ctx p99',
      'cache hit p50',
      'naive p50',
      'speedup',
      'peak RSS MB',
      'fresh process 1st query s',
    ],
    rs.map((r) => [
      r.size.toLocaleString('en'),
      f(r.ingest.entriesPerSec, 0),
      f(r.context.cold.p50),
      f(r.context.cold.p95),
      f(r.context.cold.p99),
      f(r.context.warm.p50, 3),
      f(r.naive.p50),
      `${f(r.speedupVsNaive, 1)}×`,
      f(r.peakRssMb, 0),
      f(r.freshProcess && r.freshProcess.firstQueryMs / 1000),
    ]),
  );
  const methods = rs
    .filter((r) => r.methods)
    .map(
      (r) =>
        `<h3>${escapeHtml(r.size.toLocaleString('en'))} entries</h3>` +
        htmlTable(
          ['method', 'p50 ms', 'p95 ms', 'p99 ms', 'queries'],
          Object.entries(r.methods!).map(([name, t]) => [
            t.kind === 'peer' ? `${name} (peer)` : name,
            f(t.p50),
            f(t.p95),
            f(t.p99),
            `${t.queries}${t.capped ? ' (capped)' : ''}`,
          ]),
        ),
    )
    .join('\n');
  return htmlDocument(
    'memcore bench',
    [json.date.slice(0, 19).replace('T', ' '), `node ${json.node}`, `${json.cpus} cores`, `${json.queries} queries per size`],
    [
      barChart(
        'buildTaskContext percentiles by store size (cold cache)',
        'ms',
        rs.map((r) => ({
          label: `${r.size.toLocaleString('en')} entries`,
          bars: [
            ['p50', r.context.cold.p50],
            ['p95', r.context.cold.p95],
            ['p99', r.context.cold.p99],
            ['cache hit p50', r.context.warm.p50],
            ['naive p50', r.naive.p50],
          ].map(([name, value]) => ({ name: name as string, value: value as number })),
        })),
      ),
      rs.length > 1 ? latencyBySizeChart(rs) : '',
      barChart(
        'buildTaskContext stages, median ms by store size',
        'ms',
        rs.map((r) => ({
          label: `${r.size.toLocaleString('en')} entries`,
          bars: Object.entries(r.context.stages).map(([name, value]) => ({ name, value })),
        })),
      ),
      methodsChart(rs),
      '<h2>Latency (ms) and memory</h2>',
      main,
      methods ? `<h2>Every search method, interleaved query by query (k = 10)</h2>${methods}` : '',
    ],
  );
}
