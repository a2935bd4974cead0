import { loadConfig } from '../../infra/config';

describe('configuration', () => {
  test('an empty variable counts as unset (compose passes ${VAR:-} through as "")', () => {
    const config = loadConfig({ ADMIN_PASSWORD: '', SECRETS_KEY: '', PORT: '' });
    expect(config.ADMIN_PASSWORD).toBeUndefined();
    expect(config.SECRETS_KEY).toBeUndefined();
    expect(config.PORT).toBe(3000);
  });

  test('a bad value is refused with the variable named', () => {
    expect(() => loadConfig({ SECRETS_KEY: 'c2hvcnQ=' })).toThrow('SECRETS_KEY: must be base64 of 32 bytes');
    expect(() => loadConfig({ SESSION_IDLE_MINUTES: '0' })).toThrow('SESSION_IDLE_MINUTES');
    expect(() => loadConfig({ BLOB_STORE: 'gridfs' })).toThrow('BLOB_STORE=gridfs needs MONGO_URL');
    // A KMS key needs the key-encryption key it encrypted, and the other way round.
    expect(() => loadConfig({ KMS_KEY_ID: 'alias/records' })).toThrow('KMS_KEY_ID needs KMS_WRAPPED_KEY');
    expect(() => loadConfig({ KMS_WRAPPED_KEY: 'AAAA' })).toThrow('KMS_WRAPPED_KEY needs KMS_KEY_ID');
    expect(() => loadConfig({ KMS_KEY_ID: 'k', KMS_WRAPPED_KEY: 'AAAA', KMS_ENDPOINT: 'ftp://kms' })).toThrow(
      'KMS_ENDPOINT',
    );
    expect(() => loadConfig({ KMS_KEY_ID: 'k', KMS_WRAPPED_KEY: 'AAAA', KMS_REGION: 'EU West' })).toThrow(
      'KMS_REGION',
    );
  });

  test('HTTP timeouts: bounded defaults, and headers may not outlast the whole request', () => {
    const config = loadConfig({});
    expect([
      config.HTTP_HEADERS_TIMEOUT_MS,
      config.HTTP_REQUEST_TIMEOUT_MS,
      config.HTTP_IDLE_TIMEOUT_MS,
    ]).toEqual([20_000, 120_000, 60_000]);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow('HTTP_REQUEST_TIMEOUT_MS');
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '4000' })).toThrow(
      'HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS',
    );
  });
});
