/** Bash: functions; `source`d files are not followed (their paths are computed at run time as often as not). */
import { vscodeGrammar } from './common.js';
import type { LanguageSpec } from './types.js';

export const bash: LanguageSpec = {
  name: 'bash',
  extensions: ['.sh', '.bash'],
  grammar: vscodeGrammar('bash'),
  separator: '.',
  definitions: '(function_definition name: (word) @name) @definition.function',
};
