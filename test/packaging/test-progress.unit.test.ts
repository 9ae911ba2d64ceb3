// Issue 22 item 11: the test command shows its progress, one line per test file as each finishes, also when its
// output is not a terminal (CI, a log file) and when vitest believes an AI agent runs it (vitest 4 then picks, by
// itself, a reporter that prints only failures). The run still ends with the summary lines CI reads.
//
// The project's own vitest.config.ts runs two of its small unit test files in a child vitest, output to a pipe.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const VITEST = join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
const FILES = ['test/cluster/balance.unit.test.ts', 'test/groups/limits.unit.test.ts'];

/** Runs vitest on FILES with stdout and stderr to pipes; `extra` adds to an environment free of this run's vitest. */
function runVitest(extra: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // The child is a vitest of its own, not a worker of this one.
    if (value !== undefined && !key.startsWith('VITEST') && key !== 'TEST_STORE' && key !== 'NODE_OPTIONS') {
      env[key] = value;
    }
  }
  const child = spawn(process.execPath, [VITEST, 'run', '--project', 'unit', ...FILES], {
    cwd: REPO,
    env: { ...env, VITEST_MAX_WORKERS: '1', ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => {
    child.once('close', (code) => resolve({ code, output: stripVTControlCharacters(output) }));
  });
}

describe('the test command’s progress output', () => {
  it.each([
    ['in CI', { CI: 'true' }],
    ['when an AI agent runs it', { AI_AGENT: 'claude', CLAUDECODE: '1' }],
  ])('prints a line per finished file, then the summary (%s)', async (_, extra) => {
    const { code, output } = await runVitest(extra);
    expect(code, output).toBe(0);
    const lines = output.split('\n');
    const summary = lines.findIndex((line) => /^\s*Test Files\s+2 passed/.test(line));
    expect(summary, output).toBeGreaterThan(0);
    for (const file of FILES) {
      // ` ✓  unit  FILE (N tests) 12ms` in colour, ` ✓ |unit| FILE (N tests) 12ms` without.
      const line = lines.findIndex((text) => /^ \S \W?unit\W? /.test(text) && text.includes(` ${file} (`));
      expect(line, `no progress line for ${file}:\n${output}`).toBeGreaterThanOrEqual(0);
      expect(line).toBeLessThan(summary);
    }
    expect(
      lines.some((line) => /^\s*Tests\s+\d+ passed \(\d+\)$/.test(line)),
      output,
    ).toBe(true);
  });
});
