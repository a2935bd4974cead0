import { PlatformError } from '../../contracts/errors';

/** The PlatformError `action` throws (any other error is rethrown; throwing nothing fails the test). */
export function thrown(action: () => unknown): PlatformError {
  try {
    action();
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error('expected a PlatformError, but nothing was thrown');
}
