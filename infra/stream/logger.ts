/**
 * What the stream adapters log through: the shape of a pino logger (`logger.warn(fields, message)`), so the
 * platform's logger fits as is. The default drops everything, so tests and libraries stay quiet.
 */
export interface StreamLogger {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

const ignore = (): void => undefined;

export const silentStreamLogger: StreamLogger = { error: ignore, warn: ignore, info: ignore, debug: ignore };
