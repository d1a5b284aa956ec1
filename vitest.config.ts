import { availableParallelism, loadavg } from 'node:os';
import { defineConfig } from 'vitest/config';

// A timeout is there to end a test that hangs, not to judge speed (speed is measured in bench/).
// On a machine that is already busy when the run starts (load average above its cores, as when
// other work shares it), every default timeout is that many times longer, up to 4x.
const busy = Math.min(4, Math.max(1, loadavg()[0]! / availableParallelism()));
const timeout = Math.round(60_000 * busy);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Native bindings (Kuzu, LanceDB) are safest in separate processes.
    pool: 'forks',
    // vitest's default is one worker fewer than the cores (one on 2 cores); MEMCORE_TEST_WORKERS sets it.
    ...(process.env.MEMCORE_TEST_WORKERS ? { maxWorkers: Number(process.env.MEMCORE_TEST_WORKERS) } : {}),
    // Compiles src/ once for the processes tests spawn (test/testBuild.ts).
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: timeout,
    hookTimeout: timeout,
  },
});
