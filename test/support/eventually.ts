/**
 * `eventually(read, done, ms?)`: reads until `done` holds of what was read or the time is up, and returns the
 * last read (the caller's assertion then says what it was). `ms` defaults to `defaultMs`; reads `everyMs` apart.
 */
export function polling(defaultMs: number, everyMs = 50) {
  return async function eventually<T>(
    read: () => Promise<T>,
    done: (value: T) => boolean,
    ms = defaultMs,
  ): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (done(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  };
}
