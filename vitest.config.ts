import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Native bindings (Kuzu, LanceDB) are safest in separate processes.
    pool: 'forks',
    // Compiles src/ once for the processes tests spawn (test/testBuild.ts).
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
