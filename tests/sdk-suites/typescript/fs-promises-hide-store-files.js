// Diagnostic only (SDK_SUITES_HIDE_STORE_FILES=1): `fs/promises` for the SDK's test file, with
// `readdir` leaving out the folder store's bookkeeping beside `memories/` (`.memories.lock`,
// `.memories.count`, `.memory-tmp`), so the tests' directory snapshots show what else differs.
// Everything else is the real module.
const real = require('node:fs/promises');

const HIDDEN = new Set(['.memories.lock', '.memories.count', '.memory-tmp']);
const nameOf = (entry) => (typeof entry === 'string' ? entry : entry.name);

module.exports = {
  ...real,
  readdir: async (dir, options) => {
    const entries = await real.readdir(dir, options);
    if (!entries.some((e) => nameOf(e) === 'memories')) return entries;
    return entries.filter((e) => !HIDDEN.has(nameOf(e)));
  },
};
