import { Subject } from 'rxjs';
import { TransportReadiness } from './readiness';

describe('TransportReadiness', () => {
  it('names each connection that is not connected, and is ready once all are back', () => {
    const readiness = new TransportReadiness();
    const bus = new Subject<string>();
    const handlers = new Subject<string>();
    readiness.watch('message bus', { status: bus });
    readiness.watch('message handlers', { status: handlers });
    expect(readiness.problems()).toEqual([]);
    bus.next('connected');
    handlers.next('connected');
    expect(readiness.problems()).toEqual([]);
    bus.next('disconnected');
    handlers.next('reconnecting');
    expect(readiness.problems()).toEqual(['message bus: disconnected', 'message handlers: reconnecting']);
    bus.next('connected');
    handlers.next('connected');
    expect(readiness.problems()).toEqual([]);
  });
});
