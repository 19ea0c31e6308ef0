import { describe, expect, test } from 'bun:test';
import { buildProgram } from '../../cli/program.ts';

const ARGV = ['bun', 'coffer'];
const names = (argv: string[]) => buildProgram(argv).commands.map((c) => c.name());

describe('buildProgram(): the command line', () => {
  test('a named command defines only itself (and what its module defines beside it)', () => {
    expect(names([...ARGV, 'serve', '--port', '8080'])).toEqual(['serve']);
    expect(names([...ARGV, 'restore', 'backup.tar'])).toEqual(['backup', 'restore']);
    expect(names([...ARGV, 'users', 'list'])).toEqual(['users']);
  });

  test('help, an unknown command, an option first and the reference define every command', () => {
    const every = names([]);
    expect(every).toContain('serve');
    expect(every).toContain('thumbnails');
    expect(every.length).toBeGreaterThan(20);
    for (const argv of [
      ARGV,
      [...ARGV, '--help'],
      [...ARGV, 'help', 'serve'],
      [...ARGV, 'sreve'],
      [...ARGV, 'constructor'],
      [...ARGV, '-v'],
    ])
      expect(names(argv)).toEqual(every);
  });
});
