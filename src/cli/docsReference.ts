/**
 * The parts of docs/ that are generated: the settings table from config's SETTINGS, and the
 * command line's usage from the CLI's own help text. `npm run docs:reference` writes them;
 * test/docsReference.test.ts fails while a doc differs from what this generates.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { SETTINGS } from '../config/config.js';
import { USAGE } from './usage.js';

export interface GeneratedSection {
  /** The doc, relative to the repository. */
  file: string;
  /** What it is generated from, in its markers. */
  name: string;
  content: string;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

function settingsTable(): string {
  const rows = SETTINGS.map((s) => {
    const fallback = s.default === undefined ? '–' : `\`${typeof s.default === 'string' ? s.default : JSON.stringify(s.default)}\``;
    return `| \`${s.key}\` | \`${s.env}\` | ${fallback} | ${cell(s.help)} |`;
  });
  return ['| setting (config file / option) | environment | default | what it does |', '|---|---|---|---|', ...rows].join('\n');
}

export function generatedSections(): GeneratedSection[] {
  return [
    { file: 'docs/configuration.md', name: 'settings', content: settingsTable() },
    { file: 'docs/cli.md', name: 'usage', content: ['```text', USAGE.trimEnd(), '```'].join('\n') },
  ];
}

const markers = (name: string) => [`<!-- generated: ${name} (npm run docs:reference) -->`, `<!-- end generated: ${name} -->`] as const;

/** The doc's text with the section replaced; throws when the doc lacks its markers. */
export function withSection(text: string, section: GeneratedSection): string {
  const [start, end] = markers(section.name);
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${section.file} lacks the markers of the generated ${section.name}`);
  return `${text.slice(0, from + start.length)}\n${section.content}\n${text.slice(to)}`;
}

async function writeReference(root: string): Promise<void> {
  for (const section of generatedSections()) {
    const path = `${root}/${section.file}`;
    const text = await readFile(path, 'utf8');
    const next = withSection(text, section);
    if (next !== text) {
      await writeFile(path, next);
      console.log(`${section.file}: ${section.name} rewritten`);
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  await writeReference(new URL('../..', import.meta.url).pathname.replace(/\/$/, ''));
}
