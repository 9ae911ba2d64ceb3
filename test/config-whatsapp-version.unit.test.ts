// Issue 24, hardening: GATEWAY_WHATSAPP_VERSION overrides the WhatsApp Web version the library announces;
// unset, the library's default is taken; anything but three numbers is refused at start-up.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('GATEWAY_WHATSAPP_VERSION', () => {
  it('unset: the library default (no override)', () => {
    expect(loadConfig({}).whatsappVersion).toBeUndefined();
  });
  it('three numbers', () => {
    expect(loadConfig({ GATEWAY_WHATSAPP_VERSION: '2.3000.1234567' }).whatsappVersion).toEqual([2, 3000, 1234567]);
  });
  it.each(['2.3000', 'v2.3000.1', '2.3000.1.4', '2,3000,1', 'latest'])('refuses %s', (raw) => {
    expect(() => loadConfig({ GATEWAY_WHATSAPP_VERSION: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ GATEWAY_WHATSAPP_VERSION: raw })).toThrow(/must be three numbers like 2\.3000\.1234567/);
  });
});
