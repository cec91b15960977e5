/**
 * Where JSONata evaluates a mapping's expressions: a worker thread of its own, stopped when one
 * evaluation runs past a hard deadline. JSONata checks its time bound only between evaluation
 * steps, and one step can run for ever (a backtracking regular expression, `$match(x,
 * /(a|a)*b/)`): in the thread that reads the upload or answers HTTP, such a step would hold it
 * for good. Here the thread is terminated, the record fails, and the next evaluation starts a
 * new thread. The synchronous evaluator (fast-path.ts) has no loop and no regular expression, and
 * stays in the calling thread.
 *
 * porter's functions run in the calling thread, which keeps their state (`$unique`'s names, the
 * tables): the worker calls them back and waits for their answer.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  EXPRESSION_MAX_DEPTH,
  EXPRESSION_MAX_SEQUENCE,
  EXPRESSION_MAX_VALUE,
  EXPRESSION_TIMEOUT_MS,
  REMOVED_FUNCTIONS,
} from './compile.js';
import { PROJECT_ROOT } from '../util/project-root.js';
import { EXPRESSION_THREAD_PROGRAM } from './expression-thread-program.js';
import { MappingFunctionError } from './function-error.js';
import { PORTER_FUNCTIONS, type FunctionScope } from './functions.js';

/**
 * How long one evaluation may take, from the moment the thread has it, before the thread is
 * stopped: JSONata's own bound (500 ms) and as long again for a step that ignores it.
 */
export const EXPRESSION_HARD_DEADLINE_MS = 2 * EXPRESSION_TIMEOUT_MS;
/** Heap of an expression thread: a step that builds a huge value stops it, not the process. */
const THREAD_HEAP_MB = 256;

/** An evaluation stopped at a bound (the hard deadline, the thread's memory, a size bound). */
export class ExpressionBoundError extends MappingFunctionError {
  readonly bound = true;
}

/** JSONata's failure of an evaluation, as the thread reports it. */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly position: number | undefined,
  ) {
    super(message);
  }
}

/** What an evaluation gave: the value as JSON text (absent: no value), or why it is no value. */
export type ThreadAnswer = { json?: string } | { failed: string };

interface Pending {
  resolve: (answer: ThreadAnswer) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
  message: { type: 'evaluate'; id: number; slot: number; input: unknown; row: number };
}

interface ThreadError {
  message: string;
  code?: string;
  position?: number;
  refusal: boolean;
  bound: boolean;
}

type Incoming =
  | { type: 'ready' }
  | { type: 'answer'; id: number; json?: string; failed?: string; error?: ThreadError }
  | { type: 'call'; callId: number; name: string; row: number; args: unknown[] };

/** The jsonata package's main file, found from porter's folder (the thread requires it by path). */
const jsonataPath = createRequire(join(PROJECT_ROOT, 'package.json')).resolve('jsonata');

/** The expression thread of one mapping: started on its first evaluation, closed with it. */
export class ExpressionThread {
  private worker?: Worker;
  private ready?: Promise<void>;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  /** Evaluations waiting for the thread to start. */
  private waiting = 0;

  constructor(
    /** The sources, by slot. */
    private readonly sources: readonly string[],
    private readonly scope: () => FunctionScope,
  ) {}

  /** Evaluates the expression of `slot` over `input` (`$row` is `row`). */
  async evaluate(slot: number, input: Record<string, unknown>, row: number): Promise<ThreadAnswer> {
    if (this.closed) throw new Error('the expression thread is closed');
    const worker = this.start();
    // the thread keeps the process alive only while it has work: from here until the answer
    this.waiting++;
    worker.ref();
    try {
      await this.ready;
    } finally {
      this.waiting--;
    }
    const id = ++this.nextId;
    const message = { type: 'evaluate' as const, id, slot, input, row };
    return new Promise<ThreadAnswer>((resolve, reject) => {
      const pending: Pending = { resolve, reject, message };
      this.pending.set(id, pending);
      pending.timer = setTimeout(
        () =>
          this.stop(
            worker,
            `the expression ran for more than ${EXPRESSION_HARD_DEADLINE_MS} ms and was stopped`,
          ),
        EXPRESSION_HARD_DEADLINE_MS,
      );
      worker.postMessage(message);
    });
  }

  /** Stops the thread; evaluations in progress fail. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (worker === undefined) return;
    this.fail(worker, new Error('the expression thread was closed'));
    await worker.terminate();
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(EXPRESSION_THREAD_PROGRAM, {
      eval: true,
      workerData: {
        jsonataPath,
        timeoutMs: EXPRESSION_TIMEOUT_MS,
        maxDepth: EXPRESSION_MAX_DEPTH,
        maxSequence: EXPRESSION_MAX_SEQUENCE,
        maxValue: EXPRESSION_MAX_VALUE,
        porterFunctions: Object.keys(PORTER_FUNCTIONS),
        removedFunctions: [...REMOVED_FUNCTIONS],
      },
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
      stdout: true,
      stderr: true,
    });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.once('message', (message: Incoming) => {
        if (message.type === 'ready') resolve();
      });
      worker.once('error', reject);
      worker.once('exit', () => reject(new Error('the expression thread ended before it started')));
    });
    this.ready.catch(() => {});
    worker.on('message', (message: Incoming) => this.receive(worker, message));
    worker.on('error', (error) =>
      this.stop(
        worker,
        (error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the expression used more than ${THREAD_HEAP_MB} MB and was stopped`
          : `the expression thread failed (${error.message})`,
      ),
    );
    worker.on('exit', () => this.fail(worker, new Error('the expression thread ended')));
    worker.postMessage({ type: 'compile', expressions: this.sources });
    worker.unref();
    return worker;
  }

  private receive(worker: Worker, message: Incoming): void {
    if (message.type === 'call') {
      this.call(worker, message);
      return;
    }
    if (message.type !== 'answer') return;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.settle(worker, message.id, pending);
    const { error } = message;
    if (error === undefined) {
      pending.resolve(message.failed !== undefined ? { failed: message.failed } : message);
    } else if (error.bound) {
      pending.reject(new ExpressionBoundError(error.message));
    } else if (error.refusal) {
      pending.reject(new MappingFunctionError(error.message));
    } else {
      pending.reject(new ExpressionError(error.message, error.code, error.position));
    }
  }

  /** A porter function called from the thread, run here with the mapping's state. */
  private call(worker: Worker, message: Extract<Incoming, { type: 'call' }>): void {
    const implementation = PORTER_FUNCTIONS[message.name];
    let answer: { value?: unknown; error?: string };
    try {
      answer = { value: implementation!(this.scope(), message.row, message.args) };
    } catch (error) {
      answer = {
        error: error instanceof MappingFunctionError ? error.message : String(error),
      };
    }
    worker.postMessage({ type: 'called', callId: message.callId, ...answer });
  }

  private settle(worker: Worker, id: number, pending: Pending): void {
    clearTimeout(pending.timer);
    this.pending.delete(id);
    if (this.pending.size === 0 && this.waiting === 0 && this.worker === worker) worker.unref();
  }

  /** Terminates a thread that went past a bound: its evaluations fail with `why`. */
  private stop(worker: Worker, why: string): void {
    this.fail(worker, new ExpressionBoundError(why));
    void worker.terminate();
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.ready = undefined;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(error);
    }
  }
}
