import { describe, expect, test } from 'bun:test';
import { unfetchableHost } from '../../src/services/docserver/docserver.ts';

describe('unfetchableHost (the document server host check)', () => {
  const resolvesTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address }));
  test('a name resolving to a metadata, this-host or multicast address is refused; LAN and loopback names are not', async () => {
    expect(await unfetchableHost('docs.lan', resolvesTo('192.168.1.20'))).toBeNull();
    expect(await unfetchableHost('localhost', resolvesTo('127.0.0.1', '::1'))).toBeNull();
    expect(await unfetchableHost('docs.example.com', resolvesTo('203.0.113.7', '169.254.169.254'))).toBe(
      "the document server's host name docs.example.com resolves to 169.254.169.254",
    );
    expect(await unfetchableHost('docs.example.com', resolvesTo('0.0.0.0'))).toContain('resolves to 0.0.0.0');
    expect(
      await unfetchableHost('gone.example', async () => {
        throw new Error('ENOTFOUND');
      }),
    ).toBe("the document server's host name gone.example does not resolve");
  });

  test('an address written in the URL is the admin’s choice and is not looked up', async () => {
    const never = async () => {
      throw new Error('looked up');
    };
    expect(await unfetchableHost('10.0.0.5', never)).toBeNull();
    expect(await unfetchableHost('[fd00::5]', never)).toBeNull();
  });
});
