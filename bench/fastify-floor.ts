// A floor for reading bench:accept: Fastify with one POST route that parses the
// JSON body and answers {"code":200}, like bench/bare-server.ts. With
// FLOOR_LOG=1 it also writes one JSON log line per request, through the same
// buffered pino destination as the gateway (`logOutput` in src/app.ts).
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { logOutput } from '../src/app.js';

const logged = process.env.FLOOR_LOG === '1';
const logger: FastifyBaseLogger = pino({ level: logged ? 'info' : 'silent' }, logOutput());
const app = Fastify({ loggerInstance: logger, logController: new LogController({ disableRequestLogging: true }) });
if (logged) {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({ method: request.method, url: request.url, status: reply.statusCode }, 'request');
    done();
  });
}
app.post('/', async () => ({ code: 200 }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(`Server listening at http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
