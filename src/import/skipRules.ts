/**
 * What `memcore import` of a whole repository leaves out, as a person would: templates, test
 * fixtures and snapshots, vendored and generated folders, changelogs (unless asked for), and what
 * the user excludes by glob. Each file left out is reported with the reason (docs/import.md).
 */
import ignore from 'ignore';
import { posix } from 'node:path';
import { invalidInput } from '../model/errors.js';
import type { SkipRule } from './walkFiles.js';

export interface SkipOptions {
  /** Globs in .gitignore syntax, matched against paths from the folder imported. */
  exclude?: string[];
  /** Import changelogs (CHANGELOG.md, HISTORY.md, …) too. Default false. */
  changelogs?: boolean;
}

/** Folder names whose documents are test data: fixtures, snapshots, test suites. */
const TEST_FOLDERS = [
  'test',
  'tests',
  '__tests__',
  'testdata',
  'test-data',
  'test_data',
  'fixtures',
  '__fixtures__',
  'snapshots',
  '__snapshots__',
  'integration-tests',
  'integration_tests',
  'e2e',
];
/** Folder names of code (and its docs) copied from elsewhere. */
const VENDORED_FOLDERS = ['vendor', 'vendored', 'third_party', 'third-party', 'thirdparty'];
/** Folder names of what a build writes. */
const GENERATED_FOLDERS = ['dist', 'build', 'out', 'coverage', 'generated', '__generated__', '_site'];

/** Files `template.md`, `adr-template.md`, `pull_request_template.md`; folders `templates`, `ISSUE_TEMPLATE`. */
const TEMPLATE_FILE = /(?:^|[-_.])template$/i;
const TEMPLATE_FOLDER = /^(?:templates?|[a-z]+_template)$/i;
const CHANGELOG = /^(?:changelog|changes|history|news|releases?|release[-_]notes)$/i;

export const SKIP_REASONS = {
  template: 'a template',
  test: 'in a test or fixtures folder',
  vendored: 'in a vendored folder',
  generated: 'in a build or generated folder',
  changelog: 'a changelog (--changelogs imports them)',
} as const;

/** Checks `exclude` globs (every one a non-empty string) and builds the rule. */
export function documentSkipRule(options: SkipOptions = {}): SkipRule {
  const patterns = options.exclude ?? [];
  if (!Array.isArray(patterns) || patterns.some((p) => typeof p !== 'string' || p.trim() === '' || p.includes('\u0000')))
    throw invalidInput('importMarkdown: exclude must be a list of non-empty globs (.gitignore syntax)');
  const negated = patterns.find((p) => p.startsWith('!'));
  if (negated !== undefined)
    throw invalidInput(`importMarkdown: exclude ${JSON.stringify(negated)}: a glob leaves files out; "!" cannot bring them back`);
  const each = patterns.map((p) => ({ pattern: p, rules: ignore().add(p) }));
  return (rel, isDir) => {
    const tested = isDir ? `${rel}/` : rel;
    const hit = each.find((e) => e.rules.ignores(tested));
    if (hit) return `excluded by "${hit.pattern}"`;
    const name = posix.basename(rel);
    if (isDir) {
      const lower = name.toLowerCase();
      if (TEST_FOLDERS.includes(lower)) return SKIP_REASONS.test;
      if (VENDORED_FOLDERS.includes(lower)) return SKIP_REASONS.vendored;
      if (GENERATED_FOLDERS.includes(lower)) return SKIP_REASONS.generated;
      if (TEMPLATE_FOLDER.test(name)) return SKIP_REASONS.template;
      return null;
    }
    const stem = name.replace(/\.[^.]+$/, '');
    if (TEMPLATE_FILE.test(stem)) return SKIP_REASONS.template;
    if (!options.changelogs && CHANGELOG.test(stem)) return SKIP_REASONS.changelog;
    return null;
  };
}
