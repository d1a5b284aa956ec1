import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Native bindings (Kuzu, LanceDB) are safest in separate processes.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
