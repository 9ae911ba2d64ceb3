// The documentation's relative links resolve (issue 22): every Markdown link in README.md, CHANGELOG.md, docs/*.md
// and bench/README.md that is not a web address names a file of the repository, and its `#anchor`, when it has
// one, names a heading of that file (as GitHub spells heading anchors). The front page stays a front page.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');

function markdownFiles(): string[] {
  const docs = readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(REPO, 'docs', name));
  return [join(REPO, 'README.md'), join(REPO, 'CHANGELOG.md'), join(REPO, 'bench', 'README.md'), ...docs].filter(
    (file) => existsSync(file),
  );
}

/** The lines outside fenced code blocks, with their numbers (links and headings inside code are examples). */
function proseLines(text: string): { readonly number: number; readonly text: string }[] {
  const lines: { number: number; text: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push({ number: index + 1, text: line });
  });
  return lines;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

function links(file: string): Link[] {
  const found: Link[] = [];
  for (const { number, text } of proseLines(readFileSync(file, 'utf8'))) {
    const line = text.replace(/`[^`]*`/g, '');
    for (const match of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      found.push({ file, line: number, target: match[1]! });
    }
  }
  return found;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the pages it checks', () => {
    const names = files.map((file) => relative(REPO, file));
    expect(names).toEqual(
      expect.arrayContaining(['README.md', 'docs/README.md', 'docs/guide.md', 'docs/api.md', 'docs/operations.md']),
    );
    expect(files.flatMap(links).length).toBeGreaterThan(50);
  });

  it('every relative link names an existing file, and every anchor a heading of it', () => {
    const broken: string[] = [];
    for (const link of files.flatMap(links)) {
      if (isExternal(link.target)) continue;
      const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
      const target = path === '' ? link.file : join(dirname(link.file), decodeURIComponent(path));
      const where = `${relative(REPO, link.file)} line ${link.line}: ${link.target}`;
      if (!existsSync(target)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(target).isDirectory() || !target.endsWith('.md')) {
        broken.push(`${where}: an anchor on a file that is not Markdown`);
        continue;
      }
      if (!headingAnchors(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${where}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it('docs/README.md lists every page of docs/', () => {
    const index = readFileSync(join(REPO, 'docs', 'README.md'), 'utf8');
    const pages = readdirSync(join(REPO, 'docs')).filter((name) => name.endsWith('.md') && name !== 'README.md');
    expect(pages.filter((page) => !index.includes(`](${page})`))).toEqual([]);
  });

  it('the front page is a front page: at most 200 lines, linking the documentation index', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    expect(readme).toContain('](docs/README.md)');
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });

  it('reads GitHub anchors as GitHub writes them', () => {
    const anchors = headingAnchors(
      [
        '# Webhooks: receiving events',
        '## More than one node (PostgreSQL)',
        '### The delivery log, retries by hand, the secret',
        '## Tests',
        '## Tests',
        '```',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...anchors]).toEqual([
      'webhooks-receiving-events',
      'more-than-one-node-postgresql',
      'the-delivery-log-retries-by-hand-the-secret',
      'tests',
      'tests-1',
    ]);
  });
});
