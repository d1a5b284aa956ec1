import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generatedSections, withSection } from '../src/cli/docsReference.js';
import { SETTINGS } from '../src/config/config.js';

describe('the generated parts of docs/', () => {
  it('are what the settings table and the CLI usage generate (npm run docs:reference rewrites them)', async () => {
    for (const section of generatedSections()) {
      const text = await readFile(new URL(`../${section.file}`, import.meta.url), 'utf8');
      expect(withSection(text, section), `${section.file} (${section.name}): run npm run docs:reference`).toBe(text);
      expect(text).toContain(section.content);
    }
  });

  it('name every setting and command', () => {
    const [settings, usage] = generatedSections();
    expect(settings!.content).toContain('`MEMCORE_RESIDENT_MAX_ENTRIES` | `1000000`');
    expect(settings!.content.split('\n')).toHaveLength(2 + SETTINGS.length);
    for (const s of SETTINGS) expect(settings!.content).toContain(`| \`${s.key}\` | \`${s.env}\` |`);
    expect(usage!.content).toMatch(
      /search "<query>"\s+search entries \(--mode hybrid \| semantic \| matryoshka \| keyword \| find \| context\)/,
    );
    expect(() => withSection('no markers', settings!)).toThrow(/lacks the markers/);
  });
});
