// Starts the one Chromium the dashboard project's files share (test/dashboard/chromium.ts) and hands its endpoint
// to them; closes it when the project ends.
import type { TestProject } from 'vitest/node';
import { launchBrowserServer } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    browserEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const server = await launchBrowserServer();
  project.provide('browserEndpoint', server.wsEndpoint());
  return async () => {
    await server.close();
  };
}
