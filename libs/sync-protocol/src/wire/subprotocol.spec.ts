import { negotiateSubprotocol } from './subprotocol';

describe('subprotocol negotiation', () => {
  const offered = Array.from({ length: 13 }, (_, i) => `com.mongodb.realm-sync#${14 - i}`);

  it('answers 14 to a realm-js 12.15 client offering 14 down to 2', () => {
    expect(negotiateSubprotocol(offered.join(', '))).toEqual({ protocol: 'com.mongodb.realm-sync#14', version: 14 });
  });

  it('answers the client maximum when it is below 14', () => {
    expect(negotiateSubprotocol(offered.slice(5))).toEqual({ protocol: 'com.mongodb.realm-sync#9', version: 9 });
  });

  it('caps a newer client at 14', () => {
    expect(negotiateSubprotocol(['com.mongodb.realm-sync#16', 'com.mongodb.realm-sync#15', ...offered])?.version).toBe(14);
  });

  it('refuses FLX, malformed and too-old offers', () => {
    expect(negotiateSubprotocol('com.mongodb.realm-query-sync#10')).toBeNull();
    expect(negotiateSubprotocol('com.mongodb.realm-sync#1, com.mongodb.realm-sync#x, com.mongodb.realm-sync#014')).toBeNull();
    expect(negotiateSubprotocol([])).toBeNull();
  });
});
