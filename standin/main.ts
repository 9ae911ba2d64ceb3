/**
 * `npm run standin -- --port <n> [--host 127.0.0.1] [--verbose]`: starts the WhatsApp stand-in and prints one
 * JSON line, `{"ws","control","root_key","ca"}`, as the first line on standard output.
 *
 * Owns: the command line and shutting down on SIGINT/SIGTERM.
 * Must never: print anything before that first line (callers parse it).
 */
import { parseArgs } from 'node:util';
import { startStandin } from './server.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    verbose: { type: 'boolean', default: false },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be a port number, got "${values.port}"`);
  process.exit(2);
}
if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(values.host)) {
  console.error(`--host must be a loopback address, got "${values.host}"`);
  process.exit(2);
}
const standin = await startStandin({
  port,
  host: values.host,
  ...(values.verbose ? { log: (line: string) => console.error(`[standin] ${line}`) } : {}),
});
console.log(JSON.stringify({ ws: standin.ws, control: standin.control, root_key: standin.root_key, ca: standin.ca }));
const stop = () => void standin.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
