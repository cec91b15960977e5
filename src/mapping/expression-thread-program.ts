/**
 * The program of an expression thread (expression-thread.ts), as the text a worker thread runs.
 * It is text, not a module, so that it runs the same whether porter runs from its bundle, through
 * tsx or under the test runner: none of them would hand a worker thread a TypeScript module. It
 * needs nothing of porter: porter's functions are called back in the thread that owns their
 * state (`$unique`'s names, the tables), and the bounds below are the ones of compile.ts, given
 * in `workerData`.
 *
 * Messages in: `{type: 'compile', expressions: [source…]}` (answered `{type: 'ready'}`),
 * `{type: 'evaluate', id, slot, input, row}`, `{type: 'called', callId, value | error}`.
 * Messages out: `{type: 'ready'}`, `{type: 'answer', id, json | failed | error}`,
 * `{type: 'call', callId, name, args, row}`.
 */
export const EXPRESSION_THREAD_PROGRAM = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const jsonata = require(workerData.jsonataPath);
const { timeoutMs, maxDepth, maxSequence, maxValue, porterFunctions, removedFunctions } = workerData;

/** A refusal of one of porter's functions, or a bound: reported with its message alone. */
class Refusal extends Error {
  constructor(message, bound) {
    super(message);
    this.refusal = true;
    this.bound = bound === true;
  }
}

function checkSize(_expr, _input, _environment, result) {
  if (typeof result === 'string' && result.length > maxValue) {
    throw new Refusal('the expression built a text of more than ' + maxValue + ' characters', true);
  }
  if (Array.isArray(result) && result.length > maxSequence) {
    throw new Refusal('the expression built a list of more than ' + maxSequence + ' items', true);
  }
}

let expressions = [];
let nextCall = 0;
const calls = new Map();

function callPorter(name, row, args) {
  const callId = ++nextCall;
  return new Promise((resolve, reject) => {
    calls.set(callId, { resolve, reject });
    try {
      parentPort.postMessage({ type: 'call', callId, name, row, args });
    } catch {
      calls.delete(callId);
      reject(new Refusal('$' + name + ': its arguments must be values, not functions'));
    }
  });
}

function compile(source) {
  const expression = jsonata(source, { timeout: timeoutMs, stack: maxDepth, sequence: maxSequence });
  for (const name of removedFunctions) expression.assign(name, undefined);
  for (const name of porterFunctions) {
    expression.registerFunction(name, function (...args) {
      const row = this.environment.lookup('row');
      return callPorter(name, typeof row === 'number' ? row : 0, args);
    });
  }
  expression.assign(Symbol.for('jsonata.__evaluate_exit'), checkSize);
  return expression;
}

/** The value as JSON text, or why it cannot be one (a function, or too large). */
function answerOf(value) {
  if (value === undefined) return {};
  if (typeof value === 'function') return { failed: 'the expression gives a function, not a value' };
  if (typeof value === 'string') {
    if (value.length > maxValue) {
      return { failed: 'the expression built a text of more than ' + maxValue + ' characters' };
    }
    return { json: JSON.stringify(value) };
  }
  const json = JSON.stringify(value);
  if (json === undefined) return {};
  if (json.length > maxValue) {
    return { failed: 'the expression built a value of more than ' + maxValue + ' characters' };
  }
  return { json };
}

function errorOf(error) {
  const failure = error || {};
  return {
    message: typeof failure.message === 'string' ? failure.message : String(error),
    code: typeof failure.code === 'string' ? failure.code : undefined,
    position: typeof failure.position === 'number' ? failure.position : undefined,
    refusal: failure.refusal === true,
    bound: failure.bound === true,
  };
}

parentPort.on('message', (message) => {
  if (message.type === 'compile') {
    expressions = message.expressions.map(compile);
    parentPort.postMessage({ type: 'ready' });
  } else if (message.type === 'called') {
    const call = calls.get(message.callId);
    if (call === undefined) return;
    calls.delete(message.callId);
    if (message.error !== undefined) call.reject(new Refusal(message.error));
    else call.resolve(message.value);
  } else if (message.type === 'evaluate') {
    const { id, slot, input, row } = message;
    expressions[slot].evaluate(input, { row }).then(
      (value) => parentPort.postMessage({ type: 'answer', id, ...answerOf(value) }),
      (error) => parentPort.postMessage({ type: 'answer', id, error: errorOf(error) }),
    );
  }
});
`;
