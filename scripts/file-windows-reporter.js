// A vitest reporter for scripts/cpu-by-file.js: when each test file started and ended in vitest's own process
// (its imports, hooks and tests between the two), with its project, one JSON line a file, appended to the file
// that FILE_WINDOWS_OUT names. vitest's JSON report gives neither the project nor the hooks' time.
//
// Owns: that file. Never changes a result or what other reporters print.
import { appendFileSync } from 'node:fs';

export default class FileWindowsReporter {
  started = new Map();

  onTestModuleStart(testModule) {
    this.started.set(testModule, Date.now());
  }

  onTestModuleEnd(testModule) {
    const out = process.env.FILE_WINDOWS_OUT;
    const start = this.started.get(testModule);
    if (out === undefined || start === undefined) return;
    const line = { project: testModule.project.name, file: testModule.moduleId, start, end: Date.now() };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  }
}
