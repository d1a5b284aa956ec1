import type { CodeLocation, CodeReference, ContextBundle, GoldenPath, MemoryEntry, Reason } from '../model/types.js';

/** An entry as a tool answer or `memcore show` gives it: a header line, then its content. */
export function entryText(e: MemoryEntry): string {
  return `[${e.entryType}] ${e.title} (id ${e.id}, core ${e.coreId})\n${e.content.trimEnd()}`;
}

export function codeSpan(c: CodeLocation): string {
  const lines =
    c.startLine === null ? '' : c.endLine !== null && c.endLine !== c.startLine ? `:${c.startLine}-${c.endLine}` : `:${c.startLine}`;
  return `${c.filePath}${lines}${c.symbol ? ` (${c.symbol})` : ''}`;
}

/** ` (moved)`, ` (drifted)`, ` (orphaned)` after a code reference that is not where it says; nothing when fresh or unknown. */
export function staleness(c: CodeReference): string {
  return c.freshness && c.freshness !== 'fresh' ? ` (${c.freshness})` : '';
}

export function describeReason(r: Reason): string {
  if (r.kind === 'vector') return `vector #${r.rank}, similarity ${r.similarity.toFixed(3)}`;
  if (r.kind === 'keyword') return `keyword #${r.rank}, bm25 ${r.bm25.toFixed(2)}`;
  if (r.kind === 'mention') return `named in the task ("${r.mention}")`;
  if (r.kind === 'code') return `references changed code ${r.code}`;
  if (r.kind === 'feedback')
    return `${r.of === 'entry' ? '' : `its ${r.of} `}rated ${r.signals} time${r.signals === 1 ? '' : 's'}, effectiveness ${r.effectiveness.toFixed(2)}`;
  const hops = r.path.map((h) => `${h.from} -${h.type}-> ${h.to}`).join(', ');
  return `graph ${r.hops} hop${r.hops === 1 ? '' : 's'} from ${r.seedId}: ${hops}`;
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

/** Renders a bundle as plain text for a person reading a terminal. */
export function formatBundle(bundle: ContextBundle): string {
  const out: string[] = [
    `Task: ${bundle.task}`,
    ...(bundle.lowConfidence
      ? [
          bundle.matchStrength === 'weak'
            ? 'Weak matches: no entry is known to bear on the task; these share some of its words.'
            : 'Low confidence: no entry is known to be relevant; these are the closest.',
        ]
      : []),
    '',
  ];
  out.push(`Entries (${bundle.entries.length}):`);
  bundle.entries.forEach((s, i) => {
    const e = s.entry;
    out.push(
      `${String(i + 1).padStart(2)}. [${e.entryType}] ${e.title}  (${e.coreId}, score ${s.score.toFixed(3)}, ${e.confidence} confidence, ~${s.tokens} tokens)`,
    );
    out.push(`    id: ${e.id}${s.possiblyStale ? '  (possibly stale: the code it references is gone)' : ''}`);
    for (const r of s.why) out.push(`    why: ${describeReason(r)}`);
    out.push(indent(e.content.trim(), '    │ '));
  });
  if (bundle.codeRefs.length > 0) {
    out.push('', `Code references (${bundle.codeRefs.length}):`);
    for (const c of bundle.codeRefs)
      out.push(`  - ${codeSpan(c.code)}${staleness(c)}  relevance ${c.relevance.toFixed(2)}  ← ${(c.why ?? c.entryIds).join('; ')}`);
  }
  if (bundle.goldenPaths.length > 0) {
    out.push('', `Golden paths (${bundle.goldenPaths.length}):`);
    for (const p of bundle.goldenPaths) {
      out.push(`  ${p.name} [${p.id}]${p.concept ? ` — ${p.concept}` : ''}`);
      for (const s of p.steps) out.push(`    ${s.order}. ${codeSpan(s.code)}${s.description ? ` — ${s.description}` : ''}`);
    }
  }
  if (bundle.notes.length > 0) out.push('', 'Notes:', ...bundle.notes.map((n) => `  - ${n}`));
  const timing = Object.entries(bundle.timings)
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ');
  out.push('', `Timings (ms): ${timing}${bundle.cacheHit ? ' (cache hit)' : ''}`);
  return out.join('\n');
}

/** A golden path, its steps in order: `memcore golden-path` and the MCP tools. */
export function formatGoldenPath(path: GoldenPath): string {
  return [
    `${path.name} [${path.id}]${path.concept ? ` — ${path.concept}` : ''}`,
    ...(path.description ? [path.description] : []),
    ...path.steps.map(
      (s) =>
        `  ${s.order}. ${codeSpan(s.code)}${s.description ? ` — ${s.description}` : ''}${s.keyConcepts.length ? `  [${s.keyConcepts.join(', ')}]` : ''}`,
    ),
  ].join('\n');
}
