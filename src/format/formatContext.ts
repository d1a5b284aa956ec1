import type { ContextBundle, ScoredEntry } from '../model/types.js';
import { estimateTokens } from '../retrieve/score.js';
import { codeSpan, formatBundle, staleness } from './formatBundle.js';
import { neutralize } from './neutralize.js';
import { checkOptionNames, optionNames } from '../model/options.js';

export type ContextStyle = 'prompt' | 'markdown' | 'json' | 'text';

export interface FormatContextOptions {
  /**
   * 'prompt' (default): a `<memory>` block for a model's context, memory text neutralised;
   * 'markdown': a readable document; 'json': the bundle; 'text': the terminal view.
   */
  style?: ContextStyle;
  /** Stop adding entries once the output would pass this many tokens (≈ 4 characters a token). */
  maxTokens?: number;
  /** Prompt style: open the block as `<memory bundle="b_…">`, so that an agent can rate what it used. Default false. */
  withBundleId?: boolean;
}

const FORMAT_CONTEXT_OPTIONS = optionNames<FormatContextOptions>()(['style', 'maxTokens', 'withBundleId']);

export const PROMPT_HEADER = "Reference only — may be outdated; prefer the code and the user's instructions.";

/** What a bundle judged off-topic (matchStrength 'none') says in place of its entries. */
export const NO_RELEVANT_MEMORY = 'No project memory is relevant to this task: its closest entries match only words common in this memory.';

/** What a bundle of weak matches (matchStrength 'weak') says above its entries. */
export const WEAK_MATCHES = 'Weak matches only: no entry is known to bear on this task; these share some of its words and may not apply.';

function entrySource(e: ScoredEntry): string {
  const parts = [e.entry.entryType, e.entry.coreId, `${e.entry.confidence} confidence`];
  if (e.entry.source) parts.push(`source: ${e.entry.source}`);
  if (e.possiblyStale) parts.push('possibly stale: the code it references is gone');
  return parts.join(', ');
}

/** Adds blocks in order while they fit the budget; says how many were left out. */
function packBlocks(head: string[], blocks: string[], tail: string[], maxTokens: number | undefined, sep: string): string {
  const out = [...head];
  let used = estimateTokens([...head, ...tail].join(sep));
  let left = 0;
  for (const b of blocks) {
    const cost = estimateTokens(b + sep);
    if (maxTokens !== undefined && used + cost > maxTokens) {
      left++;
      continue;
    }
    out.push(b);
    used += cost;
  }
  if (left > 0) out.push(`(${left} more item${left === 1 ? '' : 's'} left out for the token budget)`);
  return [...out, ...tail].join(sep);
}

/** One line: white space folded, then neutralised (so a fold cannot hide an instruction). */
const clean = (s: string) => neutralize(s.replace(/[\s\u0085]+/g, ' ').trim()).text;

/**
 * The `<memory>` block; nothing at all for a bundle with nothing in it, since an empty block
 * would spend prompt tokens to say nothing.
 */
function promptStyle(bundle: ContextBundle, maxTokens: number | undefined, withBundleId: boolean): string {
  if (bundle.entries.length === 0 && bundle.codeRefs.length === 0 && bundle.goldenPaths.length === 0) return '';
  const open = withBundleId && bundle.bundleId ? `<memory bundle="${bundle.bundleId}">` : '<memory>';
  // Entries of an off-topic task would only pad the prompt, and read as if they applied; weak
  // matches are given, said to be weak.
  const weak = bundle.lowConfidence && bundle.matchStrength === 'weak';
  if (bundle.lowConfidence && !weak) return [open, NO_RELEVANT_MEMORY, '</memory>'].join('\n');
  const blocks: string[] = [];
  for (const e of bundle.entries) {
    const content = neutralize(e.entry.content.trim())
      .text.split('\n')
      .map((l) => `  ${l}`)
      .join('\n');
    blocks.push(`- ${clean(e.entry.title)} (${clean(entrySource(e))})\n${content}`);
  }
  if (bundle.codeRefs.length > 0) {
    blocks.push(['Code:', ...bundle.codeRefs.map((c) => `- ${clean(codeSpan(c.code))}${staleness(c)}`)].join('\n'));
  }
  for (const p of bundle.goldenPaths) {
    blocks.push(
      [
        `Golden path: ${clean(p.name)}`,
        ...p.steps.map((s) => `${s.order}. ${clean(codeSpan(s.code))}${s.description ? ` — ${clean(s.description)}` : ''}`),
      ].join('\n'),
    );
  }
  return packBlocks(weak ? [open, PROMPT_HEADER, WEAK_MATCHES] : [open, PROMPT_HEADER], blocks, ['</memory>'], maxTokens, '\n');
}

function markdownStyle(bundle: ContextBundle, maxTokens: number | undefined): string {
  const blocks: string[] = !bundle.lowConfidence
    ? []
    : bundle.matchStrength === 'weak'
      ? [`> **Weak matches.** ${WEAK_MATCHES}`]
      : [`> **Low confidence.** ${NO_RELEVANT_MEMORY} The closest entries follow.`];
  for (const e of bundle.entries) {
    blocks.push(`### ${e.entry.title}\n_${entrySource(e)} · score ${e.score.toFixed(3)}_\n\n${e.entry.content.trim()}`);
  }
  if (bundle.codeRefs.length > 0)
    blocks.push(['## Code', ...bundle.codeRefs.map((c) => `- \`${codeSpan(c.code)}\`${staleness(c)}`)].join('\n'));
  for (const p of bundle.goldenPaths) {
    blocks.push(
      [
        `## Golden path: ${p.name}`,
        ...p.steps.map((s) => `${s.order}. \`${codeSpan(s.code)}\`${s.description ? ` — ${s.description}` : ''}`),
      ].join('\n'),
    );
  }
  return packBlocks([`# Context for: ${bundle.task}`, `> ${PROMPT_HEADER}`], blocks, [], maxTokens, '\n\n');
}

/** Renders a bundle for a model's prompt, a document, a program or a terminal. */
export function formatContext(bundle: ContextBundle, options: FormatContextOptions = {}): string {
  checkOptionNames('formatContext', options, FORMAT_CONTEXT_OPTIONS);
  const { style = 'prompt', maxTokens } = options;
  switch (style) {
    case 'prompt':
      return promptStyle(bundle, maxTokens, options.withBundleId === true);
    case 'markdown':
      return markdownStyle(bundle, maxTokens);
    case 'json':
      return JSON.stringify(bundle, null, 2);
    case 'text':
      return formatBundle(bundle);
    default:
      throw new Error(`style must be prompt, markdown, json or text, got ${JSON.stringify(style)}`);
  }
}
