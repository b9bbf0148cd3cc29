import { eventually } from '@tessera/testing';
import { type BusDelivery, InProcessBus } from './in-process-bus';

describe('InProcessBus', () => {
  it('delivers to every plain subscriber and to one member of each queue group, round-robin', async () => {
    const bus = new InProcessBus();
    const seen: string[] = [];
    const listen = (name: string) => (delivery: BusDelivery) => seen.push(`${name}:${delivery.data}`);
    bus.subscribe('a.b.changed', listen('plain'));
    bus.subscribe('a.b.changed', listen('g1-m1'), { queue: 'g1' });
    bus.subscribe('a.b.changed', listen('g1-m2'), { queue: 'g1' });
    bus.subscribe('a.b.changed', listen('g2-m1'), { queue: 'g2' });
    expect(bus.publish('a.b.changed', '1', {})).toBe(3);
    expect(bus.publish('a.b.changed', '2', {})).toBe(3);
    await eventually(() => seen.length === 6);
    expect(seen.sort()).toEqual(['g1-m1:1', 'g1-m2:2', 'g2-m1:1', 'g2-m1:2', 'plain:1', 'plain:2']);
  });

  it('delivers asynchronously, never inside the publish call', () => {
    const bus = new InProcessBus();
    let delivered = false;
    bus.subscribe('a.b.run', () => (delivered = true));
    bus.publish('a.b.run', '{}', {});
    expect(delivered).toBe(false);
  });

  it('reports zero deliveries where nobody listens, including after the last member leaves', () => {
    const bus = new InProcessBus();
    expect(bus.publish('a.b.run', '{}', {}, () => undefined)).toBe(0);
    const leave = bus.subscribe('a.b.run', () => undefined, { queue: 'svc' });
    expect(bus.interest('a.b.run')).toBe(1);
    leave();
    expect(bus.interest('a.b.run')).toBe(0);
    expect(bus.publish('a.b.run', '{}', {})).toBe(0);
  });

  it('gives each delivery its own copy of the headers', async () => {
    const bus = new InProcessBus();
    const headers = { 'x-correlation-id': 'c1' };
    const received: BusDelivery[] = [];
    bus.subscribe('a.b.changed', (delivery) => received.push(delivery));
    bus.publish('a.b.changed', '{}', headers);
    headers['x-correlation-id'] = 'changed later';
    await eventually(() => received.length === 1);
    expect(received[0].headers).toEqual({ 'x-correlation-id': 'c1' });
  });

  it('hands a request packet over as an object to one listener, a copy to another, and JSON text to a reader of data', async () => {
    const bus = new InProcessBus();
    const packet = { pattern: 'a.b.run', data: { n: 1 }, id: 'r1' };
    const received: BusDelivery[] = [];
    bus.subscribe('a.b.run', (delivery) => received.push(delivery), { queue: 'g1' });
    bus.subscribe('a.b.run', (delivery) => received.push(delivery), { queue: 'g2' });
    const answers: object[] = [];
    expect(bus.request('a.b.run', packet, {}, (answer) => answers.push(answer))).toBe(2);
    await eventually(() => received.length === 2);
    const [first, second] = received;
    expect(first.direct?.packet).toBe(packet);
    expect(second.direct?.packet).toEqual(packet);
    expect(second.direct?.packet).not.toBe(packet);
    expect(JSON.parse(second.data)).toEqual(packet);
    first.direct?.reply({ response: 1, id: 'r1' });
    second.reply?.(JSON.stringify({ response: 2, id: 'r1' }));
    expect(answers).toEqual([
      { response: 1, id: 'r1' },
      { response: 2, id: 'r1' },
    ]);
  });

  it('reports zero deliveries of a request nobody listens to', () => {
    expect(new InProcessBus().request('a.b.run', {}, {}, () => undefined)).toBe(0);
  });

  it('is one bus per process through shared()', () => {
    expect(InProcessBus.shared()).toBe(InProcessBus.shared());
    expect(new InProcessBus()).not.toBe(InProcessBus.shared());
  });
});
