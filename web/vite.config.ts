// Builds the dashboard (web/) into dist/dashboard/, served by the gateway at /dashboard.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  // Preact's automatic JSX runtime; no framework plugin is needed for a build without hot reload.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: true,
  },
  server: {
    // `npx vite web` during development: the API is the gateway on its default port.
    proxy: Object.fromEntries(
      ['/devices', '/messages', '/groups', '/tokens', '/gateway', '/sandbox', '/api'].map((p) => [
        p,
        'http://127.0.0.1:3000',
      ]),
    ),
  },
});
