import { MongoServerError } from 'mongodb';

/** The code of MongoDB's (and FerretDB's) error for an operation it ended at its `maxTimeMS`. */
const MAX_TIME_MS_EXPIRED = 50;

/**
 * Every MongoDB read in `infra/` carries a `maxTimeMS` (QUERY_BUDGET_MS), so no read runs on unbounded;
 * this waits for one and turns the server ending it at that limit into `refusal()`, a clear answer to
 * the request rather than an internal error.
 */
export async function withinTimeLimit<T>(read: Promise<T>, refusal: () => Error): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof MongoServerError && error.code === MAX_TIME_MS_EXPIRED) throw refusal();
    throw error;
  }
}
