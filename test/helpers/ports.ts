import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on: the system hands one out and it is
 * given back at once, for a child process to listen on. (A random number
 * would fall among the ports the system hands out to others, such as a
 * second test run at the same time.)
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
