/**
 * Which extracted text, and where it waits: the extraction worker that made it (its channel, one per worker
 * thread started) and the document it was given there (job ids only grow on a channel). `bytes` 0: no text,
 * nothing was sent.
 */
export interface TextRef {
  channel: number;
  job: number;
  bytes: number;
}

/** Where extraction workers send their texts: each new worker thread is given a port of its own. */
export interface TextSink {
  /** Takes the receiving end of a new worker's channel; returns the channel's number. */
  attach(port: MessagePort): number;
  /** The worker is gone; the request thread will ask for no text of this channel past job `lastJob` (0: none). */
  detach(channel: number, lastJob: number): void;
}

/** What an extraction worker sends through its channel: one document's text, transferred. */
export interface ChannelText {
  job: number;
  text: Uint8Array;
}

class Channel {
  /** Texts arrived and not yet asked for, in job order (the worker sends them in the order it was given them). */
  readonly arrived: ChannelText[] = [];
  waiting: { job: number; resolve: (text: Uint8Array) => void; reject: (err: Error) => void } | null = null;
  /** The newest job whose text was taken. */
  taken = 0;
  /** Detached: closed once the text of this job is taken. */
  closeAfter: number | null = null;

  constructor(readonly port: MessagePort) {}
}

/**
 * The receiving ends of the extraction workers' channels (in the index writer), so a text goes from the worker
 * that made it to the writer without passing through the request thread. The request thread says which texts it
 * wants, in the order each channel made them; a text it passed over (its job cancelled: a timeout, the memory cap)
 * is dropped when a later one is asked for or the channel is closed, so nothing waits here unasked for long.
 */
export class TextChannels {
  private readonly channels = new Map<number, Channel>();

  open(channel: number, port: MessagePort): void {
    const entry = new Channel(port);
    port.onmessage = (event) => this.arrive(entry, event.data as ChannelText);
    this.channels.set(channel, entry);
  }

  /** The text of `ref`, once it has come; earlier texts of its channel not asked for are let go. */
  take(ref: TextRef): Promise<Uint8Array> {
    const entry = this.channels.get(ref.channel);
    if (!entry) return Promise.reject(new Error(`text ${ref.channel}/${ref.job} asked for on a closed channel`));
    while (entry.arrived.length > 0 && entry.arrived[0]!.job < ref.job) entry.arrived.shift();
    const head = entry.arrived[0];
    if (head?.job === ref.job) {
      entry.arrived.shift();
      this.taken(ref.channel, entry, ref.job);
      return Promise.resolve(head.text);
    }
    return new Promise((resolve, reject) => {
      entry.waiting = {
        job: ref.job,
        resolve: (text) => {
          entry.waiting = null;
          this.taken(ref.channel, entry, ref.job);
          resolve(text);
        },
        reject,
      };
    });
  }

  detach(channel: number, lastJob: number): void {
    const entry = this.channels.get(channel);
    if (!entry) return;
    if (entry.taken >= lastJob) this.close(channel, entry);
    else entry.closeAfter = lastJob;
  }

  /** Texts held, every channel's (tests: nothing is left behind). */
  get held(): number {
    let n = 0;
    for (const entry of this.channels.values()) n += entry.arrived.length;
    return n;
  }

  /** Channels open (tests: a detached channel is let go). */
  get openChannels(): number {
    return this.channels.size;
  }

  closeAll(): void {
    for (const [channel, entry] of this.channels) this.close(channel, entry);
  }

  private arrive(entry: Channel, text: ChannelText): void {
    if (entry.waiting && text.job === entry.waiting.job) entry.waiting.resolve(text.text);
    else if (!entry.waiting || text.job > entry.waiting.job) entry.arrived.push(text);
  }

  private taken(channel: number, entry: Channel, job: number): void {
    entry.taken = job;
    if (entry.closeAfter !== null && job >= entry.closeAfter) this.close(channel, entry);
  }

  private close(channel: number, entry: Channel): void {
    entry.port.close();
    entry.arrived.length = 0;
    entry.waiting?.reject(new Error(`text ${channel}/${entry.waiting.job} never came`));
    this.channels.delete(channel);
  }
}
