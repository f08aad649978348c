/** Jest setup: stop the `memory exec` children a test started (the SDK's tests never close a tool). */
import { closeAll } from './memory-exec-tool';

afterEach(async () => {
  await closeAll();
});
