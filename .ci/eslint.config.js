// ESLint for the repository (npm run lint): typescript-eslint's recommended rules, without type
// information (it stays a few seconds), over src, test, bench and examples. Formatting is
// Prettier's (npm run format), so no rule here is about layout.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', 'test/artifacts/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      // `_name` marks what is bound on purpose and not read (a `using` guard, a destructured rest).
      // Paths, ids and texts are checked for control characters on purpose.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
);
