// compose.yaml agrees with the documentation (issue 22): `docker compose up -d` starts one gateway node with
// PostgreSQL, and `docker compose --profile cluster up -d` three, each with a name of its own and the URL the other
// nodes reach it at (its own service name and container port). No container engine runs here, so the file is read
// as compose reads it (YAML with merge keys) and the services it would start are worked out per profile.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');

interface Service {
  readonly image?: string;
  readonly build?: unknown;
  readonly command?: unknown;
  readonly profiles?: string[];
  readonly environment?: Record<string, string>;
  readonly ports?: string[];
  readonly volumes?: string[];
  readonly depends_on?: Record<string, { condition: string }>;
  readonly healthcheck?: unknown;
}

interface ComposeFile {
  readonly services: Record<string, Service>;
  readonly volumes?: Record<string, unknown>;
}

const compose = parse(readFileSync(join(REPO, 'compose.yaml'), 'utf8'), { merge: true }) as ComposeFile;

/** The services `docker compose [--profile P] up` starts: those without profiles, and those of the profiles named. */
function started(profiles: readonly string[]): [string, Service][] {
  return Object.entries(compose.services).filter(
    ([, service]) => service.profiles === undefined || service.profiles.some((p) => profiles.includes(p)),
  );
}

/** A gateway node runs the image's own command (the gateway); the sandbox runs the same image with another. */
function gateways(services: [string, Service][]): [string, Service][] {
  return services.filter(
    ([, service]) => service.image === 'messaging-gateway:latest' && service.command === undefined,
  );
}

/** The container port a "host:port:container" or "port:container" mapping publishes. */
function containerPort(mapping: string): number {
  return Number(mapping.split(':').at(-1));
}

describe('compose.yaml', () => {
  it('starts one gateway node with PostgreSQL by default', () => {
    const services = started([]);
    expect(gateways(services).map(([name]) => name)).toEqual(['gateway']);
    expect(services.map(([name]) => name)).toContain('postgres');
  });

  it('starts a three-node cluster with --profile cluster', () => {
    expect(gateways(started(['cluster'])).map(([name]) => name)).toEqual(['gateway', 'gateway-2', 'gateway-3']);
  });

  it('gives every node its own name, and an advertise URL at its own service name and container port', () => {
    const nodes = gateways(started(['cluster']));
    const names = nodes.map(([, service]) => service.environment?.GATEWAY_SERVER_NAME);
    expect(new Set(names).size).toBe(nodes.length);
    for (const [name, service] of nodes) {
      expect(service.environment?.GATEWAY_SERVER_NAME, name).toMatch(/^[A-Za-z0-9._-]+$/);
      const ports = (service.ports ?? []).map(containerPort);
      expect(ports, name).toEqual([3000]); // the image's PORT
      expect(service.environment?.GATEWAY_ADVERTISE_URL, name).toBe(`http://${name}:3000`);
    }
  });

  it('puts every node on one database and one network, and nothing else apart', () => {
    const nodes = gateways(started(['cluster']));
    const shared = (key: string) => new Set(nodes.map(([, service]) => service.environment?.[key]));
    expect(shared('DATABASE_URL').size).toBe(1);
    expect([...shared('DATABASE_URL')][0]).toMatch(/^postgres:\/\/.*@postgres:5432\//);
    expect(shared('GATEWAY_NETWORK').size).toBe(1);
    expect(shared('GATEWAY_BOOTSTRAP_TOKEN').size).toBe(1);
    // Published host ports and data volumes are each node's own.
    const hostPorts = nodes
      .flatMap(([, service]) => service.ports ?? [])
      .map((p) => p.split(':').slice(0, -1).join(':'));
    expect(new Set(hostPorts).size).toBe(nodes.length);
    const volumes = nodes.flatMap(([, service]) => service.volumes ?? []).map((v) => v.split(':')[0]);
    expect(new Set(volumes).size).toBe(nodes.length);
    for (const volume of volumes) expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    for (const [name, service] of nodes) {
      expect(service.depends_on?.postgres?.condition, name).toBe('service_healthy');
    }
  });

  it('shares one sandbox process among the nodes when no network is set', () => {
    const nodes = gateways(started(['cluster']));
    const network = nodes[0]![1].environment?.GATEWAY_NETWORK;
    // The default after `:-` is what runs without GATEWAY_NETWORK in .env: the sandbox service, not an
    // in-process sandbox per node (each node would be a world of its own).
    const fallback = /^\$\{GATEWAY_NETWORK:-(.*)\}$/.exec(network ?? '')?.[1];
    expect(fallback).toBe('sandbox+ws://sandbox:4000');
    const sandbox = compose.services.sandbox;
    expect(sandbox?.profiles).toBeUndefined();
    expect(JSON.stringify(sandbox?.command)).toContain('"--port","4000"');
    expect(JSON.stringify(sandbox?.command)).toContain('"--host","0.0.0.0"');
    expect(sandbox?.ports).toBeUndefined(); // no authentication of its own: never published
    for (const [name, service] of nodes) {
      expect(service.depends_on?.sandbox?.condition, name).toBe('service_healthy');
    }
  });

  it('is documented as it is', () => {
    const operations = readFileSync(join(REPO, 'docs', 'operations.md'), 'utf8');
    expect(operations).toContain('docker compose up -d');
    expect(operations).toContain('docker compose --profile cluster up -d');
    expect(operations).toContain('GATEWAY_ADVERTISE_URL');
    expect(operations).not.toMatch(/not supported yet/i);
  });
});
