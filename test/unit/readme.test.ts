import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import { README, readmeWithReference } from '../../cli/reference.ts';

describe('README', () => {
  test('the command-line reference is the current --help of every command (regenerate with npm run docs:cli)', () => {
    const readme = fs.readFileSync(README, 'utf8');
    expect(readmeWithReference(readme)).toBe(readme);
  });

  test('has the operations sections', () => {
    const readme = fs.readFileSync(README, 'utf8');
    for (const heading of ['## Install on a server', '## Command line', '## Back up and restore', '## Monitoring'])
      expect(readme).toContain(heading);
  });
});
