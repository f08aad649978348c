/**
 * The TypeScript SDK's `BetaLocalFilesystemMemoryTool` interface, answered by `memory exec`.
 *
 * The SDK's memory-tool tests import `BetaLocalFilesystemMemoryTool` from the SDK's
 * `src/tools/memory/node`; the jest config beside this file maps that import here. Like the
 * SDK's class it has `init(basePath)` and one method per command (the `MemoryToolHandlers`
 * shape of the SDK's `betaMemoryTool` helper); each command goes as one JSON line to a
 * long-running `memory exec --store file:BASE_PATH` child, and an answer with
 * `is_error: true` rejects with an `Error` whose message is the answer's content (the SDK's
 * tool throws `Error`s too). Other answers resolve to the content as it came.
 *
 * The binary is `$MEMORY_BIN`. `$SDK_SUITES_LOG` appends every exchange as one JSON line.
 * The child is started with the process umask of the moment; when a test changes the umask,
 * the next command restarts the child under the new one, as the SDK's in-process tool would
 * write under it.
 */
import { spawn, ChildProcessWithoutNullStreams } from 'child_process';
import { appendFileSync } from 'fs';

type Content = string | Array<Record<string, unknown>>;
type Answer = { content: Content; is_error: boolean };

const ANSWER_TIMEOUT_MS = Number(process.env['SDK_SUITES_TIMEOUT_MS'] ?? '60000');
const LOG_VALUE_MAX = 2000;

const live = new Set<MemoryExecProcess>();

function currentUmask(): number {
  const old = process.umask(0o022);
  process.umask(old);
  return old;
}

function memoryBin(): string {
  const bin = process.env['MEMORY_BIN'];
  if (!bin) throw new Error('set MEMORY_BIN to the `memory` binary under test');
  return bin;
}

function shorten(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_k, v) =>
      typeof v === 'string' && v.length > LOG_VALUE_MAX ? `${v.slice(0, LOG_VALUE_MAX)}...(${v.length} chars)` : v,
    ),
  );
}

function currentTestName(): string | undefined {
  const e = (globalThis as any).expect;
  return e && typeof e.getState === 'function' ? e.getState().currentTestName : undefined;
}

/** One `memory exec --store file:BASE` child: one JSON line in, one JSON line out, in order. */
class MemoryExecProcess {
  readonly umask: number;
  private child: ChildProcessWithoutNullStreams;
  private buf = '';
  private waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  private exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(basePath: string) {
    this.umask = currentUmask();
    this.child = spawn(memoryBin(), ['exec', '--store', `file:${basePath}`], {
      stdio: ['pipe', 'pipe', 'inherit'],
    }) as unknown as ChildProcessWithoutNullStreams;
    this.child.on('error', (err) => {
      for (const w of this.waiting.splice(0)) w.reject(err);
    });
    // A write after the child died fails the waiting answer (via 'exit'), not the test process.
    this.child.stdin.on('error', () => {});
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buf += chunk;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const w = this.waiting.shift();
        if (w) w.resolve(line);
      }
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code) => {
        this.exitCode = code;
        live.delete(this);
        for (const w of this.waiting.splice(0)) {
          w.reject(new Error(`memory exec closed its output (exit status ${code})`));
        }
        resolve(code);
      });
    });
    live.add(this);
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  async exchange(request: unknown): Promise<Answer> {
    if (!this.running) throw new Error(`memory exec exited with status ${this.exitCode}`);
    const line = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`memory exec gave no answer within ${ANSWER_TIMEOUT_MS}ms`)),
        ANSWER_TIMEOUT_MS,
      );
      this.waiting.push({
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
    this.child.stdin.write(JSON.stringify(request) + '\n');
    const answer = JSON.parse(await line) as Answer;
    const log = process.env['SDK_SUITES_LOG'];
    if (log) {
      appendFileSync(
        log,
        JSON.stringify({ test: currentTestName(), sent: shorten(request), got: shorten(answer) }) + '\n',
      );
    }
    if (
      typeof answer !== 'object' ||
      answer === null ||
      !('content' in answer) ||
      typeof answer.is_error !== 'boolean'
    ) {
      throw new Error(`not a result line: ${JSON.stringify(answer)}`);
    }
    return answer;
  }

  /** Ends input and waits for the child; kills it if it does not exit in time. */
  async close(): Promise<void> {
    if (!this.running) return;
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Stops every `memory exec` child still running (the jest setup file calls it after each test). */
export async function closeAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.close()));
}

function result(answer: Answer): Content {
  if (answer.is_error) {
    const c = answer.content;
    throw new Error(typeof c === 'string' ? c : JSON.stringify(c));
  }
  return answer.content;
}

/** `BetaLocalFilesystemMemoryTool` over `memory exec --store file:BASE_PATH`. */
export class BetaLocalFilesystemMemoryTool {
  private basePath: string;
  private process: MemoryExecProcess | undefined;

  constructor(basePath: string = './memory') {
    this.basePath = basePath;
  }

  /** Like the SDK's `init`: the store's folders exist when it resolves. */
  static async init(basePath: string = './memory'): Promise<BetaLocalFilesystemMemoryTool> {
    const tool = new BetaLocalFilesystemMemoryTool(basePath);
    await tool.proc();
    return tool;
  }

  private async proc(): Promise<MemoryExecProcess> {
    const p = this.process;
    if (p && p.running && p.umask === currentUmask()) return p;
    if (p) await p.close();
    const fresh = new MemoryExecProcess(this.basePath);
    this.process = fresh;
    // The store opens (creating BASE/memories) before the first line is read: a read-only
    // view waits for that.
    result(await fresh.exchange({ command: 'view', path: '/memories' }));
    return fresh;
  }

  private async run(command: unknown): Promise<Content> {
    return result(await (await this.proc()).exchange(command));
  }

  async view(command: unknown): Promise<Content> {
    return this.run(command);
  }

  async create(command: unknown): Promise<Content> {
    return this.run(command);
  }

  async str_replace(command: unknown): Promise<Content> {
    return this.run(command);
  }

  async insert(command: unknown): Promise<Content> {
    return this.run(command);
  }

  async delete(command: unknown): Promise<Content> {
    return this.run(command);
  }

  async rename(command: unknown): Promise<Content> {
    return this.run(command);
  }
}
