import { escapeHtml, htmlDocument, htmlTable, lineChart } from '../report/htmlReport.js';
import type { EvalReport, StrategyResult } from './runEval.js';

const pct = (x: number | undefined) => (x === undefined ? '–' : (100 * x).toFixed(1));

/**
 * An eval run as one offline HTML file (`memcore eval … --report <file.html>`): recall@k and
 * all-gold@k curves per strategy (peers dashed), the table of every metric, and the queries each
 * strategy missed with where their gold ranked.
 */
export function evalReportHtml(r: EvalReport): string {
  const named = [...Object.entries(r.strategies), ...Object.entries(r.peers ?? {}).map(([p, res]) => [`${p} (peer)`, res] as const)] as [
    string,
    StrategyResult,
  ][];
  const curve = (title: string, metric: 'recall' | 'allGold', yLabel: string) =>
    lineChart({
      title,
      xLabel: 'k (entries returned)',
      yLabel,
      x: r.ks,
      xLog: r.ks.length > 2 && r.ks[r.ks.length - 1]! / r.ks[0]! >= 10,
      yRange: [0, 1],
      series: named.map(([name, res]) => ({
        name,
        values: r.ks.map((k) => res.overall[metric][k] ?? null),
        dashed: name.endsWith('(peer)'),
      })),
    });
  const table = htmlTable(
    ['strategy', ...r.ks.map((k) => `R@${k}`), ...r.ks.map((k) => `AG@${k}`), 'nDCG@10', 'MRR', 'ms/query'],
    named.map(([s, res]) => [
      s,
      ...r.ks.map((k) => pct(res.overall.recall[k])),
      ...r.ks.map((k) => pct(res.overall.allGold[k])),
      pct(res.overall.ndcg10),
      pct(res.overall.mrr),
      res.msPerQuery.toFixed(1),
    ]),
  );
  const categories = Object.keys(Object.values(r.strategies)[0]?.byCategory ?? {});
  const byCategory =
    categories.length > 1
      ? `<h2>By category (recall@${escapeHtml(r.ks.join('/'))}, %)</h2>` +
        htmlTable(
          ['strategy', ...categories.map((c) => `${c} (${Object.values(r.strategies)[0]!.byCategory[c]!.queries})`)],
          named.map(([s, res]) => [s, ...categories.map((c) => r.ks.map((k) => pct(res.byCategory[c]?.recall[k])).join(' / '))]),
        )
      : '';
  const misses = r.misses
    ? `<h2>Misses: queries with a gold entry outside the top ${r.misses.k}</h2><p>Gold ranks looked for down to ${r.misses.depth}; – means not found that deep.</p>` +
      named
        .filter(([, res]) => res.misses)
        .map(
          ([s, res]) =>
            `<details><summary>${escapeHtml(s)}: ${res.misses!.length} of ${r.queries} queries</summary>` +
            htmlTable(
              ['query', 'text', 'gold (rank)'],
              res.misses!.map((m) => [
                m.id,
                m.text.length > 300 ? `${m.text.slice(0, 300)}…` : m.text,
                m.gold.map((g) => `${g.id} ${g.rank ?? '–'}`).join(' | '),
              ]),
            ) +
            '</details>',
        )
        .join('\n')
    : '<h2>Misses</h2><p>Run with <code>--misses &lt;k&gt;</code> to list the queries each strategy missed.</p>';
  const feedback = r.feedback
    ? `<h2>Simulated feedback</h2><p>${r.feedback.rated} queries rated (${r.feedback.ratings} ratings); the other ${r.feedback.scored} scored without and with them: recall@${r.ks.join('/')} ${r.ks.map((k) => pct(r.feedback!.without.recall[k])).join('/')} → ${r.ks.map((k) => pct(r.feedback!.with.recall[k])).join('/')}.</p>`
    : '';
  return htmlDocument(
    `memcore eval: ${r.name}`,
    [
      `${r.entries.toLocaleString('en')} entries`,
      `${r.relations.toLocaleString('en')} relations`,
      `${r.queries.toLocaleString('en')} queries`,
      `embedder ${r.embedder}`,
      `ingest ${(r.ingestMs / 1000).toFixed(1)} s`,
    ],
    [
      curve('Recall@k: share of gold entries in the top k', 'recall', 'recall'),
      curve('All-gold@k: share of queries with every gold entry in the top k', 'allGold', 'all-gold'),
      '<h2>Every metric (%)</h2>',
      table,
      byCategory,
      misses,
      feedback,
    ],
  );
}
