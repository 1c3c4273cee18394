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

/**
 * The adapter as the registry hands it out, with every upstream call counted by outcome and timed
 * (`svc_upstream_calls_total`, `svc_upstream_call_duration_seconds`, labelled capability, adapter,
 * method and outcome: `ok`, `error` when it threw, or the failure kind the adapter answered with,
 * e.g. `rejected`). A method returning a promise is measured until it settles; one returning an
 * async iterable (a stream) until the stream ends, fails or is left. Synchronous results pass untouched.
 * Calls run on the adapter itself (`this` is never the proxy), so private state keeps working.
 */
export function instrumentAdapter<A extends ProviderAdapter>(adapter: A, capability: string, metrics: Metrics): A {
  return new Proxy(adapter, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || DESCRIPTIVE.has(property) || typeof property === 'symbol') return value;
      const labels = { capability, adapter: target.name, method: property };
      return (...args: unknown[]) => {
        const started = performance.now();
        const done = (outcome: Outcome) => {
          metrics.upstreamCalls.inc({ ...labels, outcome });
          metrics.upstreamDuration.observe({ ...labels, outcome }, (performance.now() - started) / 1000);
        };
        let result: unknown;
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args);
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
    },
  });
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** The stream as given; `yield*` passes a consumer's early `return()` on to it. A stream left early counts as ok. */
async function* measuredStream<T>(stream: AsyncIterable<T>, done: (outcome: Outcome) => void): AsyncGenerator<T, void, undefined> {
  let outcome: Outcome = 'ok';
  try {
    yield* stream;
  } catch (error) {
    outcome = 'error';
    throw error;
  } finally {
    done(outcome);
  }
}
