import { negotiateFlexibleSubprotocol, negotiateSyncSubprotocol } from './subprotocol';

describe('flexible-sync subprotocol negotiation', () => {
  const flx = Array.from({ length: 13 }, (_, i) => `com.mongodb.realm-query-sync#${14 - i}`);
  const pbs = Array.from({ length: 13 }, (_, i) => `com.mongodb.realm-sync#${14 - i}`);

  it('answers 14 to a realm-core v14 client offering 14 down to 2', () => {
    expect(negotiateFlexibleSubprotocol(flx.join(', '))).toEqual({ protocol: 'com.mongodb.realm-query-sync#14', version: 14 });
  });

  it('answers an older client with its highest version and caps a newer one at 14', () => {
    expect(negotiateFlexibleSubprotocol(flx.slice(4))?.version).toBe(10);
    expect(negotiateFlexibleSubprotocol(['com.mongodb.realm-query-sync#15', ...flx])?.version).toBe(14);
  });

  it('refuses partition-sync, malformed and too-old offers', () => {
    expect(negotiateFlexibleSubprotocol(pbs)).toBeNull();
    expect(negotiateFlexibleSubprotocol('com.mongodb.realm-query-sync#1, com.mongodb.realm-query-sync#x, com.mongodb.realm-query-sync#014, realm-query-sync#9')).toBeNull();
  });

  it('tells the two modes apart from the offer alone', () => {
    expect(negotiateSyncSubprotocol(flx)).toEqual({ mode: 'flexible', protocol: 'com.mongodb.realm-query-sync#14', version: 14 });
    expect(negotiateSyncSubprotocol(pbs.join(','))).toEqual({ mode: 'partition', protocol: 'com.mongodb.realm-sync#14', version: 14 });
    expect(negotiateSyncSubprotocol('chat, superchat')).toBeNull();
  });
});
