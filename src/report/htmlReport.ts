/**
 * Self-contained HTML reports (eval, bench): charts drawn as inline SVG on this side, so a report
 * is one file that opens offline, with no script and nothing fetched. Every text is escaped.
 */

export function escapeHtml(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Distinct colours for up to ten series, then again. */
const PALETTE = ['#2f6fb3', '#d9822b', '#17917a', '#c0392b', '#8e44ad', '#6b7785', '#b7791f', '#1f9bd1', '#7a9a01', '#e84393'];

export interface Series {
  name: string;
  /** One value per x; null where there is none (a gap in the line). */
  values: (number | null)[];
  dashed?: boolean;
}

export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  x: number[];
  /** Tick labels of the x values (default the numbers). */
  xTicks?: string[];
  xLog?: boolean;
  yLog?: boolean;
  /** Fixed y range (linear axes), e.g. [0, 1] for a share. */
  yRange?: [number, number];
  series: Series[];
}

/** A line chart as an SVG element, with a legend beside it. */
export function lineChart(o: LineChartOptions): string {
  const [W, L, R, T, B] = [860, 64, 230, 36, 48];
  const H = Math.max(340, T + o.series.length * 18 + B);
  const tx = (v: number) => (o.xLog ? Math.log10(v) : v);
  const ty = (v: number) => (o.yLog ? Math.log10(Math.max(v, 1e-3)) : v);
  const xs = o.x.map(tx);
  const values = o.series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v)));
  let [ymin, ymax] = o.yRange ?? [Math.min(...values.map(ty)), Math.max(...values.map(ty))];
  if (o.yLog) [ymin, ymax] = [Math.floor(ymin), Math.max(Math.ceil(ymax), Math.floor(ymin) + 1)];
  else if (!o.yRange) [ymin, ymax] = [Math.min(0, ymin), ymax === 0 ? 1 : ymax * 1.1];
  const pad = xs.length > 1 ? (Math.max(...xs) - Math.min(...xs)) * 0.05 : 1;
  const [xmin, xmax] = [Math.min(...xs) - pad, Math.max(...xs) + pad];
  const px = (v: number) => L + ((tx(v) - xmin) / (xmax - xmin || 1)) * (W - L - R);
  const py = (v: number) => T + (1 - (ty(v) - ymin) / (ymax - ymin || 1)) * (H - T - B);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11" role="img" aria-label="${escapeHtml(o.title)}">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="20" font-size="13" font-weight="600">${escapeHtml(o.title)}</text>`,
  ];
  const yTicks = o.yLog
    ? Array.from({ length: ymax - ymin + 1 }, (_, i) => 10 ** (ymin + i))
    : Array.from({ length: 6 }, (_, i) => ymin + ((ymax - ymin) * i) / 5);
  for (const v of yTicks) {
    const y = py(v);
    parts.push(
      `<line x1="${L}" x2="${W - R}" y1="${y}" y2="${y}" stroke="#e3e6ea"/><text x="${L - 6}" y="${y + 4}" text-anchor="end">${escapeHtml(formatTick(v))}</text>`,
    );
  }
  o.x.forEach((v, i) =>
    parts.push(`<text x="${px(v)}" y="${H - B + 16}" text-anchor="middle">${escapeHtml(o.xTicks?.[i] ?? formatTick(v))}</text>`),
  );
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">${escapeHtml(o.xLabel)}</text>`);
  parts.push(`<text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(o.yLabel)}</text>`);
  o.series.forEach((s, i) => {
    const colour = PALETTE[i % PALETTE.length]!;
    const points = o.x.flatMap((v, j) =>
      s.values[j] !== null && Number.isFinite(s.values[j]) ? [[px(v), py(s.values[j]!)] as const] : [],
    );
    parts.push(
      `<polyline points="${points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ')}" fill="none" stroke="${colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 4"' : ''}/>`,
    );
    for (const [x, y] of points) parts.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3" fill="${colour}"/>`);
    parts.push(
      `<rect x="${W - R + 14}" y="${T + i * 18}" width="10" height="10" fill="${colour}"/><text x="${W - R + 30}" y="${T + i * 18 + 9}">${escapeHtml(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

export interface BarGroup {
  label: string;
  bars: { name: string; value: number }[];
}

/** Horizontal bars, one group per label (a store size, say), one bar per name in a shared colour. */
export function barChart(title: string, unit: string, groups: BarGroup[]): string {
  const names = [...new Set(groups.flatMap((g) => g.bars.map((b) => b.name)))];
  const [W, L, R, T, bar, gap] = [860, 170, 90, 40, 14, 14];
  const H = T + groups.reduce((h, g) => h + (g.bars.length + 1) * bar + gap, 0) + 20;
  const max = Math.max(...groups.flatMap((g) => g.bars.map((b) => b.value)), 1e-9);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11" role="img" aria-label="${escapeHtml(title)}">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="10" y="20" font-size="13" font-weight="600">${escapeHtml(title)}</text>`,
  ];
  let y = T;
  for (const g of groups) {
    parts.push(`<text x="10" y="${y + 11}" font-weight="600">${escapeHtml(g.label)}</text>`);
    y += bar;
    for (const b of g.bars) {
      const width = (b.value / max) * (W - L - R);
      const colour = PALETTE[names.indexOf(b.name) % PALETTE.length]!;
      parts.push(`<text x="${L - 6}" y="${y + 11}" text-anchor="end">${escapeHtml(b.name)}</text>`);
      parts.push(`<rect x="${L}" y="${y}" width="${Math.max(1, width).toFixed(1)}" height="${bar - 2}" fill="${colour}"/>`);
      parts.push(`<text x="${L + width + 6}" y="${y + 11}">${escapeHtml(`${formatTick(b.value)} ${unit}`)}</text>`);
      y += bar;
    }
    y += gap;
  }
  parts.push('</svg>');
  return parts.join('\n');
}

function formatTick(v: number): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 1000) return v.toLocaleString('en', { maximumFractionDigits: 0 });
  if (Math.abs(v) >= 10) return v.toFixed(v % 1 === 0 ? 0 : 1);
  return Number(v.toPrecision(3)).toString();
}

/** A table; cells are text (escaped) unless given as `{ html }`. */
export function htmlTable(head: string[], rows: (string | number | { html: string })[][]): string {
  const cell = (c: string | number | { html: string }, tag: string) =>
    `<${tag}${typeof c === 'number' ? ' class="num"' : ''}>${typeof c === 'object' ? c.html : escapeHtml(c)}</${tag}>`;
  return `<table><thead><tr>${head.map((h) => cell(h, 'th')).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => cell(c, 'td')).join('')}</tr>`).join('\n')}</tbody></table>`;
}

/** The whole document: a title, a line of facts, then the sections (HTML, already escaped). */
export function htmlDocument(title: string, facts: string[], sections: string[]): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px/1.5 system-ui, sans-serif; color: #1f2328; max-width: 1100px; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.facts { color: #65707c; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 13px; }
th, td { border-bottom: 1px solid #d8dee4; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
svg { max-width: 100%; height: auto; display: block; margin: 0.5rem 0; }
details { margin: 0.4rem 0; } summary { cursor: pointer; }
code { font: 12px ui-monospace, monospace; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="facts">${facts.map(escapeHtml).join(' · ')}</p>
${sections.join('\n')}
</body>
</html>
`;
}
