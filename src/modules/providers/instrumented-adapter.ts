import type { ProviderAdapter } from '../../../libs/providers/index.js';
import type { Metrics } from '../../observability/metrics.service.js';

/** What an adapter is, not what it does: not timed. */
const DESCRIPTIVE = new Set<PropertyKey>(['constructor', 'name', 'live', 'models', 'credentialled']);

/** Answers the adapter contracts return (not throw) when the upstream refused, failed or lost the call. */
const FAILED_KINDS = new Set(['rejected', 'uncertain', 'failed', 'refused', 'error']);

/** `ok`, `error` (thrown), or the contract's failure kind (`rejected`, `uncertain`, …). */
type Outcome = string;

function outcomeOf(result: unknown): Outcome {
  const kind = typeof result === 'object' && result !== null ? (result as { kind?: unknown }).kind : undefined;
  return typeof kind === 'string' && FAILED_KINDS.has(kind) ? kind : 'ok';
}

/** Set on an adapter once measured, so an instance registered twice is not wrapped twice. */
const MEASURED = Symbol('svc.measuredAdapter');

/**
 * Counts every upstream call of the adapter by outcome and times it (`svc_upstream_calls_total`,
 * `svc_upstream_call_duration_seconds`, labelled capability, adapter, method and outcome: `ok`,
 * `error` when it threw, or the failure kind the adapter answered with, e.g. `rejected`). A method
 * returning a promise is measured until it settles; one returning an async iterable (a stream)
 * until the stream ends, fails or is left; synchronous results pass untouched. The methods are
 * wrapped on the instance itself, so the registry and the DI container keep handing out the same
 * object, and every caller is measured, whichever of the two it got the adapter from.
 */
export function instrumentAdapter<A extends ProviderAdapter>(adapter: A, capability: string, metrics: Metrics): A {
  const target = adapter as unknown as { [MEASURED]?: true } & Record<string, unknown>;
  if (target[MEASURED]) return adapter;
  target[MEASURED] = true;
  for (const name of methodNames(adapter)) {
    const method = target[name] as (...args: unknown[]) => unknown;
    // The label set of each outcome, built once (not two object spreads per call).
    const byOutcome = new Map<Outcome, { capability: string; adapter: string; method: string; outcome: Outcome }>();
    const labelsOf = (outcome: Outcome) => {
      let labels = byOutcome.get(outcome);
      if (!labels) byOutcome.set(outcome, (labels = { capability, adapter: adapter.name, method: name, outcome }));
      return labels;
    };
    target[name] = function measured(this: unknown, ...args: unknown[]): unknown {
      const started = performance.now();
      const done = (outcome: Outcome) => {
        const labels = labelsOf(outcome);
        metrics.upstreamCalls.inc(labels);
        metrics.upstreamDuration.observe(labels, (performance.now() - started) / 1000);
      };
      let result: unknown;
      try {
        result = method.apply(this, args);
      } catch (error) {
        done('error');
        throw error;
      }
      if (result instanceof Promise) {
        return result.then(
          (settled: unknown) => (done(outcomeOf(settled)), settled),
          (error: unknown) => {
            done('error');
            throw error;
          },
        );
      }
      if (isAsyncIterable(result)) return measuredStream(result, done);
      // A synchronous answer (a cached catalogue, a descriptor): nothing crossed the network.
      return result;
    };
  }
  return adapter;
}

/** The adapter's methods, its class's and its ancestors' (not Object's), except the descriptive ones. */
function methodNames(adapter: object): string[] {
  const names = new Set<string>();
  for (let level: object | null = adapter; level && level !== Object.prototype; level = Object.getPrototypeOf(level) as object | null) {
    for (const name of Object.getOwnPropertyNames(level)) {
      const descriptor = Object.getOwnPropertyDescriptor(level, name);
      if (!DESCRIPTIVE.has(name) && typeof descriptor?.value === 'function') names.add(name);
    }
  }
  return [...names];
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * The stream as given, measured: an iterator that forwards `next`, `return` (a consumer leaving
 * early) and `throw` to the adapter's own, with no generator of its own in between (one promise
 * per chunk fewer). A stream left early counts as ok.
 */
function measuredStream<T>(stream: AsyncIterable<T>, done: (outcome: Outcome) => void): AsyncIterableIterator<T> {
  const inner = stream[Symbol.asyncIterator]();
  let measured = false;
  const finish = (outcome: Outcome) => {
    if (measured) return;
    measured = true;
    done(outcome);
  };
  const settle = (result: IteratorResult<T>): IteratorResult<T> => {
    if (result.done) finish('ok');
    return result;
  };
  const fail = (error: unknown): never => {
    finish('error');
    throw error;
  };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () => inner.next().then(settle, fail),
    return: (value?: unknown) => {
      if (inner.return) return inner.return(value).then((result) => (finish('ok'), result), fail);
      finish('ok');
      return Promise.resolve({ done: true as const, value: value as T });
    },
    throw: (error?: unknown) => (inner.throw ? inner.throw(error).then(settle, fail) : fail(error)),
  };
  return iterator;
}
