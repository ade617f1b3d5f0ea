/**
 * Keep-alive connection pools per origin: an undici Client (one connection) or Pool (two) for each
 * `scheme://host:port`, dropped once it is idle and disconnected.
 *
 * This replaces undici's Agent on purpose. In undici 7.30 the Agent tracks clients by origin key
 * only, so when a client that lost its connection (e.g. we cut a body short) finishes closing, its
 * 'disconnect' handler closes the *new* client for the same origin, and every later client after
 * it: one aborted response makes that host lose keep-alive for good. Here a dispatcher's events
 * only ever act on that same dispatcher.
 */
import { Client, Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { FetchError } from './errors.ts';

export type OriginDispatcher = Client | Pool;

export class OriginPools {
  private readonly map = new Map<string, OriginDispatcher>();
  private closed = false;

  constructor(
    private readonly connections: number,
    private readonly options: Client.Options,
  ) {}

  /** Number of origins with a live dispatcher. */
  get size(): number {
    return this.map.size;
  }

  dispatch(opts: Dispatcher.DispatchOptions & { origin: string }, handler: Dispatcher.DispatchHandler): boolean {
    let d = this.map.get(opts.origin);
    if (d === undefined || d.closed || d.destroyed) d = this.create(opts.origin);
    return d.dispatch(opts, handler);
  }

  private create(origin: string): OriginDispatcher {
    if (this.closed) throw new FetchError('MEGURI_ERR_ABORTED', 'fetcher closed');
    const d: OriginDispatcher = this.connections === 1 ? new Client(origin, this.options) : new Pool(origin, { ...this.options, connections: this.connections });
    const dropIfIdle = (): void => {
      if (this.map.get(origin) !== d) return;
      const s = d.stats;
      // A dispatcher with queued requests reconnects by itself; keep it.
      if (s.size === 0 && !s.connected) {
        this.map.delete(origin);
        void d.close().catch(() => {});
      }
    };
    d.on('disconnect', dropIfIdle);
    d.on('connectionError', dropIfIdle);
    this.map.set(origin, d);
    return d;
  }

  /** Destroys every connection; pending requests fail with `err`. */
  async destroy(err: Error): Promise<void> {
    this.closed = true;
    const all = [...this.map.values()];
    this.map.clear();
    await Promise.all(all.map((d) => d.destroy(err).catch(() => {})));
  }
}
