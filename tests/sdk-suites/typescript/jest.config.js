// Jest config that runs the TypeScript SDK's memory-tool test file against `memory exec`.
// SDK_SUITES_RUN_DIR: a folder holding the SDK's test file at its own relative place
// (tests/lib/tools/BetaLocalFilesystemMemoryTool.test.ts) and a node_modules with jest,
// ts-jest and typescript. The SDK's import of its tool is mapped to memory-exec-tool.ts.
// SDK_SUITES_HIDE_STORE_FILES=1 (diagnostic pass) also maps `fs/promises` to
// fs-promises-hide-store-files.js.
const path = require('path');

const runDir = process.env.SDK_SUITES_RUN_DIR;
if (!runDir) throw new Error('set SDK_SUITES_RUN_DIR (see README.md)');

module.exports = {
  rootDir: runDir,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/tests/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        isolatedModules: true,
        diagnostics: false,
        tsconfig: { module: 'commonjs', target: 'es2020', esModuleInterop: true, strict: false },
      },
    ],
  },
  moduleNameMapper: {
    '^(\\.\\./)+src/tools/memory/node$': path.join(__dirname, 'memory-exec-tool.ts'),
    // Diagnostic pass only: hide the folder store's bookkeeping from the tests' snapshots.
    ...(process.env.SDK_SUITES_HIDE_STORE_FILES === '1'
      ? { '^fs/promises$': path.join(__dirname, 'fs-promises-hide-store-files.js') }
      : {}),
  },
  setupFilesAfterEnv: [path.join(__dirname, 'setup-after-env.ts')],
};
