/**
 * The sandbox's public surface: what the rest of the gateway may import.
 *
 * Owns: nothing but re-exports. Must never: export the world's internals
 * (state, links, records); the gateway sees only Network and SandboxControl.
 */
export { createSandboxNetwork } from './in-process.js';
export { connectSandboxNetwork } from './ws-client.js';
export { startSandboxServer } from './ws-server.js';
export type { SandboxServer, SandboxServerOptions } from './ws-server.js';
export type { SandboxOptions } from './state.js';
export { SandboxWorld } from './world.js';
export * from '../sandbox-control.js';
