import { describe, expect, test } from 'bun:test';
import { type ChannelText, TextChannels } from '../../src/services/search/text-channels.ts';
import { eventually } from '../helpers/eventually.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** A channel as an extraction worker holds it: texts sent under their job ids, transferred. */
function channel(channels: TextChannels, number: number) {
  const { port1, port2 } = new MessageChannel();
  channels.open(number, port2);
  return {
    send(job: number, text: string) {
      const bytes = enc(text);
      port1.postMessage({ job, text: bytes } satisfies ChannelText, { transfer: [bytes.buffer] });
    },
    ref: (job: number) => ({ channel: number, job, bytes: 1 }),
  };
}

describe('texts from the extraction workers to the index writer', () => {
  test('a text is matched by its channel and job, whether it comes before or after it is asked for', async () => {
    const channels = new TextChannels();
    const a = channel(channels, 1);
    const b = channel(channels, 2);
    a.send(1, 'first of a');
    b.send(1, 'first of b');
    await eventually(() => channels.held === 2);
    expect(dec(await channels.take(a.ref(1)))).toBe('first of a');
    const later = channels.take(a.ref(3));
    expect(dec(await channels.take(b.ref(1)))).toBe('first of b');
    a.send(3, 'third of a');
    expect(dec(await later)).toBe('third of a');
    expect(channels.held).toBe(0);
    channels.closeAll();
  });

  test('a text passed over (its job cancelled) is let go when a later one is asked for, and never given for another job', async () => {
    const channels = new TextChannels();
    const a = channel(channels, 1);
    a.send(1, 'cancelled');
    a.send(2, 'wanted');
    await eventually(() => channels.held === 2);
    expect(dec(await channels.take(a.ref(2)))).toBe('wanted');
    expect(channels.held).toBe(0);
    // One that comes after a later job is waited for is not kept either.
    const waiting = channels.take(a.ref(5));
    a.send(4, 'cancelled too');
    a.send(5, 'fifth');
    expect(dec(await waiting)).toBe('fifth');
    expect(channels.held).toBe(0);
    channels.closeAll();
  });

  test('a worker ended after its last text was taken: its channel closes at once with what it sent unasked', async () => {
    const channels = new TextChannels();
    const a = channel(channels, 1);
    a.send(1, 'taken');
    expect(dec(await channels.take(a.ref(1)))).toBe('taken');
    a.send(2, 'of a job timed out');
    await eventually(() => channels.held === 1);
    channels.detach(1, 1);
    expect(channels.held).toBe(0);
    expect(channels.openChannels).toBe(0);
    await expect(channels.take(a.ref(3))).rejects.toThrow('asked for on a closed channel');
  });

  test('a worker ended before the request thread asked for its last text: the channel stays open until that one is taken', async () => {
    const channels = new TextChannels();
    const a = channel(channels, 1);
    a.send(7, 'answered, then the worker was ended for its large heap');
    channels.detach(1, 7);
    expect(channels.openChannels).toBe(1);
    expect(dec(await channels.take(a.ref(7)))).toBe('answered, then the worker was ended for its large heap');
    expect(channels.openChannels).toBe(0);
    expect(channels.held).toBe(0);
  });

  test('closing with a text still awaited fails that record rather than leaving it waiting', async () => {
    const channels = new TextChannels();
    const a = channel(channels, 1);
    const waiting = channels.take(a.ref(1));
    channels.closeAll();
    await expect(waiting).rejects.toThrow('never came');
    expect(channels.openChannels).toBe(0);
  });
});
