// The webhook receiver of `bench/destinations.ts` on a thread of its own (BENCH_WEBHOOK_RECEIVER=thread): a node:http
// server answering 200 at once, noting each event's id, type, created_at and arrival time, and handing them to the
// benchmark's thread in batches. In the benchmark's own thread the receiver shares one event loop with the load
// generator and four other consumers taking thousands of events a second, so a delivery's answer waits for their
// turns; the webhook is the one destination whose rate depends on how soon its consumer answers (each lane has a
// bounded number of deliveries in flight), and a receiver is a service of its own where a user runs one.
//
// Plain JavaScript: a worker thread does not inherit the main thread's TypeScript loader on Node.js 20.
//
// Owns: the server and its port. Must never: answer anything but 200.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { clearInterval, setInterval } from 'node:timers';
import { parentPort } from 'node:worker_threads';

/** @type {Array<{ id: string, type: string, created_at: string, at: number }>} */
let batch = [];
const flush = () => {
  if (batch.length === 0) return;
  parentPort.postMessage({ events: batch });
  batch = [];
};
const server = createServer((req, res) => {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const at = Date.now();
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    batch.push({ id: event.id, type: event.type, created_at: event.created_at, at });
    res.writeHead(200).end();
  });
});
const timer = setInterval(flush, 20);
server.listen(0, '127.0.0.1', () => {
  parentPort.postMessage({ port: server.address().port });
});
parentPort.on('message', (message) => {
  if (message.close !== true) return;
  clearInterval(timer);
  server.close(() => {
    flush();
    parentPort.postMessage({ closed: true });
  });
  server.closeAllConnections();
});
