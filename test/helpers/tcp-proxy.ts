import net from 'node:net';

/**
 * Decides, per chunk a client sends, how much of it goes on: null for all of it, a number for that many
 * bytes, after which the request is half-closed towards the server and the client's connection dropped.
 */
type Cutter = (chunk: Buffer) => number | null;

export interface TcpProxy {
  port: number;
  /** The server's port; may change while the proxy runs (a restarted server). */
  target: number;
  /** Bytes passed from clients to the server so far, request lines and headers included. */
  sent: number;
  /** Connections cut so far. */
  cuts: number;
  close(): void;
}

/**
 * A TCP proxy on loopback, for what happens between a client and the server: a dropped link (a cutter
 * per connection) or the bytes a client really sent.
 */
export async function tcpProxy(target: number, cutter?: () => Cutter): Promise<TcpProxy> {
  const server = net.createServer();
  const proxy: TcpProxy = { port: 0, target, sent: 0, cuts: 0, close: () => server.close() };
  server.on('connection', (client) => {
    const upstream = net.connect(proxy.target, '127.0.0.1');
    const cut = cutter?.();
    client.on('data', (chunk: Buffer) => {
      const keep = cut?.(chunk) ?? null;
      if (keep === null) {
        proxy.sent += chunk.length;
        upstream.write(chunk);
        return;
      }
      // The bytes up to the cut reach the server (a request ending early), the client's connection drops.
      proxy.cuts++;
      proxy.sent += keep;
      upstream.end(chunk.subarray(0, keep));
      client.destroy();
    });
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  return proxy;
}
