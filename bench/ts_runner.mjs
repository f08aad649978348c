#!/usr/bin/env node
// The TypeScript SDK's memory tool over JSON Lines, for bench/compare.sh.
//
//   node bench/ts_runner.mjs --root DIR --sdk-dir DIR < workload.jsonl
//
// Runs each input line through the SDK's own BetaLocalFilesystemMemoryTool (from
// "@anthropic-ai/sdk/tools/memory/node", wrapped by betaMemoryTool()) and its tool runner's
// runRunnableTool(), the way BetaToolRunner answers a tool_use block, and prints one line
// {"content": ..., "is_error": ...} per input line, in order. Files go to DIR/memories, the
// SDK's layout. --sdk-dir is the folder whose node_modules holds @anthropic-ai/sdk
// (bench/compare.sh installs it there).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i === -1 || i + 1 >= process.argv.length) {
    process.stderr.write(`usage: node ts_runner.mjs --root DIR --sdk-dir DIR (missing ${name})\n`);
    process.exit(2);
  }
  return process.argv[i + 1];
}

const root = arg('--root');
const pkgDir = path.join(arg('--sdk-dir'), 'node_modules', '@anthropic-ai', 'sdk');
if (!fs.existsSync(path.join(pkgDir, 'package.json'))) {
  process.stderr.write(`ts_runner: @anthropic-ai/sdk is not installed under ${pkgDir}\n`);
  process.exit(3);
}
const imp = (rel) => import(pathToFileURL(path.join(pkgDir, rel)).href);
const { BetaLocalFilesystemMemoryTool } = await imp('tools/memory/node.mjs');
const { betaMemoryTool } = await imp('helpers/beta/memory.mjs');
let runRunnableTool;
try {
  ({ runRunnableTool } = await imp('lib/tools/BetaRunnableTool.mjs'));
} catch {}
if (typeof runRunnableTool !== 'function') {
  // Older SDKs inline this step in BetaToolRunner, with the same semantics.
  runRunnableTool = async (tool, input) => {
    try {
      return { content: await tool.run(tool.parse ? tool.parse(input) : input), isError: false };
    } catch (e) {
      return { content: `Error: ${e instanceof Error ? e.message : String(e)}`, isError: true };
    }
  };
}

const tool = betaMemoryTool(await BetaLocalFilesystemMemoryTool.init(root));

function write(obj) {
  return new Promise((resolve) => {
    if (process.stdout.write(JSON.stringify(obj) + '\n')) resolve();
    else process.stdout.once('drain', resolve);
  });
}

async function answer(line, n) {
  let input;
  try {
    input = JSON.parse(line);
  } catch (e) {
    return { content: `Error: not JSON: ${e.message}`, is_error: true };
  }
  const toolUse = { type: 'tool_use', id: `toolu_bench_${n}`, name: 'memory', input };
  const out = await runRunnableTool(tool, input, { toolUse, toolUseBlock: toolUse });
  return { content: out.content, is_error: out.isError === true };
}

// Lines are answered one at a time, in order, as an agent's tool calls come.
let buf = '';
let n = 0;
const decoder = new TextDecoder('utf-8');
for await (const chunk of process.stdin) {
  buf += decoder.decode(chunk, { stream: true });
  let nl;
  while ((nl = buf.indexOf('\n')) !== -1) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    await write(await answer(line, ++n));
  }
}
buf += decoder.decode();
if (buf.length > 0) await write(await answer(buf, ++n));
