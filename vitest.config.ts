import { defineConfig } from 'vitest/config';

// Unit and integration tests live in each package's test/ folder; *.e2e.test.ts are the slow
// end-to-end suites (real agents, whisper, ffmpeg). `npm test` runs both; CI runs `npm test`.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{apps,packages}/*/test/**/*.test.ts', 'agent/test/**/*.test.ts'],
          exclude: ['**/*.e2e.test.ts', '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['**/test/**/*.e2e.test.ts'],
          exclude: ['**/node_modules/**'],
          testTimeout: 300_000,
        },
      },
    ],
  },
});
