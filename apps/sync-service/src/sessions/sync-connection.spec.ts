import { emptyApp } from '@tessera/app-config';
import { decodeServerMessage, encodeClientMessage, type ClientMessage, type ServerMessage } from '@tessera/sync-protocol';
import { eventually } from '@tessera/testing';
import { PartitionHub } from './partition-hub';
import { syncModeOf } from './sync-config';
import { type SyncReport } from './session-connection';
import { SyncConnection } from './sync-connection';

/** A connection over a fake socket that records what the server sends and whether it closed. */
function open(hub = new PartitionHub()) {
  const sent: ServerMessage[] = [];
  const socket = { closed: false, send: (bytes: Uint8Array) => sent.push(decodeServerMessage(bytes)), close: () => (socket.closed = true) };
  const app = emptyApp('connection');
  app.sync = { type: 'partition', state: 'enabled', partition: { key: '_partition', type: 'string', permissions: { read: true, write: true } } };
  app.sync.partition!.permissions = { read: { '%%partition': { $in: ['p', 'readonly'] } }, write: { '%%partition': 'p' } };
  const reports: SyncReport[] = [];
  const connection = new SyncConnection(socket, {
    appId: 'app1',
    userId: 'u1',
    sync: () => Promise.resolve({ mode: syncModeOf(app), epoch: 0 }),
    permissions: () => Promise.resolve({ ok: true, context: { user: { id: 'u1' } } }),
    hub,
    report: (report) => reports.push(report),
  });
  const send = (message: ClientMessage) => connection.receive(encodeClientMessage(message));
  return { sent, socket, connection, send, reports };
}

describe('SyncConnection', () => {
  it('answers a malformed frame with a connection-level bad syntax error and closes', async () => {
    const { sent, socket, connection } = open();
    connection.receive(new TextEncoder().encode('bind x y\n'));
    await eventually(() => expect(socket.closed).toBe(true));
    expect(sent).toEqual([expect.objectContaining({ type: 'error', code: 103, sessionIdent: 0, tryAgain: false })]);
  });

  it('refuses an IDENT for a session that was never bound', async () => {
    const { sent, socket, send } = open();
    send({ type: 'ident', sessionIdent: 9, clientFileIdent: 2, clientFileIdentSalt: 1n, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n });
    await eventually(() => expect(socket.closed).toBe(true));
    expect(sent).toEqual([expect.objectContaining({ type: 'error', code: 106 })]);
  });

  it('refuses a second BIND of a session ident still in use', async () => {
    const { sent, socket, send } = open();
    send({ type: 'bind', sessionIdent: 1, path: '"p"', token: '', needClientFileIdent: true, isSubserver: false });
    send({ type: 'bind', sessionIdent: 1, path: '"p"', token: '', needClientFileIdent: true, isSubserver: false });
    await eventually(() => expect(socket.closed).toBe(true));
    expect(sent.map((message) => message.type)).toEqual(['ident', 'error']);
    expect(sent[1]).toMatchObject({ code: 107 });
  });

  it('ignores the IDENT and MARK pipelined after a refused BIND until its UNBIND, and reports the refusal', async () => {
    const { sent, socket, send, reports } = open();
    send({ type: 'bind', sessionIdent: 1, path: '"forbidden"', token: '', needClientFileIdent: false, isSubserver: false });
    send({ type: 'ident', sessionIdent: 1, clientFileIdent: 2, clientFileIdentSalt: 1n, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n });
    send({ type: 'mark', sessionIdent: 1, requestIdent: 1 });
    send({ type: 'unbind', sessionIdent: 1 });
    send({ type: 'ping', timestamp: 7, rtt: 0 });
    await eventually(() => expect(sent.map((message) => message.type)).toEqual(['json_error', 'pong']));
    expect(sent[0]).toMatchObject({ code: 206, sessionIdent: 1, body: { action: 'ApplicationBug' } });
    expect(socket.closed).toBe(false);
    expect(reports).toEqual([expect.objectContaining({ kind: 'refused', code: 206, appId: 'app1', userId: 'u1', partition: '"forbidden"', sessionIdent: 1 })]);
    // The ident is free again after the UNBIND.
    send({ type: 'bind', sessionIdent: 1, path: '"p"', token: '', needClientFileIdent: true, isSubserver: false });
    await eventually(() => expect(sent[2]).toMatchObject({ type: 'ident', sessionIdent: 1 }));
  });

  it('gives files of one partition distinct idents, starting at 2', async () => {
    const hub = new PartitionHub();
    const first = open(hub);
    const second = open(hub);
    first.send({ type: 'bind', sessionIdent: 1, path: '"p"', token: '', needClientFileIdent: true, isSubserver: false });
    second.send({ type: 'bind', sessionIdent: 1, path: '"p"', token: '', needClientFileIdent: true, isSubserver: false });
    await eventually(() => expect(first.sent.length + second.sent.length).toBe(2));
    const idents = [...first.sent, ...second.sent].map((message) => (message.type === 'ident' ? message.clientFileIdent : 0)).sort();
    expect(idents).toEqual([2, 3]);
  });
});
