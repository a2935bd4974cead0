import { LRUCache } from 'lru-cache';
import { deserialize } from 'node:v8';
import { evaluateToJson, MappingError } from '../../languages/mapping/mapping';
import {
  KEPT_INPUTS,
  type EvaluationPayload,
  type FromExpressionProcess,
  type ToExpressionProcess,
} from './protocol';

/**
 * The body of an expression process (`bin/expression-process.ts`): evaluates one expression at a time with
 * JSONata and its guards (languages/mapping/mapping.ts) and answers its JSON. It has a small heap of its own: an
 * expression that exhausts it (or makes V8 abort) ends this process only, and the pool starts another.
 */
export function serveExpressions(): void {
  const send = (message: FromExpressionProcess): void => {
    process.send?.(message);
  };
  if (!process.send) throw new Error('an expression process must be started with an IPC channel');
  // Boxed: an input may be null, which the cache does not hold.
  const kept = new LRUCache<number, { input: unknown }>({ max: KEPT_INPUTS });
  process.on('message', (message: ToExpressionProcess) => {
    const payload = deserialize(message.payload) as EvaluationPayload;
    const { input, context } = payload;
    if (message.inputId !== 0 && !kept.has(message.inputId)) {
      if (!('input' in payload))
        return send({ kind: 'failed', id: message.id, message: 'the expression process lost its input' });
      kept.set(message.inputId, { input });
    }
    const value = message.inputId === 0 ? input : kept.get(message.inputId)?.input;
    evaluateToJson(message.expression, value, context, message.maxResultBytes).then(
      (json) => send({ kind: 'result', id: message.id, json }),
      (error: unknown) =>
        send(
          error instanceof MappingError
            ? { kind: 'error', id: message.id, message: error.message }
            : { kind: 'failed', id: message.id, message: String(error) },
        ),
    );
  });
  // The platform is gone: so is this process.
  process.on('disconnect', () => process.exit(0));
  send({ kind: 'ready' });
}
