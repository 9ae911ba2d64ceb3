// GET /media/{media_id}'s Range header (src/media/serving.ts) and the settings of incoming media (src/config.ts).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseRange } from '../../src/media/serving.js';

describe('parseRange', () => {
  it('reads one range, an open one and a suffix, clipped to the size', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual([0, 9]);
    expect(parseRange('bytes=90-', 100)).toEqual([90, 99]);
    expect(parseRange('bytes=-10', 100)).toEqual([90, 99]);
    expect(parseRange('bytes=-500', 100)).toEqual([0, 99]);
    expect(parseRange('bytes=95-500', 100)).toEqual([95, 99]);
    expect(parseRange('bytes=99-99', 100)).toEqual([99, 99]);
  });

  it('is unsatisfiable from the end on, or for an empty suffix', () => {
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=100-200', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-0', 0)).toBe('unsatisfiable');
  });

  it('serves the whole for what it does not take: several ranges, other units, garbage, end before start', () => {
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(parseRange('items=0-1', 100)).toBeNull();
    expect(parseRange('bytes=-', 100)).toBeNull();
    expect(parseRange('bytes=9-3', 100)).toBeNull();
  });
});

describe('incoming media settings', () => {
  it('has the defaults of DECISIONS 15', () => {
    const config = loadConfig({});
    expect(config.incomingMediaMaxMb).toBe(64);
    expect(config.incomingMediaRetentionDays).toBe(30);
    expect(config.mediaUrlTtlS).toBe(86_400);
    expect(config.publicUrl).toBeNull();
  });

  it('reads them, and refuses values out of bounds naming the variable', () => {
    const config = loadConfig({
      GATEWAY_INCOMING_MEDIA_MAX_MB: '2048',
      GATEWAY_INCOMING_MEDIA_RETENTION_DAYS: '0',
      GATEWAY_MEDIA_URL_TTL_S: '60',
      GATEWAY_PUBLIC_URL: 'https://gw.example.com/',
    });
    expect(config).toMatchObject({
      incomingMediaMaxMb: 2048,
      incomingMediaRetentionDays: 0,
      mediaUrlTtlS: 60,
      publicUrl: 'https://gw.example.com',
    });
    expect(() => loadConfig({ GATEWAY_INCOMING_MEDIA_MAX_MB: '0' })).toThrow(
      new ConfigError('GATEWAY_INCOMING_MEDIA_MAX_MB must be between 1 and 2048, got 0'),
    );
    expect(() => loadConfig({ GATEWAY_MEDIA_URL_TTL_S: '59' })).toThrow(
      new ConfigError('GATEWAY_MEDIA_URL_TTL_S must be between 60 and 31536000, got 59'),
    );
    expect(() => loadConfig({ GATEWAY_PUBLIC_URL: 'gw.example.com' })).toThrow(
      new ConfigError('GATEWAY_PUBLIC_URL must be an http:// or https:// URL, got "gw.example.com"'),
    );
    expect(() => loadConfig({ GATEWAY_PUBLIC_URL: 'https://gw.example.com/?a=1' })).toThrow(
      new ConfigError('GATEWAY_PUBLIC_URL must have no query, fragment or credentials'),
    );
  });
});
