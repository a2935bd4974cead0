import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { serialize } from 'node:v8';
import {
  contextReads,
  MappingError,
  type ExpressionContext,
  type ExpressionEvaluator,
} from '../../languages/mapping/mapping';
import { FairSlots } from '../fair-slots';
import type { Logger } from '../logging';
import { KEPT_INPUTS, type FromExpressionProcess, type ToExpressionProcess } from './protocol';

export interface ExpressionPoolOptions {
  /** The expression process's entry script (`bin/expression-process.ts`, or `.js` in the build). */
  readonly entry: string;
  /** Processes at most (each evaluates one expression at a time). */
  readonly size: number;
  /** Processes one system's evaluations may hold at once (fewer than `size`: another system gets one). */
  readonly perTenant: number;
  /** The heap of one process: an expression that needs more ends with a MappingError. */
  readonly memoryMb: number;
  /** The longest one evaluation may take, built-in calls included: then its process is ended. */
  readonly timeoutMs: number;
  /** The largest result (characters of JSON) and input (serialized bytes) of one evaluation. */
  readonly maxResultBytes: number;
  readonly maxInputBytes: number;
  readonly logger: Logger;
}

interface Evaluation {
  readonly expression: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** One process of the pool: started when first needed, started again after it ended. */
class Member {
  private child: ChildProcess | undefined;
  private ready: Promise<ChildProcess> | undefined;
  private current: Evaluation | undefined;
  private nextId = 1;
  /** The ids of the inputs the process keeps, in the order it evicts them (mirrors the process). */
  private held: number[] = [];
  /** Why the process was ended on purpose (its evaluation overran). */
  private endedFor: string | undefined;
  private closed = false;

  constructor(private readonly options: ExpressionPoolOptions) {}

  async evaluate(
    expression: string,
    input: unknown,
    inputId: number,
    context: ExpressionContext,
  ): Promise<unknown> {
    const child = await this.start();
    const sendInput = inputId === 0 || !this.held.includes(inputId);
    const payload = serialize(sendInput ? { input, context } : { context });
    if (payload.length > this.options.maxInputBytes)
      throw new MappingError(
        `expression ${quoted(expression)} was not evaluated: its input and variables are ${payload.length} bytes, more than ${this.options.maxInputBytes}`,
      );
    if (sendInput && inputId !== 0) {
      this.held.push(inputId);
      if (this.held.length > KEPT_INPUTS) this.held.shift();
    }
    const id = this.nextId++;
    holdOpen(child, true);
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        // An answer that arrived while this thread was busy is read first (I/O before `setImmediate`).
        setImmediate(() => {
          if (this.current?.timer !== timer) return;
          this.endedFor = `it ran longer than ${this.options.timeoutMs} ms`;
          child.kill('SIGKILL');
        });
      }, this.options.timeoutMs);
      this.current = { expression, resolve, reject, timer };
      child.send({
        id,
        expression,
        inputId,
        payload,
        maxResultBytes: this.options.maxResultBytes,
      } satisfies ToExpressionProcess);
    });
  }

  async stop(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** Starts the process now if it is not running (a replacement is started as soon as one ends). */
  start(): Promise<ChildProcess> {
    if (this.closed) return Promise.reject(new Error('the expression pool is closed'));
    this.ready ??= new Promise<ChildProcess>((resolve, reject) => {
      const { entry, memoryMb } = this.options;
      const limits = [
        `--max-old-space-size=${memoryMb}`,
        `--max-semi-space-size=${Math.max(1, memoryMb >> 4)}`,
      ];
      const child = fork(entry, [], {
        execArgv: entry.endsWith('.js') ? limits : ['--require', require.resolve('tsx/cjs'), ...limits],
        // Nothing of the platform's environment (its secrets) reaches user-written code's process.
        env: { NODE_ENV: process.env.NODE_ENV ?? 'production' },
        // What it prints is kept short: a V8 abort prints its native stack (the pool logs one line instead), a
        // process that cannot start says why.
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        serialization: 'advanced',
      });
      this.child = child;
      let printed = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => (printed = (printed + chunk).slice(-2000)));
      this.held = [];
      this.endedFor = undefined;
      child.on('message', (message: FromExpressionProcess) => {
        if (message.kind === 'ready') {
          holdOpen(child, false);
          return resolve(child);
        }
        const current = this.current;
        if (current === undefined) return;
        this.settle();
        if (message.kind === 'result') current.resolve(JSON.parse(message.json));
        else if (message.kind === 'error') current.reject(new MappingError(message.message));
        else current.reject(new Error(`the expression process failed: ${message.message}`));
      });
      child.on('error', (error) => this.log.warn({ err: error }, 'expression process error'));
      child.on('exit', (code, signal) => {
        const current = this.current;
        const ended = this.endedFor;
        if (this.child === child) {
          this.child = undefined;
          this.ready = undefined;
        }
        reject(new Error(`the expression process ended before it was ready (${signal ?? code}): ${printed}`));
        if (current === undefined) return;
        this.settle();
        const why = ended ?? `it used more than ${this.options.memoryMb} MB of memory`;
        this.log.warn(
          { expression: quoted(current.expression), code, signal },
          `an evaluation was ended: ${why}`,
        );
        current.reject(new MappingError(`expression ${quoted(current.expression)} was ended: ${why}`));
        // The replacement starts now, so the next evaluation does not wait for it.
        if (!this.closed)
          this.start().catch((error: unknown) =>
            this.log.error({ err: error }, 'the expression process could not be started again'),
          );
      });
    });
    return this.ready;
  }

  private get log(): Logger {
    return this.options.logger;
  }

  private settle(): void {
    if (this.current) clearTimeout(this.current.timer);
    this.current = undefined;
    if (this.child) holdOpen(this.child, false);
  }
}

/** A process starting or evaluating keeps the platform's process alive (it is awaited); an idle one does not. */
function holdOpen(child: ChildProcess, hold: boolean): void {
  const printed = child.stderr as Socket | null;
  if (hold) {
    child.ref();
    child.channel?.ref();
    printed?.ref();
  } else {
    child.unref();
    child.channel?.unref();
    printed?.unref();
  }
}

function quoted(expression: string): string {
  return JSON.stringify(expression.slice(0, 80));
}

/**
 * User-written expressions evaluated in a pool of small processes, never on the platform's threads: an
 * expression that runs out of memory (or makes V8 abort, which no thread can survive) or overruns its time
 * ends its own process and fails with a `MappingError` naming the limit; the process is replaced. One system
 * holds at most `perTenant` processes at once, and waiting systems take turns. The context sent is only
 * what the expression names, and a run's input (its bundle) is sent to a process once.
 */
export class ExpressionPool implements ExpressionEvaluator {
  private readonly slots: FairSlots;
  private readonly members: Member[];
  private readonly idle: Member[];
  private readonly inputIds = new WeakMap<object, number>();
  private nextInputId = 1;

  constructor(options: ExpressionPoolOptions) {
    if (options.size < 1 || options.perTenant < 1) throw new RangeError('a pool needs at least one process');
    this.slots = new FairSlots(options.size, Math.min(options.perTenant, options.size));
    this.members = Array.from({ length: options.size }, () => new Member(options));
    this.idle = [...this.members];
  }

  async evaluate(
    tenant: string,
    expression: string,
    input: unknown,
    context: ExpressionContext,
  ): Promise<unknown> {
    const reads = contextReads(expression);
    const sent: ExpressionContext = {
      runId: context.runId,
      ...(reads.vars && { vars: context.vars }),
      ...(reads.outputs && { outputs: context.outputs }),
      ...(reads.item && context.index !== undefined && { item: context.item, index: context.index }),
    };
    const release = await this.slots.acquire(tenant);
    // A slot held means a process is free: there are as many slots as processes.
    const member = this.idle.pop()!;
    try {
      return await member.evaluate(expression, input, this.inputIdOf(input), sent);
    } finally {
      this.idle.push(member);
      release();
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.stop()));
  }

  private inputIdOf(input: unknown): number {
    if (typeof input !== 'object' || input === null) return 0;
    let id = this.inputIds.get(input);
    if (id === undefined) {
      id = this.nextInputId++;
      this.inputIds.set(input, id);
    }
    return id;
  }
}
