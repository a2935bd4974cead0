import { MongoServerError } from 'mongodb';
import { PlatformError } from '../../contracts/errors';
import { withinTimeLimit } from '../../infra/mongodb-time-limit';

/**
 * A MongoDB read ended at its `maxTimeMS` (QUERY_BUDGET_MS) becomes the refusal the caller names; anything
 * else stays what it was. Through a real server this is not run here: FerretDB 1.24 (the MongoDB-wire server
 * CI has) stops answering every connection after reads are ended at their `maxTimeMS` under load, so only
 * the mapping of its error (code 50, which FerretDB answers too) is checked.
 */
const tooExpensive = () => new PlatformError('query_too_expensive', 'narrow the filter');

function serverError(code: number, codeName: string): MongoServerError {
  return new MongoServerError({ message: `${codeName} happened`, code, codeName });
}

test('a read the server ended at its maxTimeMS (code 50) is the refusal, 422 E4220', async () => {
  const refused = withinTimeLimit(Promise.reject(serverError(50, 'MaxTimeMSExpired')), tooExpensive);
  await expect(refused).rejects.toMatchObject({ kind: 'query_too_expensive', status: 422, code: 'E4220' });
});

test('other server errors and failures pass through unchanged', async () => {
  const other = serverError(11000, 'DuplicateKey');
  await expect(withinTimeLimit(Promise.reject(other), tooExpensive)).rejects.toBe(other);
  const network = new Error('connection reset');
  await expect(withinTimeLimit(Promise.reject(network), tooExpensive)).rejects.toBe(network);
});

test('a read that finishes gives its value', async () => {
  await expect(withinTimeLimit(Promise.resolve(['a']), tooExpensive)).resolves.toEqual(['a']);
});
