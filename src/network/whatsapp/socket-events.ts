/**
 * Attaching a connection's handlers to one socket's events, and detaching them again.
 *
 * Owns: the list of the library's events a connection listens to on a socket (passed in as handlers), plus the
 * server's acknowledgements of sent messages, and taking every one of them off together.
 * Must never: leave a handler on a socket the connection let go of (its events would reach the gateway), or
 * handle an event itself.
 */
import type { BaileysEventMap, BinaryNode } from 'baileys';
import type { SocketPort } from './socket-port.js';

export type SocketHandlers = { readonly [K in keyof BaileysEventMap]?: (arg: BaileysEventMap[K]) => void };

/** Attaches `handlers` and `onAck` to `socket`; answers the function that detaches them all. */
export function attachSocket(
  socket: SocketPort,
  handlers: SocketHandlers,
  onAck: (node: BinaryNode) => void,
): () => void {
  const names = Object.keys(handlers) as Array<keyof BaileysEventMap>;
  for (const name of names) socket.ev.on(name, handlers[name] as (arg: unknown) => void);
  socket.ws.on('CB:ack,class:message', onAck);
  return () => {
    for (const name of names) socket.ev.off(name, handlers[name] as (arg: unknown) => void);
    socket.ws.off('CB:ack,class:message', onAck);
  };
}
